//! The AI SDK UI message stream adapter on every recorded fixture
//! (tests/fixtures/ai-sdk, SSE bodies), and the traps of the protocol, each
//! as the smallest stream that shows it.

use std::path::{Path, PathBuf};

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

const FOLDER: &str = "ai-sdk";

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(FOLDER)
}

fn input(name: &str) -> Vec<u8> {
    std::fs::read(folder().join(name)).unwrap()
}

/// The `data:` payloads of an SSE body (every event of these recordings is
/// one line).
fn payloads(input: &[u8]) -> Vec<&str> {
    let text = std::str::from_utf8(input).unwrap();
    text.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim).collect()
}

/// The chunks of a body, read independently of the adapter.
fn chunks(input: &[u8]) -> Vec<Value> {
    payloads(input).into_iter().filter_map(|p| serde_json::from_str(p).ok()).collect()
}

/// What the chunks of `kind` say in `field`, joined.
fn joined(chunks: &[Value], kind: &str, field: &str) -> String {
    chunks.iter().filter(|c| c["type"] == kind).filter_map(|c| c[field].as_str()).collect()
}

fn records(name: &str) -> Vec<Value> {
    clean_replay(&input(name), "ai-sdk", "records")
}

/// A stream of chunks as the SSE body the wire carries, `[DONE]` last.
fn sse(chunks: &[&str]) -> String {
    chunks.iter().chain(&["[DONE]"]).map(|c| format!("data: {c}\n\n")).collect()
}

fn replay(chunks: &[&str]) -> Vec<Value> {
    clean_replay(sse(chunks).as_bytes(), "ai-sdk", "records")
}

fn summary(out: &[Value]) -> &Value {
    let summaries = of_type(out, "summary");
    assert_eq!(summaries.len(), 1, "one run: {out:?}");
    summaries[0]
}

fn calls(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round").into_iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).collect()
}

fn anomalies(out: &[Value]) -> Vec<(String, String)> {
    of_type(out, "anomaly")
        .iter()
        .map(|a| (a["kind"].as_str().unwrap().to_owned(), a["detail"].as_str().unwrap().to_owned()))
        .collect()
}

/// Every fixture: detected with no `--from`, the same output as with it,
/// rounds and UI events that keep the invariants, and no anomaly.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    let mut files = 0;
    for path in fixture_files(FOLDER) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        files += 1;
        let input = input(&name);
        let (named, named_stats) = replay_lines(&input, &options("ai-sdk", "records"));
        let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
        assert_eq!(named, auto, "{name}: detected as {:?}", auto_stats.format.map(|f| f.name()));
        assert_eq!(auto_stats.format.map(|f| f.name()), Some("ai-sdk"), "{name}");
        check_rounds(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ui, _) = replay_lines(&input, &options("ai-sdk", "ui"));
        check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(named_stats.bad_lines, 0, "{name}: {named:?}");
        assert_eq!(anomalies(&named), [], "{name}");
    }
    assert_eq!(files, 6);
}

/// What the adapter hands the machine is all the output depends on: the
/// calls it makes, recorded as ops JSONL, replay to the same output.
#[test]
fn an_ops_recording_of_every_fixture_replays_the_same() {
    for path in fixture_files(FOLDER) {
        let input = std::fs::read(&path).unwrap();
        let mut adapter = roundup::adapters::InputFormat::named("ai-sdk").unwrap().adapter();
        let mut ops = String::new();
        let mut sink = |_: Option<&str>, call: roundup::Call<'_>| {
            ops += &format!("{}\n", serde_json::to_value(call).unwrap());
        };
        for payload in payloads(&input) {
            adapter.translate(payload.as_bytes(), &mut sink).unwrap();
        }
        adapter.end(&mut sink);
        let native = clean_replay(&input, "ai-sdk", "records");
        assert_eq!(native, clean_replay(ops.as_bytes(), "ops", "records"), "{}", path.display());
    }
}

#[test]
fn langgraph_reasoning_then_a_call_streamed_as_deltas_that_waits_for_approval() {
    let name = "vercel-langchain-langgraph-hitl-request-1.sse";
    let chunks = chunks(&input(name));
    let out = records(name);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    let round = rounds[0];
    let reasoning = joined(&chunks, "reasoning-delta", "delta");
    assert_eq!(chunks.iter().filter(|c| c["type"] == "reasoning-delta").count(), 86);
    assert!(reasoning.starts_with("**Deleting a file**\n\nI need to use the delete_file tool right away"));
    assert_eq!(round["thought"], reasoning);
    assert_eq!(round["message"], "");
    let call = &round["tool_calls"][0];
    assert_eq!(
        (&call["id"], &call["title"], &call["name"]),
        (&json!("call_LOd3dMxgYxmNLWZVWXra9xWQ"), &json!("delete_file"), &json!("delete_file"))
    );
    // No `tool-input-available`: the deltas are the arguments.
    assert_eq!(call["arguments"], r#"{"filename":"report.pdf"}"#);
    assert_eq!(call["meta"], json!({"ai_sdk_dynamic": true, "ai_sdk_approval_id": "call_LOd3dMxgYxmNLWZVWXra9xWQ"}));
    // The approval is the client's to give: the run waits, and the
    // recording stops there.
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted"}));
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "interrupted");
    assert_eq!(summary["ai_sdk_responses"], json!([{}]), "no message id, no metadata, no finish reason");
    assert_eq!(summary["last_token_usage"], Value::Null);
    assert_eq!(summary["thought_bytes"], reasoning.len());
}

#[test]
fn langgraph_resumed_the_call_before_its_step_then_the_answer() {
    let name = "vercel-langchain-langgraph-hitl-request-2.sse";
    let chunks = chunks(&input(name));
    let out = records(name);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!((&call["id"], &call["name"]), (&json!("call_LOd3dMxgYxmNLWZVWXra9xWQ"), &json!("delete_file")));
    assert_eq!(call["arguments"], r#"{"filename":"report.pdf"}"#);
    assert_eq!(
        call["result"],
        json!({"status": "completed", "content": "File \"report.pdf\" has been deleted successfully"})
    );
    assert_eq!(call["meta"], json!({"ai_sdk_dynamic": true}));
    let text = joined(&chunks, "text-delta", "delta");
    assert_eq!(
        text,
        "The file \"report.pdf\" has been queued for deletion. You\u{2019}ll receive a confirmation once the action is approved and completed."
    );
    assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!(text), &json!("finish")));
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["tool_calls"]), (&json!("completed"), &json!(1)));
    assert_eq!(summary["message_bytes"], text.len());
}

/// The ADK bridge's single-response captures: no steps, the tool's output
/// in the stream, the usage in `finish.messageMetadata`.
#[test]
fn adk_tools_with_their_output_in_the_stream_and_no_steps() {
    let cases = [
        (
            "adk-stream-protocol-get_weather-sse-baseline.sse",
            "adk-e37b5422-e5e7-4f30-b811-f051556340a2",
            "get_weather",
            r#"{"location": "Tokyo"}"#,
            r#"{"temperature": 9.6, "condition": "Clear", "description": "clear sky", "humidity": 50, "feels_like": 9.4, "wind_speed": 1.34, "cached": true}"#,
            "東京の現在の天気は晴れ（clear sky）です。気温は9.6℃（体感温度9.4℃）、湿度は50%、風速は1.34m/sです。",
            json!({"promptTokens": 1292, "completionTokens": 45, "totalTokens": 1337}),
            "087acbc1-7b89-4dd3-a701-d3e59bf26e45",
        ),
        (
            "adk-stream-protocol-change_bgm-sse-baseline.sse",
            "adk-b179450e-9423-450c-bee1-cbd8c0758c02",
            "change_bgm",
            r#"{"track": 1}"#,
            r#"{"success": true, "track": 1, "message": "BGM change to track 1 initiated (frontend handles execution)"}"#,
            "背景音楽をトラック1に変更しました。",
            json!({"promptTokens": 1026, "completionTokens": 8, "totalTokens": 1034}),
            "31db9000-5283-4ec4-b490-ba97cbf442f1",
        ),
    ];
    for (name, id, tool, arguments, output, text, usage, message_id) in cases {
        let out = records(name);
        let rounds = of_type(&out, "round");
        assert_eq!(rounds.len(), 2, "{name}");
        let call = &rounds[0]["tool_calls"][0];
        assert_eq!((&call["id"], &call["title"], &call["name"]), (&json!(id), &json!(tool), &json!(tool)), "{name}");
        assert_eq!(call["arguments"], arguments, "{name}: the input's JSON as sent");
        assert_eq!(call["result"], json!({"status": "completed", "content": output}), "{name}");
        assert_eq!((&rounds[0]["closed_by"], &rounds[0]["message"]), (&json!("tools_done"), &json!("")));
        assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!(text), &json!("finish")), "{name}");
        let summary = summary(&out);
        assert_eq!(summary["finish_reason"], "completed", "{name}");
        assert_eq!(summary["last_token_usage"], usage["totalTokens"], "{name}");
        assert_eq!(summary["ai_sdk_finish_reason"], "stop");
        let response = json!({"message_id": message_id, "finish_reason": "stop",
            "metadata": {"usage": usage, "modelVersion": "gemini-3-flash-preview"}});
        assert_eq!(summary["ai_sdk_responses"], json!([response]), "{name}");
    }
}

/// Two HTTP responses: the first asks for approval and finishes (`stop`),
/// the second carries the call's result and the answer. One run.
#[test]
fn adk_approval_answered_in_the_second_response() {
    let out = records("adk-stream-protocol-process_payment-approved-sse-baseline.sse");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(
        (&call["id"], &call["name"]),
        (&json!("adk-76fd5266-0e6b-4ee1-989c-260ae1fe118b"), &json!("process_payment"))
    );
    assert_eq!(
        call["arguments"],
        r#"{"currency": "USD", "description": "Payment to Hanako", "recipient": "Hanako", "amount": 50}"#
    );
    assert_eq!(call["meta"]["ai_sdk_approval_id"], "adk-96481be2-17a0-4aa9-aef6-de5f22d6fc00");
    assert_eq!(call["result"]["status"], "completed");
    let result: Value = serde_json::from_str(call["result"]["content"].as_str().unwrap()).unwrap();
    assert_eq!((&result["transaction_id"], &result["wallet_balance"]), (&json!("txn_60fb721bc781"), &json!(950.0)));
    assert_eq!(
        rounds[1]["message"],
        "Hanakoさんへの50ドルの送金が完了しました。\n（取引ID: txn_60fb721bc781、現在のウォレット残高: 950ドル）"
    );
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["stitches"]), (&json!("completed"), &json!(0)));
    // The second response's usage is the gauge; totalTokens is not prompt
    // plus completion (thinking is counted), and is taken as sent.
    assert_eq!(summary["last_token_usage"], 2687);
    let responses = summary["ai_sdk_responses"].as_array().unwrap();
    assert_eq!(responses.len(), 2);
    assert_eq!(responses[0]["message_id"], "49713e40-a967-4292-a870-59329c6593bb");
    assert_eq!(responses[0]["metadata"]["usage"]["totalTokens"], 2540);
    assert_eq!(responses[1]["message_id"], "be1f29fb-a647-4102-bbc7-04b23224889f");
}

/// The denial comes as a `tool-output-error` of the second response.
#[test]
fn adk_denial_is_a_failed_result_in_the_second_response() {
    let out = records("adk-stream-protocol-get_location-denied-sse-baseline.sse");
    let rounds = of_type(&out, "round");
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!((&call["name"], &call["arguments"]), (&json!("get_location"), &json!("{}")));
    assert_eq!(call["result"], json!({"status": "failed", "content": "This tool call is rejected."}));
    assert_eq!(call["meta"]["ai_sdk_approval_id"], "adk-a521f34c-0c92-43b0-8e6d-64d085c75171");
    assert_eq!(rounds.len(), 2);
    assert!(rounds[1]["message"].as_str().unwrap().starts_with("申し訳ありませんが、位置情報の取得が拒否されました。"));
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["failed_tool_calls"]), (&json!("completed"), &json!(1)));
    assert_eq!(summary["last_token_usage"], 1210);
}

const START: &str = r#"{"type":"start","messageId":"m1"}"#;
const FINISH: &str = r#"{"type":"finish","finishReason":"stop"}"#;

#[test]
fn a_stream_with_no_steps_at_all() {
    let out = replay(&[
        START,
        r#"{"type":"text-start","id":"0"}"#,
        r#"{"type":"text-delta","id":"0","delta":"Hello"}"#,
        r#"{"type":"text-end","id":"0"}"#,
        FINISH,
    ]);
    let rounds = of_type(&out, "round");
    assert_eq!((rounds.len(), &rounds[0]["message"]), (1, &json!("Hello")));
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn tool_chunks_before_the_first_step_belong_to_it() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"ls"}"#,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"ls","input":{"p":"."}}"#,
        r#"{"type":"start-step"}"#,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":"a.txt"}"#,
        r#"{"type":"finish-step"}"#,
        r#"{"type":"start-step"}"#,
        r#"{"type":"text-delta","id":"t","delta":"Done."}"#,
        r#"{"type":"finish-step"}"#,
        FINISH,
    ]);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!((&call["arguments"], &call["result"]["content"]), (&json!(r#"{"p":"."}"#), &json!("a.txt")));
    assert_eq!(rounds[1]["message"], "Done.");
    assert_eq!(anomalies(&out), []);
}

#[test]
fn preliminary_outputs_are_live_output_and_only_the_last_final_one_is_the_result() {
    let declare = r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"search","input":{}}"#;
    let preliminary = |n: u8| {
        format!(r#"{{"type":"tool-output-available","toolCallId":"c1","output":{{"found":{n}}},"preliminary":true}}"#)
    };
    let (one, two) = (preliminary(1), preliminary(2));
    // Cut after two preliminary outputs: the placeholder keeps the last.
    let out = replay(&[START, declare, &one, &two]);
    let call = calls(&out)[0].clone();
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted", "output": r#"{"found":2}"#}));
    // With the final output: it is the result.
    let out = replay(&[
        START,
        declare,
        &one,
        &two,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":{"found":3,"done":true}}"#,
        FINISH,
    ]);
    assert_eq!(calls(&out)[0]["result"], json!({"status": "completed", "content": r#"{"found":3,"done":true}"#}));
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn input_deltas_without_input_available_are_the_arguments() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"read","title":"Read a file"}"#,
        r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"path\":"}"#,
        r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"\"a.txt\"}"}"#,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":"hello"}"#,
        FINISH,
    ]);
    let call = calls(&out)[0];
    assert_eq!((&call["title"], &call["name"]), (&json!("Read a file"), &json!("read")), "the title is the producer's");
    assert_eq!(call["arguments"], r#"{"path":"a.txt"}"#);
    assert_eq!(call["result"]["content"], "hello");
}

#[test]
fn input_available_replaces_the_deltas() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"read"}"#,
        r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"pa"}"#,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"read","input":{"path":"b.txt"}}"#,
    ]);
    assert_eq!(calls(&out)[0]["arguments"], r#"{"path":"b.txt"}"#);
    assert_eq!(calls(&out).len(), 1, "the same call");
}

#[test]
fn an_input_error_keeps_the_input_and_fails_the_call() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-error","toolCallId":"c1","toolName":"nope","input":"{\"x\":","errorText":"Model tried to call unavailable tool 'nope'."}"#,
        r#"{"type":"text-delta","id":"t","delta":"Sorry."}"#,
        FINISH,
    ]);
    let call = calls(&out)[0];
    assert_eq!((&call["name"], &call["arguments"]), (&json!("nope"), &json!("{\"x\":")));
    assert_eq!(call["result"], json!({"status": "failed", "content": "Model tried to call unavailable tool 'nope'."}));
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn a_denied_output_fails_the_call() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"rm","input":{"path":"/"}}"#,
        r#"{"type":"tool-approval-request","approvalId":"ap1","toolCallId":"c1"}"#,
        r#"{"type":"tool-output-denied","toolCallId":"c1"}"#,
        FINISH,
    ]);
    let call = calls(&out)[0];
    assert_eq!(call["result"], json!({"status": "failed", "content": "denied"}));
    assert_eq!(call["meta"], json!({"ai_sdk_approval_id": "ap1", "ai_sdk_denied": true}));
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["failed_tool_calls"]), (&json!("completed"), &json!(1)));
}

#[test]
fn an_approval_request_keeps_the_call_open_across_the_finish() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"pay","input":{"amount":5}}"#,
        r#"{"type":"tool-approval-request","approvalId":"ap1","toolCallId":"c1"}"#,
        FINISH,
    ]);
    let call = calls(&out)[0];
    assert_eq!(call["meta"]["ai_sdk_approval_id"], "ap1");
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted"}));
    assert_eq!(summary(&out)["finish_reason"], "interrupted", "waiting for the client when the capture ended");
}

#[test]
fn abort_cancels_the_run() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"sleep","input":{}}"#,
        r#"{"type":"abort","reason":"user stop"}"#,
        FINISH,
    ]);
    assert_eq!(calls(&out)[0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["ai_sdk_abort_reason"]), (&json!("canceled"), &json!("user stop")));
    // The `finish` that follows ends nothing more, and is kept.
    let kept = anomalies(&out);
    assert_eq!(kept, [("after_finish".into(), format!("ai-sdk: finish after the run ended: {FINISH}"))]);
}

#[test]
fn an_error_fails_the_run_at_its_finish_or_at_the_end() {
    let error = r#"{"type":"error","errorText":"Rate limit exceeded"}"#;
    let text = r#"{"type":"text-delta","id":"t","delta":"Part"}"#;
    for chunks in [vec![START, text, error, FINISH], vec![START, text, error]] {
        let out = replay(&chunks);
        assert_eq!(anomalies(&out), [("protocol_error".into(), "ai-sdk: error: Rate limit exceeded".into())]);
        assert_eq!(summary(&out)["finish_reason"], "failed", "{chunks:?}");
        assert_eq!(of_type(&out, "round")[0]["message"], "Part");
    }
}

#[test]
fn finish_reasons() {
    let cases = [
        (r#"{"type":"finish"}"#, "completed"),
        (r#"{"type":"finish","finishReason":"length"}"#, "completed"),
        (r#"{"type":"finish","finishReason":"other"}"#, "completed"),
        (r#"{"type":"finish","finishReason":"content-filter"}"#, "failed"),
        (r#"{"type":"finish","finishReason":"error"}"#, "failed"),
    ];
    for (finish, reason) in cases {
        let out = replay(&[START, r#"{"type":"text-delta","id":"t","delta":"x"}"#, finish]);
        assert_eq!(summary(&out)["finish_reason"], reason, "{finish}");
        assert_eq!(anomalies(&out), [], "{finish}");
    }
    let out = replay(&[START, r#"{"type":"finish","finishReason":"sleepy"}"#]);
    assert_eq!(anomalies(&out), [("unknown_status".into(), "ai-sdk: finish reason sleepy".into())]);
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

/// `tool-calls`: the run waits for the calls still without a result (the
/// client's tools); when the stream answered them all, it is over.
#[test]
fn tool_calls_wait_for_their_results_only_while_some_have_none() {
    let call = r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{}}"#;
    let tool_calls = r#"{"type":"finish","finishReason":"tool-calls"}"#;
    let out = replay(&[START, call, tool_calls]);
    assert_eq!(summary(&out)["finish_reason"], "interrupted");
    let answered = r#"{"type":"tool-output-available","toolCallId":"c1","output":1}"#;
    let out = replay(&[START, call, answered, tool_calls]);
    assert_eq!(summary(&out)["finish_reason"], "completed");
    assert_eq!(summary(&out)["ai_sdk_finish_reason"], "tool-calls");
}

/// The second response of a capture answers the call the first left
/// waiting, even after text closed the call's round: a stitch, one run.
#[test]
fn a_second_response_answers_the_first_ones_call() {
    let out = replay(&[
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"ask","input":{}}"#,
        r#"{"type":"text-delta","id":"0","delta":"Asking the user."}"#,
        r#"{"type":"finish","finishReason":"tool-calls"}"#,
        r#"{"type":"start","messageId":"m2"}"#,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":"yes"}"#,
        r#"{"type":"text-delta","id":"0","delta":"They said yes."}"#,
        FINISH,
    ]);
    let stitches = of_type(&out, "stitch");
    assert_eq!(stitches.len(), 1);
    assert_eq!((&stitches[0]["id"], &stitches[0]["result"]["content"]), (&json!("c1"), &json!("yes")));
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["rounds"]), (&json!("completed"), &json!(2)));
    // Text after text is one round's, whichever response it came in.
    assert_eq!(of_type(&out, "round")[1]["message"], "Asking the user.They said yes.");
    let ids: Vec<&Value> = summary["ai_sdk_responses"].as_array().unwrap().iter().map(|r| &r["message_id"]).collect();
    assert_eq!(ids, [&json!("m1"), &json!("m2")]);
    assert_eq!(anomalies(&out), []);
}

/// A response after one that finished with nothing waiting is the next run.
#[test]
fn a_response_after_a_finished_one_is_the_next_run() {
    let text = r#"{"type":"text-delta","id":"0","delta":"Hi"}"#;
    let out = replay(&[START, text, FINISH, r#"{"type":"start","messageId":"m2"}"#, text, FINISH]);
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    assert_eq!((&summaries[1]["run"], &summaries[1]["finish_reason"]), (&json!(1), &json!("completed")));
    assert_eq!(summaries[1]["ai_sdk_responses"], json!([{"message_id": "m2", "finish_reason": "stop"}]));
    // A result for a call of the finished run is undeclared in the next.
    let out = replay(&[
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{}}"#,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":1}"#,
        FINISH,
        START,
        r#"{"type":"tool-output-available","toolCallId":"c1","output":2}"#,
    ]);
    assert_eq!(anomalies(&out), [("undeclared_terminal".into(), "2".into())]);
}

#[test]
fn sources_files_data_and_metadata_are_kept() {
    let source = r#"{"type":"source-url","sourceId":"s1","url":"https://example.com","title":"Example"}"#;
    let document = r#"{"type":"source-document","sourceId":"s2","mediaType":"application/pdf","title":"Doc"}"#;
    let file = r#"{"type":"file","url":"data:image/png;base64,AA==","mediaType":"image/png"}"#;
    let data = r#"{"type":"data-weather","id":"w1","data":{"city":"Paris"}}"#;
    let transient = r#"{"type":"data-status","data":"thinking","transient":true}"#;
    let signed = r#"{"type":"reasoning-end","id":"r","providerMetadata":{"anthropic":{"signature":"c2ln"}}}"#;
    let out = replay(&[
        r#"{"type":"start","messageId":"m1","messageMetadata":{"createdAt":1}}"#,
        r#"{"type":"reasoning-delta","id":"r","delta":"Hmm."}"#,
        signed,
        r#"{"type":"text-delta","id":"0","delta":"See the source."}"#,
        source,
        document,
        file,
        data,
        transient,
        r#"{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":10,"outputTokens":5}}}"#,
        r#"{"type":"finish","finishReason":"stop","messageMetadata":{"model":"m"}}"#,
    ]);
    let round = of_type(&out, "round")[0];
    let value = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    assert_eq!(round["meta"]["ai_sdk_sources"], json!([value(source), value(document)]));
    assert_eq!(round["meta"]["ai_sdk_files"], json!([value(file)]));
    assert_eq!(round["meta"]["ai_sdk_data"], json!([value(data), value(transient)]));
    assert_eq!(round["meta"]["ai_sdk_provider_metadata"], json!([value(signed)]));
    assert_eq!((&round["thought"], &round["message"]), (&json!("Hmm."), &json!("See the source.")));
    let summary = summary(&out);
    assert_eq!(summary["last_token_usage"], 15, "input plus output without a total");
    let metadata = json!({"createdAt": 1, "usage": {"inputTokens": 10, "outputTokens": 5}, "model": "m"});
    assert_eq!(
        summary["ai_sdk_responses"],
        json!([{"message_id": "m1", "finish_reason": "stop", "metadata": metadata}])
    );
}

#[test]
fn unknown_chunks_and_chunks_missing_a_field_are_kept() {
    let unknown = r#"{"type":"tool-approval-response","approvalId":"a","approved":true}"#;
    let missing = r#"{"type":"tool-input-start","toolName":"f"}"#;
    let out = replay(&[START, unknown, missing, r#"{"type":"text-delta","id":"0","delta":"x"}"#, FINISH]);
    assert_eq!(
        anomalies(&out),
        [
            ("unknown_event".into(), format!("ai-sdk: unknown chunk: {unknown}")),
            ("unknown_event".into(), format!("ai-sdk: tool-input-start without toolCallId: {missing}")),
        ]
    );
    assert_eq!(summary(&out)["finish_reason"], "completed");
    // A payload that is not a chunk at all is a bad line, and the replay
    // goes on.
    let (lines, stats) = replay_lines(sse(&[START, "{\"type\":", FINISH]).as_bytes(), &options("ai-sdk", "records"));
    assert_eq!(stats.bad_lines, 1);
    assert_eq!(summary(&lines)["finish_reason"], "completed");
}

/// The adapter's state goes into a replay's checkpoint and comes back: a
/// replay cut between the two responses and resumed gives the same output.
#[test]
fn the_state_between_two_responses_is_saved_and_restored() {
    let mut adapter = roundup::adapters::InputFormat::named("ai-sdk").unwrap().adapter();
    let mut sink = |_: Option<&str>, _: roundup::Call<'_>| {};
    for chunk in [
        START,
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{}}"#,
        r#"{"type":"error","errorText":"boom"}"#,
    ] {
        adapter.translate(chunk.as_bytes(), &mut sink).unwrap();
    }
    let state = adapter.save().unwrap();
    assert_eq!(
        state,
        json!({"pending": ["c1"], "finished": false, "failed": true, "responses": [{"message_id": "m1"}]})
    );
    let mut restored = roundup::adapters::InputFormat::named("ai-sdk").unwrap().adapter();
    restored.restore(state.clone()).unwrap();
    assert_eq!(restored.save().unwrap(), state);
    assert!(restored.restore(json!({"pending": 3})).is_err());
}

/// No other format's fixtures are read as this one, and the generic chunk
/// types are this format's only with their own fields.
#[test]
fn detection_is_specific() {
    use roundup::adapters::InputFormat;
    let recognised = |line: &str| InputFormat::recognise(line.as_bytes()).map(InputFormat::name);
    assert_eq!(recognised(r#"{"type":"start"}"#), Some("ai-sdk"));
    assert_eq!(recognised(r#"{"type":"error","errorText":"x"}"#), Some("ai-sdk"));
    assert_eq!(recognised(r#"{"type":"data-weather","data":{}}"#), Some("ai-sdk"));
    assert_eq!(recognised(r#"{"type":"start","session":"x"}"#), None);
    assert_eq!(recognised(r#"{"type":"error","message":"x"}"#), None);
    assert_eq!(recognised(r#"{"type":"file","path":"a"}"#), None);
}

/// Every response of a run is in its `ai_sdk_responses`, in order, with what
/// each said of itself, whether the run finishes or is left waiting for a
/// tool's result at the end of input.
#[test]
fn a_runs_responses_hold_every_step_however_the_run_ends() {
    let step = |n: usize| {
        [
            format!(r#"{{"type":"start","messageId":"m{n}"}}"#),
            format!(r#"{{"type":"tool-input-available","toolCallId":"c{n}","toolName":"t","input":{{}}}}"#),
            r#"{"type":"finish","finishReason":"tool-calls"}"#.to_owned(),
            format!(r#"{{"type":"tool-output-available","toolCallId":"c{n}","output":"ok"}}"#),
        ]
    };
    let mut lines: Vec<String> = (1..=3).flat_map(step).collect();
    lines.push(r#"{"type":"finish","finishReason":"stop"}"#.to_owned());
    lines.extend(step(4).into_iter().take(3));
    lines.push(r#"{"type":"start","messageId":"m5"}"#.to_owned());
    let out = clean_replay((lines.join("\n") + "\n").as_bytes(), "ai-sdk", "records");
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    let ids = |s: &Value| -> Vec<Value> {
        s["ai_sdk_responses"].as_array().unwrap().iter().map(|r| r["message_id"].clone()).collect()
    };
    assert_eq!(summaries[0]["finish_reason"], "completed");
    assert_eq!(ids(summaries[0]), [json!("m1"), json!("m2"), json!("m3")]);
    assert_eq!(summaries[0]["ai_sdk_responses"][1]["finish_reason"], "tool-calls");
    assert_eq!(summaries[1]["finish_reason"], "interrupted");
    assert_eq!(ids(summaries[1]), [json!("m4"), json!("m5")]);
}
