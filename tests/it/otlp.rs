//! `--emit otlp`, the OpenTelemetry traces: the shape on small inputs
//! (span tree, times, ids, status, events), the opt-in content, and on
//! every vector and fixture the traces read back against the records (a
//! real backend reads the same lines in `tests/otlp`).

use std::collections::{BTreeMap, HashSet};

use roundup_testkit::capture::{clean_replay, options, parse_output, replay_raw};
use serde_json::{json, Value};

fn ops(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// The spans of one `ExportTraceServiceRequest` line.
fn spans(request: &Value) -> Vec<Value> {
    request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().cloned().unwrap_or_default()
}

/// An attribute's value as plain JSON (a string, an integer, a boolean, a
/// list of strings); `Null` when the span has no such attribute.
fn attr(span: &Value, key: &str) -> Value {
    let Some(found) = span["attributes"].as_array().and_then(|a| a.iter().find(|a| a["key"] == key)) else {
        return Value::Null;
    };
    let value = &found["value"];
    if let Some(text) = value.get("stringValue") {
        return text.clone();
    }
    if let Some(n) = value.get("intValue") {
        return json!(n.as_str().and_then(|n| n.parse::<i64>().ok()));
    }
    if let Some(b) = value.get("boolValue") {
        return b.clone();
    }
    if let Some(values) = value["arrayValue"]["values"].as_array() {
        return values.iter().map(|v| v["stringValue"].clone()).collect();
    }
    panic!("an attribute value of an unknown type: {value}")
}

fn names(spans: &[Value]) -> Vec<&str> {
    spans.iter().map(|s| s["name"].as_str().unwrap_or("?")).collect()
}

fn traces(input: &str, to: &str) -> Vec<Value> {
    clean_replay(input.as_bytes(), "ops", to)
}

/// A run with text, reasoning, a failed call, a call stitched late, a
/// duplicate result and a placeholder: each where the mapping puts it.
fn worked_example() -> String {
    ops(&[
        json!({"op": "thought", "text": "Build first.", "session": "s1", "at_ms": 1000}),
        json!({"op": "message", "text": "Building.", "session": "s1", "at_ms": 1010}),
        json!({"op": "tool_call", "id": "t1", "title": "cargo build", "name": "Bash", "session": "s1", "at_ms": 1100}),
        json!({"op": "args_snapshot", "id": "t1", "args": "{\"cmd\":\"cargo build\"}", "session": "s1", "at_ms": 1150}),
        json!({"op": "tool_update", "id": "t1", "content": "error[E0425]", "status": "failed", "session": "s1", "at_ms": 1400}),
        json!({"op": "message", "text": "Reading.", "session": "s1", "at_ms": 1500}),
        json!({"op": "tool_call", "id": "t2", "title": "Read src/main.rs", "name": "Read", "session": "s1", "at_ms": 1600}),
        json!({"op": "message", "text": "Meanwhile, an edit.", "session": "s1", "at_ms": 1700}),
        json!({"op": "tool_update", "id": "t2", "content": "fn main() {}", "status": "completed", "session": "s1", "at_ms": 1800}),
        json!({"op": "tool_update", "id": "t2", "content": "again", "status": "completed", "session": "s1", "at_ms": 1850}),
        json!({"op": "tool_call", "id": "t3", "title": "Edit", "session": "s1", "at_ms": 1900}),
        json!({"op": "finish", "reason": "canceled", "session": "s1", "at_ms": 2000}),
    ])
}

#[test]
fn a_run_is_a_trace_of_rounds_and_calls() {
    let lines = traces(&worked_example(), "otlp-content");
    assert_eq!(lines.len(), 1, "one line a run");
    let request = &lines[0];
    assert_eq!(
        request["resourceSpans"][0]["resource"]["attributes"],
        json!([{"key": "service.name", "value": {"stringValue": "roundup"}}])
    );
    assert_eq!(
        request["resourceSpans"][0]["scopeSpans"][0]["scope"],
        json!({"name": "roundup", "version": env!("CARGO_PKG_VERSION")})
    );
    let spans = spans(request);
    assert_eq!(
        names(&spans),
        ["invoke_agent", "chat", "execute_tool Bash", "chat", "execute_tool Read", "chat", "execute_tool Edit"]
    );
    let (run, round0, bash, round1, read, round2, edit) =
        (&spans[0], &spans[1], &spans[2], &spans[3], &spans[4], &spans[5], &spans[6]);
    // One trace; the tree: run > round > call.
    let trace = run["traceId"].as_str().unwrap();
    assert_eq!(trace.len(), 32);
    assert!(trace.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert!(spans.iter().all(|s| s["traceId"] == trace && s["spanId"].as_str().unwrap().len() == 16));
    assert!(run.get("parentSpanId").is_none());
    for round in [round0, round1, round2] {
        assert_eq!(round["parentSpanId"], run["spanId"]);
        assert_eq!(round["kind"], 3, "a model call is a client span");
    }
    assert_eq!(bash["parentSpanId"], round0["spanId"]);
    assert_eq!(read["parentSpanId"], round1["spanId"]);
    assert_eq!(edit["parentSpanId"], round2["spanId"]);
    let ids: HashSet<&Value> = spans.iter().map(|s| &s["spanId"]).collect();
    assert_eq!(ids.len(), spans.len(), "span ids are distinct");
    // Times: the replay's clock, in nanoseconds, as strings.
    let times = |s: &Value| (s["startTimeUnixNano"].clone(), s["endTimeUnixNano"].clone());
    assert_eq!(times(run), (json!("1000000000"), json!("2000000000")));
    assert_eq!(times(round0), (json!("1000000000"), json!("1400000000")));
    assert_eq!(times(bash), (json!("1100000000"), json!("1400000000")));
    assert_eq!(times(read), (json!("1600000000"), json!("1800000000")), "a stitched call ends at its late result");
    assert_eq!(times(edit), (json!("1900000000"), json!("2000000000")), "a placeholder ends at the close");
    // The run.
    assert_eq!(attr(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(run, "openinference.span.kind"), "AGENT");
    assert_eq!((attr(run, "gen_ai.conversation.id"), attr(run, "session.id")), (json!("s1"), json!("s1")));
    assert_eq!(attr(run, "roundup.finish_reason"), "canceled");
    assert_eq!((attr(run, "roundup.rounds"), attr(run, "roundup.tool_calls")), (json!(3), json!(3)));
    assert_eq!((attr(run, "roundup.stitches"), attr(run, "roundup.anomalies")), (json!(1), json!(1)));
    assert_eq!(attr(run, "output.value"), "Meanwhile, an edit.", "the run's output: its last text");
    assert!(run.get("status").is_none(), "a canceled run is no error");
    // A round.
    assert_eq!(attr(round0, "gen_ai.operation.name"), "chat");
    assert_eq!(attr(round0, "openinference.span.kind"), "LLM");
    assert_eq!(attr(round0, "roundup.round.index"), 0);
    assert_eq!(attr(round0, "roundup.round.closed_by"), "tools_done");
    assert_eq!(attr(round0, "output.value"), "Building.");
    assert_eq!(attr(round0, "llm.output_messages.0.message.role"), "assistant");
    assert_eq!(attr(round0, "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"), "Bash");
    let output: Value = serde_json::from_str(attr(round0, "gen_ai.output.messages").as_str().unwrap()).unwrap();
    assert_eq!(
        output,
        json!([{"role": "assistant", "parts": [
            {"type": "reasoning", "content": "Build first."},
            {"type": "text", "content": "Building."},
            {"type": "tool_call", "id": "t1", "name": "Bash", "arguments": {"cmd": "cargo build"}},
        ], "finish_reason": "tool_call"}])
    );
    // A failed call: the tool's own answer, no error status.
    assert_eq!(attr(bash, "gen_ai.tool.name"), "Bash");
    assert_eq!(attr(bash, "tool.name"), "Bash");
    assert_eq!(attr(bash, "gen_ai.tool.call.id"), "t1");
    assert_eq!(attr(bash, "roundup.tool.title"), "cargo build");
    assert_eq!(attr(bash, "gen_ai.tool.call.arguments"), "{\"cmd\":\"cargo build\"}");
    assert_eq!(attr(bash, "input.mime_type"), "application/json");
    assert_eq!(attr(bash, "gen_ai.tool.call.result"), "error[E0425]");
    assert_eq!(attr(bash, "roundup.tool.result.status"), "failed");
    assert!(bash.get("status").is_none());
    // The stitched call: its late result, an event when it came, and the
    // duplicate's anomaly on the same span.
    assert_eq!(attr(read, "gen_ai.tool.call.result"), "fn main() {}");
    assert_eq!(attr(read, "roundup.tool.stitched"), true);
    assert!(read.get("status").is_none(), "a stitched call has its result");
    let events = read["events"].as_array().unwrap();
    assert_eq!(events[0]["name"], "roundup.stitch");
    assert_eq!(events[0]["timeUnixNano"], "1800000000");
    assert_eq!(events[1]["name"], "roundup.anomaly.duplicate_terminal");
    assert_eq!(events[1]["timeUnixNano"], "1850000000", "an anomaly is at its call's clock");
    assert_eq!(attr(&events[1], "roundup.anomaly.detail"), "again");
    assert_eq!(attr(&events[1], "roundup.anomaly.status"), "completed");
    // The placeholder: an error that says why no result came.
    assert_eq!(edit["status"], json!({"message": "no result: canceled", "code": 2}));
    assert_eq!(attr(edit, "error.type"), "canceled");
    assert_eq!(attr(edit, "roundup.placeholder.reason"), "canceled");
    assert_eq!(attr(edit, "gen_ai.tool.name"), "Edit", "no name: the title");
    assert_eq!(attr(edit, "gen_ai.tool.call.result"), Value::Null);
}

/// Content is opt-in: without it, no text, argument, result or dropped
/// detail reaches the spans, and everything else is the same.
#[test]
fn content_is_left_out_unless_asked_for() {
    let without = traces(&worked_example(), "otlp");
    let with = traces(&worked_example(), "otlp-content");
    let text = without[0].to_string();
    for secret in ["Build first.", "Building.", "cargo build\\\"", "error[E0425]", "fn main", "again", "Meanwhile"] {
        assert!(!text.contains(secret), "{secret} is content: {text}");
    }
    let content_keys = [
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "input.value",
        "output.value",
        "tool.parameters",
        "roundup.anomaly.detail",
    ];
    let (without, with) = (spans(&without[0]), spans(&with[0]));
    assert_eq!(names(&without), names(&with));
    for (bare, full) in without.iter().zip(&with) {
        let keep = |span: &Value| -> Vec<Value> {
            span["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| {
                    let key = a["key"].as_str().unwrap();
                    !content_keys.contains(&key) && !key.starts_with("llm.output_messages") && key != "input.mime_type"
                })
                .cloned()
                .collect()
        };
        assert_eq!(keep(bare), keep(full), "{}", bare["name"]);
        assert_eq!(bare["spanId"], full["spanId"], "the ids do not depend on the option");
        assert_eq!(bare["status"], full["status"]);
        assert!(bare["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| !content_keys.contains(&a["key"].as_str().unwrap())));
    }
    // The anomaly is still there, its kind and status, not what was dropped.
    let event = &without[4]["events"][1];
    assert_eq!(event["name"], "roundup.anomaly.duplicate_terminal");
    assert_eq!(attr(event, "roundup.anomaly.detail"), Value::Null);
    assert_eq!(attr(event, "roundup.anomaly.id"), "t2");
}

/// The ids are a digest of the run: the same in every build (a value
/// written down here), the same when exported again, different for
/// another run of the same name.
#[test]
fn ids_are_the_same_for_the_same_run_and_only_for_it() {
    let input = ops(&[
        json!({"op": "message", "text": "Hi", "session": "s1"}),
        json!({"op": "finish", "reason": "completed", "session": "s1"}),
    ]);
    let first = traces(&input, "otlp");
    assert_eq!(first, traces(&input, "otlp"));
    let run = &spans(&first[0])[0];
    assert_eq!(run["traceId"], "4349951fc62af88e252d40d34ae3a642");
    assert_eq!(run["spanId"], "a1fdaf55e61cd006");
    let other = input.replace("Hi", "Hello");
    assert_ne!(
        spans(&traces(&other, "otlp")[0])[0]["traceId"],
        run["traceId"],
        "another run named s1 is another trace"
    );
}

/// A run whose summary finds nothing (an empty input) has no trace; runs
/// of one session are a trace each; anomalies after a run's finish are in
/// the records only.
#[test]
fn each_finished_run_is_one_line() {
    assert!(traces("", "otlp").is_empty());
    let input = ops(&[
        json!({"op": "message", "text": "one", "session": "a"}),
        json!({"op": "message", "text": "other", "session": "b"}),
        json!({"op": "finish", "reason": "completed", "session": "a"}),
        json!({"op": "message", "text": "late", "session": "a"}),
        json!({"op": "start", "session": "a"}),
        json!({"op": "message", "text": "two", "session": "a"}),
    ]);
    let lines = traces(&input, "otlp-content");
    let runs: Vec<(Value, Value, Value)> = lines
        .iter()
        .map(|line| {
            let root = &spans(line)[0];
            (attr(root, "session.id"), attr(root, "roundup.run"), attr(root, "roundup.finish_reason"))
        })
        .collect();
    assert_eq!(
        runs,
        [
            (json!("a"), json!(0), json!("completed")),
            (json!("a"), json!(1), json!("interrupted")),
            (json!("b"), json!(0), json!("interrupted")),
        ]
    );
    assert!(lines.iter().all(|line| !line.to_string().contains("after_finish")));
    let traces: HashSet<&Value> =
        lines.iter().map(|line| &line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]).collect();
    assert_eq!(traces.len(), 3);
}

/// What the adapters know of the model is in both vocabularies: the
/// provider, the model, the response, its finish reason and its tokens.
#[test]
fn the_model_and_its_tokens_are_attributes() {
    let path = roundup_testkit::repo_root().join("tests/fixtures/anthropic-messages");
    let file = roundup_testkit::fixture_files("anthropic-messages")
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains("tool")))
        .unwrap_or_else(|| panic!("a tool fixture in {}", path.display()));
    let input = std::fs::read(&file).unwrap();
    let (records, _) = replay_raw(&input, &options("auto", "records"));
    let records = parse_output(&records);
    let round = records.iter().find(|r| r["type"] == "round").unwrap();
    let (out, _) = replay_raw(&input, &options("auto", "otlp"));
    let lines = parse_output(&out);
    let chat = spans(&lines[0]).into_iter().find(|s| attr(s, "gen_ai.operation.name") == "chat").unwrap();
    let meta = &round["meta"];
    let model = meta["anthropic_model"].as_str().unwrap();
    assert_eq!(chat["name"], format!("chat {model}"));
    assert_eq!(attr(&chat, "gen_ai.provider.name"), "anthropic");
    assert_eq!(attr(&chat, "llm.provider"), "anthropic");
    assert_eq!(attr(&chat, "gen_ai.request.model"), model);
    assert_eq!(attr(&chat, "llm.model_name"), model);
    assert_eq!(attr(&chat, "gen_ai.response.id"), meta["anthropic_message_id"]);
    assert_eq!(attr(&chat, "gen_ai.response.finish_reasons"), json!([meta["anthropic_stop_reason"]]));
    let usage = &meta["anthropic_usage"];
    let cached = usage["cache_read_input_tokens"].as_i64().unwrap_or(0)
        + usage["cache_creation_input_tokens"].as_i64().unwrap_or(0);
    let input_tokens = usage["input_tokens"].as_i64().unwrap() + cached;
    assert_eq!(attr(&chat, "gen_ai.usage.input_tokens"), input_tokens);
    assert_eq!(attr(&chat, "llm.token_count.prompt"), input_tokens);
    assert_eq!(attr(&chat, "gen_ai.usage.output_tokens"), usage["output_tokens"]);
    assert_eq!(attr(&chat, "llm.token_count.completion"), usage["output_tokens"]);
}

/// Every vector and fixture: one trace per run, one chat span per round
/// with its text, one tool span per call with its name, arguments and
/// final result, an error status exactly on the placeholders, the parent
/// links right; the ids distinct across all inputs.
#[test]
fn every_input_is_its_rounds_as_spans() {
    let mut trace_ids = HashSet::new();
    let (mut runs, mut rounds, mut calls) = (0, 0, 0);
    for (name, input) in roundup_testkit::inputs() {
        let (records, _) = replay_raw(&input, &options("auto", "records"));
        let (out, _) = replay_raw(&input, &options("auto", "otlp-content"));
        let records = parse_output(&records);
        // The records, run by run, stitches applied.
        let mut expected: BTreeMap<(Option<String>, i64), Vec<Value>> = BTreeMap::new();
        let mut finished = Vec::new();
        for record in &records {
            let key = (record["session"].as_str().map(str::to_owned), record["run"].as_i64().unwrap());
            match record["type"].as_str() {
                Some("round") => expected.entry(key).or_default().push(record.clone()),
                Some("stitch") => {
                    let rounds = expected.entry(key).or_default();
                    let round = rounds.iter_mut().find(|r| r["index"] == record["round"]).unwrap();
                    let call = round["tool_calls"]
                        .as_array_mut()
                        .unwrap()
                        .iter_mut()
                        .find(|c| c["id"] == record["id"] && c["result"]["reason"] == "superseded")
                        .unwrap();
                    call["result"] = record["result"].clone();
                    call["finished_at_ms"] = record["finished_at_ms"].clone();
                }
                Some("summary") => {
                    let no_meta =
                        record.as_object().unwrap().keys().all(|k| roundup::Summary::FIELDS.contains(&k.as_str()));
                    let held_nothing = record["rounds"] == 0
                        && record["anomalies"] == 0
                        && record["last_token_usage"].is_null()
                        && no_meta;
                    if !held_nothing {
                        finished.push(key);
                    }
                }
                _ => {}
            }
        }
        let lines = parse_output(&out);
        assert_eq!(lines.len(), finished.len(), "{name}: one line a finished run");
        for (line, key) in lines.iter().zip(&finished) {
            let spans = spans(line);
            let root = &spans[0];
            assert_eq!(
                (attr(root, "session.id").as_str().map(str::to_owned), attr(root, "roundup.run").as_i64().unwrap()),
                key.clone(),
                "{name}"
            );
            assert!(trace_ids.insert(root["traceId"].clone()), "{name}: a trace id seen in another run");
            assert!(spans.iter().all(|s| s["traceId"] == root["traceId"]));
            let want = expected.remove(key).unwrap_or_default();
            let chats: Vec<&Value> = spans.iter().filter(|s| s["parentSpanId"] == root["spanId"]).collect();
            assert_eq!(chats.len(), want.len(), "{name} {key:?}: a chat span a round");
            assert_eq!(
                spans.len(),
                1 + want.len() + want.iter().map(|r| r["tool_calls"].as_array().unwrap().len()).sum::<usize>(),
                "{name}"
            );
            for (chat, round) in chats.iter().zip(&want) {
                assert_eq!(attr(chat, "roundup.round.index"), round["index"], "{name}");
                assert_eq!(
                    chat["startTimeUnixNano"],
                    (round["started_at_ms"].as_u64().unwrap() * 1_000_000).to_string()
                );
                let message = round["message"].as_str().unwrap();
                assert_eq!(
                    attr(chat, "output.value"),
                    if message.is_empty() { Value::Null } else { json!(message) },
                    "{name}"
                );
                let tools: Vec<&Value> = spans.iter().filter(|s| s["parentSpanId"] == chat["spanId"]).collect();
                let want_calls = round["tool_calls"].as_array().unwrap();
                assert_eq!(tools.len(), want_calls.len(), "{name}: a tool span a call");
                for (tool, call) in tools.iter().zip(want_calls) {
                    let tool_name = if call["name"].is_string() { &call["name"] } else { &call["title"] };
                    if tool_name != "" {
                        assert_eq!(attr(tool, "gen_ai.tool.name"), *tool_name, "{name}");
                        assert_eq!(tool["name"], format!("execute_tool {}", tool_name.as_str().unwrap()));
                    }
                    assert_eq!(attr(tool, "gen_ai.tool.call.id"), call["id"], "{name}");
                    assert_eq!(attr(tool, "gen_ai.tool.call.arguments"), call["arguments"], "{name}");
                    let result = &call["result"];
                    assert_eq!(attr(tool, "roundup.tool.result.status"), result["status"], "{name}");
                    assert_eq!(
                        tool["endTimeUnixNano"],
                        (call["finished_at_ms"].as_u64().unwrap().max(call["started_at_ms"].as_u64().unwrap())
                            * 1_000_000)
                            .to_string(),
                        "{name}"
                    );
                    if result["status"] == "placeholder" {
                        let message = format!("no result: {}", result["reason"].as_str().unwrap());
                        assert_eq!(tool["status"], json!({"message": message, "code": 2}), "{name}");
                        assert_eq!(attr(tool, "gen_ai.tool.call.result"), Value::Null);
                    } else {
                        assert!(tool.get("status").is_none(), "{name}: an error status only on a placeholder");
                        assert_eq!(attr(tool, "gen_ai.tool.call.result"), result["content"], "{name}");
                    }
                    calls += 1;
                }
                rounds += 1;
            }
            runs += 1;
        }
    }
    assert!(runs > 150 && rounds > 270 && calls > 230, "{runs} runs, {rounds} rounds, {calls} calls");
}

/// `--otlp-content` is `--emit otlp-content`, and goes with `--emit otlp`
/// only.
#[test]
fn the_content_flag_goes_with_otlp_only() {
    let run = crate::cli::roundup;
    let flagged = run(&["replay", "--emit", "otlp", "--otlp-content", "examples/session.ops.jsonl"]);
    let named = run(&["replay", "--emit", "otlp-content", "examples/session.ops.jsonl"]);
    assert_eq!(flagged.status.code(), Some(0));
    assert_eq!(flagged.stdout, named.stdout);
    assert!(String::from_utf8_lossy(&flagged.stdout).contains("\"gen_ai.tool.call.arguments\""));
    let bare = run(&["replay", "--emit", "otlp", "examples/session.ops.jsonl"]);
    assert!(!String::from_utf8_lossy(&bare.stdout).contains("\"gen_ai.tool.call.arguments\""));
    assert_eq!(
        String::from_utf8_lossy(&bare.stdout).lines().count(),
        String::from_utf8_lossy(&named.stdout).lines().count()
    );
    let wrong = run(&["replay", "--emit", "records", "--otlp-content", "examples/session.ops.jsonl"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--otlp-content goes with --emit otlp, not --emit records"));
}

/// A request a receiver got: its head (request line and headers) and body.
type Received = (String, Vec<u8>);

/// A receiver on 127.0.0.1 that answers each request with the next of
/// `statuses`, and hands back what it was sent: each request's head and
/// body.
fn receiver(statuses: Vec<u16>) -> (String, std::thread::JoinHandle<Vec<Received>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut received = Vec::new();
        for status in statuses {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .and_then(|n| n.trim().parse().ok())
                .unwrap();
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let answer = if status == 200 { "" } else { "{\"message\":\"no\"}" };
            let mut stream = reader.into_inner();
            write!(stream, "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{answer}", answer.len()).unwrap();
            received.push((head, body));
        }
        received
    });
    (url, handle)
}

/// `export --to otlp --endpoint`: each run's trace POSTed as protobuf to
/// the receiver's `/v1/traces`, the library's encoding of the line
/// `--emit otlp` prints; an unavailable receiver is asked again, a refusal
/// ends the export with what it said.
#[test]
fn export_sends_each_run_to_an_otlp_receiver() {
    let run = crate::cli::roundup;
    let printed = run(&["export", "--to", "otlp", "examples/session.ops.jsonl"]);
    let lines = parse_output(&printed.stdout);
    assert_eq!(lines.len(), 3);
    // The first run: the receiver is unavailable once, then takes it.
    let (url, received) = receiver(vec![503, 200, 200, 200]);
    let sent = run(&["export", "-q", "--to", "otlp", "--endpoint", &url, "examples/session.ops.jsonl"]);
    assert_eq!(sent.status.code(), Some(0), "{}", String::from_utf8_lossy(&sent.stderr));
    assert!(sent.stdout.is_empty(), "sent, not printed");
    let received = received.join().unwrap();
    assert_eq!(received.len(), 4);
    for (head, _) in &received {
        assert!(head.starts_with("POST /v1/traces HTTP/1.1\r\n"), "{head}");
        assert!(head.contains("Content-Type: application/x-protobuf\r\n"), "{head}");
    }
    let encode = |line: &Value| roundup::encoders::otlp::protobuf::encode(line).unwrap();
    assert_eq!(received[0].1, encode(&lines[0]));
    assert_eq!(received[1].1, encode(&lines[0]), "asked again");
    assert_eq!(received[2].1, encode(&lines[1]));
    assert_eq!(received[3].1, encode(&lines[2]));
    // A refusal is an error that quotes it.
    let (url, received) = receiver(vec![400]);
    let refused =
        run(&["export", "-q", "--to", "otlp", "--endpoint", &format!("{url}/custom"), "examples/session.ops.jsonl"]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("{url}/custom answered HTTP 400: {{\"message\":\"no\"}}")), "{stderr}");
    assert!(received.join().unwrap()[0].0.starts_with("POST /custom HTTP/1.1"));
    // Usage errors.
    let https = run(&["export", "--to", "otlp", "--endpoint", "https://x:4318", "examples/session.ops.jsonl"]);
    assert_eq!(https.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&https.stderr).contains("https is not supported"));
    let other = run(&["export", "--to", "anthropic", "--endpoint", "http://127.0.0.1:9", "examples/session.ops.jsonl"]);
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("--endpoint goes with --to otlp, not --to anthropic"));
    let content = run(&["export", "--to", "otlp", "--otlp-content", "examples/session.ops.jsonl"]);
    assert_eq!(content.stdout, run(&["replay", "--emit", "otlp-content", "examples/session.ops.jsonl"]).stdout);
}

/// A 100 MB ACP capture (100 prompts, each 60 shell tools with 16 KiB of
/// terminal output) exported as traces with their content: each run's
/// trace is written when the run finishes and forgotten, so memory is
/// bounded by the open run, not by the file. Release mode only (`.ci/run`
/// runs it).
#[test]
#[ignore = "100 MB: run in release mode"]
fn a_100_mb_acp_capture_exports_in_bounded_memory() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const RUNS: usize = 100;
    const CALLS: usize = 60;
    const LIMIT_KIB: u64 = 64 << 10;
    let (traces, tools) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (counted, whole) = (Arc::clone(&traces), Arc::clone(&tools));
    let started = std::time::Instant::now();
    let mut written = 0usize;
    let piped = roundup_testkit::pipe_through(
        env!("CARGO_BIN_EXE_roundup"),
        &["export", "-q", "--from", "acp", "--to", "otlp", "--otlp-content", "-"],
        |stdin| {
            for _ in 0..RUNS {
                roundup_testkit::load::acp_shell_session(CALLS, 16 << 10, |piece| {
                    stdin.write_all(piece).unwrap();
                    written += piece.len();
                });
            }
        },
        move |line| {
            let request: Value = serde_json::from_slice(line).unwrap();
            counted.fetch_add(1, Ordering::Relaxed);
            for span in spans(&request) {
                let result = attr(&span, "gen_ai.tool.call.result");
                whole.fetch_add(u64::from(result.as_str().is_some_and(|r| r.len() == 16 << 10)), Ordering::Relaxed);
            }
        },
    );
    assert!(piped.status.success(), "{}", piped.stderr);
    let seconds = started.elapsed().as_secs_f64();
    let (traces, tools) = (traces.load(Ordering::Relaxed), tools.load(Ordering::Relaxed));
    assert_eq!((traces, tools), (RUNS as u64, (RUNS * CALLS) as u64), "a trace a run, every call with its output");
    eprintln!(
        "{} MB of ACP exported as traces: {RUNS} runs, peak RSS {} KiB, {:.0} MB/s (informational)",
        written / 1_000_000,
        piped.peak_kib,
        written as f64 / 1e6 / seconds
    );
    assert!(written > 100_000_000, "{written} bytes");
    assert!(piped.peak_kib < LIMIT_KIB, "peak RSS {} KiB", piped.peak_kib);
}

/// An anomaly that names no call of the run is an event of the run's span,
/// at its clock: what it says is kept, what it dropped only with content.
#[test]
fn an_anomaly_without_its_call_is_an_event_of_the_run() {
    let input = ops(&[
        json!({"op": "message", "text": "Hi", "at_ms": 100}),
        json!({"op": "tool_update", "id": "t9", "content": "stray result", "status": "completed", "at_ms": 200}),
    ]) + "not json\n";
    let (out, _) = replay_raw(input.as_bytes(), &options("ops", "otlp"));
    let lines = parse_output(&out);
    let run = &spans(&lines[0])[0];
    let events = run["events"].as_array().unwrap();
    let names: Vec<&Value> = events.iter().map(|e| &e["name"]).collect();
    assert_eq!(names, ["roundup.anomaly.undeclared_terminal", "roundup.anomaly.bad_line"]);
    assert_eq!(events[0]["timeUnixNano"], "200000000");
    assert_eq!(attr(&events[0], "roundup.anomaly.id"), "t9");
    assert_eq!(attr(&events[0], "roundup.anomaly.detail"), Value::Null, "the dropped result is content");
    assert_eq!(attr(&events[1], "roundup.anomaly.detail").as_str().map(|d| d.starts_with("line 3: ")), Some(true));
    let (out, _) = replay_raw(input.as_bytes(), &options("ops", "otlp-content"));
    let run = &spans(&parse_output(&out)[0])[0];
    assert_eq!(attr(&run["events"][0], "roundup.anomaly.detail"), "stray result");
    assert_eq!(attr(run, "roundup.anomalies"), 2);
}
