//! Native event streams of each protocol, generated from a script of bytes,
//! with a unique marker in every text, argument and result position, for
//! the adapter-level conservation properties: whatever an adapter reads,
//! every marker that the protocol's semantics keep must be in the output
//! (a round, a stitch, metadata or an anomaly). The fuzz oracles compare
//! the output with the calls fed to the builder, so they cannot see an
//! adapter that drops its input; this can.
//!
//! Each three bytes of a script are one event: its kind, its session and
//! which earlier tool call it names. The vocabularies include the odd cases
//! (numeric ids, rich content, batches, missing session ids, unknown
//! types) beside the ordinary ones.

use std::collections::HashMap;

use serde_json::{json, Value};

/// A generated stream: its lines, and the markers that must survive.
#[derive(Debug)]
pub struct NativeStream {
    pub lines: Vec<String>,
    pub markers: Vec<String>,
}

impl NativeStream {
    /// The stream as input bytes.
    pub fn input(&self) -> Vec<u8> {
        self.lines.iter().flat_map(|l| l.bytes().chain(std::iter::once(b'\n'))).collect()
    }
}

/// Builds streams: markers, declared ids, and which argument markers a
/// later snapshot of the same call supersedes.
struct Builder {
    lines: Vec<String>,
    markers: Vec<(String, bool)>,
    ids: Vec<String>,
    /// The marker of each value with replace semantics (a call's whole
    /// arguments, a session's latest plan, ...), by what it is the value of.
    latest: HashMap<String, usize>,
    /// Each call's live output markers, which a result with content
    /// supersedes (SPEC rule 13).
    live: HashMap<String, Vec<usize>>,
    n: usize,
}

impl Builder {
    fn new() -> Self {
        Builder {
            lines: Vec::new(),
            markers: Vec::new(),
            ids: Vec::new(),
            latest: HashMap::new(),
            live: HashMap::new(),
            n: 0,
        }
    }

    /// A new marker that must survive.
    fn marker(&mut self) -> String {
        let marker = format!("zq{}k", self.markers.len());
        self.markers.push((marker.clone(), true));
        marker
    }

    /// A marker in a value with replace semantics (`key` names what it is
    /// the value of): it supersedes the earlier one, which need not survive.
    fn latest(&mut self, key: String) -> String {
        let marker = self.marker();
        if let Some(earlier) = self.latest.insert(key, self.markers.len() - 1) {
            self.markers[earlier].1 = false;
        }
        marker
    }

    /// A marker in a call's whole arguments (snapshot semantics).
    fn arguments(&mut self, id: &str) -> String {
        self.latest(format!("arguments {id}"))
    }

    /// A marker in a call's live output, appended.
    fn live(&mut self, id: &str) -> String {
        let marker = self.marker();
        self.live.entry(id.to_owned()).or_default().push(self.markers.len() - 1);
        marker
    }

    /// A marker in a value that is appended to under `key` (argument
    /// deltas) until a snapshot replaces all of it.
    fn appended(&mut self, key: String) -> String {
        let marker = self.marker();
        self.live.entry(key).or_default().push(self.markers.len() - 1);
        marker
    }

    /// A marker in a snapshot of the value under `key`: what was appended
    /// or snapshot before is superseded, and this one is in turn.
    fn snapshot(&mut self, key: String) -> String {
        for earlier in self.live.remove(&key).unwrap_or_default() {
            self.markers[earlier].1 = false;
        }
        self.appended(key)
    }

    /// A marker in a call's result content: the live output so far is
    /// superseded.
    fn result(&mut self, id: &str) -> String {
        for earlier in self.live.remove(id).unwrap_or_default() {
            self.markers[earlier].1 = false;
        }
        self.marker()
    }

    fn fresh_id(&mut self) -> String {
        self.n += 1;
        let id = format!("c{}", self.n);
        self.ids.push(id.clone());
        id
    }

    /// A fresh id sent as a number (some agents do).
    fn fresh_number(&mut self) -> u64 {
        self.n += 1;
        10_000 + self.n as u64
    }

    fn pick(&mut self, target: u8) -> String {
        match self.ids.len() {
            0 => {
                self.n += 1;
                format!("none{}", self.n)
            }
            len => self.ids[usize::from(target) % len].clone(),
        }
    }

    fn push(&mut self, line: Value) {
        self.lines.push(line.to_string());
    }

    fn finish(self) -> NativeStream {
        NativeStream {
            lines: self.lines,
            markers: self.markers.into_iter().filter(|(_, keep)| *keep).map(|(m, _)| m).collect(),
        }
    }
}

/// A stream of `format` (any adapter of the registry but `ops`) from a
/// script.
pub fn native_stream(format: &str, script: &[u8]) -> NativeStream {
    let mut b = Builder::new();
    for (at, event) in script.chunks_exact(3).enumerate() {
        let (kind, session, target) = (event[0], if event[1] % 2 == 0 { "s1" } else { "s2" }, event[2]);
        match format {
            "acp" => acp(&mut b, kind, session, target, at),
            "uagent" => uagent(&mut b, kind, session, target),
            "deepwork" => deepwork(&mut b, kind, session, target),
            "openai-chat" => openai_chat(&mut b, kind, target),
            "openai-responses" => openai_responses(&mut b, kind, target),
            "anthropic" => anthropic(&mut b, kind, target, |line| line),
            "claude-code" => claude_code(&mut b, kind, session, target),
            "claude-transcript" => claude_transcript(&mut b, kind, session, target),
            "codex" => codex(&mut b, kind, target),
            "codex-rollout" => codex_rollout(&mut b, kind, target),
            "ollama" => ollama(&mut b, kind, target),
            "mistral" => mistral(&mut b, kind, target),
            "opencode" => opencode(&mut b, kind, target),
            "gemini" => gemini(&mut b, kind, event[1] % 2, target),
            "gemini-cli" => gemini_cli(&mut b, kind, target),
            "gemini-cli-chat" => gemini_cli_chat(&mut b, kind),
            "ai-sdk" => ai_sdk(&mut b, kind, target),
            "bedrock" => bedrock(&mut b, kind, target),
            other => panic!("no generator for {other}"),
        }
    }
    b.finish()
}

fn acp(b: &mut Builder, kind: u8, session: &str, target: u8, at: usize) {
    let update = |update: Value| json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}});
    let text = |m: &str| json!({"type": "text", "text": m});
    match kind % 21 {
        0 => {
            let m = b.marker();
            b.push(update(json!({"sessionUpdate": "agent_message_chunk", "content": text(&m), "messageId": format!("msg{target}")})));
        }
        1 => {
            let m = b.marker();
            b.push(update(json!({"sessionUpdate": "agent_thought_chunk", "content": text(&m)})));
        }
        2 => {
            let m = b.marker();
            b.push(update(json!({"sessionUpdate": "user_message_chunk", "content": text(&m)})));
        }
        3 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "t", "status": "pending", "rawInput": {"a": m}})));
        }
        4 => {
            let id = b.pick(target);
            let m = b.live(&id);
            b.push(update(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "_meta": {"terminal_output_delta": {"data": m}}})));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(update(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed",
                "content": [{"type": "content", "content": text(&m)}]})));
        }
        6 => {
            let (id, m) = (b.pick(target), b.marker());
            b.push(update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": m}),
            ));
        }
        7 => {
            let m = b.marker();
            b.push(json!({"jsonrpc": "2.0", "id": target % 4, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [text(&m)]}}));
        }
        8 => {
            let m = b.marker();
            let stop = if target.is_multiple_of(3) { "cancelled" } else { "end_turn" };
            b.push(json!({"jsonrpc": "2.0", "id": target % 4, "result": {"stopReason": stop, "_meta": {"note": m}}}));
        }
        9 => {
            let id = b.pick(target);
            let m = b.arguments(&id);
            b.push(json!({"jsonrpc": "2.0", "id": 1000 + at, "method": "session/request_permission",
                "params": {"sessionId": session, "toolCall": {"toolCallId": id, "rawInput": {"p": m}}, "options": []}}));
        }
        10 => {
            let m = b.latest(format!("usage {session}"));
            b.push(update(
                json!({"sessionUpdate": "usage_update", "used": target, "size": 1000, "_meta": {"note": m}}),
            ));
        }
        11 => {
            let m = b.latest(format!("plan {session}"));
            b.push(update(json!({"sessionUpdate": "plan", "entries": [{"content": m, "status": "pending"}]})));
        }
        12 => {
            let m = b.latest(format!("info {session}"));
            b.push(update(json!({"sessionUpdate": "session_info_update", "title": m})));
        }
        13 => {
            let m = b.marker();
            b.push(update(
                json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "x", "content": text(&m)}),
            ));
            b.push(update(json!({"sessionUpdate": "compaction_update", "compactionId": "x", "status": "completed"})));
        }
        14 => {
            let m = b.marker();
            b.push(update(json!({"sessionUpdate": format!("weird_{target}"), "x": m})));
        }
        15 => {
            let m = b.marker();
            b.push(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk", "content": text(&m)}}}));
        }
        16 => {
            let (m1, m2) = (b.marker(), b.marker());
            let batch = json!([
                update(json!({"sessionUpdate": "agent_message_chunk", "content": text(&m1)})),
                update(json!({"sessionUpdate": "agent_thought_chunk", "content": text(&m2)}))
            ]);
            b.push(batch);
        }
        17 => {
            let m = b.marker();
            b.push(update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": m, "mimeType": "image/png"}})));
        }
        18 => {
            let m = b.marker();
            let number = b.fresh_number();
            b.push(update(json!({"sessionUpdate": "tool_call_update", "toolCallId": number, "status": "completed",
                "content": [{"type": "content", "content": text(&m)}]})));
        }
        19 => {
            let (parent, m) = (b.pick(target), b.marker());
            b.push(update(json!({"sessionUpdate": "agent_message_chunk", "content": text(&m),
                "_meta": {"claudeCode": {"parentToolUseId": parent}}})));
        }
        _ => {
            let id = b.pick(target);
            // Progress replaces the call's live output (and so is live
            // output itself, which a result with content supersedes).
            let m = b.result(&id);
            b.live.entry(id.clone()).or_default().push(b.markers.len() - 1);
            let task = format!("task{target}");
            b.push(update(json!({"sessionUpdate": "async_task_spawned", "asyncTaskId": task, "toolCallId": id})));
            b.push(update(json!({"sessionUpdate": "async_task_progress", "asyncTaskId": task, "summary": m})));
        }
    }
}

fn uagent(b: &mut Builder, kind: u8, session: &str, target: u8) {
    let event = |kind: &str, rest: Value| {
        let mut event = rest;
        event["type"] = kind.into();
        event["v"] = 1.into();
        event
    };
    match kind % 17 {
        0 => {
            let m = b.marker();
            b.push(event("run_started", json!({"session_id": session, "run_id": m})));
        }
        1 => {
            let m = b.marker();
            b.push(event("user_message", json!({"text": m})));
        }
        2 => {
            let m = b.marker();
            b.push(event("text_delta", json!({"text": m})));
        }
        3 => {
            let m = b.marker();
            b.push(event("reasoning_delta", json!({"text": m})));
        }
        4 => {
            let m = b.marker();
            b.push(event("assistant_message", json!({"text": m, "final": target.is_multiple_of(2)})));
        }
        5 => {
            let m = b.marker();
            b.push(event("reasoning", json!({"text": m})));
        }
        6 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(event(
                "tool_called",
                json!({"call_id": id, "name": "Bash", "arguments": format!("{{\"a\":\"{m}\"}}")}),
            ));
        }
        7 => {
            let (id, m) = (b.pick(target), b.marker());
            b.push(event("tool_finished", json!({"call_id": id, "ok": target.is_multiple_of(2), "detail": m})));
        }
        8 => {
            let m = b.marker();
            b.push(event("runner_error", json!({"message": m})));
        }
        9 => {
            let m = b.marker();
            b.push(event("run_finished", json!({"summary": {"status": "ok", "note": m}})));
        }
        10 => {
            let m = b.marker();
            b.push(event("idle", json!({"note": m})));
        }
        11 => {
            let m = b.marker();
            b.push(event("control_input", json!({"mode": m})));
        }
        12 => {
            let m = b.marker();
            b.push(event("developer_message", json!({"text": m})));
        }
        13 => {
            let m = b.marker();
            b.push(event("weird", json!({"x": m})));
        }
        14 => {
            let m = b.marker();
            b.push(event("text_delta", json!({"text": {"rich": m}})));
        }
        15 => {
            let m = b.marker();
            let number = b.fresh_number();
            b.push(event("tool_called", json!({"call_id": number, "name": "n", "arguments": {"a": m}})));
        }
        _ => {
            let m = b.marker();
            b.push(event("preflight_warning", json!({"code": "c", "message": m})));
        }
    }
}

fn deepwork(b: &mut Builder, kind: u8, session: &str, target: u8) {
    let event = |kind: &str, rest: Value| {
        let mut event = rest;
        event["kind"] = kind.into();
        event["source"] = session.into();
        event
    };
    match kind % 14 {
        0 => {
            let m = b.marker();
            b.push(event("text", json!({"content": m})));
        }
        1 => {
            let m = b.marker();
            b.push(event("thinking", json!({"content": m})));
        }
        2 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(event("tool_start", json!({"tool": {"id": id, "name": "browser", "input": {"a": m}}})));
        }
        3 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(event(
                "tool_result",
                json!({"tool": {"id": id, "output": m, "is_error": target.is_multiple_of(2)}}),
            ));
        }
        4 => {
            let id = b.pick(target);
            let m = b.live(&id);
            b.push(event("status", json!({"status": "tool_output", "tool": {"id": id}, "content": m})));
        }
        5 => b.push(event("usage", json!({"usage": {"input_tokens": target}}))),
        6 => {
            let m = b.marker();
            b.push(event("done", json!({"reason": "complete", "meta": {"note": m}})));
        }
        7 => {
            let m = b.marker();
            b.push(event("error", json!({"message": m})));
        }
        8 => {
            let m = b.marker();
            b.push(event("raw", json!({"data": m})));
        }
        9 => {
            let m = b.marker();
            b.push(json!({"type": "user", "sessionId": session, "message": {"role": "user", "content": m}}));
        }
        10 => {
            let m = b.marker();
            b.push(event("text", json!({"content": {"rich": m}})));
        }
        11 => {
            let m = b.marker();
            let number = b.fresh_number();
            b.push(event("tool_start", json!({"tool": {"id": number, "name": "n", "input": m}})));
        }
        12 => {
            let m = b.marker();
            b.push(event("status", json!({"status": format!("status_{m}")})));
        }
        _ => {
            let m = b.marker();
            b.push(event("weird", json!({"x": m})));
        }
    }
}

/// The position of a declared id (its tool index in the formats that key
/// fragments by index), or one no call has.
fn index_of(b: &Builder, id: &str) -> usize {
    b.ids.iter().position(|known| known == id).unwrap_or(9_999)
}

fn openai_chat(b: &mut Builder, kind: u8, target: u8) {
    let chunk = |choice: u8, delta: Value| json!({"id": "cmpl", "object": "chat.completion.chunk", "choices": [{"index": choice, "delta": delta}]});
    match kind % 13 {
        0 => {
            let m = b.marker();
            b.push(chunk(0, json!({"content": m})));
        }
        1 => {
            let m = b.marker();
            b.push(chunk(0, json!({"reasoning_content": m})));
        }
        2 => {
            let id = b.fresh_id();
            let index = index_of(b, &id);
            let m = b.marker();
            b.push(chunk(
                0,
                json!({"tool_calls": [{"index": index, "id": id, "function": {"name": "f", "arguments": m}}]}),
            ));
        }
        3 => {
            let id = b.pick(target);
            let index = index_of(b, &id);
            let m = b.marker();
            b.push(chunk(
                0,
                json!({"tool_calls": [{"index": index, "id": "", "function": {"name": "", "arguments": m}}]}),
            ));
        }
        4 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(json!({"role": "tool", "tool_call_id": id, "content": m}));
        }
        5 => b.push(json!({"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": target}})),
        6 => {
            let m = b.marker();
            b.push(chunk(0, json!({"refusal": m})));
        }
        7 => {
            let m = b.marker();
            b.push(json!({"role": "user", "content": m}));
        }
        8 => {
            let m = b.marker();
            b.push(json!({"error": {"message": m}}));
        }
        9 => {
            let m = b.marker();
            b.push(chunk(1, json!({"content": m})));
        }
        10 => {
            let m = b.marker();
            b.push(json!({"foo": m}));
        }
        11 => {
            let m = b.marker();
            b.push(json!({"id": "cmpl", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": m}}]}));
        }
        _ => {
            let number = b.fresh_number();
            let m = b.marker();
            b.push(chunk(0, json!({"tool_calls": [{"index": 5_000 + number, "id": number, "function": {"name": "n", "arguments": m}}]})));
        }
    }
}

fn openai_responses(b: &mut Builder, kind: u8, target: u8) {
    let event = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest
    };
    match kind % 13 {
        0 => {
            let m = b.marker();
            b.push(event("response.output_text.delta", json!({"output_index": 0, "delta": m})));
        }
        1 => {
            let m = b.marker();
            b.push(event(
                "response.reasoning_summary_text.delta",
                json!({"output_index": 0, "summary_index": target % 2, "delta": m}),
            ));
        }
        2 => {
            let id = b.fresh_id();
            let index = 1 + index_of(b, &id);
            let item =
                json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": "f", "arguments": ""});
            b.push(event("response.output_item.added", json!({"output_index": index, "item": item})));
        }
        3 => {
            let id = b.pick(target);
            let index = 1 + index_of(b, &id);
            let m = b.appended(format!("arguments {id}"));
            b.push(event("response.function_call_arguments.delta", json!({"output_index": index, "delta": m})));
        }
        4 => {
            let id = b.pick(target);
            let index = 1 + index_of(b, &id);
            let m = b.snapshot(format!("arguments {id}"));
            b.push(event("response.function_call_arguments.done", json!({"output_index": index, "arguments": m})));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(event("function_call_output", json!({"call_id": id, "output": m})));
        }
        6 => {
            let m = b.marker();
            let id = b.fresh_id();
            let index = 1 + index_of(b, &id);
            let item = json!({"type": "web_search_call", "id": id, "status": "completed", "action": {"query": m}});
            b.push(event("response.output_item.done", json!({"output_index": index, "item": item})));
        }
        7 => b.push(event("response.completed", json!({"response": {"id": "r", "usage": {"total_tokens": target}}}))),
        8 => {
            let m = b.marker();
            b.push(event("error", json!({"error": {"message": m}})));
        }
        9 => {
            let m = b.marker();
            b.push(event("response.failed", json!({"response": {"id": "r", "error": {"message": m}}})));
        }
        10 => {
            let m = b.marker();
            b.push(event("response.weird", json!({"x": m})));
        }
        11 => {
            let m = b.marker();
            let item = json!({"type": "reasoning", "id": "rs", "encrypted_content": m});
            b.push(event("response.output_item.done", json!({"output_index": 99, "item": item})));
        }
        _ => {
            let m = b.marker();
            b.push(event("response.output_text.annotation.added", json!({"annotation": {"url": m}})));
        }
    }
}

/// Anthropic Messages events, each passed through `wrap` (the Claude Code
/// generator wraps them in `stream_event` lines).
fn anthropic(b: &mut Builder, kind: u8, target: u8, wrap: impl Fn(Value) -> Value) {
    let delta = |index: usize, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    match kind % 14 {
        0 => {
            b.n += 1;
            b.push(wrap(json!({"type": "message_start", "message": {"id": format!("msg{}", b.n), "usage": {"input_tokens": 1}}})));
        }
        1 => {
            let m = b.marker();
            b.push(wrap(delta(0, json!({"type": "text_delta", "text": m}))));
        }
        2 => {
            let m = b.marker();
            b.push(wrap(delta(usize::from(target % 3), json!({"type": "thinking_delta", "thinking": m}))));
        }
        3 => {
            let id = b.fresh_id();
            let index = 1 + index_of(b, &id);
            let block = json!({"type": "tool_use", "id": id, "name": "f", "input": {}});
            b.push(wrap(json!({"type": "content_block_start", "index": index, "content_block": block})));
        }
        4 => {
            let id = b.pick(target);
            let index = 1 + index_of(b, &id);
            let m = b.marker();
            b.push(wrap(delta(index, json!({"type": "input_json_delta", "partial_json": m}))));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(json!({"type": "tool_result", "tool_use_id": id, "content": m}));
        }
        6 => {
            let id = b.pick(target);
            let (result, prompt) = (b.result(&id), b.marker());
            let content = json!([{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": true}, {"type": "text", "text": prompt}]);
            b.push(json!({"role": "user", "content": content}));
        }
        7 => {
            // Cumulative: a later `message_delta` replaces it.
            let m = b.latest("stop_sequence".into());
            b.push(wrap(json!({"type": "message_delta", "delta": {"stop_reason": "stop_sequence", "stop_sequence": m}, "usage": {"output_tokens": 2}})));
        }
        8 => {
            let m = b.marker();
            b.push(wrap(json!({"type": "error", "error": {"type": "overloaded_error", "message": m}})));
        }
        9 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let block = json!({"type": "web_search_tool_result", "tool_use_id": id, "content": [{"type": "web_search_result", "title": m}]});
            b.push(wrap(json!({"type": "content_block_start", "index": 90, "content_block": block})));
        }
        10 => {
            let m = b.marker();
            let block = json!({"type": "redacted_thinking", "data": m});
            b.push(wrap(json!({"type": "content_block_start", "index": 91, "content_block": block})));
        }
        11 => {
            let m = b.marker();
            let block = json!({"type": "weird_block", "x": m});
            b.push(wrap(json!({"type": "content_block_start", "index": 92, "content_block": block})));
        }
        12 => {
            let m = b.marker();
            b.push(wrap(json!({"type": "weird", "x": m})));
        }
        _ => {
            let (thinking, signature) = (b.marker(), b.marker());
            let block = json!({"type": "thinking", "thinking": thinking, "signature": ""});
            b.push(wrap(json!({"type": "content_block_start", "index": 93, "content_block": block})));
            b.push(wrap(delta(93, json!({"type": "signature_delta", "signature": signature}))));
            b.push(wrap(json!({"type": "content_block_stop", "index": 93})));
        }
    }
}

fn claude_code(b: &mut Builder, kind: u8, session: &str, target: u8) {
    let parent = if session == "s1" { Value::Null } else { json!("task_1") };
    let line = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest["session_id"] = "cc".into();
        rest["parent_tool_use_id"] = parent.clone();
        rest
    };
    match kind % 20 {
        // The Messages events, streamed (bare tool results are not lines
        // of this format: they come as user lines, below).
        k @ 0..=13 if k != 5 && k != 6 => {
            anthropic(b, k, target, |event| line("stream_event", json!({"event": event})))
        }
        5 | 6 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let content =
                json!([{"type": "tool_result", "tool_use_id": id, "content": m, "is_error": kind.is_multiple_of(2)}]);
            b.push(line("user", json!({"message": {"role": "user", "content": content}})));
        }
        14 => {
            b.n += 1;
            let (text, args) = (b.marker(), b.marker());
            let id = b.fresh_id();
            let content = json!([{"type": "text", "text": text}, {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": args}}]);
            b.push(line("assistant", json!({"message": {"id": format!("snap{}", b.n), "content": content}})));
        }
        15 => {
            let m = b.marker();
            b.push(line("result", json!({"subtype": "success", "is_error": target.is_multiple_of(2), "result": m})));
        }
        16 => {
            // Tool metadata: a later request for the same call replaces it.
            let id = b.pick(target);
            let m = b.latest(format!("permission {id}"));
            let request =
                json!({"subtype": "can_use_tool", "tool_name": "Bash", "tool_use_id": id, "input": {"command": m}});
            b.push(line("control_request", json!({"request_id": "r", "request": request})));
        }
        17 => {
            let m = b.marker();
            b.push(line("user", json!({"message": {"role": "user", "content": m}})));
        }
        18 => {
            // Run metadata: a later init replaces it.
            let m = b.latest("init".into());
            b.push(line("system", json!({"subtype": "init", "model": m})));
        }
        _ => {
            let m = b.marker();
            b.push(line("weird", json!({"x": m})));
        }
    }
}

/// Codex session rollouts: envelopes of response items (prompts, context,
/// answers, reasoning, calls and their outputs by `call_id`), event
/// messages (usage, turn ends, errors) and records of unknown kinds.
fn codex_rollout(b: &mut Builder, kind: u8, target: u8) {
    let line =
        |kind: &str, payload: Value| json!({"timestamp": "2026-01-02T03:04:05Z", "type": kind, "payload": payload});
    let text = |role: &str, kind: &str, text: &str| {
        line("response_item", json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]}))
    };
    match kind % 14 {
        0 => {
            let m = b.marker();
            b.push(text("user", "input_text", &m));
        }
        1 => {
            let m = b.marker();
            b.push(text("assistant", "output_text", &m));
        }
        2 => {
            let m = b.marker();
            b.push(line(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": m}]}),
            ));
        }
        3 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            let arguments = json!({"q": m}).to_string();
            b.push(line(
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": arguments, "call_id": id}),
            ));
        }
        4 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(line(
                "response_item",
                json!({"type": "custom_tool_call", "name": "apply_patch", "input": m, "call_id": id}),
            ));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let output = if target.is_multiple_of(2) {
                Value::from(m)
            } else {
                json!({"output": m, "metadata": {"exit_code": target % 3}}).to_string().into()
            };
            b.push(line("response_item", json!({"type": "function_call_output", "call_id": id, "output": output})));
        }
        6 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let output = json!([{"type": "input_text", "text": m}]);
            b.push(line("response_item", json!({"type": "custom_tool_call_output", "call_id": id, "output": output})));
        }
        7 => {
            let n = u64::from(target) * 10;
            let usage = json!({"input_tokens": n, "output_tokens": 1, "total_tokens": n + 1});
            let info = json!({"total_token_usage": usage, "last_token_usage": usage});
            b.push(line("event_msg", json!({"type": "token_count", "info": info})));
        }
        8 => {
            let kind = if target.is_multiple_of(2) { "task_complete" } else { "turn_aborted" };
            b.push(line("event_msg", json!({"type": kind, "turn_id": "t"})));
        }
        9 => {
            let m = b.marker();
            b.push(line("future_record", json!({"x": m})));
        }
        10 => {
            let m = b.marker();
            b.push(text("developer", "input_text", &m));
        }
        11 => {
            let m = b.marker();
            b.push(line("compacted", json!({"message": m})));
        }
        12 => {
            let m = b.marker();
            b.push(line("event_msg", json!({"type": "error", "message": m})));
        }
        _ => {
            // Echoes of response items: nothing in them needs to survive.
            b.push(line("event_msg", json!({"type": "agent_message", "message": "echo"})));
        }
    }
}

fn codex(b: &mut Builder, kind: u8, target: u8) {
    let item = |event: &str, item: Value| json!({"type": event, "item": item});
    match kind % 14 {
        0 => b.push(json!({"type": "turn.started"})),
        1 => {
            let m = b.marker();
            b.push(item("item.completed", json!({"id": "m", "type": "agent_message", "text": m})));
        }
        2 => {
            let m = b.marker();
            b.push(item("item.completed", json!({"id": "r", "type": "reasoning", "text": m})));
        }
        3 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(item("item.started", json!({"id": id, "type": "command_execution", "command": m, "aggregated_output": "", "status": "in_progress"})));
        }
        4 => {
            // The whole output so far: it replaces the last.
            let id = b.pick(target);
            let m = b.snapshot(id.clone());
            b.push(item(
                "item.updated",
                json!({"id": id, "type": "command_execution", "aggregated_output": m, "status": "in_progress"}),
            ));
        }
        5 => {
            let id = b.pick(target);
            let (args, output) = (b.arguments(&id), b.result(&id));
            let status = if target.is_multiple_of(2) { "completed" } else { "failed" };
            b.push(item("item.completed", json!({"id": id, "type": "command_execution", "command": args, "aggregated_output": output, "exit_code": 1, "status": status})));
        }
        6 => {
            let id = b.fresh_id();
            let (args, result) = (b.arguments(&id), b.result(&id));
            b.push(item("item.completed", json!({"id": id, "type": "mcp_tool_call", "server": "s", "tool": "t", "arguments": {"q": args}, "result": {"text": result}, "error": null, "status": "completed"})));
        }
        7 => b.push(json!({"type": "turn.completed", "usage": {"input_tokens": target, "output_tokens": 1}})),
        8 => {
            let m = b.marker();
            b.push(json!({"type": "turn.failed", "error": {"message": m}}));
        }
        9 => {
            let m = b.marker();
            b.push(json!({"type": "error", "message": m}));
        }
        10 => {
            let m = b.marker();
            b.push(item("item.completed", json!({"id": "e", "type": "error", "message": m})));
        }
        11 => {
            let m = b.marker();
            b.push(item("item.completed", json!({"id": "u", "type": "future_item", "x": m})));
        }
        12 => {
            let m = b.marker();
            b.push(json!({"type": "thread.weird", "x": m}));
        }
        _ => {
            // The key `id` twice, as real lines have it: the last wins.
            let id = b.fresh_id();
            let m = b.result(&id);
            b.lines.push(format!(
                r#"{{"type":"item.completed","item":{{"id":"item_x","type":"web_search","id":"{id}","query":"{m}"}}}}"#
            ));
        }
    }
}

fn ollama(b: &mut Builder, kind: u8, target: u8) {
    let line = |message: Value, done: bool| json!({"model": "qwen3", "created_at": "2025-06-01T10:00:00Z", "message": message, "done": done});
    match kind % 13 {
        0 => {
            let m = b.marker();
            b.push(line(json!({"role": "assistant", "content": m}), false));
        }
        1 => {
            // Reasoning with no `content` key at all.
            let m = b.marker();
            b.push(line(json!({"role": "assistant", "thinking": m}), false));
        }
        2 => {
            // An older server: no id, one is made up.
            let m = b.marker();
            let call = json!({"function": {"name": "f", "arguments": {"a": m}}});
            b.push(line(json!({"role": "assistant", "content": "", "tool_calls": [call]}), false));
        }
        3 => {
            let id = b.fresh_id();
            let (first, second) = (b.arguments(&id), b.marker());
            let calls = json!([{"id": id, "function": {"index": 0, "name": "f", "arguments": {"a": first}}},
                {"function": {"index": 1, "name": "g", "arguments": second}}]);
            b.push(line(json!({"role": "assistant", "content": "", "tool_calls": calls}), false));
        }
        4 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(json!({"role": "tool", "tool_call_id": id, "tool_name": "f", "content": m}));
        }
        5 => {
            // A result that names only its tool.
            let m = b.marker();
            b.push(
                json!({"role": "tool", "tool_name": if target.is_multiple_of(2) { "f" } else { "g" }, "content": m}),
            );
        }
        6 => {
            // An older server's end: no reason.
            let mut done = line(json!({"role": "assistant", "content": ""}), true);
            done["prompt_eval_count"] = target.into();
            done["eval_count"] = 3.into();
            b.push(done);
        }
        7 => {
            // The round's reason: a later one in the same round replaces it.
            let m = b.latest("ollama done_reason".into());
            let mut done = line(json!({"role": "assistant", "content": ""}), true);
            done["done_reason"] = m.into();
            b.push(done);
        }
        8 => {
            let m = b.marker();
            b.push(json!({"error": m}));
        }
        9 => {
            let m = b.marker();
            b.push(json!({"role": "user", "content": m}));
        }
        10 => {
            let m = b.marker();
            b.push(json!({"foo": m}));
        }
        11 => {
            // `/api/generate`.
            let m = b.marker();
            b.push(json!({"model": "qwen3", "created_at": "2025-06-01T10:00:00Z", "response": m, "done": false}));
        }
        _ => {
            let number = b.fresh_number();
            let m = b.marker();
            let call = json!({"id": number, "function": {"name": "n", "arguments": {"q": m}}});
            b.push(line(json!({"role": "assistant", "content": "", "tool_calls": [call]}), target.is_multiple_of(2)));
        }
    }
}

fn mistral(b: &mut Builder, kind: u8, target: u8) {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "5319bd0299614c679a0068a4f2c8ffd0", "object": "chat.completion.chunk", "created": 1_769_088_720,
            "model": "mistral-small-latest", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let event = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest
    };
    match kind % 18 {
        0 => {
            let m = b.marker();
            b.push(chunk(json!({"content": m}), Value::Null));
        }
        1 => {
            let (thought, text) = (b.marker(), b.marker());
            let content = json!([{"type": "thinking", "thinking": [{"type": "text", "text": thought}]}, {"type": "text", "text": text}]);
            b.push(chunk(json!({"content": content}), Value::Null));
        }
        2 => {
            // A whole call in one chunk, with no index.
            let id = b.fresh_id();
            let m = b.marker();
            b.push(chunk(
                json!({"content": null, "tool_calls": [{"id": id, "function": {"name": "f", "arguments": m}}]}),
                Value::Null,
            ));
        }
        3 => {
            // A continuation, with Mistral's `"id": "null"`.
            let m = b.marker();
            b.push(chunk(
                json!({"tool_calls": [{"id": "null", "index": 0, "function": {"name": "", "arguments": m}}]}),
                Value::Null,
            ));
        }
        4 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(json!({"role": "tool", "tool_call_id": id, "content": m}));
        }
        5 => b.push(json!({"id": "5319bd0299614c679a0068a4f2c8ffd0", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": target, "completion_tokens": 1, "total_tokens": u64::from(target) + 1}})),
        6 => {
            let reason = ["stop", "tool_calls", "model_length", "error"][usize::from(target % 4)];
            b.push(chunk(json!({"content": ""}), reason.into()));
            b.lines.push("[DONE]".to_owned());
        }
        7 => {
            let m = b.marker();
            b.push(chunk(json!({"content": [{"type": "reference", "reference_ids": [m]}]}), Value::Null));
        }
        8 => {
            let m = b.marker();
            b.push(event("message.output.delta", json!({"id": "msg", "content": m})));
        }
        9 => {
            let id = b.fresh_id();
            let m = b.marker();
            b.push(event("function.call.delta", json!({"id": "fc", "name": "f", "tool_call_id": id, "arguments": m})));
        }
        10 => {
            let id = b.fresh_id();
            let m = b.marker();
            b.push(event("tool.execution.started", json!({"id": id, "name": "web_search", "arguments": m})));
        }
        11 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(event("tool.execution.done", json!({"id": id, "name": "web_search", "info": {"x": m}})));
        }
        12 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(event("function.result", json!({"tool_call_id": id, "result": m})));
        }
        13 => b.push(event("conversation.response.done", json!({"usage": {"total_tokens": target}}))),
        14 => {
            let m = b.marker();
            b.push(event("conversation.response.error", json!({"message": m, "code": 1})));
        }
        15 => {
            let m = b.marker();
            b.push(event("conversation.response.weird", json!({"x": m})));
        }
        16 => {
            let m = b.marker();
            let content = json!({"type": "tool_reference", "tool": "web_search", "title": m});
            b.push(event("message.output.delta", json!({"id": "msg", "content": content})));
        }
        _ => {
            let m = b.marker();
            b.push(event("agent.handoff.started", json!({"id": "h", "previous_agent_name": m})));
        }
    }
}

fn opencode(b: &mut Builder, kind: u8, target: u8) {
    let line = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest["timestamp"] = 1_767_036_059_338_u64.into();
        rest["sessionID"] = "ses_1".into();
        rest
    };
    let tool = |id: Value, state: Value| json!({"part": {"type": "tool", "messageID": "msg", "callID": id, "tool": "bash", "state": state}});
    match kind % 13 {
        0 => b.push(line("step_start", json!({"part": {"type": "step-start", "snapshot": "s"}}))),
        1 => {
            let m = b.marker();
            b.push(line("text", json!({"part": {"type": "text", "messageID": "msg", "text": m}})));
        }
        2 => {
            let m = b.marker();
            b.push(line("reasoning", json!({"part": {"type": "reasoning", "text": m}})));
        }
        3 => {
            let id = b.fresh_id();
            let (input, output, title) = (b.arguments(&id), b.result(&id), b.latest(format!("title {id}")));
            let state = json!({"status": "completed", "input": {"command": input}, "output": output, "title": title});
            b.push(line("tool_use", tool(id.into(), state)));
        }
        4 => {
            let id = b.fresh_id();
            let (input, error) = (b.arguments(&id), b.result(&id));
            let state = json!({"status": "error", "input": {"command": input}, "error": error});
            b.push(line("tool_use", tool(id.into(), state)));
        }
        5 => {
            // The same call sent again: a duplicate result, kept.
            let id = b.pick(target);
            let (input, output, title) = (b.arguments(&id), b.result(&id), b.latest(format!("title {id}")));
            let state = json!({"status": "completed", "input": {"command": input}, "output": output, "title": title});
            b.push(line("tool_use", tool(id.into(), state)));
        }
        6 => {
            let reason = ["tool-calls", "stop", "length"][usize::from(target % 3)];
            let tokens = json!({"input": target, "output": 1, "reasoning": 0, "cache": {"read": 2, "write": 0}});
            b.push(line(
                "step_finish",
                json!({"part": {"type": "step-finish", "reason": reason, "cost": 0.5, "tokens": tokens}}),
            ));
        }
        7 => {
            // The step's last snapshot: a later one replaces it.
            let m = b.latest("opencode snapshot".into());
            b.push(line(
                "step_finish",
                json!({"part": {"type": "step-finish", "snapshot": m, "tokens": {"input": 1}}}),
            ));
        }
        8 => {
            let m = b.marker();
            b.push(line("error", json!({"error": {"name": "APIError", "data": {"message": m}}})));
        }
        9 => {
            let m = b.marker();
            b.push(line("done", json!({"reason": "idle", "rejected": [m]})));
        }
        10 => {
            let m = b.marker();
            b.push(line("file_edited", json!({"file": m})));
        }
        11 => {
            let id = b.fresh_number();
            let m = b.marker();
            b.push(line("tool_use", tool(id.into(), json!({"status": "running", "input": {"command": m}}))));
        }
        _ => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(line("tool_use", tool(id.into(), json!({"status": "weird", "input": {"command": m}}))));
        }
    }
}

/// Gemini `streamGenerateContent` chunks of candidate 0 or 1, and the
/// host's turns between responses.
fn gemini(b: &mut Builder, kind: u8, candidate: u8, target: u8) {
    let chunk =
        |parts: Value| json!({"candidates": [{"index": candidate, "content": {"role": "model", "parts": parts}}]});
    let call = |call: Value| chunk(json!([{ "functionCall": call }]));
    let host = |parts: Value| json!({"role": "user", "parts": parts});
    match kind % 24 {
        0 => {
            let m = b.marker();
            b.push(chunk(json!([{"text": m}])));
        }
        1 => {
            let m = b.marker();
            b.push(chunk(json!([{"text": m, "thought": true}])));
        }
        2 => {
            // An id from a newer model; the arguments are whole.
            let id = b.fresh_id();
            let m = b.marker();
            b.push(call(json!({"id": id, "name": "f", "args": {"a": m}})));
        }
        3 => {
            // No id: one is made up.
            let m = b.marker();
            b.push(call(json!({"name": "f", "args": {"a": m}})));
        }
        4 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(host(json!([{"functionResponse": {"id": id, "name": "f", "response": {"output": m}}}])));
        }
        5 => {
            let m = b.marker();
            b.push(host(json!([{"functionResponse": {"name": "f", "response": {"output": m}}}])));
        }
        6 => {
            let m = b.marker();
            let reason = ["STOP", "MAX_TOKENS", "SAFETY"][usize::from(target % 3)];
            b.push(json!({"candidates": [{"index": candidate, "content": {"parts": [{"text": m}]}, "finishReason": reason}]}));
        }
        7 => {
            b.n += 1;
            let m = b.marker();
            b.push(json!({"candidates": [{"index": candidate, "content": {"parts": [{"text": m}]}}], "responseId": format!("r{}", b.n)}));
        }
        8 => {
            // Cumulative: the latest replaces the last.
            let m = b.latest("usage".into());
            b.push(json!({"usageMetadata": {"totalTokenCount": target, "note": m}}));
        }
        9 => {
            let m = b.latest("prompt feedback".into());
            b.push(json!({"promptFeedback": {"blockReason": "SAFETY", "note": m}}));
        }
        10 => {
            let m = b.marker();
            b.push(json!({"error": {"code": 500, "message": m, "status": "INTERNAL"}}));
        }
        11 => {
            let m = b.marker();
            b.push(chunk(json!([{"futurePart": {"x": m}}])));
        }
        12 => {
            let m = b.marker();
            b.push(chunk(json!([{"executableCode": {"language": "PYTHON", "code": m}}])));
        }
        13 => {
            let m = b.marker();
            let outcome = if target.is_multiple_of(2) { "OUTCOME_OK" } else { "OUTCOME_FAILED" };
            b.push(chunk(json!([{"codeExecutionResult": {"outcome": outcome, "output": m}}])));
        }
        14 => {
            let m = b.marker();
            b.push(call(json!({"name": "g", "willContinue": true})));
            b.push(call(json!({"partialArgs": [{"jsonPath": "$.s", "stringValue": m, "willContinue": true}], "willContinue": true})));
        }
        15 => {
            let m = b.marker();
            let path = format!("$.p[{}]", target % 3);
            b.push(call(json!({"partialArgs": [{"jsonPath": path, "stringValue": m}], "willContinue": true})));
        }
        16 => b.push(call(json!({}))),
        17 => {
            let m = b.marker();
            b.push(chunk(json!([{"text": "", "thoughtSignature": m}])));
        }
        18 => {
            let m = b.marker();
            b.push(chunk(json!([{"functionCall": {"name": "h", "args": {}}, "thoughtSignature": m}])));
        }
        19 => {
            let m = b.marker();
            b.push(
                json!({"candidates": [{"index": candidate, "safetyRatings": [{"category": m, "probability": "LOW"}]}]}),
            );
        }
        20 => {
            let m = b.marker();
            b.push(json!({"weird": m}));
        }
        21 => {
            // Grounding replaces the last in its round.
            let m = b.latest(format!("grounding {candidate}"));
            b.push(json!({"candidates": [{"index": candidate, "groundingMetadata": {"webSearchQueries": [m]}}]}));
        }
        22 => {
            let m = b.marker();
            b.push(json!({"role": "model", "parts": [{"text": m}]}));
        }
        _ => {
            // The user's prompt: a new run, unless nothing happened since
            // the last, whose prompt it then replaces.
            let m = b.latest("prompt".into());
            b.push(host(json!([{"text": m}])));
        }
    }
}

/// Bedrock `ConverseStream` events in the SDKs' JSON shape, and the host's
/// turns between responses.
fn bedrock(b: &mut Builder, kind: u8, target: u8) {
    let delta = |index: usize, delta: Value| json!({"contentBlockDelta": {"contentBlockIndex": index, "delta": delta, "p": "abc"}});
    let stop = |index: usize| json!({"contentBlockStop": {"contentBlockIndex": index}});
    match kind % 16 {
        0 => b.push(json!({"messageStart": {"role": "assistant", "p": "ab"}})),
        1 => {
            let m = b.marker();
            b.push(delta(0, json!({"text": m})));
        }
        2 => {
            let m = b.marker();
            b.push(delta(usize::from(target % 3), json!({"reasoningContent": {"text": m}})));
        }
        3 => {
            let id = b.fresh_id();
            let index = 1 + index_of(b, &id);
            let start = json!({"toolUse": {"toolUseId": id, "name": "f"}});
            b.push(json!({"contentBlockStart": {"contentBlockIndex": index, "start": start}}));
        }
        4 => {
            let id = b.pick(target);
            let index = 1 + index_of(b, &id);
            let m = b.marker();
            b.push(delta(index, json!({"toolUse": {"input": m}})));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let status = if target.is_multiple_of(2) { "success" } else { "error" };
            let result = json!({"toolUseId": id, "content": [{"text": m}], "status": status});
            b.push(json!({"role": "user", "content": [{"toolResult": result}]}));
        }
        6 => {
            let id = b.pick(target);
            let (result, prompt) = (b.result(&id), b.marker());
            let result = json!({"toolUseId": id, "content": [{"json": {"out": result}}]});
            b.push(json!({"role": "user", "content": [{"toolResult": result}, {"text": prompt}]}));
        }
        7 => {
            let reason = ["end_turn", "tool_use", "max_tokens", "guardrail_intervened"][usize::from(target % 4)];
            let m = b.latest("additional fields".into());
            b.push(json!({"messageStop": {"stopReason": reason, "additionalModelResponseFields": {"note": m}}}));
        }
        8 => {
            let m = b.latest("metrics".into());
            b.push(json!({"metadata": {"usage": {"inputTokens": 1, "outputTokens": target, "totalTokens": 1 + u32::from(target)}, "metrics": {"latencyMs": 1, "note": m}}}));
        }
        9 => {
            let m = b.marker();
            b.push(json!({"throttlingException": {"message": m}}));
        }
        10 => {
            // A server tool, and its result in the stream.
            let id = b.fresh_id();
            let (index, args) = (1 + index_of(b, &id), b.marker());
            let start =
                json!({"toolUse": {"toolUseId": id, "name": "nova_code_interpreter", "type": "server_tool_use"}});
            b.push(json!({"contentBlockStart": {"contentBlockIndex": index, "start": start}}));
            b.push(delta(index, json!({"toolUse": {"input": args}})));
            b.push(stop(index));
            let m = b.result(&id);
            let start = json!({"toolResult": {"toolUseId": id, "status": "success"}});
            b.push(json!({"contentBlockStart": {"contentBlockIndex": 80, "start": start}}));
            b.push(delta(80, json!({"toolResult": [{"text": m}]})));
            b.push(stop(80));
        }
        11 => {
            let (thought, signature) = (b.marker(), b.marker());
            b.push(delta(93, json!({"reasoningContent": {"text": thought}})));
            b.push(delta(93, json!({"reasoningContent": {"signature": signature}})));
            b.push(stop(93));
        }
        12 => {
            let m = b.marker();
            b.push(delta(94, json!({"reasoningContent": {"redactedContent": m}})));
            b.push(stop(94));
        }
        13 => {
            let m = b.marker();
            b.push(json!({"futureEvent": {"x": m}}));
        }
        14 => {
            let m = b.marker();
            b.push(delta(usize::from(target % 3), json!({"citation": {"title": m}})));
        }
        _ => {
            let id = b.pick(target);
            let index = 1 + index_of(b, &id);
            b.push(stop(index));
        }
    }
}

/// Gemini CLI `stream-json` lines.
/// Gemini CLI's saved chat in its JSON lines layout: a session line, user
/// prompts, model messages (text, thoughts, tool calls with their results
/// inside), `$set` lines and records of kinds the adapter does not know.
fn gemini_cli_chat(b: &mut Builder, kind: u8) {
    match kind % 8 {
        0 => b.push(json!({"sessionId": "chat", "startTime": "2026-04-29T21:39:22.319Z", "kind": "main"})),
        1 => {
            let (id, m) = (b.fresh_id(), b.latest("prompt".into()));
            b.push(json!({"id": format!("u{id}"), "type": "user", "content": [{"text": m}]}));
        }
        2 | 3 => {
            let (id, m) = (b.fresh_id(), b.marker());
            b.push(json!({"id": format!("g{id}"), "type": "gemini", "content": m, "tokens": {"input": 10, "output": 2, "total": 12}}));
        }
        4 => {
            let (id, m) = (b.fresh_id(), b.marker());
            b.push(json!({"id": format!("g{id}"), "type": "gemini", "content": "",
                "thoughts": [{"subject": "Plan", "description": m}]}));
        }
        5 => {
            let (message, call) = (b.fresh_id(), b.fresh_id());
            let args = b.arguments(&call);
            let output = b.result(&call);
            b.push(json!({"id": format!("g{message}"), "type": "gemini", "content": "", "toolCalls": [{
                "id": call, "name": "run_shell_command", "args": {"command": args}, "status": "success",
                "result": [{"functionResponse": {"id": call, "name": "run_shell_command", "response": {"output": output}}}],
            }]}));
        }
        6 => b.push(json!({"$set": {"lastUpdated": "2026-04-29T21:40:00.000Z"}})),
        _ => {
            // (A record of an id read before rewrites it: each its own.)
            let (id, m) = (b.fresh_id(), b.marker());
            b.push(json!({"id": format!("x{id}"), "type": "mystery", "note": m}));
        }
    }
}

fn gemini_cli(b: &mut Builder, kind: u8, target: u8) {
    let line = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest["timestamp"] = "2026-01-15T10:00:00Z".into();
        rest
    };
    match kind % 13 {
        0 => {
            // A run's metadata: an init with nothing since replaces it.
            let m = b.latest("init".into());
            b.push(line("init", json!({"session_id": m, "model": "m"})));
        }
        1 => {
            let m = b.latest("prompt".into());
            b.push(line("message", json!({"role": "user", "content": m})));
        }
        2 => {
            let m = b.marker();
            b.push(line("message", json!({"role": "assistant", "content": m, "delta": true})));
        }
        3 => {
            let m = b.marker();
            b.push(line("message", json!({"role": "assistant", "content": m})));
        }
        4 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(line(
                "tool_use",
                json!({"tool_name": "run_shell_command", "tool_id": id, "parameters": {"command": m}}),
            ));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(line("tool_result", json!({"tool_id": id, "status": "success", "output": m})));
        }
        6 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(line(
                "tool_result",
                json!({"tool_id": id, "status": "error", "error": {"type": "E", "message": m}}),
            ));
        }
        7 => {
            let m = b.marker();
            b.push(line("error", json!({"severity": "warning", "message": m})));
        }
        8 => {
            let m = b.marker();
            b.push(line("result", json!({"status": "success", "stats": {"total_tokens": target, "note": m}})));
        }
        9 => {
            let m = b.marker();
            b.push(line("result", json!({"status": "error", "error": {"type": "E", "message": m}, "stats": {}})));
        }
        10 => {
            let m = b.marker();
            b.push(line("weird", json!({"x": m})));
        }
        11 => {
            let id = b.pick(target);
            let m = b.marker();
            b.push(line("tool_result", json!({"tool_id": id, "status": "pending", "output": m})));
        }
        _ => {
            let m = b.marker();
            b.push(line("tool_use", json!({"tool_name": "read_file", "parameters": {"path": m}})));
        }
    }
}

/// Claude Code session log lines: one API message's blocks on lines of
/// their own sharing its id, results between them, prompts, interrupts,
/// lines that are no prompt, subagent progress, noise.
fn claude_transcript(b: &mut Builder, kind: u8, session: &str, target: u8) {
    // Each line its own uuid, as Claude Code's are (one line per call).
    let uuid = format!("u{}", b.lines.len());
    let line = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest["sessionId"] = session.into();
        rest["uuid"] = uuid.as_str().into();
        rest["timestamp"] = "2026-01-15T10:00:00Z".into();
        rest
    };
    let message_id = format!("msg{}", target % 3);
    let assistant = |block: Value, output: u8| {
        line(
            "assistant",
            json!({"requestId": format!("req-{message_id}"), "message": {"id": message_id, "model": "m",
                "content": [block], "usage": {"input_tokens": 1, "output_tokens": output}}}),
        )
    };
    let user = |content: Value| line("user", json!({"message": {"role": "user", "content": content}}));
    match kind % 14 {
        0 => {
            let m = b.marker();
            b.push(user(json!(m)));
        }
        13 => {
            // A line written again (a subagent's line in its own file after
            // its copy in the parent's progress): applied once, its markers
            // those of the first.
            if let Some(last) = b.lines.last().cloned() {
                b.lines.push(last);
            }
        }
        1 => {
            let m = b.marker();
            b.push(assistant(json!({"type": "text", "text": m}), target));
        }
        2 => {
            let m = b.marker();
            b.push(assistant(json!({"type": "thinking", "thinking": m, "signature": "sig"}), target));
        }
        3 => {
            let id = b.fresh_id();
            let m = b.arguments(&id);
            b.push(assistant(json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": m}}), target));
        }
        4 => {
            let id = b.pick(target);
            let m = b.result(&id);
            let error = target.is_multiple_of(2);
            b.push(user(json!([{"type": "tool_result", "tool_use_id": id, "content": m, "is_error": error}])));
        }
        5 => {
            let m = b.marker();
            b.push(user(json!([{"type": "text", "text": format!("[Request interrupted by user] {m}")}])));
        }
        6 => {
            let m = b.marker();
            let mut meta = user(json!(format!("<command-name>/x</command-name> {m}")));
            meta["isMeta"] = target.is_multiple_of(2).into();
            b.push(meta);
        }
        7 => b.push(line("progress", json!({"data": {"type": "hook_progress"}}))),
        8 => {
            let m = b.marker();
            b.push(line("weird", json!({"x": m})));
        }
        9 => {
            let m = b.marker();
            let mut synthetic = assistant(json!({"type": "text", "text": m}), 0);
            synthetic["message"]["model"] = "<synthetic>".into();
            synthetic["isApiErrorMessage"] = target.is_multiple_of(2).into();
            b.push(synthetic);
        }
        10 => {
            let id = b.pick(target);
            let m = b.marker();
            let embedded = json!({"type": "assistant", "requestId": "rs", "message": {"id": format!("sub{target}"),
                "content": [{"type": "text", "text": m}], "usage": {"input_tokens": 1, "output_tokens": 1}}});
            b.push(line("progress", json!({"parentToolUseID": id, "data": {"type": "agent_progress", "agentId": "ag", "message": embedded}})));
        }
        11 => b.push(json!({"type": "summary", "summary": "title", "leafUuid": "l"})),
        _ => {
            let m = b.marker();
            let mut side = assistant(json!({"type": "text", "text": m}), 1);
            side["isSidechain"] = true.into();
            side["agentId"] = "side".into();
            b.push(side);
        }
    }
}

/// AI SDK UI message stream chunks, several responses in a row.
fn ai_sdk(b: &mut Builder, kind: u8, target: u8) {
    let chunk = |kind: &str, mut rest: Value| {
        rest["type"] = kind.into();
        rest
    };
    match kind % 24 {
        0 => {
            let m = b.marker();
            b.push(chunk("text-delta", json!({"id": "0", "delta": m})));
        }
        1 => {
            let m = b.marker();
            b.push(chunk("reasoning-delta", json!({"id": "r", "delta": m})));
        }
        2 => {
            let id = b.fresh_id();
            let m = b.appended(format!("arguments {id}"));
            b.push(chunk("tool-input-start", json!({"toolCallId": id, "toolName": "f"})));
            b.push(chunk("tool-input-delta", json!({"toolCallId": id, "inputTextDelta": m})));
        }
        3 => {
            let id = b.pick(target);
            let m = b.appended(format!("arguments {id}"));
            b.push(chunk("tool-input-delta", json!({"toolCallId": id, "inputTextDelta": m})));
        }
        4 => {
            // Whole input: replaces the deltas (and declares the call when
            // it is new).
            let id = if target.is_multiple_of(2) { b.fresh_id() } else { b.pick(target) };
            let m = b.snapshot(format!("arguments {id}"));
            b.push(chunk("tool-input-available", json!({"toolCallId": id, "toolName": "f", "input": {"a": m}})));
        }
        5 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(chunk("tool-output-available", json!({"toolCallId": id, "output": {"r": m}})));
        }
        6 => {
            // Preliminary: each replaces the last, and a result all of them.
            let id = b.pick(target);
            let m = b.snapshot(id.clone());
            b.push(chunk("tool-output-available", json!({"toolCallId": id, "output": m, "preliminary": true})));
        }
        7 => {
            let id = b.pick(target);
            let m = b.result(&id);
            b.push(chunk("tool-output-error", json!({"toolCallId": id, "errorText": m})));
        }
        8 => {
            let id = b.fresh_id();
            let m = b.snapshot(format!("arguments {id}"));
            let e = b.result(&id);
            b.push(chunk("tool-input-error", json!({"toolCallId": id, "toolName": "g", "input": m, "errorText": e})));
        }
        9 => {
            // Its result is the word `denied`: the live output is replaced.
            let id = b.pick(target);
            for earlier in b.live.remove(&id).unwrap_or_default() {
                b.markers[earlier].1 = false;
            }
            b.push(chunk("tool-output-denied", json!({"toolCallId": id})));
        }
        10 => {
            // A call's latest approval request is the one it waits for.
            let id = b.pick(target);
            let m = b.latest(format!("approval {id}"));
            b.push(chunk("tool-approval-request", json!({"toolCallId": id, "approvalId": m})));
        }
        11 => {
            let m = b.marker();
            b.push(chunk("start", json!({"messageId": m})));
        }
        12 => {
            let reason = ["stop", "tool-calls", "length", "content-filter", "error", "other"][usize::from(target % 6)];
            b.push(chunk("finish", json!({"finishReason": reason})));
        }
        13 => {
            let m = b.marker();
            b.push(chunk("abort", json!({"reason": m})));
        }
        14 => {
            let m = b.marker();
            b.push(chunk("error", json!({"errorText": m})));
        }
        15 => {
            let m = b.marker();
            b.push(chunk("source-url", json!({"sourceId": "s", "url": m})));
        }
        16 => {
            let m = b.marker();
            b.push(chunk("file", json!({"url": m, "mediaType": "image/png"})));
        }
        17 => {
            let m = b.marker();
            b.push(chunk("data-x", json!({"id": "d", "data": {"v": m}})));
        }
        18 => {
            // Metadata merges by key: a fresh key per marker.
            let m = b.marker();
            let key = format!("k{}", b.markers.len());
            b.push(chunk("message-metadata", json!({"messageMetadata": {key: m, "usage": {"totalTokens": target}}})));
        }
        19 => {
            let m = b.marker();
            let key = format!("k{}", b.markers.len());
            b.push(chunk("finish", json!({"finishReason": "stop", "messageMetadata": {key: m}})));
        }
        20 => b.push(chunk(if target.is_multiple_of(2) { "start-step" } else { "finish-step" }, json!({}))),
        21 => {
            let m = b.marker();
            b.push(chunk("tool-future", json!({"x": m})));
        }
        22 => {
            let m = b.marker();
            b.push(chunk("text-end", json!({"id": "0", "providerMetadata": {"p": m}})));
        }
        _ => {
            let m = b.marker();
            b.push(chunk("tool-input-start", json!({"toolName": m})));
        }
    }
}

/// Every marker that must survive is somewhere in the output lines.
pub fn check_conservation(stream: &NativeStream, output: &[Value]) -> Result<(), String> {
    let text: String = output.iter().map(|line| line.to_string()).collect::<Vec<_>>().join("\n");
    for marker in &stream.markers {
        if !text.contains(marker.as_str()) {
            return Err(format!("marker {marker} was lost\ninput:\n{}\noutput:\n{text}", stream.lines.join("\n")));
        }
    }
    Ok(())
}
