//! Every protocol adapter end to end on a generated trace of its own
//! format (the same rounds as `benches/replay.rs`, translated), side by side
//! with the floor on the same lines: serde_json parsing them into
//! `IgnoredAny`.
//!
//! `cargo bench --bench adapters` (`ROUNDUP_BENCH_MB` changes the size,
//! `ROUNDUP_BENCH_FORMATS=acp,codex` picks formats, `ROUNDUP_BENCH_DUMP=DIR`
//! writes each format's input there, for a profiler).

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::{ms, trace};
use serde::de::IgnoredAny;
use serde_json::{json, Value};

/// One ops line as the native events of `format` (none when the format has
/// no such event: uagent streams no argument deltas).
fn translate(format: &str, op: &Value, n: usize) -> Vec<Value> {
    let s = |k: &str| op[k].as_str().unwrap_or_default().to_owned();
    let session = s("session");
    let at = op["at_ms"].as_u64().unwrap_or(0);
    let stamp = format!("2026-01-01T00:{:02}:{:02}.{:03}Z", at / 60_000 % 60, at / 1000 % 60, at % 1000);
    let acp = |update: Value| json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}});
    match (format, op["op"].as_str().unwrap_or_default()) {
        ("acp", "message") => {
            vec![acp(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s("text")}}))]
        }
        ("acp", "thought") => {
            vec![acp(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": s("text")}}))]
        }
        ("acp", "tool_call") => vec![acp(
            json!({"sessionUpdate": "tool_call", "toolCallId": s("id"), "title": s("title"), "kind": "execute", "status": "pending"}),
        )],
        ("acp", "tool_update") if s("status") == "completed" => vec![acp(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": s("id"), "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": s("content")}}]}),
        )],
        ("acp", "tool_update") => vec![acp(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": s("id"), "_meta": {"terminal_output_delta": {"data": s("content")}}}),
        )],
        ("acp", "args_snapshot") => vec![acp(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": s("id"), "rawInput": {"command": s("args")}}),
        )],
        ("acp", "token_usage") => {
            vec![acp(json!({"sessionUpdate": "usage_update", "used": op["total"], "size": 200000}))]
        }
        ("uagent", "message") => vec![json!({"type": "text_delta", "text": s("text"), "at": stamp, "v": 1})],
        ("uagent", "thought") => vec![json!({"type": "reasoning_delta", "text": s("text"), "at": stamp, "v": 1})],
        ("uagent", "tool_call") => vec![
            json!({"type": "tool_called", "call_id": s("id"), "name": s("title"), "arguments": "{}", "at": stamp, "v": 1}),
            json!({"type": "tool_started", "call_id": s("id"), "op_id": format!("op{n}"), "at": stamp, "v": 1}),
        ],
        ("uagent", "tool_update") if s("status") == "completed" => vec![
            json!({"type": "tool_finished", "call_id": s("id"), "ok": true, "detail": s("content"), "duration_ms": 5, "at": stamp, "v": 1}),
        ],
        ("uagent", "token_usage") => vec![
            json!({"type": "model_responded", "stop": "complete", "usage": {"input": op["total"], "output": 5}, "at": stamp, "v": 1}),
        ],
        ("deepwork", "message") => vec![json!({"kind": "text", "content": s("text"), "source": session})],
        ("deepwork", "thought") => vec![json!({"kind": "thinking", "content": s("text"), "source": session})],
        ("deepwork", "tool_call") => vec![
            json!({"kind": "tool_start", "tool": {"id": s("id"), "name": s("title"), "input": {}}, "source": session}),
        ],
        ("deepwork", "args_snapshot") => vec![
            json!({"kind": "tool_start", "tool": {"id": s("id"), "name": "bash", "input": {"command": s("args")}}, "source": session}),
        ],
        ("deepwork", "tool_update") if s("status") == "completed" => vec![
            json!({"kind": "tool_result", "tool": {"id": s("id"), "name": "bash", "output": s("content"), "duration_ms": 5}, "meta": {"step_number": n}, "source": session}),
        ],
        ("deepwork", "token_usage") => {
            vec![json!({"kind": "usage", "usage": {"input_tokens": op["total"]}, "source": session})]
        }
        ("gemini-cli-chat-pieces", kind) => {
            // The stress layout: a model message a piece, thousands of
            // messages to a round, each an item of its round's metadata
            // (the file holds each message whole; a call is written with
            // its result, once it has one).
            let mut records = Vec::new();
            if n == 0 {
                records.push(json!({"sessionId": session, "projectHash": "p", "startTime": stamp, "lastUpdated": stamp, "kind": "main"}));
                records.push(json!({"id": "u0", "timestamp": stamp, "type": "user", "content": [{"text": "Go."}]}));
            }
            let message = |fields: Value| {
                let mut message = json!({"id": format!("g{n}"), "timestamp": stamp, "type": "gemini", "content": "", "model": "gemini-3"});
                if let (Some(message), Some(fields)) = (message.as_object_mut(), fields.as_object()) {
                    message.extend(fields.clone());
                }
                message
            };
            match kind {
                "message" => records.push(message(json!({"content": s("text")}))),
                "thought" => records.push(message(json!({"thoughts": [{"subject": "Thinking", "description": s("text"), "timestamp": stamp}]}))),
                "tool_update" if s("status") == "completed" => records.push(message(json!({"toolCalls": [{
                    "id": s("id"), "name": "run_shell_command", "args": {}, "status": "success", "timestamp": stamp,
                    "result": [{"functionResponse": {"id": s("id"), "name": "run_shell_command", "response": {"output": s("content")}}}]}]}))),
                _ => {}
            }
            records
        }
        _ => provider(format, op, &s),
    }
}

/// One ops line as the events of the provider and agent-CLI formats: the
/// same rounds in one session (their streams are one session each), the
/// host's results between model calls where the format has the model call
/// and not the tool.
fn provider(format: &str, op: &Value, s: &dyn Fn(&str) -> String) -> Vec<Value> {
    let id = s("id");
    // `toolu_{round}_{c}`: the call's index in its round.
    let index: u64 = id.rsplit('_').next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let round = id.split('_').nth(1).unwrap_or("0").to_owned();
    let chunk = |delta: Value| json!({"id": format!("c{round}"), "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]});
    let stream =
        |event: Value| json!({"type": "stream_event", "event": event, "parent_tool_use_id": null, "session_id": "s"});
    let text = |kind: &str, field: &str| json!({"type": "content_block_delta", "index": 0, "delta": {"type": kind, field: s("text")}});
    let tool_start = || json!({"type": "content_block_start", "index": 1 + index, "content_block": {"type": "tool_use", "id": id, "name": s("title"), "input": {}}});
    let tool_delta = || json!({"type": "content_block_delta", "index": 1 + index, "delta": {"type": "input_json_delta", "partial_json": s("content")}});
    let completed = s("status") == "completed";
    let gemini = |parts: Value| json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "responseId": format!("r{round}")});
    match (format, op["op"].as_str().unwrap_or_default()) {
        ("openai-chat", "message") => vec![chunk(json!({"content": s("text")}))],
        ("openai-chat", "thought") => vec![chunk(json!({"reasoning_content": s("text")}))],
        ("openai-chat", "tool_call") => vec![chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": s("title"), "arguments": ""}}]}),
        )],
        ("openai-chat", "tool_update") if completed => {
            vec![json!({"role": "tool", "tool_call_id": id, "content": s("content")})]
        }
        ("openai-chat", "tool_update") => {
            vec![chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": s("content")}}]}))]
        }
        ("openai-chat", "token_usage") => {
            vec![json!({"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": op["total"]}})]
        }
        ("openai-responses", "message") => {
            vec![json!({"type": "response.output_text.delta", "output_index": 0, "delta": s("text")})]
        }
        ("openai-responses", "thought") => {
            vec![
                json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": s("text")}),
            ]
        }
        ("openai-responses", "tool_call") => {
            vec![json!({"type": "response.output_item.added", "output_index": 1 + index,
            "item": {"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": s("title"), "arguments": ""}})]
        }
        ("openai-responses", "tool_update") if completed => {
            vec![json!({"type": "function_call_output", "call_id": id, "output": s("content")})]
        }
        ("openai-responses", "tool_update") => {
            vec![
                json!({"type": "response.function_call_arguments.delta", "output_index": 1 + index, "delta": s("content")}),
            ]
        }
        ("openai-responses", "args_snapshot") => {
            vec![
                json!({"type": "response.function_call_arguments.done", "output_index": 1 + index, "arguments": s("args")}),
            ]
        }
        ("openai-responses", "token_usage") => {
            vec![
                json!({"type": "response.completed", "response": {"id": format!("r{round}"), "usage": {"total_tokens": op["total"]}}}),
            ]
        }
        ("anthropic", "message") => vec![text("text_delta", "text")],
        ("anthropic", "thought") => vec![text("thinking_delta", "thinking")],
        ("anthropic", "tool_call") => vec![tool_start()],
        ("anthropic", "tool_update") if completed => {
            vec![json!({"type": "tool_result", "tool_use_id": id, "content": s("content")})]
        }
        ("anthropic", "tool_update") => vec![tool_delta()],
        ("anthropic", "token_usage") => vec![
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"input_tokens": op["total"]}}),
        ],
        ("claude-code", "message") => vec![stream(text("text_delta", "text"))],
        ("claude-code", "thought") => vec![stream(text("thinking_delta", "thinking"))],
        ("claude-code", "tool_call") => vec![stream(tool_start())],
        ("claude-code", "tool_update") if completed => vec![json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": s("content")}]}, "parent_tool_use_id": null, "session_id": "s"})],
        ("claude-code", "tool_update") => vec![stream(tool_delta())],
        ("codex", "message") => {
            vec![json!({"type": "item.completed", "item": {"id": "m", "type": "agent_message", "text": s("text")}})]
        }
        ("codex", "thought") => {
            vec![json!({"type": "item.completed", "item": {"id": "r", "type": "reasoning", "text": s("text")}})]
        }
        ("codex", "tool_call") => vec![json!({"type": "item.started", "item": {"id": id, "type": "command_execution",
            "command": "ls", "aggregated_output": "", "status": "in_progress"}})],
        ("codex", "tool_update") if completed => {
            vec![json!({"type": "item.completed", "item": {"id": id, "type": "command_execution",
            "command": "ls", "aggregated_output": s("content"), "exit_code": 0, "status": "completed"}})]
        }
        // Mistral's chat chunks are OpenAI's.
        ("mistral", _) => provider("openai-chat", op, s),
        // Ollama and OpenCode send a tool call whole, not its deltas.
        ("ollama", "message") => vec![ollama(json!({"role": "assistant", "content": s("text")}))],
        ("ollama", "thought") => vec![ollama(json!({"role": "assistant", "content": "", "thinking": s("text")}))],
        ("ollama", "tool_call") => vec![ollama(json!({"role": "assistant", "content": "",
            "tool_calls": [{"id": id, "function": {"name": s("title"), "arguments": {}}}]}))],
        ("ollama", "tool_update") if completed => {
            vec![json!({"role": "tool", "tool_call_id": id, "content": s("content")})]
        }
        ("opencode", "message") => vec![opencode("text", json!({"type": "text", "messageID": "m", "text": s("text")}))],
        ("opencode", "thought") => vec![opencode("reasoning", json!({"type": "reasoning", "text": s("text")}))],
        ("opencode", "tool_update") if completed => vec![opencode(
            "tool_use",
            json!({"type": "tool", "callID": id,
            "tool": s("title"), "state": {"status": "completed", "input": {}, "output": s("content")}}),
        )],
        ("opencode", "token_usage") => vec![opencode(
            "step_finish",
            json!({"type": "step-finish", "reason": "tool-calls",
            "tokens": {"input": op["total"], "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        )],
        ("gemini", "message") => vec![gemini(json!([{"text": s("text")}]))],
        ("gemini", "thought") => vec![gemini(json!([{"text": s("text"), "thought": true}]))],
        ("gemini", "tool_call") => vec![gemini(json!([{"functionCall": {"id": id, "name": s("title"), "args": {}}}]))],
        ("gemini", "tool_update") if completed => vec![json!({"role": "user", "parts": [{"functionResponse":
            {"id": id, "name": "bash", "response": {"output": s("content")}}}]})],
        ("gemini", "token_usage") => {
            vec![json!({"usageMetadata": {"totalTokenCount": op["total"]}, "responseId": format!("r{round}")})]
        }
        ("gemini-cli", "message") => {
            vec![json!({"type": "message", "role": "assistant", "content": s("text"), "delta": true})]
        }
        ("gemini-cli", "tool_call") => {
            vec![json!({"type": "tool_use", "tool_name": s("title"), "tool_id": id, "parameters": {}})]
        }
        ("gemini-cli", "tool_update") if completed => {
            vec![json!({"type": "tool_result", "tool_id": id, "status": "success", "output": s("content")})]
        }
        ("ai-sdk", "message") => vec![json!({"type": "text-delta", "id": "0", "delta": s("text")})],
        ("ai-sdk", "thought") => vec![json!({"type": "reasoning-delta", "id": "r", "delta": s("text")})],
        ("ai-sdk", "tool_call") => {
            vec![json!({"type": "tool-input-start", "toolCallId": id, "toolName": s("title")})]
        }
        ("ai-sdk", "tool_update") if completed => {
            vec![json!({"type": "tool-output-available", "toolCallId": id, "output": s("content")})]
        }
        ("ai-sdk", "tool_update") => {
            vec![json!({"type": "tool-input-delta", "toolCallId": id, "inputTextDelta": s("content")})]
        }
        ("ai-sdk", "token_usage") => {
            vec![json!({"type": "message-metadata", "messageMetadata": {"usage": {"totalTokens": op["total"]}}})]
        }
        // Session logs: one API message a round, a block a line (Claude
        // Code), or Responses items (Codex); results as the host's lines.
        ("claude-transcript", kind @ ("message" | "thought" | "tool_call")) => {
            let block = match kind {
                "message" => json!({"type": "text", "text": s("text")}),
                "thought" => json!({"type": "thinking", "thinking": s("text")}),
                _ => json!({"type": "tool_use", "id": id, "name": s("title"), "input": {}}),
            };
            vec![json!({"type": "assistant", "sessionId": "s", "requestId": format!("req_{round}"),
                "message": {"id": format!("msg_{round}"), "role": "assistant", "model": "claude",
                    "content": [block], "usage": {"input_tokens": 10, "output_tokens": 1}}})]
        }
        ("claude-transcript", "tool_update") if completed => vec![json!({"type": "user", "sessionId": "s",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": s("content")}]}})],
        ("codex-rollout", "message") => vec![json!({"type": "response_item", "payload": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": s("text")}]}})],
        ("codex-rollout", "thought") => vec![json!({"type": "response_item", "payload": {"type": "reasoning",
            "summary": [{"type": "summary_text", "text": s("text")}]}})],
        ("codex-rollout", "tool_call") => vec![json!({"type": "response_item", "payload": {"type": "function_call",
            "name": s("title"), "arguments": "{}", "call_id": id}})],
        ("codex-rollout", "tool_update") if completed => vec![json!({"type": "response_item", "payload":
            {"type": "function_call_output", "call_id": id, "output": s("content")}})],
        // Bedrock in the SDKs' shape: reasoning on block 0, text on block
        // 1, tools from block 2, the host's results between responses.
        ("bedrock", "message") => {
            vec![json!({"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": s("text")}}})]
        }
        ("bedrock", "thought") => vec![
            json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": s("text")}}}}),
        ],
        ("bedrock", "tool_call") => vec![json!({"contentBlockStart": {"contentBlockIndex": 2 + index,
            "start": {"toolUse": {"toolUseId": id, "name": s("title")}}}})],
        ("bedrock", "tool_update") if completed => vec![json!({"role": "user", "content": [{"toolResult":
            {"toolUseId": id, "content": [{"text": s("content")}], "status": "success"}}]})],
        ("bedrock", "tool_update") => vec![
            json!({"contentBlockDelta": {"contentBlockIndex": 2 + index, "delta": {"toolUse": {"input": s("content")}}}}),
        ],
        ("bedrock", "token_usage") => {
            vec![json!({"metadata": {"usage": {"inputTokens": op["total"], "outputTokens": 0,
            "totalTokens": op["total"]}, "metrics": {"latencyMs": 100}}})]
        }
        _ => vec![],
    }
}

/// The ops trace as Gemini CLI's recorder writes a chat (`.jsonl`): a
/// `user` message for each run, and for each round one `gemini` message,
/// written when the response ends (its thoughts, a summary a sentence of
/// ten pieces, its text, its token counts), written again whole with its
/// tool calls when they are scheduled, and again with their results. The
/// last record of an id wins, so the first two writes of a tool round are
/// held and replaced.
fn gemini_cli_chat(ops: &str) -> String {
    let mut out = String::new();
    let mut push = |record: &Value| {
        out.push_str(&record.to_string());
        out.push('\n');
    };
    let stamp = |at: u64| format!("2026-01-01T00:{:02}:{:02}.{:03}Z", at / 60_000 % 60, at / 1000 % 60, at % 1000);
    let (mut thoughts, mut pieces, mut text, mut calls) = (Vec::new(), String::new(), String::new(), Vec::new());
    let (mut messages, mut prompts, mut in_summary) = (0, 0, 0);
    for (n, line) in ops.lines().enumerate() {
        let op: Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| op[k].as_str().unwrap_or_default().to_owned();
        let at = stamp(op["at_ms"].as_u64().unwrap_or(0));
        if n == 0 {
            push(
                &json!({"sessionId": s("session"), "projectHash": "p", "startTime": at, "lastUpdated": at, "kind": "main"}),
            );
        }
        if n == 0 || s("op") == "start" {
            push(
                &json!({"id": format!("u{prompts}"), "timestamp": at, "type": "user", "content": [{"text": "Go on."}]}),
            );
            prompts += 1;
        }
        let summary = |pieces: &mut String| json!({"subject": "Thinking", "description": std::mem::take(pieces), "timestamp": at});
        match s("op").as_str() {
            "thought" => {
                pieces.push_str(&s("text"));
                in_summary += 1;
                if in_summary == 10 {
                    thoughts.push(summary(&mut pieces));
                    in_summary = 0;
                }
            }
            "message" => text.push_str(&s("text")),
            "tool_call" => calls.push((s("id"), json!({}), String::new())),
            "args_snapshot" => {
                let args = serde_json::from_str(&s("args")).unwrap_or(json!({}));
                calls.iter_mut().filter(|call| call.0 == s("id")).for_each(|call| call.1 = args.clone());
            }
            "tool_update" if s("status") == "completed" => {
                calls.iter_mut().filter(|call| call.0 == s("id")).for_each(|call| call.2 = s("content"));
            }
            "token_usage" => {
                if in_summary > 0 {
                    thoughts.push(summary(&mut pieces));
                    in_summary = 0;
                }
                let total = op["total"].as_u64().unwrap_or(0);
                let mut message = json!({"id": format!("g{messages}"), "timestamp": at, "type": "gemini",
                    "content": std::mem::take(&mut text), "thoughts": std::mem::take(&mut thoughts),
                    "tokens": {"input": total - 40, "output": 20, "cached": 0, "thoughts": 20, "tool": 0, "total": total},
                    "model": "gemini-3"});
                messages += 1;
                push(&message);
                let call = |(id, args, output): &(String, Value, String), done: bool| {
                    let mut call = json!({"id": id, "name": "run_shell_command", "args": args, "timestamp": at,
                        "description": "Runs a shell command", "displayName": "Shell", "renderOutputAsMarkdown": false});
                    if done {
                        call["status"] = json!("success");
                        call["result"] = json!([{"functionResponse": {"id": id, "name": "run_shell_command",
                            "response": {"output": output}}}]);
                        call["resultDisplay"] = json!(output);
                    }
                    call
                };
                for done in [false, true] {
                    message["toolCalls"] = calls.iter().map(|c| call(c, done)).collect();
                    push(&message);
                }
                calls.clear();
            }
            _ => {}
        }
    }
    out
}

/// An Ollama `/api/chat` line that is not the response's last.
fn ollama(message: Value) -> Value {
    json!({"model": "qwen3", "created_at": "2026-01-01T00:00:00Z", "message": message, "done": false})
}

/// An OpenCode `run --format json` line.
fn opencode(kind: &str, part: Value) -> Value {
    json!({"type": kind, "timestamp": 1_767_036_059_338_u64, "sessionID": "ses_1", "part": part})
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mb: usize = std::env::var("ROUNDUP_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let ops = trace(mb * 1_000_000, 4);
    const ROUNDS: usize = 7;
    println!("adapters: a {mb} MB ops trace translated to each format; median of {ROUNDS} paired rounds");
    let only = std::env::var("ROUNDUP_BENCH_FORMATS").ok();
    // Every format but ops on its own layout; Gemini CLI chat also on the
    // stress layout of a model message a piece.
    let names = roundup::adapters::REGISTRY.iter().map(|f| f.name()).filter(|name| *name != "ops");
    for name in names.chain(["gemini-cli-chat-pieces"]) {
        if only.as_deref().is_some_and(|only| !only.split(',').any(|o| o == name)) {
            continue;
        }
        let format = roundup::adapters::InputFormat::named(name.trim_end_matches("-pieces")).unwrap();
        let options = roundup::ReplayOptions::new().from(format);
        let mut input = String::new();
        if name == "gemini-cli-chat" {
            input = gemini_cli_chat(&ops);
        }
        for (n, line) in ops.lines().enumerate().filter(|_| name != "gemini-cli-chat") {
            let op: Value = serde_json::from_str(line).unwrap();
            for event in translate(name, &op, n) {
                input.push_str(&event.to_string());
                input.push('\n');
            }
        }
        if let Ok(dir) = std::env::var("ROUNDUP_BENCH_DUMP") {
            // For profiling: `roundup replay --from NAME DIR/NAME.jsonl`.
            std::fs::write(std::path::Path::new(&dir).join(format!("{name}.jsonl")), &input).unwrap();
        }
        let lines = input.lines().count() as f64;
        let floor = || {
            let mut reader = BufReader::with_capacity(1 << 16, input.as_bytes());
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).unwrap() > 0 {
                let _: IgnoredAny = serde_json::from_slice(&line).unwrap();
                line.clear();
            }
        };
        let replay = || {
            let stats = roundup::replay(input.as_bytes(), std::io::sink(), &options, &mut ()).unwrap();
            assert_eq!(stats.bad_lines, 0);
        };
        let time = |f: &dyn Fn()| {
            let start = Instant::now();
            f();
            start.elapsed()
        };
        time(&floor);
        time(&replay);
        let pairs: Vec<(Duration, Duration)> = (0..ROUNDS).map(|_| (time(&floor), time(&replay))).collect();
        let ratio = median(pairs.iter().map(|(f, r)| r.as_secs_f64() / f.as_secs_f64()).collect());
        let replay_time = median(pairs.iter().map(|p| p.1.as_secs_f64()).collect());
        let floor_time = median(pairs.iter().map(|p| p.0.as_secs_f64()).collect());
        // Allocations per event in the steady state: what a whole replay
        // allocates, over its lines.
        let allocations = allocation_counter::measure(replay).count_total as f64 / lines;
        println!(
            "{name:<16} {:>6.1} MB {:>9.0} lines   floor {:>8.1} ms   replay {:>8.1} ms  {:>7.1} MB/s {:>10.0} lines/s   {ratio:.2}x floor   {allocations:.2} allocations/line",
            input.len() as f64 / 1e6,
            lines,
            ms(Duration::from_secs_f64(floor_time)),
            ms(Duration::from_secs_f64(replay_time)),
            input.len() as f64 / 1e6 / replay_time,
            lines / replay_time,
        );
    }
}
