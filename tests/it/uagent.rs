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
    assert_eq!(summary["uagent_other_events"], json!({"control_input": 2}));
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
