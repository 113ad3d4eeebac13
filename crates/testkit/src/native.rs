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

/// A stream of `format` (`acp`, `uagent` or `deepwork`) from a script.
pub fn native_stream(format: &str, script: &[u8]) -> NativeStream {
    let mut b = Builder::new();
    for (at, event) in script.chunks_exact(3).enumerate() {
        let (kind, session, target) = (event[0], if event[1] % 2 == 0 { "s1" } else { "s2" }, event[2]);
        match format {
            "acp" => acp(&mut b, kind, session, target, at),
            "uagent" => uagent(&mut b, kind, session, target),
            "deepwork" => deepwork(&mut b, kind, session, target),
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
