//! The five provider and agent-CLI adapters on their recorded
//! fixtures, and the traps their producers' code shows, each as a minimal
//! stream.

use std::path::Path;

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui};
use serde_json::{json, Value};

/// The fixture folders and the format each is read as.
const FOLDERS: [(&str, &str); 5] = [
    ("openai-chat", "openai-chat"),
    ("openai-responses", "openai-responses"),
    ("anthropic-messages", "anthropic"),
    ("claude-stream-json", "claude-code"),
    ("codex-exec-json", "codex"),
];

fn fixture(folder: &str, name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder).join(name)).unwrap()
}

fn records(folder: &str, name: &str, from: &str) -> Vec<Value> {
    clean_replay(&fixture(folder, name), from, "records")
}

fn lines(input: &str, from: &str) -> Vec<Value> {
    clean_replay(input.as_bytes(), from, "records")
}

/// Every fixture: detected with no `--from`, the same output as with it,
/// rounds and UI events that keep the invariants, and no anomaly other
/// than those the recording asks for.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    let mut files = 0;
    for (folder, format) in FOLDERS {
        for path in fixture_files(folder) {
            files += 1;
            let input = std::fs::read(&path).unwrap();
            let (named, named_stats) = replay_lines(&input, &options(format, "records"));
            let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
            assert_eq!(named, auto, "{path:?}: detected as {:?}", auto_stats.format.map(|f| f.name()));
            assert_eq!(auto_stats.format.map(|f| f.name()), Some(format), "{path:?}");
            check_rounds(&named).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let (ui, _) = replay_lines(&input, &options(format, "ui"));
            check_ui(&ui).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            // The one file with lines that are not JSON in its origin.
            let expected_bad = u64::from(path.ends_with("vercel-parallel-tool-call-wrapper.1.chunks.jsonl")) * 2;
            assert_eq!(named_stats.bad_lines, expected_bad, "{path:?}: {named:?}");
            for anomaly in of_type(&named, "anomaly") {
                let kind = anomaly["kind"].as_str().unwrap();
                assert!(
                    ["protocol_error", "unknown_content", "bad_line"].contains(&kind),
                    "{path:?}: unexpected anomaly {anomaly}"
                );
            }
        }
    }
    assert_eq!(files, 43);
}

#[test]
fn openai_chat_parallel_tools_and_usage() {
    let out = records("openai-chat", "openai-python-parallel-tools.sse", "openai-chat");
    let round = of_type(&out, "round")[0];
    let calls = round["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["title"], "GetWeatherArgs");
    assert_eq!(calls[0]["arguments"], r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#);
    assert_eq!(calls[1]["title"], "get_stock_price");
    assert_eq!(calls[1]["arguments"], r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#);
    assert_eq!(round["meta"]["openai_finish_reason"], "tool_calls");
    assert_eq!(of_type(&out, "summary")[0]["last_token_usage"], 209);
}

#[test]
fn openai_chat_reasoning_and_providers_usage_fields() {
    let out = records("openai-chat", "vercel-deepseek-reasoning.chunks.jsonl", "openai-chat");
    let round = of_type(&out, "round")[0];
    assert!(round["thought"].as_str().unwrap().starts_with("We need to count"));
    assert_eq!(round["message"], "The word \"strawberry\" contains three \"r\"s.");
    // Groq: usage in `x_groq.usage` and `usage` on the finish chunk.
    let out = records("openai-chat", "vercel-groq-tool-call.chunks.jsonl", "openai-chat");
    assert_eq!(of_type(&out, "round")[0]["tool_calls"][0]["arguments"], "{}");
    assert_eq!(of_type(&out, "summary")[0]["last_token_usage"], 225);
}

/// Trap: continuation fragments carry `"id": ""` and `"name": ""`; an
/// endpoint may start its indexes at 1; `finish_reason` ends a model call,
/// not the run; the host's tool messages close each round.
#[test]
fn openai_chat_agent_loop_with_empty_ids_and_indexes_from_one() {
    let mut stream = String::new();
    for n in 0..200 {
        let id = format!("call_{n}");
        stream += &format!(
            r#"{{"id":"c{n}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":"step {n}"}}}}]}}
{{"id":"c{n}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":1,"id":"{id}","function":{{"name":"bash","arguments":""}}}}]}}}}]}}
{{"id":"c{n}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":1,"id":"","function":{{"name":"","arguments":"{{\"n\":"}}}}]}}}}]}}
{{"id":"c{n}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":1,"id":"","function":{{"arguments":"{n}}}"}}}}]}},"finish_reason":"tool_calls"}}]}}
data: [DONE]
{{"role":"tool","tool_call_id":"{id}","content":"ok {n}"}}
"#
        );
    }
    let out = lines(&stream, "openai-chat");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 200);
    for (n, round) in rounds.iter().enumerate() {
        assert_eq!(round["message"], format!("step {n}"));
        let call = &round["tool_calls"][0];
        assert_eq!(call["title"], "bash");
        assert_eq!(call["arguments"], format!("{{\"n\":{n}}}"));
        assert_eq!(call["result"], json!({"status": "completed", "content": format!("ok {n}")}));
    }
    assert!(of_type(&out, "anomaly").is_empty());
    assert_eq!(of_type(&out, "summary").len(), 1, "one run");
}

/// Trap: with `n > 1` each choice is its own stream.
#[test]
fn openai_chat_choices_are_sessions() {
    let stream = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"B"}}]}
{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"refusal":"no"}},{"index":1,"delta":{"reasoning":"hm"}}]}"#;
    let out = lines(stream, "openai-chat");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    let first = rounds.iter().find(|r| r["session"].is_null()).unwrap();
    assert_eq!((&first["message"], &first["meta"]["openai_refusal"]), (&json!("Ano"), &json!(true)));
    let second = rounds.iter().find(|r| r["session"] == "choice-1").unwrap();
    assert_eq!((&second["message"], &second["thought"]), (&json!("B"), &json!("hm")));
}

#[test]
fn openai_responses_agent_loop_of_four_responses() {
    let out =
        records("openai-responses", "vercel-openai-reasoning-encrypted-content.1.chunks.jsonl", "openai-responses");
    let rounds = of_type(&out, "round");
    let calls: Vec<&Value> = rounds.iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0]["title"], "calculator");
    assert_eq!(calls[0]["arguments"], r#"{"a":12,"b":7,"op":"add"}"#);
    assert!(calls[0]["id"].as_str().unwrap().starts_with("call_"), "keyed by call_id, which results name");
    assert!(rounds[0]["thought"].as_str().unwrap().starts_with("**Calculating"));
    assert_eq!(rounds.last().unwrap()["message"], "The final result is **570**.");
}

#[test]
fn openai_responses_hosted_tools_and_errors() {
    let out = records("openai-responses", "vercel-openai-shell-container.1.chunks.jsonl", "openai-responses");
    let call = &of_type(&out, "round")[0]["tool_calls"][0];
    assert_eq!(call["result"]["status"], "completed");
    assert!(call["result"]["content"].as_str().unwrap().contains("Hello from container!"));
    let out = records("openai-responses", "vercel-openai-error.1.chunks.jsonl", "openai-responses");
    let anomaly = of_type(&out, "anomaly")[0];
    assert!(anomaly["detail"].as_str().unwrap().contains("insufficient_quota"));
    assert_eq!(of_type(&out, "summary")[0]["openai_status"], "failed");
}

/// Traps: rotating `item_id`s (key by `output_index`), `.done` replaces
/// the deltas, `output_text.done` is not appended, a result names
/// `call_id`.
#[test]
fn openai_responses_rotating_item_ids_and_done_events() {
    let stream = r#"{"type":"response.created","response":{"id":"r1","model":"m"}}
{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1"}}
{"type":"response.output_text.delta","output_index":0,"item_id":"x1","delta":"Hel"}
{"type":"response.output_text.delta","output_index":0,"item_id":"x2","delta":"lo"}
{"type":"response.output_text.done","output_index":0,"item_id":"x3","text":"Hello"}
{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc1","call_id":"call_9","name":"ls","arguments":""}}
{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"y1","delta":"{\"broken"}
{"type":"response.function_call_arguments.done","output_index":1,"item_id":"y2","arguments":"{\"p\":1}"}
{"type":"response.completed","response":{"id":"r1","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}}
{"type":"function_call_output","call_id":"call_9","output":"done"}
{"type":"response.something_new","x":1}"#;
    let out = lines(stream, "openai-responses");
    let round = of_type(&out, "round")[0];
    assert_eq!(round["message"], "Hello");
    let call = &round["tool_calls"][0];
    assert_eq!((&call["id"], &call["arguments"]), (&json!("call_9"), &json!(r#"{"p":1}"#)));
    assert_eq!(call["result"]["content"], "done");
    let unknown = of_type(&out, "anomaly");
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0]["detail"].as_str().unwrap().contains("response.something_new"), "kept");
}

#[test]
fn anthropic_thinking_signature_is_kept_exactly() {
    let out = records("anthropic-messages", "vercel-anthropic-clear-thinking.1.chunks.jsonl", "anthropic");
    let round = of_type(&out, "round")[0];
    let kept = &round["meta"]["anthropic_kept_blocks"][0];
    assert_eq!(kept["type"], "thinking");
    assert!(kept["signature"].as_str().unwrap().starts_with("EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEi"));
    assert_eq!(kept["thinking"], round["thought"]);
    assert_eq!(round["message"], "925 ÷ 5 = 185");
}

#[test]
fn anthropic_server_tools_have_their_results_in_the_stream() {
    let out = records(
        "anthropic-messages",
        "vercel-anthropic-code-execution-20260120-prompt-cache.1.chunks.jsonl",
        "anthropic",
    );
    let calls: Vec<&Value> =
        of_type(&out, "round").iter().flat_map(|r| r["tool_calls"].as_array().unwrap().iter()).collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c["result"]["status"] == "completed"));
    assert!(calls[1]["result"]["content"].as_str().unwrap().contains("Sum: 650"));
    let out = records("anthropic-messages", "vercel-anthropic-refusal.chunks.jsonl", "anthropic");
    assert_eq!(
        of_type(&out, "summary")[0]["anthropic_stop_reason"],
        "refusal",
        "a message without content keeps its end"
    );
    let out = records("anthropic-messages", "vercel-duplicate-message-start.chunks.jsonl", "anthropic");
    assert_eq!(of_type(&out, "round")[0]["message"], "Hello, World!", "a repeated message_start is read once");
}

/// Traps: `index` restarts in every message; `input: {}` is not final; a
/// tool with no arguments is `{}`; usage in `message_delta` is cumulative;
/// an `error` ends the run; host results as a user message or bare blocks.
#[test]
fn anthropic_agent_loop_of_200_rounds() {
    let mut stream = String::new();
    for n in 0..200 {
        let result = if n % 2 == 0 {
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{n}","content":"ok {n}"}}]}}"#
            )
        } else {
            format!(
                r#"{{"type":"tool_result","tool_use_id":"toolu_{n}","content":[{{"type":"text","text":"ok {n}"}}],"is_error":true}}"#
            )
        };
        let args = if n % 3 == 0 {
            String::new()
        } else {
            format!(
                r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{{\"n\":{n}}}"}}}}"#
            )
        };
        stream += &format!(
            r#"{{"type":"message_start","message":{{"id":"msg_{n}","model":"claude","usage":{{"input_tokens":{n}}}}}}}
{{"type":"content_block_start","index":0,"content_block":{{"type":"text","text":""}}}}
{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"step {n}"}}}}
{{"type":"content_block_stop","index":0}}
{{"type":"content_block_start","index":1,"content_block":{{"type":"tool_use","id":"toolu_{n}","name":"bash","input":{{}}}}}}
{args}
{{"type":"content_block_stop","index":1}}
{{"type":"message_delta","delta":{{"stop_reason":"tool_use"}},"usage":{{"output_tokens":7}}}}
{{"type":"message_stop"}}
{result}
"#
        );
    }
    stream += r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let out = lines(&stream.replace("\n\n", "\n"), "anthropic");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 200);
    for (n, round) in rounds.iter().enumerate() {
        let call = &round["tool_calls"][0];
        let args = if n % 3 == 0 { "{}".to_owned() } else { format!("{{\"n\":{n}}}") };
        assert_eq!(call["arguments"], args, "round {n}");
        let status = if n % 2 == 0 { "completed" } else { "failed" };
        assert_eq!(call["result"]["status"], status);
        assert_eq!(
            round["meta"]["anthropic_usage"]["input_tokens"], n,
            "message_start's usage, completed by message_delta"
        );
        assert_eq!(round["meta"]["anthropic_usage"]["output_tokens"], 7);
    }
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("overloaded_error"));
    assert_eq!(of_type(&out, "summary")[0]["last_token_usage"], 199 + 7);
}

#[test]
fn claude_code_partial_messages_are_taken_once() {
    let out = records("claude-stream-json", "sidetone-stream-think-tool.ndjson", "claude-code");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(call["title"], "Bash");
    assert_eq!(call["arguments"], r#"{"command": "echo 391 403 437", "description": "Echo the three numbers"}"#);
    assert_eq!(call["result"], json!({"status": "completed", "content": "391 403 437"}));
    assert!(rounds[0]["meta"]["anthropic_kept_blocks"][0]["signature"].as_str().unwrap().starts_with("CAQSzgUK"));
    assert_eq!(
        rounds[1]["message"],
        "None of 391 (17×23), 403 (13×31) or 437 (19×23) is prime, and a second check of the factors confirms it."
    );
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["claude_model"], "claude-sonnet-5");
    assert!(summary["claude_total_cost_usd"].as_f64().unwrap() > 0.08);
}

#[test]
fn claude_code_permission_denial_without_partial_messages() {
    let out = records("claude-stream-json", "sidetone-stream-force-push.ndjson", "claude-code");
    let call = &of_type(&out, "round")[0]["tool_calls"][0];
    assert_eq!(
        call["arguments"],
        r#"{"command":"git push --force origin main","description":"Force push main to origin"}"#
    );
    assert_eq!(call["result"], json!({"status": "failed", "content": "Chris did not say continue."}));
    assert_eq!(call["meta"]["claude_permission_request"]["subtype"], "can_use_tool");
    assert!(of_type(&out, "summary")[0]["claude_permission_denials"].is_array());
}

/// Traps: several prompts in one process; `is_error` with `subtype:
/// success`; `terminal_reason` aborted means canceled; subagent lines are
/// a session of their own that ends with the parent's run.
#[test]
fn claude_code_prompts_subagents_and_aborts() {
    let stream = r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}
{"type":"assistant","message":{"id":"a1","content":[{"type":"tool_use","id":"task_1","name":"Task","input":{"prompt":"look"}}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"assistant","message":{"id":"a2","content":[{"type":"text","text":"sub says hi"}]},"parent_tool_use_id":"task_1","session_id":"s"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"task_1","content":"found"}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500","session_id":"s"}
{"type":"system","subtype":"init","session_id":"s","model":"m"}
{"type":"assistant","message":{"id":"a3","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{}}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"result","subtype":"error_during_execution","terminal_reason":"aborted_tools","session_id":"s"}"#;
    let out = lines(stream, "claude-code");
    let summaries = of_type(&out, "summary");
    let main: Vec<&&Value> = summaries.iter().filter(|s| s["session"].is_null()).collect();
    assert_eq!(main.len(), 2, "two prompts, two runs");
    let sub = of_type(&out, "round").into_iter().find(|r| r["session"] == "task_1").unwrap();
    assert_eq!(sub["message"], "sub says hi");
    assert!(of_type(&out, "anomaly")[0]["detail"].as_str().unwrap().contains("API Error: 500"));
    let aborted = of_type(&out, "round").into_iter().find(|r| r["tool_calls"][0]["id"] == "t2").unwrap();
    assert_eq!(aborted["tool_calls"][0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
}

#[test]
fn codex_items_become_calls_and_turns_runs() {
    let out = records("codex-exec-json", "takopi-codex_exec_json_all_formats.jsonl", "codex");
    let calls: Vec<&Value> =
        of_type(&out, "round").iter().flat_map(|r| r["tool_calls"].as_array().unwrap().iter()).collect();
    let statuses: Vec<&str> = calls.iter().map(|c| c["result"]["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        ["completed", "completed", "failed", "completed", "failed", "completed", "failed", "completed"]
    );
    assert_eq!(calls[1]["arguments"], "pytest -q");
    assert_eq!(calls[2]["meta"]["codex_exit_code"], 1);
    assert_eq!(calls[5]["title"], "github/search_issues");
    assert_eq!(calls[6]["result"]["content"], r#"{"message":"tool timeout"}"#);
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2, "two turns");
    assert_eq!(summaries[0]["codex_usage"]["input_tokens"], 1840);
}

/// Traps: a duplicate `"id"` key (the last wins, nothing lost); live
/// output in `item.updated` replaces; an interrupted turn has no terminal
/// event (finished at end of input); ids restart after a resume.
#[test]
fn codex_duplicate_keys_live_output_and_resume() {
    let stream = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"web_search","id":"ws_1","query":"rust"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"make","aggregated_output":"","status":"in_progress"}}
{"type":"item.updated","item":{"id":"item_1","type":"command_execution","command":"make","aggregated_output":"building","status":"in_progress"}}
{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}
{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"resumed"}}"#;
    let out = lines(stream, "codex");
    let rounds = of_type(&out, "round");
    let search = &rounds[0]["tool_calls"][0];
    assert_eq!(search["id"], "ws_1", "the last id wins");
    assert!(search["result"]["content"].as_str().unwrap().contains("rust"));
    let make = rounds[1]["tool_calls"][0].clone();
    // The turn completed without the command's result.
    assert_eq!(make["result"]["reason"], "completed");
    assert_eq!(rounds[2]["message"], "resumed");
    assert_eq!(of_type(&out, "summary").len(), 2);
    let ui = clean_replay(stream.as_bytes(), "codex", "ui");
    assert!(ui.iter().any(|e| e["event"] == "tool_call_output" && e["content"] == "building" && e["replace"] == true));
}

/// The payloads of a recording: SSE `data:` lines gathered into events,
/// any other non-blank line a payload of its own (the replay's framing).
fn payloads(input: &[u8]) -> Vec<Vec<u8>> {
    let mut payloads = Vec::new();
    let mut event: Vec<u8> = Vec::new();
    for line in input.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(data) = line.strip_prefix(b"data:") {
            if !event.is_empty() {
                event.push(b'\n');
            }
            event.extend_from_slice(data.strip_prefix(b" ").unwrap_or(data));
            continue;
        }
        if !event.is_empty() {
            payloads.push(std::mem::take(&mut event));
        }
        let field = [&b"event:"[..], b"id:", b"retry:", b":"].iter().any(|p| line.starts_with(p));
        if !line.iter().all(u8::is_ascii_whitespace) && !field {
            payloads.push(line.to_vec());
        }
    }
    if !event.is_empty() {
        payloads.push(event);
    }
    payloads
}

/// Records what an adapter makes of a recording as ops JSONL: each call
/// with its session and the protocol's clock reading.
pub(crate) fn record_calls(format: &str, input: &[u8]) -> String {
    struct Ops {
        out: String,
        at_ms: Option<u64>,
    }
    impl roundup::adapters::CallSink for Ops {
        fn call(&mut self, session: Option<&str>, call: roundup::Call<'_>) {
            let mut line = serde_json::to_value(call).unwrap();
            if let Some(session) = session {
                line["session"] = session.into();
            }
            if let Some(at_ms) = self.at_ms {
                line["at_ms"] = at_ms.into();
            }
            self.out += &format!("{line}\n");
        }
        fn clock(&mut self, at_ms: u64) {
            self.at_ms = Some(at_ms);
        }
    }
    let mut adapter = roundup::adapters::InputFormat::named(format).unwrap().adapter();
    let mut ops = Ops { out: String::new(), at_ms: None };
    for payload in payloads(input) {
        adapter.translate(&payload, &mut ops).unwrap();
    }
    adapter.end(&mut ops);
    ops.out
}

/// An ops recording of each fixture (the calls its adapter made, as the
/// `Recorder` writes them) replays to the same output: what the adapter
/// hands the machine is all the output depends on.
#[test]
fn an_ops_recording_of_every_fixture_replays_the_same() {
    for (folder, format) in FOLDERS {
        for path in fixture_files(folder) {
            if path.ends_with("vercel-parallel-tool-call-wrapper.1.chunks.jsonl") {
                continue;
            }
            let input = std::fs::read(&path).unwrap();
            let native = clean_replay(&input, format, "records");
            let recording = record_calls(format, &input);
            let replayed = clean_replay(recording.as_bytes(), "ops", "records");
            assert_eq!(native, replayed, "{path:?}");
            assert!(!native.is_empty());
        }
    }
}

/// A stream that opens blocks and never stops them: what each kept (a
/// thinking signature) still reaches the output, and the adapter holds at
/// most a bounded number of open blocks.
#[test]
fn anthropic_blocks_never_stopped_are_ended_not_lost() {
    let mut stream = String::from(r#"{"type":"message_start","message":{"id":"m1"}}"#);
    stream.push('\n');
    for n in 0..300 {
        stream += &format!(
            r#"{{"type":"content_block_start","index":{n},"content_block":{{"type":"thinking","thinking":"t{n} ","signature":""}}}}
{{"type":"content_block_delta","index":{n},"delta":{{"type":"signature_delta","signature":"sig{n}"}}}}
"#
        );
    }
    let out = lines(&stream, "anthropic");
    let round = of_type(&out, "round")[0];
    let kept = round["meta"]["anthropic_kept_blocks"].as_array().unwrap();
    assert_eq!(kept.len(), 300, "every block's signature, the evicted and the unstopped");
    assert!(kept.iter().any(|k| k["signature"] == "sig0") && kept.iter().any(|k| k["signature"] == "sig299"));
}

/// SPEC v3: each format says how its runs end in its own words, and the
/// summary says it as `finish_reason`: a normal end `completed`, an error
/// or failed turn `failed`, a cancel `canceled`, a stream that stops
/// without saying `interrupted`.
#[test]
fn each_format_says_how_its_runs_end() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "codex",
            r#"{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}"#,
            "completed",
        ),
        (
            "codex",
            r#"{"type":"turn.started"}
{"type":"turn.failed","error":{"message":"boom"}}"#,
            "failed",
        ),
        (
            "codex",
            r#"{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"cut"}}"#,
            "interrupted",
        ),
        (
            "claude-code",
            r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false}"#,
            "completed",
        ),
        (
            "claude-code",
            r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"error_during_execution","is_error":true}"#,
            "failed",
        ),
        (
            "claude-code",
            r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"terminal_reason":"aborted_by_user"}"#,
            "canceled",
        ),
        (
            "uagent",
            r#"{"type":"run_started","v":1}
{"type":"text_delta","text":"hi","v":1}
{"type":"run_finished","summary":{"status":"ok"},"v":1}"#,
            "completed",
        ),
        (
            "uagent",
            r#"{"type":"run_started","v":1}
{"type":"run_finished","summary":{"status":"error"},"v":1}"#,
            "failed",
        ),
        (
            "uagent",
            r#"{"type":"run_started","v":1}
{"type":"run_finished","summary":{"status":"timeout"},"v":1}"#,
            "canceled",
        ),
        (
            "anthropic",
            r#"{"type":"message_start","message":{"id":"m","model":"c"}}
{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            "failed",
        ),
        (
            "openai-chat",
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}
{"error":{"message":"boom"}}"#,
            "failed",
        ),
    ];
    for (format, input, reason) in cases {
        let out = lines(input, format);
        let summaries = of_type(&out, "summary");
        let reasons: Vec<&Value> = summaries.iter().map(|s| &s["finish_reason"]).collect();
        assert_eq!(reasons, [&json!(reason)], "{format}: {input}");
    }
}

/// Feeds `first`, a turn the model ends, then `second`, in `format`: the
/// first's round and summary are out before the end of the input, the
/// second is run 1, and nothing is an anomaly. The first run's summary.
fn a_turn_then_the_next(format: &str, first: &[String], second: &[String]) -> Value {
    let options = roundup::ReplayOptions::new().from(roundup::adapters::InputFormat::named(format).unwrap());
    let mut replayer = roundup::Replayer::new(&options).unwrap();
    for line in first {
        replayer.feed_payload(line.as_bytes(), &mut ());
    }
    let mut out = Vec::new();
    replayer.take_output(&mut out);
    let now = roundup_testkit::capture::parse_output(&out);
    let types: Vec<&Value> = now.iter().map(|l| &l["type"]).collect();
    assert_eq!(types, [&json!("round"), &json!("summary")], "{format}, before the end of input: {now:?}");
    for line in second {
        replayer.feed_payload(line.as_bytes(), &mut ());
    }
    replayer.finish(&mut ());
    let mut rest = Vec::new();
    replayer.take_output(&mut rest);
    let rest = roundup_testkit::capture::parse_output(&rest);
    let runs: Vec<(&Value, &Value)> = rest.iter().map(|l| (&l["type"], &l["run"])).collect();
    assert_eq!(runs, [(&json!("round"), &json!(1)), (&json!("summary"), &json!(1))], "{format}: {rest:?}");
    now[1].clone()
}

/// An Anthropic message that ends the turn (`end_turn`) ends the run at its
/// `message_stop`, not at the end of the stream: a live view sees the round
/// and the summary then. A message that calls tools goes on; the next
/// message after a turn's end is the next run.
#[test]
fn an_anthropic_turn_ends_its_run_when_the_model_ends_it() {
    let turn = |id: &str, text: &str, stop: &str| {
        vec![
            format!(r#"{{"type":"message_start","message":{{"id":"{id}","model":"c"}}}}"#),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned(),
            format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{text}"}}}}"#),
            r#"{"type":"content_block_stop","index":0}"#.to_owned(),
            format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}"}},"usage":{{"output_tokens":1}}}}"#),
            r#"{"type":"message_stop"}"#.to_owned(),
        ]
    };
    let first = a_turn_then_the_next("anthropic", &turn("m1", "Hello.", "end_turn"), &turn("m2", "Again.", "end_turn"));
    assert_eq!(first["finish_reason"], "completed");
}

/// An OpenAI chat completion that ends the turn (`stop`) ends its run at
/// the stream's `[DONE]`, after the usage chunk that follows the reason
/// (which is the run's, not `after_finish`); the next completion is the
/// next run.
#[test]
fn an_openai_chat_turn_ends_its_run_at_done() {
    let completion = |id: &str, text: &str| {
        vec![
            format!(
                r#"{{"id":"{id}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":"{text}"}}}}]}}"#
            ),
            format!(
                r#"{{"id":"{id}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}"#
            ),
            format!(r#"{{"id":"{id}","object":"chat.completion.chunk","choices":[],"usage":{{"total_tokens":12}}}}"#),
            "[DONE]".to_owned(),
        ]
    };
    let first = a_turn_then_the_next("openai-chat", &completion("c1", "Hello."), &completion("c2", "Again."));
    assert_eq!((&first["finish_reason"], &first["last_token_usage"]), (&json!("completed"), &json!(12)));
}

/// An OpenAI Responses response that asks the host for nothing ends the
/// run at its `response.completed`, not at the end of the stream; the next
/// response is the next run. One that declares a function call goes on:
/// the host's output and the next response belong to the same run.
#[test]
fn an_openai_responses_turn_ends_its_run_when_the_response_completes() {
    let response = |id: &str, text: &str| {
        vec![
            format!(r#"{{"type":"response.created","response":{{"id":"{id}","model":"gpt","status":"in_progress"}}}}"#),
            format!(r#"{{"type":"response.output_text.delta","output_index":0,"delta":"{text}"}}"#),
            format!(
                r#"{{"type":"response.completed","response":{{"id":"{id}","model":"gpt","status":"completed","usage":{{"total_tokens":7}}}}}}"#
            ),
        ]
    };
    let first = a_turn_then_the_next("openai-responses", &response("r1", "Hello."), &response("r2", "Again."));
    assert_eq!((&first["finish_reason"], &first["last_token_usage"]), (&json!("completed"), &json!(7)));

    let asks = [
        r#"{"type":"response.created","response":{"id":"r1","model":"gpt"}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ls","arguments":"{}"}}"#,
        r#"{"type":"response.completed","response":{"id":"r1","model":"gpt","status":"completed"}}"#,
        r#"{"type":"function_call_output","call_id":"call_1","output":"a.txt"}"#,
        r#"{"type":"response.created","response":{"id":"r2","model":"gpt"}}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"Done."}"#,
        r#"{"type":"response.completed","response":{"id":"r2","model":"gpt","status":"completed"}}"#,
    ];
    let out = lines(&asks.join("\n"), "openai-responses");
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 1, "one run: {out:?}");
    assert_eq!(summaries[0]["finish_reason"], "completed");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 2, "{out:?}");
    assert_eq!(rounds[0]["tool_calls"][0]["result"]["content"], "a.txt");
    assert_eq!(rounds[1]["message"], "Done.");
    assert!(of_type(&out, "anomaly").is_empty(), "{out:?}");
}
