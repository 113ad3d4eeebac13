//! The Gemini (`streamGenerateContent`) and Gemini CLI (`stream-json`)
//! adapters on every recorded fixture (tests/fixtures/gemini,
//! tests/fixtures/gemini-cli), and the traps of their protocols, each as
//! the smallest stream that shows it.

use std::path::{Path, PathBuf};

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

/// The fixture folders and the format each is read as.
const FOLDERS: [(&str, &str); 2] = [("gemini", "gemini"), ("gemini-cli", "gemini-cli")];

fn folder(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn input(folder_name: &str, name: &str) -> Vec<u8> {
    std::fs::read(folder(folder_name).join(name)).unwrap()
}

/// The payloads of a stream as sent: SSE `data:` lines, JSON lines (every
/// event of these recordings is one line), or the elements of a JSON array
/// body.
fn payloads(input: &[u8]) -> Vec<&str> {
    let text = std::str::from_utf8(input).unwrap();
    if text.trim_start().starts_with('[') {
        let elements: Vec<&serde_json::value::RawValue> = serde_json::from_str(text).unwrap();
        return elements.into_iter().map(|element| element.get()).collect();
    }
    text.lines()
        .map(|line| line.trim_end_matches('\r'))
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .filter(|line| !line.is_empty())
        .collect()
}

/// The JSON payloads of a stream, read independently of the adapter.
fn events(input: &[u8]) -> Vec<Value> {
    payloads(input).into_iter().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// The parts of candidate 0 of every chunk.
fn parts(events: &[Value]) -> Vec<&Value> {
    events.iter().filter_map(|e| e["candidates"][0]["content"]["parts"].as_array()).flatten().collect()
}

/// The text of the parts that are (`thought`) or are not reasoning.
fn text_of(events: &[Value], thought: bool) -> String {
    parts(events)
        .iter()
        .filter(|p| p["thought"].as_bool().unwrap_or(false) == thought)
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// Every `thoughtSignature` of a stream, in order.
fn signatures(events: &[Value]) -> Vec<String> {
    parts(events).iter().filter_map(|p| p["thoughtSignature"].as_str()).map(str::to_owned).collect()
}

fn records(folder_name: &str, name: &str) -> Vec<Value> {
    let format = FOLDERS.iter().find(|(f, _)| *f == folder_name).unwrap().1;
    clean_replay(&input(folder_name, name), format, "records")
}

fn lines(input: &str, from: &str) -> Vec<Value> {
    clean_replay(input.as_bytes(), from, "records")
}

fn summary(out: &[Value]) -> &Value {
    let summaries = of_type(out, "summary");
    assert_eq!(summaries.len(), 1, "one run: {out:?}");
    summaries[0]
}

fn calls(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round").into_iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).collect()
}

/// Every fixture: detected with no `--from`, the same output as with it,
/// rounds and UI events that keep the invariants, and no anomaly but those
/// the recording asks for.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    let mut files = 0;
    for (folder_name, format) in FOLDERS {
        for path in fixture_files(folder_name) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files += 1;
            let input = input(folder_name, &name);
            let (named, named_stats) = replay_lines(&input, &options(format, "records"));
            let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
            assert_eq!(named, auto, "{name}: detected as {:?}", auto_stats.format.map(|f| f.name()));
            assert_eq!(auto_stats.format.map(|f| f.name()), Some(format), "{name}");
            check_rounds(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
            let (ui, _) = replay_lines(&input, &options(format, "ui"));
            check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{name}: {e}"));
            // The CLI's snapshot has a `<DURATION>` placeholder where JSON
            // has a number: its `result` line is not JSON.
            let bad = u64::from(name == "gemini-cli-snapshot-streaming-events.jsonl");
            assert_eq!(named_stats.bad_lines, bad, "{name}: {named:?}");
            let expected: &[&str] = match name.as_str() {
                "js-genai-send-message-stream-with-error.body.jsonl"
                | "js-genai-send-message-stream-with-error.body.json" => &["protocol_error"],
                "gemini-cli-snapshot-streaming-events.jsonl" => &["bad_line"],
                _ => &[],
            };
            let kinds: Vec<&str> = of_type(&named, "anomaly").iter().map(|a| a["kind"].as_str().unwrap()).collect();
            assert_eq!(kinds, expected, "{name}: {named:?}");
        }
    }
    assert_eq!(files, 15);
}

/// What the adapter hands the machine is all the output depends on: the
/// calls it makes, recorded as ops JSONL, replay to the same output.
#[test]
fn an_ops_recording_of_every_fixture_replays_the_same() {
    struct Ops(String, Option<u64>);
    impl roundup::adapters::CallSink for Ops {
        fn call(&mut self, session: Option<&str>, call: roundup::Call<'_>) {
            let mut line = serde_json::to_value(call).unwrap();
            if let Some(session) = session {
                line["session"] = session.into();
            }
            if let Some(at_ms) = self.1 {
                line["at_ms"] = at_ms.into();
            }
            self.0 += &format!("{line}\n");
        }
        fn clock(&mut self, at_ms: u64) {
            self.1 = Some(at_ms);
        }
    }
    for (folder_name, format) in FOLDERS {
        for path in fixture_files(folder_name) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "gemini-cli-snapshot-streaming-events.jsonl" {
                continue;
            }
            let input = input(folder_name, &name);
            let mut adapter = roundup::adapters::InputFormat::named(format).unwrap().adapter();
            let mut ops = Ops(String::new(), None);
            for payload in payloads(&input) {
                adapter.translate(payload.as_bytes(), &mut ops).unwrap();
            }
            adapter.end(&mut ops);
            let native = clean_replay(&input, format, "records");
            assert_eq!(native, clean_replay(ops.0.as_bytes(), "ops", "records"), "{name}");
        }
    }
}

#[test]
fn text_with_a_closing_signature_and_usage_on_every_chunk() {
    let input = input("gemini", "vercel-google-text.chunks.jsonl");
    let out = records("gemini", "vercel-google-text.chunks.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    let round = rounds[0];
    assert_eq!(round["message"], "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y");
    assert_eq!(round["thought"], "", "hidden thinking is only counted");
    assert_eq!(round["tool_calls"], json!([]));
    // The signature rides on an empty text part of the last chunk.
    let signatures = signatures(&events(&input));
    assert_eq!(signatures.len(), 1);
    assert!(signatures[0].starts_with("EqsFCqgFAb4+9vvtAF5n87lB4OGDOoTRMOqp35jW65XsYXh6BySMwl9nvrbAvPcl2U0x"));
    assert_eq!(round["meta"]["gemini_thought_signatures"], json!(signatures));
    assert_eq!(round["meta"]["gemini_finish_reason"], "STOP");
    assert_eq!(round["meta"]["gemini_response_id"], "bH6LaZW8Fp_3nsEPqtaSwQ4");
    assert_eq!(round["meta"]["gemini_model_version"], "gemini-3-pro-preview");
    let usage = &round["meta"]["gemini_usage"];
    assert_eq!((&usage["totalTokenCount"], &usage["thoughtsTokenCount"]), (&json!(217), &json!(185)));
    assert_eq!(usage["candidatesTokenCount"], 23);
    let summary = summary(&out);
    // 199, 217, 217 on the three chunks: the last, not their sum.
    assert_eq!(summary["last_token_usage"], 217);
    assert_eq!(summary["finish_reason"], "completed");
    assert_eq!(summary["message_bytes"], 55);
}

#[test]
fn a_whole_function_call_without_an_id_then_the_finish_alone() {
    let input = input("gemini", "vercel-google-tool-call-gemini3.chunks.jsonl");
    let out = records("gemini", "vercel-google-tool-call-gemini3.chunks.jsonl");
    let round = of_type(&out, "round")[0];
    let call = &round["tool_calls"][0];
    assert_eq!(
        (&call["id"], &call["title"], &call["name"]),
        (&json!("gemini-1"), &json!("weather"), &json!("weather"))
    );
    assert_eq!(call["arguments"], r#"{"location":"San Francisco"}"#);
    // The model called a function for the host to run: the response ended,
    // not the run, and the recording stops there.
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted"}));
    let signature = &signatures(&events(&input))[0];
    assert_eq!(signature.len(), 5_488);
    assert_eq!(call["meta"]["gemini_thought_signature"], json!(signature), "kept whole");
    assert_eq!(round["meta"]["gemini_finish_reason"], "STOP");
    assert_eq!(round["meta"]["gemini_usage"]["thoughtsTokenCount"], 804);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("interrupted"), &json!(848)));
}

/// Vertex streams a call's arguments as `partialArgs` (path and value
/// pieces, not JSON text); three calls to one function, one after the
/// other, with no id and no index; a call with no `args` at all.
#[test]
fn streamed_arguments_and_parallel_calls_of_one_function() {
    let input = input("gemini", "vercel-google-stream-no-args-tool-call.chunks.jsonl");
    let out = records("gemini", "vercel-google-stream-no-args-tool-call.chunks.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["thought"], text_of(&events(&input), true));
    assert!(rounds[0]["thought"].as_str().unwrap().starts_with("**Processing User Requests**"));
    let calls = calls(&out);
    let seen: Vec<(&Value, &Value, &Value)> = calls.iter().map(|c| (&c["id"], &c["name"], &c["arguments"])).collect();
    assert_eq!(
        seen,
        [
            (&json!("gemini-1"), &json!("read_theme"), &json!("{}")),
            (&json!("gemini-2"), &json!("read_screen"), &json!(r#"{"id":"A"}"#)),
            (&json!("gemini-3"), &json!("read_screen"), &json!(r#"{"id":"B"}"#)),
            (&json!("gemini-4"), &json!("read_screen"), &json!(r#"{"id":"C"}"#)),
        ]
    );
    assert_eq!(calls[0]["meta"]["gemini_thought_signature"], json!(signatures(&events(&input))[0]));
    assert!(calls[1..].iter().all(|c| c.get("meta").is_none()));
    let meta = &rounds[0]["meta"];
    assert_eq!(meta["gemini_create_time"], "2026-05-04T20:01:02.264968Z");
    assert_eq!(meta["gemini_usage"]["trafficType"], "PROVISIONED_THROUGHPUT");
    assert_eq!(meta["gemini_usage"]["totalTokenCount"], 490, "the last chunk's, not a trafficType-only one");
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("interrupted"), &json!(490)));
    assert_eq!(summary["placeholders"], json!({"interrupted": 4}));
}

#[test]
fn streamed_arguments_closed_by_the_finish_chunk() {
    let input = input("gemini", "vercel-google-stream-tool-call-arguments.chunks.jsonl");
    let out = records("gemini", "vercel-google-stream-tool-call-arguments.chunks.jsonl");
    let calls = calls(&out);
    assert_eq!(calls.len(), 2);
    assert_eq!((&calls[0]["id"], &calls[0]["arguments"]), (&json!("gemini-1"), &json!(r#"{"location":"Boston"}"#)));
    assert_eq!(
        (&calls[1]["id"], &calls[1]["arguments"]),
        (&json!("gemini-2"), &json!(r#"{"location":"San Francisco"}"#))
    );
    assert!(calls.iter().all(|c| c["name"] == "getWeather"));
    assert_eq!(calls[0]["meta"]["gemini_thought_signature"], json!(signatures(&events(&input))[0]));
    let round = of_type(&out, "round")[0];
    assert_eq!(round["meta"]["gemini_model_version"], "gemini-3.1-pro-preview");
    assert_eq!(summary(&out)["last_token_usage"], 181);
}

#[test]
fn thought_summaries_then_a_call_with_empty_args() {
    let input = input("gemini", "firebase-googleai-thinking-function-call-thought-summary-signature.sse");
    let out = records("gemini", "firebase-googleai-thinking-function-call-thought-summary-signature.sse");
    let round = of_type(&out, "round")[0];
    let thought = round["thought"].as_str().unwrap();
    assert_eq!(thought, text_of(&events(&input), true));
    assert!(thought.starts_with("**Calculating the Days**") && thought.contains("**Determining the Approach**"));
    assert_eq!(thought.len(), 765);
    assert_eq!(round["message"], "");
    let call = &round["tool_calls"][0];
    assert_eq!((&call["id"], &call["name"], &call["arguments"]), (&json!("gemini-1"), &json!("now"), &json!("{}")));
    let signature = &signatures(&events(&input))[0];
    assert!(signature.starts_with("CiIBVKhc7vB+vaaq6rA/KC79Ts7iXagIOA4EBOyBFDpl+pxPCmcBVKhc7gYy"));
    assert_eq!(call["meta"]["gemini_thought_signature"], json!(signature));
    assert!(round["meta"].get("gemini_thought_signatures").is_none(), "the thoughts had none");
    let summary = summary(&out);
    assert_eq!((&summary["last_token_usage"], &summary["thought_bytes"]), (&json!(212), &json!(765)));
}

/// Code execution is a tool call (its code the arguments) whose result is
/// the `codeExecutionResult` that follows; tool-use prompt tokens make the
/// total jump.
#[test]
fn code_execution_is_a_call_with_its_result_in_the_stream() {
    let out = records("gemini", "firebase-googleai-code-execution.sse");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(
        rounds[0]["message"],
        "To find the sum of the first 5 prime numbers, we first need to identify them. The first five prime numbers \
         are 2, 3, 5, 7, and 11.\n\nNow, let's calculate their sum using a Python tool:\n\n"
    );
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!((&call["id"], &call["name"]), (&json!("gemini-1"), &json!("code_execution")));
    let code: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(code["language"], "PYTHON");
    assert!(code["code"].as_str().unwrap().starts_with("prime_numbers = [2, 3, 5, 7, 11]\n"));
    assert_eq!(
        call["result"],
        json!({"status": "completed", "content": "The sum of the first 5 prime numbers is: 28\n"})
    );
    assert_eq!(call["meta"]["gemini_code_outcome"], "OUTCOME_OK");
    assert_eq!(rounds[1]["message"], "The sum of the first 5 prime numbers is 28.");
    assert_eq!(rounds[1]["meta"]["gemini_usage"]["toolUsePromptTokenCount"], 243);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(485)));
}

#[test]
fn a_prompt_blocked_before_any_candidate_fails_the_run() {
    let out = records("gemini", "firebase-googleai-prompt-blocked-safety.sse");
    assert!(of_type(&out, "round").is_empty());
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "failed");
    assert_eq!(summary["gemini_block_reason"], "SAFETY");
    let ratings = summary["gemini_prompt_feedback"]["safetyRatings"].as_array().unwrap();
    assert_eq!(ratings.len(), 4);
    assert_eq!(
        (&ratings[1]["category"], &ratings[1]["probability"]),
        (&json!("HARM_CATEGORY_HATE_SPEECH"), &json!("HIGH"))
    );
}

#[test]
fn a_candidate_stopped_for_safety_fails_the_run_and_keeps_its_ratings() {
    let out = records("gemini", "firebase-vertexai-finish-reason-safety.sse");
    let round = of_type(&out, "round")[0];
    assert_eq!(round["message"], "<redacted>");
    assert_eq!(round["meta"]["gemini_finish_reason"], "SAFETY");
    assert_eq!(round["meta"]["gemini_model_version"], "gemini-1.5-flash");
    assert!(round["meta"].get("gemini_response_id").is_none(), "Vertex sent none");
    let ratings = round["meta"]["gemini_safety_ratings"].as_array().unwrap();
    assert_eq!(ratings.len(), 4);
    assert_eq!((&ratings[2]["category"], &ratings[2]["blocked"]), (&json!("HARM_CATEGORY_HARASSMENT"), &json!(true)));
    assert_eq!(ratings[2]["probabilityScore"], 0.55078125);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("failed"), &json!(76)));
}

/// An HTTP error body (404, with an SSE content type) is an error event:
/// reported whole, and the run fails.
#[test]
fn an_error_body_fails_the_run() {
    let out = records("gemini", "js-genai-send-message-stream-with-error.body.jsonl");
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0]["kind"], "protocol_error");
    let detail = anomalies[0]["detail"].as_str().unwrap();
    assert!(detail.starts_with("gemini: error: "));
    let error: Value = serde_json::from_str(detail.trim_start_matches("gemini: error: ")).unwrap();
    assert_eq!((&error["code"], &error["status"]), (&json!(404), &json!("NOT_FOUND")));
    assert!(error["message"].as_str().unwrap().starts_with("models/custom-gemini-2.0-flash is not found"));
    assert_eq!(summary(&out)["finish_reason"], "failed");
}

/// Thought summaries, then the answer whose first part carries the
/// signature (not a thought part), usage on all 23 chunks.
#[test]
fn thought_summaries_and_a_signature_on_the_first_answer_part() {
    let input = input("gemini", "pydantic-ai-google-thinking-part-iter.sse");
    let events = events(&input);
    assert_eq!(events.len(), 23);
    let out = records("gemini", "pydantic-ai-google-thinking-part-iter.sse");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    let round = rounds[0];
    assert_eq!(round["thought"], text_of(&events, true));
    assert_eq!(round["message"], text_of(&events, false));
    assert!(round["thought"].as_str().unwrap().starts_with("**Clarifying User Goals**"));
    assert!(round["message"].as_str().unwrap().starts_with("This is a great question! Safely crossing the street"));
    let signatures = signatures(&events);
    assert_eq!(signatures.len(), 1);
    assert!(signatures[0].starts_with("CiIB0e2Kb6Syj1a961EfbWv4W5C8Rg"));
    assert_eq!(round["meta"]["gemini_thought_signatures"], json!(signatures));
    assert_eq!(round["meta"]["gemini_model_version"], "gemini-2.5-pro");
    let summary = summary(&out);
    assert_eq!((&summary["thought_bytes"], &summary["message_bytes"]), (&json!(1575), &json!(1938)));
    assert_eq!((&summary["last_token_usage"], &summary["finish_reason"]), (&json!(1290), &json!("completed")));
}

/// Search grounding is server-side and shows only as metadata, empty
/// (`{}`) until the last chunk.
#[test]
fn grounding_metadata_is_kept_and_empty_ones_do_not_replace_it() {
    let out = records("gemini", "pydantic-ai-google-web-search-tool-stream.sse");
    let round = of_type(&out, "round")[0];
    assert!(round["message"].as_str().unwrap().starts_with("### Weather in San Francisco is Mild and Partly Cloudy"));
    assert!(calls(&out).is_empty(), "the search is no call of the stream");
    let grounding = &round["meta"]["gemini_grounding_metadata"];
    assert_eq!(grounding["webSearchQueries"], json!(["weather in San Francisco today"]));
    assert_eq!(grounding["groundingChunks"].as_array().unwrap().len(), 5);
    assert_eq!(grounding["groundingChunks"][1]["web"]["title"], "timeanddate.com");
    assert_eq!(round["meta"]["gemini_usage"]["toolUsePromptTokenCount"], 102);
    let summary = summary(&out);
    assert_eq!((&summary["last_token_usage"], &summary["finish_reason"]), (&json!(772), &json!("completed")));
}

#[test]
fn gemini_cli_snapshot_with_deltas_and_a_result_that_is_not_json() {
    let (out, stats) = replay_lines(
        &input("gemini-cli", "gemini-cli-snapshot-streaming-events.jsonl"),
        &options("gemini-cli", "records"),
    );
    assert_eq!(stats.bad_lines, 1);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["message"], "Thinking...");
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(
        (&call["id"], &call["name"], &call["title"]),
        (&json!("tool-1"), &json!("testTool"), &json!("testTool"))
    );
    assert_eq!(call["arguments"], r#"{"arg1":"value1"}"#);
    assert_eq!(call["result"], json!({"status": "completed", "content": "Tool executed successfully"}));
    assert_eq!(rounds[1]["message"], "Final answer");
    let bad = of_type(&out, "anomaly")[0];
    assert!(bad["detail"].as_str().unwrap().starts_with("line 7: "));
    let summary = summary(&out);
    // The `result` line did not read: the run ends with the input.
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("interrupted"), &Value::Null));
    assert_eq!(summary["gemini_cli_session_id"], "test-session-id");
    assert_eq!(summary["gemini_cli_model"], "test-model");
    assert_eq!(summary["gemini_cli_user_message"], "Stream test");
}

#[test]
fn gemini_cli_shell_command_with_stats_and_times() {
    let out = records("gemini-cli", "hyperyolo-gemini-stream-json.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["message"], "");
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!((&call["id"], &call["name"]), (&json!("tool_1"), &json!("run_shell_command")));
    assert_eq!(call["arguments"], r#"{"command":"pwd"}"#);
    assert_eq!(call["result"], json!({"status": "completed", "content": "/Users/jordan/hyperyolo\n"}));
    // 2025-12-09T21:40:36.789Z and .990Z.
    assert_eq!(
        (&call["started_at_ms"], &call["finished_at_ms"]),
        (&json!(1_765_316_436_789_u64), &json!(1_765_316_436_990_u64))
    );
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(128)));
    assert_eq!(
        summary["gemini_cli_stats"],
        json!({"total_tokens": 128, "input_tokens": 74, "output_tokens": 26, "duration_ms": 1142, "tool_calls": 1})
    );
    assert_eq!(summary["gemini_cli_session_id"], "6f2f060c-8846-4aa4-8a61-56e60ba38c85");
    assert_eq!(summary["gemini_cli_user_message"], "Respond with OK only.");
}

#[test]
fn gemini_cli_older_schema_without_deltas_or_a_total() {
    let out = records("gemini-cli", "untether-gemini_stream_success.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 3);
    let calls = calls(&out);
    let seen: Vec<(&Value, &Value, &Value, &Value)> =
        calls.iter().map(|c| (&c["id"], &c["name"], &c["arguments"], &c["result"]["content"])).collect();
    assert_eq!(
        seen,
        [
            (&json!("tool_1"), &json!("Bash"), &json!(r#"{"command":"echo hello"}"#), &json!("hello")),
            (
                &json!("tool_2"),
                &json!("write_file"),
                &json!(r#"{"file_path":"notes.md","content":"hello"}"#),
                &json!("wrote notes.md")
            ),
        ]
    );
    assert_eq!(rounds[2]["message"], "The command output `hello`.");
    let summary = summary(&out);
    // No total_tokens: input plus output.
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(150)));
    assert_eq!(summary["gemini_cli_model"], "gemini-2.0-flash-exp");
}

fn chunk(response: &str, parts: Value) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "responseId": response})
        .to_string()
}

fn finish(response: &str, reason: &str) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": reason}], "responseId": response})
        .to_string()
}

fn stream(lines: &[String]) -> String {
    lines.join("\n")
}

/// Trap: parallel calls come in chunks of their own, with no id and no
/// index (keyed by index or by name they would collide); the host answers
/// them by name, in order.
#[test]
fn parallel_calls_without_ids_in_separate_chunks_are_separate_calls() {
    let input = stream(&[
        chunk("r1", json!([{"functionCall": {"name": "read", "args": {"path": "a"}}}])),
        chunk("r1", json!([{"functionCall": {"name": "read", "args": {"path": "b"}}}])),
        finish("r1", "STOP"),
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "A"}}},
            {"functionResponse": {"name": "read", "response": {"output": "B"}}}]})
        .to_string(),
    ]);
    let out = lines(&input, "gemini");
    let calls = calls(&out);
    let seen: Vec<(&Value, &Value, &Value)> = calls.iter().map(|c| (&c["id"], &c["arguments"], &c["result"])).collect();
    assert_eq!(
        seen,
        [
            (
                &json!("gemini-1"),
                &json!(r#"{"path":"a"}"#),
                &json!({"status": "completed", "content": r#"{"output":"A"}"#})
            ),
            (
                &json!("gemini-2"),
                &json!(r#"{"path":"b"}"#),
                &json!({"status": "completed", "content": r#"{"output":"B"}"#})
            ),
        ]
    );
    assert_eq!(of_type(&out, "round")[0]["closed_by"], "tools_done");
    assert!(of_type(&out, "anomaly").is_empty());
}

/// Trap: `usageMetadata` is cumulative and repeated on every chunk: a
/// gauge, the last value, never a sum; thoughts are counted apart.
#[test]
fn cumulative_usage_is_a_gauge_not_a_sum() {
    let usage = |candidates: u64, thoughts: u64| {
        json!({"promptTokenCount": 10, "candidatesTokenCount": candidates, "thoughtsTokenCount": thoughts,
            "totalTokenCount": 10 + candidates + thoughts})
    };
    let input = stream(&[
        json!({"candidates": [{"content": {"parts": [{"text": "a"}]}}], "usageMetadata": usage(1, 50), "responseId": "r"})
            .to_string(),
        json!({"candidates": [{"content": {"parts": [{"text": "b"}]}}], "usageMetadata": usage(2, 50), "responseId": "r"})
            .to_string(),
        json!({"candidates": [{"content": {"parts": [{"text": "c"}]}, "finishReason": "STOP"}], "usageMetadata": usage(3, 50), "responseId": "r"})
            .to_string(),
        json!({"usageMetadata": usage(3, 50), "responseId": "r"}).to_string(),
    ]);
    let out = lines(&input, "gemini");
    assert_eq!(summary(&out)["last_token_usage"], 63, "not 61 + 62 + 63 + 63");
    let usage = &of_type(&out, "round")[0]["meta"]["gemini_usage"];
    assert_eq!((&usage["thoughtsTokenCount"], &usage["candidatesTokenCount"]), (&json!(50), &json!(3)));
    let ui = clean_replay(input.as_bytes(), "gemini", "ui");
    let gauges: Vec<&Value> = ui.iter().filter(|e| e["event"] == "token_usage").map(|e| &e["total"]).collect();
    assert_eq!(gauges, [&json!(61), &json!(62), &json!(63)], "a repeated value is not told again");
    // Without a total, the counters are its parts.
    let input = json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 2, "thoughtsTokenCount": 4}})
    .to_string();
    assert_eq!(summary(&lines(&input, "gemini"))["last_token_usage"], 13);
}

/// Trap: a prompt blocked by `promptFeedback.blockReason` has no
/// candidates at all: no round, a failed run, the reason kept.
#[test]
fn a_blocked_prompt_is_a_failed_run() {
    let out = lines(r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}"#, "gemini");
    assert!(of_type(&out, "round").is_empty() && of_type(&out, "anomaly").is_empty());
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "failed");
    assert_eq!(summary["gemini_block_reason"], "PROHIBITED_CONTENT");
    assert_eq!(summary["gemini_prompt_feedback"], json!({"blockReason": "PROHIBITED_CONTENT"}));
}

/// Trap: an id is made up when the model gives none, deterministically
/// (the same input gives the same ids); one the model gives is kept.
#[test]
fn missing_ids_are_made_up_deterministically() {
    let input = stream(&[
        chunk("r1", json!([{"functionCall": {"name": "ls", "args": {}}}])),
        chunk("r1", json!([{"functionCall": {"id": "call_x", "name": "ls", "args": {}}}])),
        chunk("r1", json!([{"executableCode": {"language": "PYTHON", "code": "print(1)"}}])),
        chunk("r1", json!([{"functionCall": {"name": "ls"}}])),
    ]);
    let ids = |out: &[Value]| -> Vec<String> {
        calls(out).iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let first = lines(&input, "gemini");
    assert_eq!(ids(&first), ["gemini-1", "call_x", "gemini-2", "gemini-3"]);
    assert_eq!(ids(&lines(&input, "gemini")), ids(&first));
    assert_eq!(lines(&input, "gemini"), first, "the same output");
}

/// Trap: a `thoughtSignature` is opaque and goes back to the API as it
/// came: kept byte for byte, on a thought, a text and a call.
#[test]
fn thought_signatures_are_kept_byte_exact() {
    let signatures = ["CiIB+/0rX==", "EqsF/9a+b=\u{e9}\\n\"", "Cm0BjzE="];
    let input = stream(&[
        chunk("r", json!([{"text": "hm", "thought": true, "thoughtSignature": signatures[0]}])),
        chunk("r", json!([{"text": "Hello", "thoughtSignature": signatures[1]}])),
        chunk("r", json!([{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": signatures[2]}])),
    ]);
    let out = lines(&input, "gemini");
    let round = of_type(&out, "round")[0];
    let kept: Vec<&str> =
        round["meta"]["gemini_thought_signatures"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(kept, signatures[..2]);
    assert_eq!(round["tool_calls"][0]["meta"]["gemini_thought_signature"].as_str(), Some(signatures[2]));
    assert_eq!((&round["thought"], &round["message"]), (&json!("hm"), &json!("Hello")));
}

/// `STOP` and `MAX_TOKENS` complete the run (the native reason kept);
/// `SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL` and the other
/// reasons fail it.
#[test]
fn each_finish_reason_ends_the_run_as_it_says() {
    for (reason, expected) in [
        ("STOP", "completed"),
        ("MAX_TOKENS", "completed"),
        ("SAFETY", "failed"),
        ("RECITATION", "failed"),
        ("BLOCKLIST", "failed"),
        ("PROHIBITED_CONTENT", "failed"),
        ("SPII", "failed"),
        ("MALFORMED_FUNCTION_CALL", "failed"),
        ("OTHER", "failed"),
    ] {
        let input = stream(&[chunk("r", json!([{"text": "cut"}])), finish("r", reason)]);
        let out = lines(&input, "gemini");
        assert_eq!(summary(&out)["finish_reason"], expected, "{reason}");
        assert_eq!(of_type(&out, "round")[0]["meta"]["gemini_finish_reason"], reason);
    }
    // A malformed call is no call for the host to run: the run fails even
    // with one declared.
    let input = stream(&[
        chunk("r", json!([{"functionCall": {"name": "f", "args": {}}}])),
        finish("r", "MALFORMED_FUNCTION_CALL"),
    ]);
    let out = lines(&input, "gemini");
    assert_eq!(summary(&out)["finish_reason"], "failed");
    assert_eq!(calls(&out)[0]["result"], json!({"status": "placeholder", "reason": "failed"}));
}

/// Older endpoints put `STOP` on every chunk: a finish reason ends the
/// run only when the response is over, so the text after it is the same
/// round's.
#[test]
fn a_stop_on_every_chunk_ends_the_run_once() {
    let chunk = |text: &str| {
        json!({"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}], "modelVersion": "gemini-1.0-pro"})
            .to_string()
    };
    let out = lines(&stream(&[chunk("One, "), chunk("two, "), chunk("three.")]), "gemini");
    assert_eq!(of_type(&out, "round").len(), 1);
    assert_eq!(of_type(&out, "round")[0]["message"], "One, two, three.");
    assert_eq!(summary(&out)["finish_reason"], "completed");
    assert!(of_type(&out, "anomaly").is_empty());
}

/// A recorded agent loop: a response calling a function, the host's
/// result, the next response answering, one run; a response that ends
/// without calls ends the run, and the next response begins the next.
#[test]
fn an_agent_loop_is_one_run_and_the_next_response_the_next() {
    let input = stream(&[
        json!({"role": "user", "parts": [{"text": "Weather in Paris?"}]}).to_string(),
        chunk("r1", json!([{"text": "Checking."}, {"functionCall": {"name": "weather", "args": {"city": "Paris"}}}])),
        finish("r1", "STOP"),
        json!({"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"output": "sunny"}}}]})
            .to_string(),
        chunk("r2", json!([{"text": "It is sunny."}])),
        finish("r2", "STOP"),
        chunk("r3", json!([{"text": "Anything else?"}])),
        finish("r3", "STOP"),
    ]);
    let out = lines(&input, "gemini");
    let rounds = of_type(&out, "round");
    let seen: Vec<(&Value, &Value, &Value)> =
        rounds.iter().map(|r| (&r["run"], &r["message"], &r["closed_by"])).collect();
    assert_eq!(
        seen,
        [
            (&json!(0), &json!("Checking."), &json!("tools_done")),
            (&json!(0), &json!("It is sunny."), &json!("finish")),
            (&json!(1), &json!("Anything else?"), &json!("finish")),
        ]
    );
    assert_eq!(rounds[0]["tool_calls"][0]["result"]["content"], r#"{"output":"sunny"}"#);
    assert_eq!(rounds[1]["meta"]["gemini_response_id"], "r2");
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[0]["gemini_user_message"], "Weather in Paris?");
    assert!(summaries.iter().all(|s| s["finish_reason"] == "completed"));
}

/// A function response in the stream (automatic or MCP calls run by the
/// server) is the result of the call of its name; one whose value is an
/// `error` fails it; a failed code execution fails its call.
#[test]
fn results_in_the_stream_answer_their_calls() {
    let input = stream(&[
        chunk("r", json!([{"functionCall": {"name": "lookup", "args": {"q": "x"}}}])),
        chunk("r", json!([{"functionResponse": {"name": "lookup", "response": {"error": "no such key"}}}])),
        chunk("r", json!([{"executableCode": {"language": "PYTHON", "code": "1/0"}}])),
        chunk("r", json!([{"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"}}])),
        chunk("r", json!([{"toolCall": {"id": "t9", "toolType": "GOOGLE_SEARCH_WEB", "args": {"query": "rust"}}}])),
        chunk("r", json!([{"toolResponse": {"id": "t9", "response": {"results": 3}}}])),
        chunk("r", json!([{"text": "Done."}])),
        finish("r", "STOP"),
    ]);
    let out = lines(&input, "gemini");
    let calls = calls(&out);
    let seen: Vec<(&Value, &Value, &Value)> =
        calls.iter().map(|c| (&c["name"], &c["arguments"], &c["result"])).collect();
    assert_eq!(
        seen,
        [
            (
                &json!("lookup"),
                &json!(r#"{"q":"x"}"#),
                &json!({"status": "failed", "content": r#"{"error":"no such key"}"#})
            ),
            (
                &json!("code_execution"),
                &json!(r#"{"language":"PYTHON","code":"1/0"}"#),
                &json!({"status": "failed", "content": "ZeroDivisionError"})
            ),
            (
                &json!("GOOGLE_SEARCH_WEB"),
                &json!(r#"{"query":"rust"}"#),
                &json!({"status": "completed", "content": r#"{"results":3}"#})
            ),
        ]
    );
    assert_eq!(calls[2]["id"], "t9");
    assert_eq!(summary(&out)["finish_reason"], "completed", "the server ran them all");
}

/// A server-side MCP call: `STOP` after the call (the model waits for its
/// result), the result in the stream, the answer, `STOP` again at the end:
/// one run, completed once.
#[test]
fn a_stop_before_an_in_stream_result_does_not_end_the_run() {
    let input = stream(&[
        chunk("r", json!([{"functionCall": {"name": "mcp_search", "args": {"q": "rust"}}}])),
        finish("r", "STOP"),
        chunk("r", json!([{"functionResponse": {"name": "mcp_search", "response": {"output": "3 hits"}}}])),
        chunk("r", json!([{"text": "Found 3."}])),
        finish("r", "STOP"),
    ]);
    let out = lines(&input, "gemini");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(
        rounds[0]["tool_calls"][0]["result"],
        json!({"status": "completed", "content": r#"{"output":"3 hits"}"#})
    );
    assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!("Found 3."), &json!("finish")));
    assert_eq!(summary(&out)["finish_reason"], "completed");
    assert!(of_type(&out, "anomaly").is_empty());
}

/// Streamed arguments with no closing `functionCall: {}` are final at the
/// finish reason, or at the end of the stream: never lost.
#[test]
fn streamed_arguments_never_closed_are_final_at_the_end() {
    let open = chunk("r", json!([{"functionCall": {"name": "write", "willContinue": true}}]));
    let piece = |path: &str, text: &str| {
        chunk(
            "r",
            json!([{"functionCall": {"partialArgs": [{"jsonPath": path, "stringValue": text, "willContinue": true}], "willContinue": true}}]),
        )
    };
    let input =
        stream(&[open, piece("$.path", "a.txt"), piece("$.body.lines[1]", "two"), piece("$.body.lines[1]", "!")]);
    let out = lines(&input, "gemini");
    assert_eq!(calls(&out)[0]["arguments"], r#"{"path":"a.txt","body":{"lines":[null,"two!"]}}"#);
    assert_eq!(summary(&out)["finish_reason"], "interrupted");
}

/// Every native event becomes calls or is reported, kept whole: a part of
/// an unknown kind, an event of none of the known fields, a turn of an
/// unknown role.
#[test]
fn what_cannot_be_translated_is_reported_with_it() {
    let input = stream(&[
        chunk("r", json!([{"text": "a"}, {"futurePart": {"x": "kept-1"}}])),
        json!({"somethingElse": "kept-2"}).to_string(),
        json!({"role": "system", "parts": [{"text": "kept-3"}]}).to_string(),
        chunk("r", json!([{"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}])),
    ]);
    let out = lines(&input, "gemini");
    let anomalies = of_type(&out, "anomaly");
    let seen: Vec<(&str, &str)> =
        anomalies.iter().map(|a| (a["kind"].as_str().unwrap(), a["detail"].as_str().unwrap())).collect();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|(kind, _)| *kind == "unknown_event"));
    assert_eq!(seen[0].1, r#"gemini: a part of a kind this format does not know: {"futurePart":{"x":"kept-1"}}"#);
    assert!(seen[1].1.contains("kept-2") && seen[2].1.contains("kept-3"));
    let round = of_type(&out, "round")[0];
    assert_eq!(round["message"], "a");
    assert_eq!(round["meta"]["gemini_inline_data"], json!([{"mimeType": "image/png", "data": "iVBOR"}]));
}

/// With `candidateCount` > 1, each candidate is a stream of its own: a
/// session of its own, its own finish.
#[test]
fn candidates_beyond_the_first_are_sessions_of_their_own() {
    let input = json!({"candidates": [
        {"index": 0, "content": {"parts": [{"text": "A"}]}, "finishReason": "STOP"},
        {"index": 1, "content": {"parts": [{"text": "B"}]}, "finishReason": "SAFETY"}], "responseId": "r"})
    .to_string();
    let out = lines(&input, "gemini");
    let runs: Vec<(&Value, &Value)> =
        of_type(&out, "summary").iter().map(|s| (&s["session"], &s["finish_reason"])).collect();
    assert_eq!(runs.len(), 2);
    assert!(runs.contains(&(&Value::Null, &json!("completed"))));
    assert!(runs.contains(&(&json!("candidate-1"), &json!("failed"))));
    let second = of_type(&out, "round").into_iter().find(|r| r["session"] == "candidate-1").unwrap();
    assert_eq!(second["message"], "B");
    check_ui_per_session(&clean_replay(input.as_bytes(), "gemini", "ui")).unwrap();
}

/// A stream checkpointed anywhere, a streamed call open, continues to the
/// same output after a restore.
#[test]
fn a_checkpoint_mid_stream_restores_to_the_same_output() {
    let input = input("gemini", "vercel-google-stream-no-args-tool-call.chunks.jsonl");
    let whole = clean_replay(&input, "gemini", "records");
    let payloads = payloads(&input);
    let options = options("gemini", "records");
    for cut in [1, 4, 7, payloads.len() - 1] {
        let mut first = roundup::Replayer::new(&options).unwrap();
        for event in &payloads[..cut] {
            first.feed_payload(event.as_bytes(), &mut ());
        }
        let mut out = Vec::new();
        first.take_output(&mut out);
        let checkpoint = roundup::ReplayCheckpoint::from_json(&first.checkpoint().unwrap().to_json()).unwrap();
        let mut second = roundup::Replayer::new(&options).unwrap();
        second.restore(checkpoint).unwrap();
        for event in &payloads[cut..] {
            second.feed_payload(event.as_bytes(), &mut ());
        }
        second.finish(&mut ());
        second.take_output(&mut out);
        assert_eq!(roundup_testkit::capture::parse_output(&out), whole, "cut at {cut}");
    }
}

/// Gemini CLI: a failed tool's result is its error message (the error
/// kept whole); `error` events are reported and the run goes on; a
/// failed `result` fails the run; the next `init` is the next run.
#[test]
fn gemini_cli_failures_and_invocations() {
    let input = r#"{"type":"init","timestamp":"2026-01-15T10:00:00Z","session_id":"s1","model":"m"}
{"type":"tool_use","timestamp":"2026-01-15T10:00:01Z","tool_name":"read_file","tool_id":"t1","parameters":{"path":"x"}}
{"type":"tool_result","timestamp":"2026-01-15T10:00:02Z","tool_id":"t1","status":"error","error":{"type":"FILE_NOT_FOUND","message":"no such file: x"}}
{"type":"error","timestamp":"2026-01-15T10:00:03Z","severity":"warning","message":"Loop detected"}
{"type":"message","timestamp":"2026-01-15T10:00:04Z","role":"assistant","content":"Sorry.","delta":true}
{"type":"result","timestamp":"2026-01-15T10:00:05Z","status":"error","error":{"type":"FatalTurnLimitedError","message":"max turns"},"stats":{"total_tokens":9}}
{"type":"init","timestamp":"2026-01-15T10:01:00Z","session_id":"s2","model":"m"}
{"type":"message","timestamp":"2026-01-15T10:01:01Z","role":"assistant","content":"Hi again.","delta":true}
{"type":"result","timestamp":"2026-01-15T10:01:02Z","status":"success","stats":{"total_tokens":3}}
{"type":"future_event","x":"kept"}"#;
    let out = lines(input, "gemini-cli");
    let call = &calls(&out)[0];
    assert_eq!(call["result"], json!({"status": "failed", "content": "no such file: x"}));
    assert_eq!(call["meta"]["gemini_cli_error"], json!({"type": "FILE_NOT_FOUND", "message": "no such file: x"}));
    let rounds = of_type(&out, "round");
    assert_eq!((&rounds[1]["message"], &rounds[1]["run"]), (&json!("Sorry."), &json!(0)), "the warning did not end it");
    assert_eq!((&rounds[2]["message"], &rounds[2]["run"]), (&json!("Hi again."), &json!(1)));
    let summaries = of_type(&out, "summary");
    let ends: Vec<(&Value, &Value, &Value)> =
        summaries.iter().map(|s| (&s["finish_reason"], &s["last_token_usage"], &s["gemini_cli_session_id"])).collect();
    assert_eq!(ends, [(&json!("failed"), &json!(9), &json!("s1")), (&json!("completed"), &json!(3), &json!("s2"))]);
    assert_eq!(summaries[0]["gemini_cli_error"]["message"], "max turns");
    let anomalies: Vec<(&Value, &str)> =
        of_type(&out, "anomaly").iter().map(|a| (&a["kind"], a["detail"].as_str().unwrap())).collect();
    assert_eq!(anomalies.len(), 3, "{anomalies:?}");
    assert_eq!(anomalies[0], (&json!("protocol_error"), "gemini-cli: warning: Loop detected"));
    assert!(anomalies[1].1.contains("FatalTurnLimitedError"));
    assert_eq!(anomalies[2].0, "unknown_event");
    assert!(anomalies[2].1.contains(r#""x":"kept""#));
}

/// Gemini CLI without deltas (an older CLI): two whole assistant messages
/// in a row are two paragraphs, not one run-on text.
#[test]
fn gemini_cli_whole_messages_are_paragraphs() {
    let input = r#"{"type":"message","role":"assistant","content":"First.","timestamp":"2026-01-15T10:00:00Z"}
{"type":"message","role":"assistant","content":"Second.","timestamp":"2026-01-15T10:00:01Z"}"#;
    let out = lines(input, "gemini-cli");
    assert_eq!(of_type(&out, "round")[0]["message"], "First.\n\nSecond.");
}

/// Detection claims each format's own events and not the others'.
#[test]
fn detection_keeps_the_formats_apart() {
    use roundup::adapters::InputFormat;
    let named = |event: &str| InputFormat::recognise(event.as_bytes()).map(InputFormat::name);
    for (event, format) in [
        (r#"{"candidates":[],"usageMetadata":{"totalTokenCount":1}}"#, Some("gemini")),
        (r#"{"usageMetadata":{"trafficType":"ON_DEMAND"},"responseId":"r"}"#, Some("gemini")),
        (r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#, Some("gemini")),
        (r#"{"role":"user","parts":[{"text":"hi"}]}"#, Some("gemini")),
        (r#"{"type":"init","session_id":"s","model":"m","timestamp":"t"}"#, Some("gemini-cli")),
        (r#"{"type":"tool_result","tool_id":"t","status":"success"}"#, Some("gemini-cli")),
        (r#"{"type":"result","status":"success","stats":{}}"#, Some("gemini-cli")),
        (r#"{"type":"result","subtype":"success","session_id":"s"}"#, Some("claude-code")),
        (r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#, Some("claude-code")),
        (r#"{"type":"error","message":"boom"}"#, None),
        (r#"{"error":{"message":"boom","type":"invalid_request_error"}}"#, None),
        (r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#, None),
        (r#"{"type":"user","content":[{"text":"hi"}]}"#, None),
        // An AI SDK UI message: its parts have a `type`.
        (r#"{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}"#, None),
    ] {
        assert_eq!(named(event), format, "{event}");
    }
}
