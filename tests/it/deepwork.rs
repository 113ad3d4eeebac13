//! The deepwork adapter on the recorded transcript, on bare Events and SSE
//! frames, and `--emit deepwork` read back by the adapter itself.

use roundup::encoders::Framing;
use roundup_testkit::capture::{clean_replay, of_type, options, replay_raw};
use roundup_testkit::invariants::{check_rounds, check_ui};
use serde_json::{json, Value};

fn records(input: &[u8], from: &str) -> Vec<Value> {
    clean_replay(input, from, "records")
}

fn transcript() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/deepwork/sample_transcript.jsonl")).unwrap()
}

#[test]
fn the_transcript_gives_its_rounds() {
    let lines = records(&transcript(), "deepwork");
    check_rounds(&lines).unwrap();
    check_ui(&clean_replay(&transcript(), "deepwork", "ui")).unwrap();
    assert!(of_type(&lines, "anomaly").is_empty());
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 4);
    assert!(rounds.iter().all(|r| r["session"] == "dw-9001"));
    let first = &rounds[0]["tool_calls"][0];
    assert_eq!(
        (&first["title"], &first["arguments"]),
        (&json!("browser_navigate"), &json!(r#"{"url":"https://www.google.com"}"#))
    );
    assert_eq!(first["result"]["content"], r#"{"url":"https://www.google.com"}"#);
    assert_eq!(first["meta"]["duration_ms"], 800);
    assert_eq!(first["meta"]["deepwork_meta"]["step_number"], 1);
    assert_eq!(
        (first["started_at_ms"].as_u64(), first["finished_at_ms"].as_u64()),
        (Some(1_777_629_600_200), Some(1_777_629_601_000))
    );
    let last = rounds[3];
    assert_eq!(last["message"], "我已完成 agentic 搜索，以下是关于 agentic memory 的研究结论。");
    assert_eq!(last["tool_calls"][0]["result"], json!({"status": "failed", "content": "ERR_ACT: element not found"}));
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["deepwork_statuses"], json!({"loading_context": 1}));
    assert_eq!(summary["deepwork_done"]["step_count"], 11);
    assert_eq!(summary["deepwork_user_message"][0]["text"], "test query");
}

fn events(events: &[Value]) -> Vec<u8> {
    events.iter().map(|e| format!("{e}\n")).collect::<String>().into_bytes()
}

#[test]
fn bare_events_sources_cancel_errors_and_usage() {
    let input = events(&[
        json!({"kind": "thinking", "content": "plan", "source": "a"}),
        json!({"kind": "text", "content": "from b", "source": "b"}),
        json!({"kind": "tool_start", "tool": {"id": "t", "name": "search", "input": {"q": "x"}}, "source": "a"}),
        json!({"kind": "tool_start", "tool": {"id": "t", "name": "search", "input": {"q": "xy"}}, "source": "a"}),
        json!({"kind": "usage", "usage": {"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 7}, "source": "a"}),
        json!({"kind": "error", "message": "rate limited", "source": "a"}),
        json!({"kind": "raw", "data": "opaque", "source": "a"}),
        json!({"kind": "done", "reason": "cancel", "source": "a"}),
    ]);
    let lines = records(&input, "deepwork");
    let a = of_type(&lines, "round").into_iter().find(|r| r["session"] == "a").unwrap().clone();
    assert_eq!(a["thought"], "plan");
    assert_eq!(a["tool_calls"].as_array().unwrap().len(), 1, "a repeated tool_start is an update");
    assert_eq!(a["tool_calls"][0]["arguments"], r#"{"q":"xy"}"#);
    assert_eq!(a["tool_calls"][0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
    assert!(of_type(&lines, "round").iter().any(|r| r["session"] == "b" && r["message"] == "from b"));
    let kinds: Vec<&Value> = of_type(&lines, "anomaly").iter().map(|x| &x["kind"]).collect();
    assert_eq!(kinds, [&json!("protocol_error"), &json!("unknown_event")]);
    let summary_a = of_type(&lines, "summary").into_iter().find(|s| s["session"] == "a").unwrap();
    assert_eq!(summary_a["last_token_usage"], 120, "input tokens, cached included");
}

#[test]
fn sse_frames_are_read_like_lines() {
    let sse: String =
        String::from_utf8(transcript()).unwrap().lines().map(|l| format!("id: 1\ndata: {l}\n\n")).collect();
    assert_eq!(records(sse.as_bytes(), "auto"), records(&transcript(), "deepwork"));
}

#[test]
fn emitted_deepwork_events_read_back_to_the_same_rounds() {
    let strip = |lines: Vec<Value>| -> Vec<(Value, Value, Value)> {
        of_type(&lines, "round")
            .iter()
            .map(|r| {
                let calls: Vec<Value> = r["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| json!([c["id"], c["arguments"], c["result"]]))
                    .collect();
                (r["message"].clone(), r["thought"].clone(), Value::Array(calls))
            })
            .collect()
    };
    for sse in [false, true] {
        let framing = if sse { Framing::Sse } else { Framing::Lines };
        let (emitted, stats) = replay_raw(&transcript(), &options("deepwork", "deepwork").framing(framing));
        assert_eq!(stats.bad_lines, 0);
        let text = String::from_utf8(emitted.clone()).unwrap();
        assert!(text.lines().filter(|l| !l.is_empty()).all(|l| l.starts_with("data: ") == sse));
        let first: Value = serde_json::from_str(text.lines().next().unwrap().trim_start_matches("data: ")).unwrap();
        assert_eq!((&first["meta"]["seq"], &first["source"]), (&json!(0), &json!("dw-9001")));
        let again = records(&emitted, "auto");
        assert_eq!(strip(again), strip(records(&transcript(), "deepwork")));
    }
}

/// `--emit deepwork` for arguments streamed in many deltas: the output is
/// linear in the arguments (a `tool_start` when they have doubled, not at
/// every delta), the last `tool_start` before the result carries the final
/// input, and reading the output back gives the same call.
#[test]
fn streamed_arguments_are_coalesced_and_the_final_input_precedes_the_result() {
    let ops = |deltas: usize| -> Vec<u8> {
        let mut input = String::from("{\"op\":\"tool_call\",\"id\":\"t\",\"title\":\"write\"}\n");
        input.push_str(
            "{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"{\\\"text\\\":\\\"\",\"status\":\"in_progress\"}\n",
        );
        for _ in 0..deltas {
            input.push_str("{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"0123456789abcdefghij\",\"status\":\"in_progress\"}\n");
        }
        input.push_str("{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"\\\"}\",\"status\":\"in_progress\"}\n");
        input.push_str("{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"done\",\"status\":\"completed\"}\n");
        input.into_bytes()
    };
    let emitted = |deltas: usize| {
        let (out, _) = replay_raw(&ops(deltas), &options("ops", "deepwork"));
        out
    };
    let (small, large) = (emitted(10_000), emitted(20_000));
    assert!(large.len() < small.len() * 5 / 2, "linear: {} then {} bytes", small.len(), large.len());
    assert!(large.len() < 3 * 20 * 20_000, "at most a few times the arguments: {} bytes", large.len());
    let events: Vec<Value> =
        String::from_utf8(large.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let starts = events.iter().filter(|e| e["kind"] == "tool_start").count();
    assert!(starts < 30, "{starts} tool_starts for 20,000 deltas");
    let at_result = events.iter().position(|e| e["kind"] == "tool_result").unwrap();
    let last_start = &events[at_result - 1];
    assert_eq!(last_start["kind"], "tool_start", "the final input right before the result");
    assert_eq!(last_start["tool"]["input"]["text"].as_str().unwrap().len(), 20 * 20_000);
    let back = records(&large, "deepwork");
    let call = &of_type(&back, "round")[0]["tool_calls"][0];
    assert_eq!(call["arguments"].as_str().unwrap().len(), 20 * 20_000 + r#"{"text":""}"#.len());
    assert_eq!(call["result"]["content"], "done");
}

/// The frequent events are read from a view borrowed from the line: the
/// arguments keep the producer's own JSON text (key order, spacing), a
/// `meta.ts` is still the clock, and rich content still takes the general
/// path and is reported.
#[test]
fn frequent_events_keep_their_text_and_their_clock() {
    let input = concat!(
        r#"{"kind":"tool_start","tool":{"id":"t","name":"run","input":{"z": 1, "a": "x\n"}},"meta":{"ts":"2026-01-01T00:00:01Z"}}"#,
        "\n",
        r#"{"kind":"tool_result","tool":{"id":"t","output":"ok","duration_ms":4},"meta":{"ts":1767225602000}}"#,
        "\n",
        r#"{"kind":"text","content":{"rich":"r"}}"#,
        "\n"
    );
    let lines = records(input.as_bytes(), "deepwork");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["arguments"], r#"{"z": 1, "a": "x\n"}"#, "as sent, not re-serialised");
    assert_eq!(
        (&call["started_at_ms"], &call["finished_at_ms"]),
        (&json!(1_767_225_601_000u64), &json!(1_767_225_602_000u64))
    );
    assert_eq!(call["meta"]["duration_ms"], 4);
    assert_eq!(of_type(&lines, "anomaly")[0]["kind"], "unknown_content");
}
