//! The adapters of local models and their servers' dialects: Ollama's
//! `/api/chat` NDJSON, Mistral's chat chunks and Conversations events,
//! OpenCode's `run --format json` lines, and the quirks of the
//! OpenAI-compatible servers (litellm, vLLM, Ollama's `/v1`, Moonshot) read
//! by `openai-chat`. Every fixture with its real values, and each trap as
//! the smallest stream that shows it.

use std::path::Path;

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

/// The fixture folders, the format each is read as, and how many files.
const FOLDERS: [(&str, &str, usize); 3] =
    [("ollama", "ollama", 1), ("mistral", "mistral", 3), ("opencode", "opencode", 3)];

fn fixture(folder: &str, name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder).join(name)).unwrap()
}

fn records(folder: &str, name: &str) -> Vec<Value> {
    let format = FOLDERS.iter().find(|(f, _, _)| *f == folder).unwrap().1;
    clean_replay(&fixture(folder, name), format, "records")
}

fn lines(input: &str, from: &str) -> Vec<Value> {
    let out = clean_replay(input.as_bytes(), from, "records");
    check_rounds(&out).unwrap_or_else(|e| panic!("{from}: {e}"));
    out
}

/// The only summary of an output.
fn summary(out: &[Value]) -> &Value {
    let summaries = of_type(out, "summary");
    assert_eq!(summaries.len(), 1, "{out:?}");
    summaries[0]
}

/// Every tool call of every round, in order.
fn tool_calls(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round").into_iter().flat_map(|r| r["tool_calls"].as_array().unwrap().iter()).collect()
}

fn kinds(out: &[Value]) -> Vec<&str> {
    of_type(out, "anomaly").iter().map(|a| a["kind"].as_str().unwrap()).collect()
}

/// Every fixture: detected with no `--from`, the same output as with it,
/// rounds and UI events that keep the invariants, no bad line, only the
/// anomalies the recording asks for, and an ops recording of the calls
/// the adapter made replays to the same output.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    for (folder, format, count) in FOLDERS {
        let mut files = 0;
        for path in fixture_files(folder) {
            files += 1;
            let input = std::fs::read(&path).unwrap();
            let (named, named_stats) = replay_lines(&input, &options(format, "records"));
            let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
            assert_eq!(named, auto, "{path:?}");
            assert_eq!(auto_stats.format.map(|f| f.name()), Some(format), "{path:?}");
            assert_eq!(named_stats.bad_lines, 0, "{path:?}: {named:?}");
            check_rounds(&named).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let (ui, _) = replay_lines(&input, &options(format, "ui"));
            check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let expected: &[&str] =
                if path.ends_with("takopi-opencode_stream_error.jsonl") { &["protocol_error"] } else { &[] };
            assert_eq!(kinds(&named), expected, "{path:?}");
            let recording = crate::providers::record_calls(format, &input);
            assert_eq!(clean_replay(recording.as_bytes(), "ops", "records"), named, "{path:?}");
        }
        assert_eq!(files, count, "{folder}");
    }
}

// --- Ollama ---------------------------------------------------------------

#[test]
fn ollama_fixture_text_then_done_without_a_reason() {
    let out = records("ollama", "siumai-ollama-simple_content_then_done.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    let round = rounds[0];
    assert_eq!((&round["message"], &round["thought"]), (&json!("Hello world!"), &json!("")));
    assert_eq!(round["tool_calls"], json!([]));
    assert_eq!(round["closed_by"], "finish");
    assert_eq!(round["started_at_ms"], 1_702_390_423_416_u64, "created_at is the clock");
    assert_eq!(
        round["meta"],
        json!({"ollama_model": "llama3.2", "ollama_metrics": {"total_duration": 4_883_583_458_u64,
            "load_duration": 1_334_875, "prompt_eval_count": 26, "eval_count": 298}}),
        "no done_reason: none is invented"
    );
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "completed", "done: true without done_reason ends the turn");
    assert_eq!(summary["last_token_usage"], 26 + 298, "prompt_eval_count + eval_count");
    assert_eq!((&summary["message_bytes"], &summary["rounds"]), (&json!(12), &json!(1)));
}

/// Trap: tool calls come whole (arguments an object), several on one line,
/// with an id (current servers) or without one (older servers: an id is
/// made up from the call's place, the same on every replay); the host's
/// results name the call by `tool_call_id`, or only by `tool_name`.
#[test]
fn ollama_whole_tool_calls_with_made_up_ids_and_host_results() {
    let stream = r#"{"model":"qwen3","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},{"function":{"index":1,"name":"get_weather","arguments":{"city":"Oslo"}}},{"id":"call_k3x9q2m1","function":{"index":2,"name":"get_time","arguments":{}}}]},"done":false}
{"model":"qwen3","created_at":"2025-06-01T10:00:01Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":40,"eval_count":30}
{"role":"tool","tool_call_id":"call_k3x9q2m1","tool_name":"get_time","content":"noon"}
{"role":"tool","tool_name":"get_weather","content":"18C"}
{"role":"tool","name":"get_weather","content":"4C"}
{"model":"qwen3","created_at":"2025-06-01T10:00:02Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_time","arguments":{"tz":"CET"}}}]},"done":true,"done_reason":"stop"}
{"role":"tool","tool_name":"get_time","content":"13:00"}
{"model":"qwen3","created_at":"2025-06-01T10:00:03Z","message":{"role":"assistant","content":"Paris 18C, Oslo 4C."},"done":false}
{"model":"qwen3","created_at":"2025-06-01T10:00:04Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":90,"eval_count":8}"#;
    let out = lines(stream, "ollama");
    assert_eq!(out, lines(stream, "ollama"), "made-up ids are the same on every replay");
    let calls = tool_calls(&out);
    let seen: Vec<(&Value, &Value, &Value, &Value)> =
        calls.iter().map(|c| (&c["id"], &c["name"], &c["arguments"], &c["result"]["content"])).collect();
    assert_eq!(
        seen,
        [
            (&json!("ollama-0-0"), &json!("get_weather"), &json!(r#"{"city":"Paris"}"#), &json!("18C")),
            (&json!("ollama-0-1"), &json!("get_weather"), &json!(r#"{"city":"Oslo"}"#), &json!("4C")),
            (&json!("call_k3x9q2m1"), &json!("get_time"), &json!("{}"), &json!("noon")),
            (&json!("ollama-1-0"), &json!("get_time"), &json!(r#"{"tz":"CET"}"#), &json!("13:00")),
        ]
    );
    assert!(calls.iter().all(|c| c["title"] == c["name"] && c["result"]["status"] == "completed"));
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 3);
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(rounds[2]["message"], "Paris 18C, Oslo 4C.");
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "completed", "responses with tool calls do not end the turn: one run");
    assert_eq!(summary["last_token_usage"], 98);
    assert!(of_type(&out, "anomaly").is_empty());
}

/// Trap: `thinking` lines may have no `content` key; counts are only on
/// the final line and left out when zero.
#[test]
fn ollama_thinking_without_content_and_counts_left_out() {
    let stream = r#"{"model":"deepseek-r1","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","thinking":"Two and two"},"done":false}
{"model":"deepseek-r1","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","thinking":" is four."},"done":false}
{"model":"deepseek-r1","created_at":"2025-06-01T10:00:01Z","message":{"role":"assistant","content":"4"},"done":false}
{"model":"deepseek-r1","created_at":"2025-06-01T10:00:02Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":9}"#;
    let out = lines(stream, "ollama");
    let round = of_type(&out, "round")[0];
    assert_eq!((&round["thought"], &round["message"]), (&json!("Two and two is four."), &json!("4")));
    assert_eq!(round["meta"]["ollama_metrics"], json!({"eval_count": 9}), "prompt_eval_count left out (zero)");
    assert_eq!(summary(&out)["last_token_usage"], 9);
    let no_counts = lines(
        r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"hi"},"done":true}"#,
        "ollama",
    );
    assert_eq!(summary(&no_counts)["last_token_usage"], Value::Null, "no counts, no gauge");
}

/// `done_reason`: `stop` completed; `length` completed, the native reason
/// kept; `load` / `unload` (a model loaded or unloaded, no text) completed;
/// none completed. A response after one that ended the turn is the next run.
#[test]
fn ollama_done_reasons_and_runs() {
    let response = |text: &str, reason: &str| {
        let reason = if reason.is_empty() { String::new() } else { format!(r#","done_reason":"{reason}""#) };
        format!(
            r#"{{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{{"role":"assistant","content":"{text}"}},"done":false}}
{{"model":"m","created_at":"2025-06-01T10:00:01Z","message":{{"role":"assistant","content":""}},"done":true{reason},"eval_count":3}}
"#
        )
    };
    let stream = response("a", "stop") + &response("b", "length") + &response("", "load") + &response("d", "");
    let out = lines(&stream, "ollama");
    let summaries = of_type(&out, "summary");
    let reasons: Vec<&Value> = summaries.iter().map(|s| &s["finish_reason"]).collect();
    assert_eq!(reasons, [&json!("completed"); 4]);
    let runs: Vec<(&Value, &Value)> = summaries.iter().map(|s| (&s["run"], &s["rounds"])).collect();
    assert_eq!(runs, [(&json!(0), &json!(1)), (&json!(1), &json!(1)), (&json!(2), &json!(0)), (&json!(3), &json!(1))]);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds[1]["meta"]["ollama_done_reason"], "length", "the native reason is kept");
    assert_eq!(summaries[2]["ollama_done_reason"], "load", "a run with no round keeps it in its summary");
    assert!(rounds[2]["meta"].get("ollama_done_reason").is_none());
}

/// Trap: an error after streaming began is a bare `{"error": ...}` line
/// (HTTP 200): the run fails, the error kept. A stream that is only the
/// error is detected as Ollama's.
#[test]
fn ollama_error_line_fails_the_run() {
    let stream = r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"Par"},"done":false}
{"error":"an error was encountered while running the model: unexpected EOF"}"#;
    let out = lines(stream, "ollama");
    assert_eq!(of_type(&out, "round")[0]["message"], "Par");
    let anomaly = of_type(&out, "anomaly")[0];
    assert_eq!(anomaly["kind"], "protocol_error");
    assert!(anomaly["detail"].as_str().unwrap().ends_with("unexpected EOF"));
    assert_eq!(summary(&out)["finish_reason"], "failed");
    let (alone, stats) =
        replay_lines(br#"{"error":"model \"x\" not found, try pulling it first"}"#, &options("auto", "records"));
    assert_eq!(stats.format.map(|f| f.name()), Some("ollama"));
    assert_eq!(summary(&alone)["finish_reason"], "failed");
}

/// A response's `message` and its tool calls are objects: a `message` that
/// is anything else makes its line a bad line, named with serde's words
/// and its column, and the next line reads as usual.
#[test]
fn ollama_message_that_is_not_an_object_is_a_bad_line() {
    let stream = r#"{"model":"m","created_at":"2025-06-01T10:00:01Z","message":["hi","think",null],"done":false}
{"model":"m","created_at":"2025-06-01T10:00:02Z","message":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":true,"done_reason":"stop"}"#;
    let (out, stats) = replay_lines(stream.as_bytes(), &options("ollama", "records"));
    assert_eq!(stats.bad_lines, 1);
    let bad = of_type(&out, "anomaly");
    assert_eq!(bad[0]["kind"], "bad_line");
    assert_eq!(bad[0]["detail"], "line 1: invalid type: sequence, expected struct Message (column 59)");
    let rounds = of_type(&out, "round");
    assert_eq!((&rounds[0]["message"], &rounds[0]["tool_calls"][0]["title"]), (&json!("x"), &json!("f")));
}

/// `/api/generate` lines (`response`, top-level `thinking`) read as chat
/// lines do; the user's next message begins a run; a line that is neither
/// a response nor a message is reported whole.
#[test]
fn ollama_generate_lines_user_messages_and_unknown_lines() {
    let stream = r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","thinking":"hm","response":"","done":false}
{"model":"m","created_at":"2025-06-01T10:00:01Z","response":"Hi","done":true,"done_reason":"stop"}
{"role":"user","content":"again"}
{"model":"m","created_at":"2025-06-01T10:00:02Z","message":{"role":"assistant","content":"Hi again"},"done":true}
{"status":"pulling manifest"}"#;
    let out = lines(stream, "ollama");
    let rounds = of_type(&out, "round");
    assert_eq!((&rounds[0]["thought"], &rounds[0]["message"]), (&json!("hm"), &json!("Hi")));
    assert_eq!((&rounds[1]["run"], &rounds[1]["message"]), (&json!(1), &json!("Hi again")));
    assert_eq!(of_type(&out, "summary")[1]["ollama_user_message"], "again");
    let unknown = of_type(&out, "anomaly");
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0]["detail"].as_str().unwrap().contains(r#"{"status":"pulling manifest"}"#), "kept whole");
}

// --- Mistral --------------------------------------------------------------

#[test]
fn mistral_fixture_text() {
    let out = records("mistral", "vercel-mistral-text.chunks.jsonl");
    let round = of_type(&out, "round")[0];
    assert_eq!((&round["message"], &round["thought"]), (&json!("Hello, world! This is a test response."), &json!("")));
    assert_eq!(round["started_at_ms"], 1_769_088_720_000_u64, "created (seconds) is the clock");
    assert_eq!(
        round["meta"],
        json!({"mistral_finish_reason": "stop", "mistral_completion_id": "5319bd0299614c679a0068a4f2c8ffd0",
            "mistral_model": "mistral-small-latest", "mistral_usage": {"prompt_tokens": 13, "total_tokens": 21, "completion_tokens": 8}})
    );
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(21)));
}

/// Trap: `delta.content` is an array of typed chunks (`thinking` chunks
/// hold text chunks of their own), then a plain string on the finish chunk.
#[test]
fn mistral_fixture_reasoning_in_content_chunks() {
    let out = records("mistral", "vercel-mistral-reasoning.chunks.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["thought"], "The user is asking for 2+2. This is basic arithmetic. 2+2=4.");
    assert_eq!(rounds[0]["message"], "2 + 2 = 4");
    assert_eq!(rounds[0]["meta"]["mistral_model"], "magistral-medium-2507");
    assert_eq!(rounds[0]["meta"]["mistral_usage"]["completion_tokens"], 46);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(56)));
    assert_eq!((&summary["thought_bytes"], &summary["message_bytes"]), (&json!(60), &json!(9)));
}

/// Trap: the whole tool call (no `index`, a 9-character id), the
/// `finish_reason` and the usage share one chunk; `tool_calls` ends the
/// model call, not the turn, so a recording that stops there is
/// interrupted; the host's result closes the round.
#[test]
fn mistral_fixture_tool_call_in_one_chunk() {
    let out = records("mistral", "vercel-mistral-tool-call.chunks.jsonl");
    let call = tool_calls(&out)[0];
    assert_eq!(
        (&call["id"], &call["title"], &call["name"], &call["arguments"]),
        (&json!("gSIMJiOkT"), &json!("weather"), &json!("weather"), &json!(r#"{"location": "San Francisco"}"#))
    );
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted"}));
    let round = of_type(&out, "round")[0];
    assert_eq!(round["meta"]["mistral_finish_reason"], "tool_calls");
    assert_eq!(round["meta"]["mistral_usage"]["total_tokens"], 146);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("interrupted"), &json!(146)));

    let mut input = fixture("mistral", "vercel-mistral-tool-call.chunks.jsonl");
    input.extend_from_slice(
        b"\n{\"role\":\"tool\",\"name\":\"weather\",\"tool_call_id\":\"gSIMJiOkT\",\"content\":\"sunny\"}\n",
    );
    let looped = clean_replay(&input, "mistral", "records");
    let round = of_type(&looped, "round")[0];
    assert_eq!(
        (&round["closed_by"], &round["tool_calls"][0]["result"]["content"]),
        (&json!("tools_done"), &json!("sunny"))
    );
}

/// Trap: parallel calls come whole, each in a chunk of its own (or both in
/// one) with no `index`: a new id is a new call, never a continuation.
#[test]
fn mistral_parallel_whole_calls_without_index() {
    let chunk = |tool_calls: &str, finish: &str| {
        format!(
            r#"{{"id":"b3999b8c93e04e11bcbff7bcab829667","object":"chat.completion.chunk","created":1769088854,"model":"mistral-small-latest","choices":[{{"index":0,"delta":{{"content":null,"tool_calls":[{tool_calls}]}},"finish_reason":{finish}}}]}}"#
        )
    };
    let call = |id: &str, city: &str| {
        format!(r#"{{"id":"{id}","function":{{"name":"weather","arguments":"{{\"city\": \"{city}\"}}"}}}}"#)
    };
    let stream = [
        chunk(&call("aaaaaaaa1", "Paris"), "null"),
        chunk(&call("aaaaaaaa2", "Oslo"), "null"),
        chunk(&format!("{},{}", call("aaaaaaaa3", "Rome"), call("aaaaaaaa4", "Bern")), r#""tool_calls""#),
    ]
    .join("\n");
    let out = lines(&stream, "auto");
    let calls = tool_calls(&out);
    let seen: Vec<(&Value, &Value)> = calls.iter().map(|c| (&c["id"], &c["arguments"])).collect();
    assert_eq!(
        seen,
        [
            (&json!("aaaaaaaa1"), &json!(r#"{"city": "Paris"}"#)),
            (&json!("aaaaaaaa2"), &json!(r#"{"city": "Oslo"}"#)),
            (&json!("aaaaaaaa3"), &json!(r#"{"city": "Rome"}"#)),
            (&json!("aaaaaaaa4"), &json!(r#"{"city": "Bern"}"#)),
        ]
    );
}

/// Trap: a model that streams its call (with `index`): the continuation has
/// `name: ""` and no id, or Mistral's literal `"id": "null"`; fragments
/// append by index.
#[test]
fn mistral_incremental_call_with_null_id_continuations() {
    let chunk = |tool_call: &str, finish: &str| {
        format!(
            r#"{{"id":"a7c258430bcb18fdacd3bbd773efb9f1","object":"chat.completion.chunk","created":1775811362,"model":"devstral-medium-latest","choices":[{{"index":0,"delta":{{"tool_calls":[{tool_call}]}},"finish_reason":{finish}}}],"p":"abcdefgh"}}"#
        )
    };
    let stream = [
        chunk(r#"{"id":"WcG8xhSs1","function":{"name":"read_file","arguments":""},"index":0}"#, "null"),
        chunk(r#"{"id":"null","function":{"name":"","arguments":"{\"path\""},"index":0}"#, "null"),
        chunk(r#"{"function":{"name":"","arguments":": \"a.txt\"}"},"index":0}"#, r#""tool_calls""#),
        "data: [DONE]".to_owned(),
        r#"{"role":"tool","tool_call_id":"WcG8xhSs1","content":"hello"}"#.to_owned(),
    ]
    .join("\n");
    let out = lines(&stream, "mistral");
    let calls = tool_calls(&out);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!((&calls[0]["id"], &calls[0]["name"]), (&json!("WcG8xhSs1"), &json!("read_file")));
    assert_eq!(calls[0]["arguments"], r#"{"path": "a.txt"}"#);
    assert_eq!(calls[0]["result"]["content"], "hello");
    assert!(of_type(&out, "anomaly").is_empty());
}

/// `finish_reason`: `stop` and `length` and `model_length` (the context is
/// full) end the turn as completed, `error` as failed, each reason kept; a
/// chunk of another kind in `content` (a reference) is kept in the round.
#[test]
fn mistral_finish_reasons_and_kept_content_chunks() {
    let completion = |id: u8, content: &str, reason: &str| {
        format!(
            r#"{{"id":"{id:032x}","object":"chat.completion.chunk","created":1769088720,"model":"mistral-large-latest","choices":[{{"index":0,"delta":{{"content":{content}}},"finish_reason":"{reason}"}}]}}
data: [DONE]
"#
        )
    };
    let stream =
        completion(1, r#"[{"type":"text","text":"Per [1]"},{"type":"reference","reference_ids":[1]}]"#, "stop")
            + &completion(2, r#""long""#, "length")
            + &completion(3, r#""longer""#, "model_length")
            + &completion(4, r#""oops""#, "error");
    let out = lines(&stream, "auto");
    let reasons: Vec<&Value> = of_type(&out, "summary").iter().map(|s| &s["finish_reason"]).collect();
    assert_eq!(reasons, [&json!("completed"), &json!("completed"), &json!("completed"), &json!("failed")]);
    let rounds = of_type(&out, "round");
    let native: Vec<&Value> = rounds.iter().map(|r| &r["meta"]["mistral_finish_reason"]).collect();
    assert_eq!(native, [&json!("stop"), &json!("length"), &json!("model_length"), &json!("error")]);
    assert_eq!(rounds[0]["message"], "Per [1]");
    assert_eq!(rounds[0]["meta"]["mistral_content_parts"], json!([{"type": "reference", "reference_ids": [1]}]));
}

/// Detection: Mistral's chunks (32-digit ids, Mistral models) are Mistral's;
/// OpenAI's, and a Mistral model behind an OpenAI-compatible server, stay
/// `openai-chat`; no other format's events are taken.
#[test]
fn mistral_detection_leaves_openai_streams_to_openai_chat() {
    let detect = |line: &str| roundup::adapters::InputFormat::detect(line.as_bytes()).name();
    let chunk = |id: &str, model: &str| {
        format!(
            r#"{{"id":"{id}","object":"chat.completion.chunk","created":1,"model":"{model}","choices":[{{"index":0,"delta":{{"content":"hi"}}}}]}}"#
        )
    };
    assert_eq!(detect(&chunk("5319bd0299614c679a0068a4f2c8ffd0", "mistral-small-latest")), "mistral");
    assert_eq!(detect(&chunk("a7c258430bcb18fdacd3bbd773efb9f1", "devstral-medium-latest")), "mistral");
    assert_eq!(detect(&chunk("cmpl-82b4ad8d22b44757a7a2d3e3ae6fb6a0", "open-mixtral-8x7b")), "mistral");
    assert_eq!(detect(&chunk("chatcmpl-9x8y7z", "gpt-4o-mini")), "openai-chat");
    assert_eq!(detect(&chunk("chatcmpl-123", "mistral-nemo")), "openai-chat", "Ollama's /v1 serving a Mistral model");
    assert_eq!(detect(&chunk("5319bd0299614c679a0068a4f2c8ffd0", "gpt-4o")), "openai-chat");
    assert_eq!(detect(&chunk("gen-1700000000-abc", "mistralai/mistral-small")), "openai-chat", "a gateway's ids");
    assert_eq!(detect(r#"{"type":"conversation.response.started","conversation_id":"c"}"#), "mistral");
    assert_eq!(detect(r#"{"type":"response.created","response":{"id":"r"}}"#), "openai-responses");
    // Every OpenAI fixture is still read as openai-chat.
    for path in fixture_files("openai-chat") {
        let (_, stats) = replay_lines(&std::fs::read(&path).unwrap(), &options("auto", "records"));
        assert_eq!(stats.format.map(|f| f.name()), Some("openai-chat"), "{path:?}");
    }
}

/// The Conversations API: reasoning and text chunks, a built-in tool run on
/// Mistral's side (its arguments in deltas, its `info` the result), a
/// function call for the host (arguments appended) whose result comes as a
/// `function.result` entry before the next response of the same turn, a
/// reference chunk kept, usage per response, and the run ending with the
/// response that leaves no function call waiting.
#[test]
fn mistral_conversation_events() {
    let stream = r#"{"type":"conversation.response.started","created_at":"2025-06-01T10:00:00Z","conversation_id":"conv_0a1b"}
{"type":"message.output.delta","created_at":"2025-06-01T10:00:01Z","output_index":0,"id":"msg_1","content_index":0,"model":"mistral-medium-2505","agent_id":null,"role":"assistant","content":{"type":"thinking","thinking":[{"type":"text","text":"Search first."}]}}
{"type":"tool.execution.started","created_at":"2025-06-01T10:00:02Z","output_index":1,"id":"tool_1","name":"web_search","arguments":"{\"query\": \"weather"}
{"type":"tool.execution.delta","output_index":1,"id":"tool_1","name":"web_search","arguments":" Paris\"}"}
{"type":"tool.execution.done","created_at":"2025-06-01T10:00:03Z","output_index":1,"id":"tool_1","name":"web_search","info":{"results":2}}
{"type":"message.output.delta","output_index":2,"id":"msg_2","content_index":0,"model":"mistral-medium-2505","role":"assistant","content":"It is sunny"}
{"type":"message.output.delta","output_index":2,"id":"msg_2","content_index":1,"model":"mistral-medium-2505","role":"assistant","content":{"type":"tool_reference","tool":"web_search","title":"Weather","url":"https://example.com"}}
{"type":"function.call.delta","output_index":3,"id":"fc_1","model":"mistral-medium-2505","name":"get_time","tool_call_id":"call_t1","arguments":"{\"tz\":"}
{"type":"function.call.delta","output_index":3,"id":"fc_1","model":"mistral-medium-2505","name":"get_time","tool_call_id":"call_t1","arguments":"\"CET\"}"}
{"type":"conversation.response.done","created_at":"2025-06-01T10:00:04Z","usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50,"connector_tokens":7}}
{"type":"function.result","tool_call_id":"call_t1","result":"10:00"}
{"type":"conversation.response.started","created_at":"2025-06-01T10:00:05Z","conversation_id":"conv_0a1b"}
{"type":"message.output.delta","output_index":0,"id":"msg_3","model":"mistral-medium-2505","content":"It is 10:00."}
{"type":"conversation.response.done","usage":{"prompt_tokens":60,"completion_tokens":5,"total_tokens":65}}"#;
    let (out, stats) = replay_lines(stream.as_bytes(), &options("auto", "records"));
    assert_eq!(stats.format.map(|f| f.name()), Some("mistral"));
    check_rounds(&out).unwrap();
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 3);
    assert_eq!(rounds[0]["thought"], "Search first.");
    let calls = tool_calls(&out);
    let seen: Vec<(&Value, &Value, &Value, &Value)> =
        calls.iter().map(|c| (&c["id"], &c["name"], &c["arguments"], &c["result"])).collect();
    assert_eq!(
        seen,
        [
            (
                &json!("tool_1"),
                &json!("web_search"),
                &json!(r#"{"query": "weather Paris"}"#),
                &json!({"status": "completed", "content": r#"{"results":2}"#})
            ),
            (
                &json!("call_t1"),
                &json!("get_time"),
                &json!(r#"{"tz":"CET"}"#),
                &json!({"status": "completed", "content": "10:00"})
            ),
        ]
    );
    assert_eq!(calls[0]["started_at_ms"], 1_748_772_002_000_u64, "created_at is the clock");
    assert_eq!(rounds[1]["message"], "It is sunny");
    assert_eq!(rounds[1]["meta"]["mistral_content_parts"][0]["title"], "Weather");
    assert_eq!(rounds[1]["meta"]["mistral_usage"]["connector_tokens"], 7);
    assert_eq!(rounds[2]["message"], "It is 10:00.");
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "completed");
    assert_eq!(summary["last_token_usage"], 65);
    assert_eq!(
        (&summary["mistral_conversation_id"], &summary["mistral_model"]),
        (&json!("conv_0a1b"), &json!("mistral-medium-2505"))
    );
    assert!(of_type(&out, "anomaly").is_empty());
    check_ui_per_session(&clean_replay(stream.as_bytes(), "mistral", "ui")).unwrap();
}

/// Conversations: an error fails the run, kept; a handoff is kept; a user's
/// `message.input` entry begins the next run; an unknown event is reported.
#[test]
fn mistral_conversation_errors_handoffs_and_new_turns() {
    let stream = r#"{"type":"conversation.response.started","conversation_id":"c1"}
{"type":"agent.handoff.started","id":"h1","previous_agent_id":"ag_1","previous_agent_name":"triage"}
{"type":"agent.handoff.done","id":"h1","next_agent_id":"ag_2","next_agent_name":"weather"}
{"type":"message.output.delta","id":"m1","agent_id":"ag_2","content":"Let me check"}
{"type":"conversation.response.error","message":"Internal error","code":3000}
{"type":"message.input","role":"user","content":"Try again"}
{"type":"conversation.response.started","conversation_id":"c1"}
{"type":"conversation.response.something","x":1}
{"type":"message.output.delta","id":"m2","content":"Sunny."}
{"type":"conversation.response.done","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;
    let out = lines(stream, "mistral");
    let summaries = of_type(&out, "summary");
    let reasons: Vec<&Value> = summaries.iter().map(|s| &s["finish_reason"]).collect();
    assert_eq!(reasons, [&json!("failed"), &json!("completed")]);
    let rounds = of_type(&out, "round");
    assert_eq!(
        (&rounds[0]["message"], &rounds[1]["message"], &rounds[1]["run"]),
        (&json!("Let me check"), &json!("Sunny."), &json!(1))
    );
    let handoffs = rounds[0]["meta"]["mistral_handoffs"].as_array().unwrap();
    assert_eq!((handoffs.len(), &handoffs[1]["next_agent_name"]), (2, &json!("weather")));
    assert_eq!(summaries[0]["mistral_agent_id"], "ag_2");
    assert_eq!(summaries[1]["mistral_user_message"], "Try again");
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(kinds(&out), ["protocol_error", "unknown_event"]);
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("Internal error"));
    assert!(anomalies[1]["detail"].as_str().unwrap().contains("conversation.response.something"));
}

// --- OpenCode -------------------------------------------------------------

/// The real capture: a `bash` tool sent once finished (declaration, input,
/// output, title, metadata and times in one line), a step that ended with
/// `tool-calls`, then a text step that ended with `stop`; tokens per step
/// with the cached ones apart.
#[test]
fn opencode_fixture_tool_step_then_text_step() {
    let out = records("opencode", "takopi-opencode_stream_success.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(
        (&call["id"], &call["title"], &call["name"]),
        (&json!("r9bQWsNLvOrJGIOz"), &json!("Print hello to stdout"), &json!("bash"))
    );
    assert_eq!(call["arguments"], r#"{"command":"echo hello","description":"Print hello to stdout"}"#);
    assert_eq!(call["result"], json!({"status": "completed", "content": "hello\n"}));
    assert_eq!(
        call["meta"]["opencode_metadata"],
        json!({"output": "hello\n", "exit": 0, "description": "Print hello to stdout"})
    );
    assert_eq!(call["meta"]["opencode_time"], json!({"start": 1_767_036_061_123_u64, "end": 1_767_036_061_173_u64}));
    assert_eq!(
        (&call["started_at_ms"], &call["finished_at_ms"]),
        (&json!(1_767_036_061_199_u64), &json!(1_767_036_061_199_u64))
    );
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(rounds[0]["meta"]["opencode_message_ids"], json!(["msg_b6b8e702b0012XuEC4bGe0XhKa"]));
    assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!("```\nhello\n```"), &json!("finish")));
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "completed");
    assert_eq!(summary["last_token_usage"], 671 + 8 + 21_415, "the last step's context, cache reads included");
    assert_eq!(
        summary["opencode_tokens"],
        json!({"input": 22_443, "output": 118, "reasoning": 0, "cache": {"read": 21_415, "write": 0}})
    );
    assert_eq!((&summary["opencode_cost"], &summary["opencode_steps"]), (&json!(0.001), &json!(2)));
    assert_eq!(summary["opencode_finish_reason"], "stop");
    assert_eq!(summary["opencode_session_id"], "ses_494719016ffe85dkDMj0FPRbHK");
    assert_eq!(summary["opencode_start_snapshot"], "71db24a798b347669c0ebadb2dfad238f991753d");
    assert_eq!(summary["opencode_end_snapshot"], "09dd05d11a4ac013136c1df10932efc0ad9116e8");
}

/// Trap: `step_finish` without `reason`, the last line: the turn ended.
#[test]
fn opencode_fixture_step_finish_without_reason() {
    let out = records("opencode", "takopi-opencode_stream_success_no_reason.jsonl");
    let round = of_type(&out, "round")[0];
    assert_eq!((&round["message"], &round["tool_calls"]), (&json!("All done."), &json!([])));
    assert_eq!(round["finished_at_ms"], 1_767_038_001_000_u64);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(15)));
    assert_eq!((&summary["opencode_cost"], &summary["opencode_steps"]), (&json!(0.002), &json!(1)));
    assert!(summary.get("opencode_finish_reason").is_none());
}

/// Trap: a rate-limit `error` with no `step_finish`: the run failed, the
/// error kept whole.
#[test]
fn opencode_fixture_error_without_step_finish() {
    let out = records("opencode", "takopi-opencode_stream_error.jsonl");
    assert!(of_type(&out, "round").is_empty());
    let anomaly = of_type(&out, "anomaly")[0];
    assert_eq!(anomaly["kind"], "protocol_error");
    let detail = anomaly["detail"].as_str().unwrap();
    assert!(
        detail.contains(r#""name":"APIError""#) && detail.contains("Rate limit exceeded") && detail.contains("429")
    );
    let summary = summary(&out);
    assert_eq!(
        (&summary["finish_reason"], &summary["opencode_session_id"]),
        (&json!("failed"), &json!("ses_error123"))
    );
    assert_eq!(summary["last_token_usage"], Value::Null);
}

fn opencode_line(kind: &str, at: u64, rest: &str) -> String {
    format!(r#"{{"type":"{kind}","timestamp":{at},"sessionID":"ses_1"{rest}}}"#)
}

/// Trap: a tool is sent once it has finished: one line is its declaration,
/// its arguments and its result (a failed one's `state.error`), so each
/// closes its round at once; the title is `state.title`, else the tool.
#[test]
fn opencode_a_finished_tool_is_declaration_and_result_together() {
    let tool = |at: u64, id: &str, state: &str| {
        opencode_line(
            "tool_use",
            at,
            &format!(r#","part":{{"type":"tool","messageID":"m1","callID":"{id}","tool":"read","state":{state}}}"#),
        )
    };
    let stream = [
        opencode_line("step_start", 1, r#","part":{"type":"step-start","messageID":"m1"}"#),
        opencode_line("text", 2, r#","part":{"type":"text","messageID":"m1","text":"Reading both."}"#),
        tool(
            3,
            "c1",
            r#"{"status":"completed","input":{"filePath":"/a"},"output":"A","title":"a","metadata":{"preview":"A"}}"#,
        ),
        tool(
            4,
            "c2",
            r#"{"status":"error","input":{"filePath":"/b"},"error":"File not found: /b","time":{"start":3,"end":4}}"#,
        ),
    ]
    .join("\n");
    let out = lines(&stream, "opencode");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2, "each result closes its round");
    assert_eq!((&rounds[0]["message"], &rounds[0]["closed_by"]), (&json!("Reading both."), &json!("tools_done")));
    let calls = tool_calls(&out);
    assert_eq!((&calls[0]["title"], &calls[0]["name"]), (&json!("a"), &json!("read")));
    assert_eq!((&calls[0]["started_at_ms"], &calls[0]["finished_at_ms"]), (&json!(3), &json!(3)));
    assert_eq!(calls[0]["result"], json!({"status": "completed", "content": "A"}));
    assert_eq!(calls[1]["title"], "read", "no title: the tool's name");
    assert_eq!(calls[1]["arguments"], r#"{"filePath":"/b"}"#);
    assert_eq!(calls[1]["result"], json!({"status": "failed", "content": "File not found: /b"}));
    assert_eq!(summary(&out)["failed_tool_calls"], 1);
    let ui = clean_replay(stream.as_bytes(), "opencode", "ui");
    check_ui_per_session(&ui).unwrap();
}

/// Trap: token counts are per step, not cumulative, and `input` leaves out
/// the cache: the gauge is the last step's context, the summary the sums.
#[test]
fn opencode_step_finish_usage_is_per_step() {
    let step = |at: u64, reason: &str, tokens: &str| {
        [
            opencode_line("step_start", at, r#","part":{"type":"step-start"}"#),
            opencode_line("text", at + 1, &format!(r#","part":{{"type":"text","text":"step {at}"}}"#)),
            opencode_line(
                "step_finish",
                at + 2,
                &format!(r#","part":{{"type":"step-finish","reason":"{reason}","cost":0.25,"tokens":{tokens}}}"#),
            ),
        ]
        .join("\n")
    };
    let stream = [
        step(10, "tool-calls", r#"{"input":100,"output":20,"reasoning":5,"cache":{"read":1000,"write":10}}"#),
        step(20, "stop", r#"{"input":10,"output":5,"reasoning":0,"cache":{"read":1200,"write":0}}"#),
    ]
    .join("\n");
    let out = lines(&stream, "opencode");
    let summary = summary(&out);
    assert_eq!(summary["last_token_usage"], 10 + 5 + 1200, "not 1135 + 1215");
    assert_eq!(
        summary["opencode_tokens"],
        json!({"input": 110, "output": 25, "reasoning": 5, "cache": {"read": 2200, "write": 10}})
    );
    assert_eq!((&summary["opencode_cost"], &summary["opencode_steps"]), (&json!(0.5), &json!(2)));
    let ui = clean_replay(stream.as_bytes(), "opencode", "ui");
    let gauges: Vec<&Value> = ui.iter().filter(|e| e["event"] == "token_usage").map(|e| &e["total"]).collect();
    assert_eq!(gauges, [&json!(1135), &json!(1215)]);
}

/// How OpenCode runs end: a step with a reason other than `tool-calls` ends
/// the turn, at `done`, at the next prompt's first step or at the end; a
/// step without a reason followed by another goes on; an error fails the
/// run (after a finished step too), an aborted message cancels it.
#[test]
fn opencode_runs_end_as_the_stream_says() {
    let start = |at: u64| opencode_line("step_start", at, r#","part":{"type":"step-start"}"#);
    let text =
        |at: u64, text: &str| opencode_line("text", at, &format!(r#","part":{{"type":"text","text":"{text}"}}"#));
    let finish = |at: u64, reason: &str| {
        let reason = if reason.is_empty() { String::new() } else { format!(r#","reason":"{reason}""#) };
        opencode_line(
            "step_finish",
            at,
            &format!(r#","part":{{"type":"step-finish"{reason},"tokens":{{"input":1,"output":1}}}}"#),
        )
    };
    let error = |at: u64, name: &str| {
        opencode_line("error", at, &format!(r#","error":{{"name":"{name}","data":{{"message":"m"}}}}"#))
    };
    let stream = [
        start(1),
        text(2, "one"),
        finish(3, ""),
        start(4),
        text(5, "still one"),
        finish(6, "stop"),
        opencode_line("done", 7, r#","reason":"idle","rejected":["bash"]"#),
        start(10),
        text(11, "two"),
        finish(12, "tool-calls"),
        error(13, "APIError"),
        start(20),
        text(21, "three"),
        error(22, "MessageAbortedError"),
        start(30),
        text(31, "four"),
        finish(32, "length"),
        start(40),
        text(41, "five"),
        finish(42, "content-filter"),
    ]
    .join("\n");
    let out = lines(&stream, "opencode");
    let summaries = of_type(&out, "summary");
    let ends: Vec<(&Value, &Value)> = summaries.iter().map(|s| (&s["finish_reason"], &s["rounds"])).collect();
    assert_eq!(
        ends,
        [
            (&json!("completed"), &json!(1)),
            (&json!("failed"), &json!(1)),
            (&json!("canceled"), &json!(1)),
            (&json!("completed"), &json!(1)),
            (&json!("failed"), &json!(1)),
        ]
    );
    assert_eq!(of_type(&out, "round")[0]["message"], "one\n\nstill one", "whole texts are paragraphs");
    assert_eq!(summaries[0]["opencode_rejected_permissions"], json!(["bash"]));
    assert_eq!(summaries[0]["opencode_done_reason"], "idle");
    assert_eq!(kinds(&out), ["protocol_error", "protocol_error"]);
}

/// Reasoning parts (with `--thinking`) are thoughts; an unknown status or
/// event is reported; a first line of reasoning is still OpenCode's.
#[test]
fn opencode_reasoning_statuses_and_unknown_events() {
    let stream = [
        opencode_line("reasoning", 1, r#","part":{"type":"reasoning","text":"Think."}"#),
        opencode_line(
            "tool_use",
            2,
            r#","part":{"type":"tool","callID":"c1","tool":"bash","state":{"status":"weird","input":{}}}"#,
        ),
        opencode_line("file_edited", 3, r#","file":"a.rs""#),
    ]
    .join("\n");
    let (out, stats) = replay_lines(stream.as_bytes(), &options("auto", "records"));
    assert_eq!(stats.format.map(|f| f.name()), Some("opencode"));
    assert_eq!(of_type(&out, "round")[0]["thought"], "Think.");
    assert_eq!(kinds(&out), ["unknown_status", "unknown_event"]);
    assert!(of_type(&out, "anomaly")[1]["detail"].as_str().unwrap().contains(r#""file":"a.rs""#));
}

// --- OpenAI-compatible servers' quirks (openai-chat) -----------------------

fn chunk(tool_calls: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{tool_calls}]}}}}]}}"#
    )
}

/// The calls of an openai-chat stream: id, name, arguments.
fn openai_calls(stream: &[String]) -> Vec<(String, String, String)> {
    let out = lines(&stream.join("\n"), "openai-chat");
    assert!(of_type(&out, "anomaly").is_empty(), "{out:?}");
    tool_calls(&out)
        .iter()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap().to_owned();
            (text("id"), text("name"), text("arguments"))
        })
        .collect()
}

fn call(id: &str, name: &str, arguments: &str) -> (String, String, String) {
    (id.to_owned(), name.to_owned(), arguments.to_owned())
}

/// litellm: the id only on a call's first chunk, none after (passed already:
/// kept as a regression test).
#[test]
fn openai_chat_ids_missing_after_the_first_chunk() {
    let stream = [
        chunk(r#"{"id":"tooluse_Baw","function":{"arguments":"","name":"jira"},"type":"function","index":1}"#),
        chunk(r#"{"function":{"arguments":"{\"k\":"},"type":"function","index":1}"#),
        chunk(r#"{"function":{"arguments":"1}"},"type":"function","index":1}"#),
    ];
    assert_eq!(openai_calls(&stream), [call("tooluse_Baw", "jira", r#"{"k":1}"#)]);
}

/// No `index` at all: a fragment's place in its chunk is its index (passed
/// already: kept as a regression test).
#[test]
fn openai_chat_fragments_without_index() {
    let stream = [
        chunk(r#"{"id":"a","function":{"name":"f","arguments":"{\"x\""}}"#),
        chunk(r#"{"function":{"arguments":":1}"}}"#),
        chunk(
            r#"{"id":"b","function":{"name":"g","arguments":"{}"}},{"id":"c","function":{"name":"h","arguments":"[]"}}"#,
        ),
    ];
    assert_eq!(openai_calls(&stream), [call("a", "f", r#"{"x":1}"#), call("b", "g", "{}"), call("c", "h", "[]")]);
}

/// vLLM: two entries with the same index in one chunk, the declaration and
/// a fragment (passed already: kept as a regression test).
#[test]
fn openai_chat_two_entries_with_one_index_in_a_chunk() {
    let stream = [
        chunk(
            r#"{"index":0,"id":"chatcmpl-tool-c9Z","type":"function","function":{"name":"f","arguments":""}},{"index":0,"function":{"arguments":"{\"a\":"}}"#,
        ),
        chunk(r#"{"index":0,"function":{"arguments":"2}"}}"#),
    ];
    assert_eq!(openai_calls(&stream), [call("chatcmpl-tool-c9Z", "f", r#"{"a":2}"#)]);
}

/// Ollama's `/v1`: index 0 for every parallel call, each whole: a new id at
/// the same index is a new call (passed already: kept as a regression test).
#[test]
fn openai_chat_parallel_calls_all_at_index_zero() {
    let stream = [
        chunk(
            r#"{"id":"call_1","index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}"#,
        ),
        chunk(
            r#"{"id":"call_2","index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}},{"id":"call_3","index":0,"type":"function","function":{"name":"time","arguments":"{}"}}"#,
        ),
    ];
    assert_eq!(
        openai_calls(&stream),
        [
            call("call_1", "weather", r#"{"city":"Paris"}"#),
            call("call_2", "weather", r#"{"city":"Oslo"}"#),
            call("call_3", "time", "{}")
        ]
    );
}

/// vLLM (some versions) and models relayed by Mistral: no id on any
/// fragment. The first fragment names the function (vLLM repeats the name
/// on every fragment): the call gets an id made up from its place; a new
/// name at the index is a new call. (New: these were reported as
/// fragments no call declared.)
#[test]
fn openai_chat_calls_with_no_id_at_all() {
    let stream = [
        chunk(r#"{"index":0,"function":{"name":"get_current_weather","arguments":"{\""}}"#),
        chunk(r#"{"index":0,"function":{"name":"get_current_weather","arguments":"location\": \"Paris\"}"}}"#),
        chunk(r#"{"index":0,"function":{"name":"get_time","arguments":"{}"}}"#),
        chunk(r#"{"index":1,"function":{"name":"search","arguments":""}}"#),
        chunk(r#"{"index":1,"function":{"arguments":"{\"q\":1}"}}"#),
    ];
    assert_eq!(
        openai_calls(&stream),
        [
            call("openai-chat-call-0", "get_current_weather", r#"{"location": "Paris"}"#),
            call("openai-chat-call-1", "get_time", "{}"),
            call("openai-chat-call-2", "search", r#"{"q":1}"#),
        ]
    );
}

/// Usage in provider-specific places: Groq's `x_groq.usage` (passed
/// already), Moonshot's `choices[0].usage` on the finish chunk (new), and
/// gateways' `input_tokens` / `output_tokens` (new).
#[test]
fn openai_chat_usage_in_provider_specific_fields() {
    let last = |rest: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":"hi"}}{rest}}}]}}"#
        )
    };
    let groq = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}}"#;
    let moonshot =
        last(r#","finish_reason":"stop","usage":{"prompt_tokens":19,"completion_tokens":13,"total_tokens":32}"#);
    let gateway = format!(
        "{}\n{}",
        last(r#","finish_reason":"stop""#),
        r#"{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"input_tokens":40,"output_tokens":2}}"#
    );
    for (input, total) in [(groq.to_owned(), 9), (moonshot, 32), (gateway, 42)] {
        let out = lines(&input, "openai-chat");
        assert_eq!(summary(&out)["last_token_usage"], total, "{input}");
        let round = of_type(&out, "round");
        assert!(round.is_empty() || round[0]["meta"]["openai_usage"].is_object(), "{input}");
    }
}

/// Content sent as an array of typed parts (a history in OpenAI's request
/// shape, a Mistral model behind an OpenAI-compatible server): its text,
/// not its JSON (new).
#[test]
fn openai_chat_content_parts_are_read_as_text() {
    let stream = r#"{"role":"assistant","content":[{"type":"text","text":"Hello "},{"type":"refusal","refusal":"no."},{"type":"image_url","image_url":{"url":"x"}}]}"#;
    let out = lines(stream, "openai-chat");
    let round = of_type(&out, "round")[0];
    assert_eq!(round["message"], "Hello no.");
    assert_eq!(round["meta"]["openai_refusal"], true);
    assert_eq!(round["meta"]["openai_content_parts"], json!([{"type": "image_url", "image_url": {"url": "x"}}]));
}

// --- All three ------------------------------------------------------------

/// Counts near `u64::MAX` saturate when summed rather than overflow.
#[test]
fn token_counts_near_the_limit_saturate() {
    let max = u64::MAX;
    let cases = [
        (
            "ollama",
            format!(
                r#"{{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{{"role":"assistant","content":"hi"}},"done":true,"prompt_eval_count":{max},"eval_count":7}}"#
            ),
        ),
        (
            "opencode",
            opencode_line(
                "step_finish",
                1,
                &format!(
                    r#","part":{{"type":"step-finish","reason":"stop","tokens":{{"input":{max},"output":7,"reasoning":1,"cache":{{"read":{max},"write":1}}}}}}"#
                ),
            ),
        ),
        (
            "mistral",
            format!(
                r#"{{"type":"conversation.response.done","usage":{{"prompt_tokens":{max},"completion_tokens":7}}}}"#
            ),
        ),
    ];
    for (format, input) in cases {
        let out = lines(&input, format);
        assert_eq!(summary(&out)["last_token_usage"], json!(max), "{format}: {out:?}");
    }
}

/// SPEC v3: each format's ends in its own words.
#[test]
fn each_new_format_says_how_its_runs_end() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "ollama",
            r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"a"},"done":true,"done_reason":"stop"}"#,
            "completed",
        ),
        (
            "ollama",
            r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"a"},"done":false}"#,
            "interrupted",
        ),
        ("ollama", r#"{"error":"boom"}"#, "failed"),
        ("mistral", r#"{"type":"conversation.response.done","usage":{}}"#, "completed"),
        ("mistral", r#"{"type":"conversation.response.error","message":"boom","code":1}"#, "failed"),
        ("mistral", r#"{"type":"message.output.delta","id":"m","content":"cut"}"#, "interrupted"),
        ("opencode", r#"{"type":"done","timestamp":1,"sessionID":"s","reason":"idle","rejected":[]}"#, "completed"),
        (
            "opencode",
            r#"{"type":"error","timestamp":1,"sessionID":"s","error":{"name":"MessageAbortedError"}}"#,
            "canceled",
        ),
        (
            "opencode",
            r#"{"type":"step_finish","timestamp":1,"sessionID":"s","part":{"type":"step-finish","reason":"tool-calls"}}"#,
            "interrupted",
        ),
    ];
    for (format, input, reason) in cases {
        let out = lines(input, format);
        assert_eq!(summary(&out)["finish_reason"], *reason, "{format}: {input}");
    }
}
