//! `--emit ai-sdk`, the AI SDK UI message stream, on roundup's side: the
//! mapping on small inputs, the round trip through the `ai-sdk` adapter
//! over every vector and fixture, per-session state, and determinism (the
//! real `ai` package checks every vector and fixture in `tests/ai-sdk`).

use std::collections::BTreeMap;

use roundup::encoders::{Frames, Framing, OutputFormat};
use roundup::{FinishReason, UiEvent};
use roundup_testkit::capture::{clean_replay, of_type, options, replay_raw};
use serde_json::{json, Value};

fn chunks(ops: &str) -> Vec<Value> {
    clean_replay(ops.as_bytes(), "ops", "ai-sdk")
}

fn ops(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

fn types(chunks: &[Value]) -> Vec<&str> {
    chunks.iter().map(|c| c["type"].as_str().unwrap_or("?")).collect()
}

/// The chunks that give call `id` an output (preliminary ones aside).
fn outputs<'a>(chunks: &'a [Value], id: &str) -> Vec<&'a Value> {
    chunks
        .iter()
        .filter(|c| c["toolCallId"] == id && c["preliminary"] != true)
        .filter(|c| {
            matches!(c["type"].as_str(), Some("tool-output-available" | "tool-output-error" | "tool-input-error"))
        })
        .collect()
}

/// A run is a message, a round a step: text, reasoning and a call, with
/// the call's final input and its output as JSON values.
#[test]
fn a_run_is_a_message_and_a_round_a_step() {
    let out = chunks(&ops(&[
        json!({"op": "thought", "text": "Look first."}),
        json!({"op": "message", "text": "Listing."}),
        json!({"op": "tool_call", "id": "t1", "title": "ls -la", "name": "Bash"}),
        json!({"op": "tool_update", "id": "t1", "content": "{\"cmd\":", "status": "in_progress"}),
        json!({"op": "tool_update", "id": "t1", "content": "\"ls\"}", "status": "in_progress"}),
        json!({"op": "tool_update", "id": "t1", "content": "{\"files\":2}", "status": "completed"}),
        json!({"op": "message", "text": "Two files."}),
        json!({"op": "finish", "reason": "completed"}),
    ]));
    assert_eq!(
        types(&out),
        [
            "start",
            "start-step",
            "reasoning-start",
            "reasoning-delta",
            "reasoning-end",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "message-metadata",
            "finish",
        ]
    );
    assert_eq!(
        out[0],
        json!({"type": "start", "messageId": "roundup/run-0", "messageMetadata": {"roundup": {"run": 0}}})
    );
    assert_eq!(out[8], json!({"type": "tool-input-start", "toolCallId": "t1", "toolName": "Bash", "title": "ls -la"}));
    assert_eq!(out[11]["input"], json!({"cmd": "ls"}));
    assert_eq!(out[12], json!({"type": "tool-output-available", "toolCallId": "t1", "output": {"files": 2}}));
    assert_eq!(out[19]["messageMetadata"]["roundup"]["summary"]["tool_calls"], 1);
    assert_eq!(out[20], json!({"type": "finish", "finishReason": "stop"}));
}

/// A name the SDK's tool parts cannot take is made valid, the title kept
/// beside it; text that is not JSON (and a JSON string) goes out as a
/// string, so that it reads back the same.
#[test]
fn names_are_made_valid_and_texts_stay_texts() {
    let out = chunks(&ops(&[
        json!({"op": "tool_call", "id": "t", "title": "Edit src/app.ts"}),
        json!({"op": "args_snapshot", "id": "t", "args": "pytest -q"}),
        json!({"op": "tool_update", "id": "t", "content": "\"quoted\"", "status": "completed"}),
    ]));
    let start = &out[of_index(&out, "tool-input-start")];
    assert_eq!((&start["toolName"], &start["title"]), (&json!("Edit_src_app_ts"), &json!("Edit src/app.ts")));
    assert_eq!(out[of_index(&out, "tool-input-available")]["input"], "pytest -q");
    assert_eq!(outputs(&out, "t")[0]["output"], "\"quoted\"");
}

fn of_index(chunks: &[Value], kind: &str) -> usize {
    chunks.iter().position(|c| c["type"] == kind).unwrap_or_else(|| panic!("no {kind} in {chunks:?}"))
}

/// A call the run ended without answering gets one error naming the
/// reason, marked; one whose arguments were cut off gets the SDK's input
/// error; a canceled run ends with `abort`.
#[test]
fn placeholders_are_one_marked_error() {
    let out = chunks(&ops(&[
        json!({"op": "tool_call", "id": "a", "title": "read"}),
        json!({"op": "args_snapshot", "id": "a", "args": "{\"path\":\"a\"}"}),
        json!({"op": "tool_call", "id": "b", "title": "write"}),
        json!({"op": "tool_update", "id": "b", "content": "{\"path\":\"b\",\"te", "status": "in_progress"}),
        json!({"op": "finish", "reason": "canceled"}),
    ]));
    let a = outputs(&out, "a");
    assert_eq!(a.len(), 1);
    assert_eq!(
        *a[0],
        json!({"type": "tool-output-error", "toolCallId": "a", "errorText": "no result: canceled", "providerMetadata": {"roundup": {"placeholder": "canceled"}}})
    );
    let b = outputs(&out, "b");
    assert_eq!(
        (b.len(), &b[0]["type"], &b[0]["input"]),
        (1, &json!("tool-input-error"), &json!("{\"path\":\"b\",\"te"))
    );
    assert_eq!(out.last(), Some(&json!({"type": "abort", "reason": "canceled"})));
    let interrupted = chunks("{\"op\":\"message\",\"text\":\"Hi\"}\n");
    assert_eq!(interrupted.last(), Some(&json!({"type": "finish", "finishReason": "interrupted"})));
    let failed = chunks("{\"op\":\"message\",\"text\":\"Hi\"}\n{\"op\":\"finish\",\"reason\":\"failed\"}\n");
    assert_eq!(failed.last(), Some(&json!({"type": "finish", "finishReason": "error"})));
}

/// A call the next text closed waits: its late result is its one output,
/// marked stitched, in the step that is open; one that never gets one is
/// told so when the run ends. Never two outputs for a call.
#[test]
fn a_late_result_is_the_one_output_and_an_unanswered_call_is_told_at_the_end() {
    let out = chunks(&ops(&[
        json!({"op": "tool_call", "id": "a", "title": "x"}),
        json!({"op": "tool_call", "id": "b", "title": "y"}),
        json!({"op": "message", "text": "moving on"}),
        json!({"op": "tool_update", "id": "a", "content": "late", "status": "completed"}),
        json!({"op": "finish", "reason": "completed"}),
    ]));
    let a = outputs(&out, "a");
    assert_eq!(a.len(), 1, "{out:?}");
    assert_eq!(
        *a[0],
        json!({"type": "tool-output-available", "toolCallId": "a", "providerMetadata": {"roundup": {"stitched": true}}, "output": "late"})
    );
    let step_two = out.iter().rposition(|c| c["type"] == "start-step").unwrap();
    assert!(out.iter().position(|c| c["toolCallId"] == "a" && c["output"] == "late").unwrap() > step_two);
    let b = outputs(&out, "b");
    assert_eq!((b.len(), &b[0]["errorText"]), (1, &json!("no result: superseded")));
    assert!(of_index(&out, "finish") > out.iter().position(|c| c["errorText"] == "no result: superseded").unwrap());
}

/// Live output is preliminary output, the whole of it each time; appended
/// output goes out when it has doubled, and the rest before the call ends.
#[test]
fn live_output_is_preliminary_and_linear() {
    let mut lines = vec![json!({"op": "tool_call", "id": "t", "title": "build"})];
    for _ in 0..1_000 {
        lines.push(json!({"op": "tool_output", "id": "t", "content": "0123456789"}));
    }
    lines.push(json!({"op": "finish", "reason": "interrupted"}));
    let out = chunks(&ops(&lines));
    let live: Vec<&Value> = out.iter().filter(|c| c["preliminary"] == true).collect();
    assert!(live.len() < 20, "{} preliminary outputs for 1,000 appends", live.len());
    assert_eq!(
        live.last().and_then(|c| c["output"].as_str()).map(str::len),
        Some(10_000),
        "the whole output before the end"
    );
    let replaced = chunks(&ops(&[
        json!({"op": "tool_call", "id": "t", "title": "top"}),
        json!({"op": "tool_output", "id": "t", "content": "1 task", "replace": true}),
        json!({"op": "tool_output", "id": "t", "content": "2 tasks", "replace": true}),
        json!({"op": "tool_update", "id": "t", "content": "", "status": "completed"}),
    ]));
    let live: Vec<&Value> = replaced.iter().filter(|c| c["preliminary"] == true).map(|c| &c["output"]).collect();
    assert_eq!(live, [&json!("1 task"), &json!("2 tasks")]);
    assert_eq!(outputs(&replaced, "t")[0]["output"], "2 tasks");
}

/// A snapshot that does not extend what was streamed restarts the input;
/// one that does is sent as the rest.
#[test]
fn snapshots_restart_the_input_only_when_they_must() {
    let out = chunks(&ops(&[
        json!({"op": "tool_call", "id": "t", "title": "run"}),
        json!({"op": "tool_update", "id": "t", "content": "{\"a\":", "status": "in_progress"}),
        json!({"op": "args_snapshot", "id": "t", "args": "{\"a\":1}"}),
        json!({"op": "args_snapshot", "id": "t", "args": "{\"b\":2}"}),
        json!({"op": "tool_update", "id": "t", "content": "ok", "status": "completed"}),
    ]));
    let input: Vec<(&str, &Value)> = out
        .iter()
        .filter(|c| c["toolCallId"] == "t" && c["type"].as_str().is_some_and(|t| t.starts_with("tool-input")))
        .map(|c| {
            (
                c["type"].as_str().unwrap_or(""),
                if c["inputTextDelta"].is_null() { &c["input"] } else { &c["inputTextDelta"] },
            )
        })
        .collect();
    assert_eq!(
        input,
        [
            ("tool-input-start", &Value::Null),
            ("tool-input-delta", &json!("{\"a\":")),
            ("tool-input-delta", &json!("1}")),
            ("tool-input-start", &Value::Null),
            ("tool-input-delta", &json!("{\"b\":2}")),
            ("tool-input-available", &json!({"b": 2})),
        ]
    );
}

/// An anomaly is a part of its run's message; one after the run's end,
/// when no message is open, is transient. Each chunk of a named session
/// names it; the usage gauge is message metadata.
#[test]
fn anomalies_sessions_and_usage() {
    let out = chunks(&ops(&[
        json!({"op": "message", "text": "Hi", "session": "s"}),
        json!({"op": "tool_update", "id": "nope", "content": "x", "status": "completed", "session": "s"}),
        json!({"op": "token_usage", "total": 1234, "session": "s"}),
        json!({"op": "finish", "reason": "completed", "session": "s"}),
        json!({"op": "message", "text": "late", "session": "s"}),
    ]));
    assert!(out.iter().all(|c| c["session"] == "s"), "{out:?}");
    let anomalies = of_type(&out, "data-roundup-anomaly");
    assert_eq!(anomalies.len(), 2);
    assert_eq!(
        (&anomalies[0]["data"]["kind"], &anomalies[0]["transient"]),
        (&json!("undeclared_terminal"), &Value::Null)
    );
    assert_eq!((&anomalies[1]["data"]["kind"], &anomalies[1]["transient"]), (&json!("after_finish"), &json!(true)));
    assert!(of_index(&out, "finish") < out.iter().rposition(|c| c["type"] == "data-roundup-anomaly").unwrap_or(0));
    assert_eq!(of_type(&out, "message-metadata")[0]["messageMetadata"], json!({"usage": {"totalTokens": 1234}}));
    assert_eq!(out[0]["messageId"], "s/run-0");
}

/// With SSE framing, `data: [DONE]` ends each run's response; JSON lines
/// have no such line.
#[test]
fn sse_ends_each_response_with_done() {
    let input = b"{\"op\":\"message\",\"text\":\"a\"}\n{\"op\":\"finish\",\"reason\":\"completed\"}\n{\"op\":\"start\"}\n{\"op\":\"message\",\"text\":\"b\"}\n";
    let (sse, _) = replay_raw(input, &options("ops", "ai-sdk").framing(Framing::Sse));
    let text = String::from_utf8(sse).unwrap_or_default();
    assert_eq!(text.matches("data: [DONE]\n\n").count(), 2);
    assert!(text.ends_with("data: {\"type\":\"finish\",\"finishReason\":\"interrupted\"}\n\ndata: [DONE]\n\n"));
    let (lines, _) = replay_raw(input, &options("ops", "ai-sdk"));
    assert!(!String::from_utf8_lossy(&lines).contains("[DONE]"));
}

/// The stream read back by the `ai-sdk` adapter gives the same rounds and
/// stitches, session by session, on every vector and fixture: text,
/// reasoning, closings, ids, titles, arguments, results, placeholders.
/// What the protocol changes: a name is made valid (a call without one
/// takes its title's), and no arguments are the SDK's `{}`.
#[test]
fn every_input_reads_back_to_the_same_rounds() {
    let mut checked = 0;
    for (name, input) in roundup_testkit::inputs() {
        let (records, _) = replay_raw(&input, &options("auto", "records"));
        let (emitted, _) = replay_raw(&input, &options("auto", "ai-sdk"));
        let mut by_session: BTreeMap<Option<String>, String> = BTreeMap::new();
        for line in String::from_utf8_lossy(&emitted).lines() {
            let chunk: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"));
            let session = chunk["session"].as_str().map(str::to_owned);
            by_session.entry(session).or_default().push_str(&format!("{line}\n"));
        }
        let records = roundup_testkit::capture::parse_output(&records);
        for (session, stream) in by_session {
            let mine: Vec<Value> =
                records.iter().filter(|r| r["session"].as_str().map(str::to_owned) == session).cloned().collect();
            let back = clean_replay(stream.as_bytes(), "ai-sdk", "records");
            assert_eq!(shape(&back, false), shape(&mine, true), "{name} ({session:?})");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} sessions");
}

/// Rounds and stitches as the round trip keeps them.
fn shape(lines: &[Value], original: bool) -> Vec<Value> {
    let mut out = Vec::new();
    // A run is one message, whose `toolCallId`s are unique: an id a run
    // declares again is sent as `id#2`, `id#3`, ...
    let mut ids: std::collections::HashSet<(Value, String)> = std::collections::HashSet::new();
    for line in lines {
        match line["type"].as_str() {
            Some("round") => {
                let calls: Vec<Value> = line["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let (title, name) = (c["title"].as_str().unwrap_or(""), c["name"].as_str().unwrap_or(""));
                        let mut arguments = c["arguments"].clone();
                        let (title, name) = if original {
                            let valid = valid_name(name, title);
                            if arguments == "" {
                                arguments = json!("{}");
                            }
                            (if title.is_empty() { valid.clone() } else { title.to_owned() }, valid)
                        } else {
                            (title.to_owned(), name.to_owned())
                        };
                        let mut id = c["id"].as_str().unwrap_or("").to_owned();
                        if original {
                            let (base, mut n) = (id.clone(), 1);
                            while !ids.insert((line["run"].clone(), id.clone())) {
                                n += 1;
                                id = format!("{base}#{n}");
                            }
                        }
                        json!([id, title, name, arguments, c["result"]])
                    })
                    .collect();
                out.push(json!([
                    line["run"],
                    line["index"],
                    line["closed_by"],
                    line["message"],
                    line["thought"],
                    calls
                ]));
            }
            Some("stitch") => out.push(json!([line["run"], line["round"], line["id"], line["result"]])),
            _ => {}
        }
    }
    out
}

/// The encoder's tool name, written out again: `^[a-zA-Z0-9_-]{1,64}$`.
fn valid_name(name: &str, title: &str) -> String {
    let source = if name.is_empty() { title } else { name };
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !source.is_empty() && source.len() <= 64 && source.chars().all(ok) {
        return source.to_owned();
    }
    let mut out = String::new();
    let mut replaced = false;
    for c in source.chars() {
        if out.len() == 64 {
            break;
        }
        if ok(c) {
            out.push(c);
            replaced = false;
        } else if !replaced {
            out.push('_');
            replaced = true;
        }
    }
    let out = out.trim_matches('_');
    if out.is_empty() {
        "tool".to_owned()
    } else {
        out.to_owned()
    }
}

/// A session's message is held while its run goes on and released when
/// the run ends, whatever other sessions do.
#[test]
fn a_sessions_state_is_released_when_its_run_ends() {
    let mut encoder = OutputFormat::named("ai-sdk").map(OutputFormat::encoder).expect("the ai-sdk format");
    let mut out = Frames::new(Framing::Lines);
    for session in ["a", "b"] {
        encoder.ui_event(Some(session), &UiEvent::RunStart { run: 0 }, 0, &mut out);
        encoder.ui_event(Some(session), &UiEvent::ToolCallStart { id: "t", title: "x", name: "" }, 0, &mut out);
    }
    let held = encoder.save().unwrap_or(Value::Null);
    assert_eq!(held["messages"].as_array().map(Vec::len), Some(2), "{held}");
    let end = UiEvent::RunEnd { run: 0, reason: FinishReason::Interrupted };
    encoder.ui_event(
        Some("a"),
        &UiEvent::ToolCallInterrupted { id: "t", reason: roundup::PlaceholderReason::Interrupted },
        0,
        &mut out,
    );
    encoder.ui_event(Some("a"), &end, 0, &mut out);
    let held = encoder.save().unwrap_or(Value::Null);
    let sessions: Vec<&Value> = held["messages"].as_array().into_iter().flatten().map(|pair| &pair[0]).collect();
    assert_eq!(sessions, [&json!("b")], "{held}");
    encoder.ui_event(Some("b"), &end, 0, &mut out);
    assert_eq!(encoder.save(), Some(Value::Null));
    let text = String::from_utf8_lossy(out.bytes()).into_owned();
    assert_eq!(text.matches("no result: interrupted").count(), 2, "{text}");
}

/// The same input gives the same bytes, run after run, and with sessions
/// evicted and restored between their events.
#[test]
fn the_same_bytes_every_time_and_through_eviction() {
    let input = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/session.ops.jsonl")).unwrap_or_default();
    let sse = options("auto", "ai-sdk").framing(Framing::Sse);
    let (first, _) = replay_raw(&input, &sse);
    let (second, _) = replay_raw(&input, &sse);
    assert!(first.len() > 1_000);
    assert_eq!(first, second);
    let (evicted, _) = replay_raw(&input, &sse.clone().evict(1, None));
    assert_eq!(String::from_utf8_lossy(&evicted), String::from_utf8_lossy(&first));
}
