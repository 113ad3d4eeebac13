//! The uagent `--stream` adapter on the recorded fixture, and on what the
//! fixture does not show (the `uah` deltas, reasoning, errors, cancels).

use roundup_testkit::capture::{clean_replay, of_type};
use roundup_testkit::invariants::{check_rounds, check_ui};
use serde_json::{json, Value};

fn replay(input: &[u8], emit: &str) -> Vec<Value> {
    clean_replay(input, "uagent", emit)
}

fn fixture() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/uagent/simple.stream.jsonl")).unwrap()
}

#[test]
fn the_fixture_gives_its_rounds() {
    let lines = replay(&fixture(), "records");
    check_rounds(&lines).unwrap();
    check_ui(&replay(&fixture(), "ui")).unwrap();
    assert!(of_type(&lines, "anomaly").is_empty());
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["session"], "<session_id>");
    let calls = rounds[0]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["title"], "Bash");
    assert_eq!(calls[0]["arguments"], r#"{"command":"ls"}"#);
    assert_eq!(calls[1]["arguments"], r#"{"command":"cat a.txt"}"#);
    assert_eq!(calls[0]["result"], json!({"status": "completed", "content": "exit 0"}));
    // Nothing is lost: label, op_id, out_path, err_path, duration_ms.
    for field in ["label", "op_id", "op_type", "out_path", "err_path", "duration_ms"] {
        assert!(!calls[0]["meta"][field].is_null(), "meta.{field}");
    }
    // Timing from the events' `at`.
    assert_eq!(calls[0]["started_at_ms"], 1_790_166_729_873u64);
    assert_eq!(calls[0]["finished_at_ms"], 1_790_166_729_974u64);
    assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!("hello"), &json!("finish")));
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["last_token_usage"], 601, "model_responded.usage.input, a gauge");
    assert_eq!(summary["uagent_user_messages"][0], "Run `ls` and `cat a.txt`, then reply with the file contents.");
    let inputs = summary["uagent_control_inputs"].as_array().unwrap();
    let modes: Vec<&Value> = inputs.iter().map(|i| &i["mode"]).collect();
    assert_eq!(modes, [&json!("settings"), &json!("when_idle")], "kept whole, not counted");
    assert_eq!(inputs[0]["effort"], "low");
}

#[test]
fn recomputed_statistics_equal_uagents_own() {
    let lines = replay(&fixture(), "records");
    let summary = of_type(&lines, "summary")[0];
    let recorded = &summary["uagent_run_summary"]["stats"];
    assert_eq!(summary["uagent_stats"], *recorded);
    assert_eq!(summary["uagent_stats"]["max_parallel_tools"], 2);
    assert_eq!(summary["uagent_stats"]["model_ms"], 5030);
}

fn events(events: &[Value]) -> Vec<u8> {
    events.iter().map(|e| format!("{e}\n")).collect::<String>().into_bytes()
}

fn at(ms: u64) -> String {
    format!("2026-01-01T00:00:{:02}.{:03}Z", ms / 1000, ms % 1000)
}

#[test]
fn streamed_text_is_never_counted_twice() {
    let input = events(&[
        json!({"type": "run_started", "session_id": "s", "at": at(0), "v": 1}),
        json!({"type": "text_delta", "text": "hel", "at": at(1), "v": 1}),
        json!({"type": "text_delta", "text": "lo", "at": at(2), "v": 1}),
        json!({"type": "assistant_message", "text": "hello world", "final": true, "at": at(3), "v": 1}),
        json!({"type": "run_finished", "summary": {"status": "ok"}, "at": at(4), "v": 1}),
    ]);
    let lines = replay(&input, "records");
    assert_eq!(of_type(&lines, "round")[0]["message"], "hello world");
    assert!(of_type(&lines, "anomaly").is_empty());
}

#[test]
fn reasoning_lines_keep_their_line_breaks() {
    let input = events(&[
        json!({"type": "run_started", "session_id": "s", "v": 1}),
        json!({"type": "reasoning", "text": "First, look.", "v": 1}),
        json!({"type": "reasoning", "text": "Then, act.", "v": 1}),
        json!({"type": "assistant_message", "text": "Done.", "v": 1}),
    ]);
    let lines = replay(&input, "records");
    assert_eq!(of_type(&lines, "round")[0]["thought"], "First, look.\nThen, act.");
}

#[test]
fn a_timed_out_run_cancels_its_tools_and_errors_are_kept() {
    let input = events(&[
        json!({"type": "run_started", "session_id": "s", "at": at(0), "v": 1}),
        json!({"type": "turn_started", "turn": 1, "at": at(0), "v": 1}),
        json!({"type": "model_responded", "stop": "max_tokens", "usage": {"input": 10, "output": 2}, "at": at(500), "v": 1}),
        json!({"type": "tool_called", "call_id": "c1", "name": "Bash", "arguments": {"command": "sleep 99"}, "at": at(500), "v": 1}),
        json!({"type": "tool_started", "call_id": "c1", "op_id": "o1", "at": at(600), "v": 1}),
        json!({"type": "runner_error", "error": "tool timed out", "at": at(900), "v": 1}),
        json!({"type": "tool_called", "call_id": "c2", "name": "Read", "arguments": "{}", "at": at(900), "v": 1}),
        json!({"type": "tool_finished", "call_id": "c2", "ok": false, "detail": "no such file", "at": at(950), "v": 1}),
        json!({"type": "mystery", "v": 1}),
        json!({"type": "run_finished", "summary": {"status": "timeout"}, "at": at(1000), "v": 1}),
    ]);
    let lines = replay(&input, "records");
    check_rounds(&lines).unwrap();
    let round = of_type(&lines, "round")[0];
    assert_eq!(round["tool_calls"][0]["arguments"], r#"{"command":"sleep 99"}"#, "an object is serialised");
    assert_eq!(round["tool_calls"][0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
    assert_eq!(round["tool_calls"][1]["result"], json!({"status": "failed", "content": "no such file"}));
    let kinds: Vec<&Value> = of_type(&lines, "anomaly").iter().map(|a| &a["kind"]).collect();
    assert_eq!(kinds, [&json!("protocol_error"), &json!("unknown_event")]);
    assert!(of_type(&lines, "anomaly")[0]["detail"].as_str().unwrap().contains("tool timed out"));
    let stats = &of_type(&lines, "summary")[0]["uagent_stats"];
    assert_eq!(stats["stop_reasons"], json!({"max_tokens": 1}));
    assert_eq!(stats["failed_tool_calls"], 1);
    // The unfinished tool span ends at the run's end: 600 to 1000 ms.
    assert_eq!(stats["tool_busy_ms"], 400);
    assert_eq!(stats["model_ms"], 500);
    assert_eq!(stats["tools_by_name"], json!({"Bash": 1, "Read": 1}));
}

/// uagent's statistics by uagent's algorithm (as the
/// fixtures README gives it), on a stream built to tell the rules apart:
/// `event_span_ms` spans only observed events (not `run_started`,
/// `run_finished`, deltas or `runner_error`); a call counts at the first
/// event that names it (`?` without a name); a second start or finish of an
/// operation changes nothing; a failed finish fails its call for good;
/// unfinished spans end at the later of the last observed event and the
/// run's end; a final message without text is no final answer; errors,
/// warnings and failures are listed. Every figure was worked out by hand.
#[test]
fn statistics_follow_uagents_rules() {
    let e = |ms: u64, event: Value| {
        let mut event = event;
        event["at"] = at(ms).into();
        event["v"] = 1.into();
        event
    };
    let input = events(&[
        e(0, json!({"type": "run_started", "session_id": "s"})),
        e(1, json!({"type": "preflight_warning", "code": "disk", "message": "low disk"})),
        e(100, json!({"type": "user_message", "text": "go"})),
        e(200, json!({"type": "turn_started", "turn": 1})),
        e(250, json!({"type": "text_delta", "text": "x"})),
        e(1200, json!({"type": "model_responded", "stop": "max_tokens", "usage": {"input": 10, "output": 5}})),
        e(1200, json!({"type": "tool_called", "call_id": "c1", "name": "Bash"})),
        e(1300, json!({"type": "tool_started", "call_id": "c2", "name": "", "op_id": "o2"})),
        e(1300, json!({"type": "tool_started", "call_id": "c1", "op_id": "o1"})),
        e(1350, json!({"type": "tool_started", "call_id": "c1", "op_id": "o1"})),
        e(2300, json!({"type": "tool_finished", "call_id": "c1", "op_id": "o1", "ok": false})),
        e(2400, json!({"type": "tool_finished", "call_id": "c1", "op_id": "o1", "ok": true})),
        e(2500, json!({"type": "turn_started", "turn": 2})),
        e(3000, json!({"type": "model_responded", "failure": "overloaded", "usage": {"input": 1}})),
        e(3100, json!({"type": "runner_error", "message": "boom"})),
        e(3200, json!({"type": "assistant_message", "text": "", "final": true})),
        e(3300, json!({"type": "turn_started", "turn": 3})),
        e(5000, json!({"type": "run_finished", "summary": {"status": "error"}})),
    ]);
    let lines = replay(&input, "records");
    let stats = &of_type(&lines, "summary")[0]["uagent_stats"];
    assert_eq!(
        *stats,
        json!({
            "event_span_ms": 3200,
            "model_ms": 3200,
            "tool_busy_ms": 3700,
            "tool_model_overlap_ms": 2200,
            "turns": 3,
            "user_messages": 1,
            "model_responses": 2,
            "tool_calls": 2,
            "failed_tool_calls": 1,
            "max_parallel_tools": 2,
            "tools_by_name": {"Bash": 1, "?": 1},
            "tokens": {"input": 11, "cached_input": 0, "cache_write_input": 0, "output": 5, "reasoning": 0},
            "stop_reasons": {"max_tokens": 1},
            "failures": ["overloaded"],
            "errors": ["boom"],
            "warnings": ["low disk"],
            "final_answer": false
        })
    );
}

/// the `uah` superset. A stream that starts with a session
/// event is detected as uagent; session events before a run go into that
/// run's metadata, those inside a run too, and those after the last run are
/// reported (nothing is lost); one session holds several runs.
#[test]
fn the_uah_superset_holds_sessions_of_several_runs() {
    let e = |event: Value| {
        let mut event = event;
        event["v"] = 1.into();
        event
    };
    let input = events(&[
        e(json!({"type": "session_opened", "session_id": "s"})),
        e(json!({"type": "instructions_loaded", "path": "AGENTS.md"})),
        e(json!({"type": "input_queued", "id": "i1"})),
        e(json!({"type": "run_started", "run_id": "r1"})),
        e(json!({"type": "input_delivered", "id": "i1"})),
        e(json!({"type": "text_delta", "text": "one"})),
        e(json!({"type": "run_finished", "summary": {"status": "ok"}})),
        e(json!({"type": "idle"})),
        e(json!({"type": "run_started", "run_id": "r2"})),
        e(json!({"type": "text_delta", "text": "two"})),
        e(json!({"type": "run_finished", "summary": {"status": "ok"}})),
        e(json!({"type": "idle"})),
    ]);
    let dir = std::env::temp_dir().join(format!("roundup-uah-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("uah.jsonl");
    std::fs::write(&file, &input).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_roundup")).arg("replay").arg(&file).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let rounds: Vec<(&Value, &Value, &Value)> =
        of_type(&lines, "round").iter().map(|r| (&r["session"], &r["run"], &r["message"])).collect();
    assert_eq!(rounds, [(&json!("s"), &json!(0), &json!("one")), (&json!("s"), &json!(1), &json!("two"))]);
    let summaries = of_type(&lines, "summary");
    let types = |s: &Value| -> Vec<Value> {
        s["uah_session_events"].as_array().map(|a| a.iter().map(|e| e["type"].clone()).collect()).unwrap_or_default()
    };
    assert_eq!(
        types(summaries[0]),
        [json!("session_opened"), json!("instructions_loaded"), json!("input_queued"), json!("input_delivered")]
    );
    assert_eq!(types(summaries[1]), [json!("idle")]);
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0]["kind"], "after_finish");
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("\"idle\""));
}

/// A run's session events go out as its metadata once, at its end: a run
/// with N of them sends N events, not the list again on each (N²/2).
#[test]
fn a_runs_session_events_are_sent_once() {
    use roundup::adapters::InputFormat;
    use roundup::Call;
    let mut lines = vec![json!({"type": "run_started", "run_id": "r1", "v": 1})];
    for n in 0..200 {
        lines.push(json!({"type": "input_delivered", "id": format!("i{n}"), "v": 1}));
    }
    lines.push(json!({"type": "run_finished", "summary": {"status": "ok"}, "v": 1}));
    let mut adapter = InputFormat::named("uagent").unwrap().adapter();
    let mut sent = 0;
    let mut last = 0;
    for line in &lines {
        adapter
            .translate(line.to_string().as_bytes(), &mut |_: Option<&str>, call: Call<'_>| {
                if let Call::RunMeta { meta } = call {
                    if let Some(events) = meta.get("uah_session_events").and_then(Value::as_array) {
                        sent += events.len();
                        last = events.len();
                    }
                }
            })
            .unwrap();
    }
    assert_eq!((sent, last), (200, 200), "each of the 200 events sent once, the last list whole");
}
