//! The Agent Client Protocol (ACP v1) adapter: JSON-RPC traffic of a
//! client, or bare `SessionNotification`s, translated into
//! [`StreamHandler`](crate::StreamHandler) calls.
//!
//! The adapter only translates; the rules stay in the state machine. What it
//! keeps per stream is what the translation needs: which prompt request a
//! response answers, each tool call's latest output (ACP sends output with
//! replace semantics, often in another update than the terminal status),
//! whether a call already got its result (updates after it only refine
//! metadata), and whether a `session/load` replay is in progress.
//!
//! ```
//! use roundup::adapters::{acp::AcpAdapter, Adapter};
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut acp = AcpAdapter::new();
//! let line = br#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}"#;
//! acp.translate(line, &mut |_session: Option<&str>, call: Call<'_>| builder.call(call)).unwrap();
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "Hi");
//! ```

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::support::{at_path, json_text, one, output_text, parse_event, pick, report, EventCounts};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of the Agent Client Protocol.
///
/// ```
/// let acp = &roundup::adapters::acp::FORMAT;
/// assert_eq!(acp.name(), "acp");
/// assert_eq!(roundup::adapters::InputFormat::detect(br#"{"jsonrpc":"2.0","method":"initialize"}"#), acp);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "acp",
    about: "Agent Client Protocol: a client's JSON-RPC
traffic or bare SessionNotifications;
sessionId is the session, session/prompt
starts a run, its response finishes it",
    detect: |event: &Map<String, Value>| {
        event.contains_key("jsonrpc") || (event.contains_key("sessionId") && event.contains_key("update"))
    },
    adapter: || Box::<AcpAdapter>::default(),
};

/// What the adapter knows about one tool call.
#[derive(Debug, Default)]
struct ToolState {
    /// A `rawInput` was seen: `content` is output, never arguments.
    has_raw_input: bool,
    /// The latest `content` array (replace semantics).
    content: Option<Value>,
    /// The latest `rawOutput`.
    raw_output: Option<Value>,
    /// Terminal output gathered from `_meta.terminal_output(_delta)`.
    terminal: String,
    /// The result was sent: later updates refine metadata only.
    done: bool,
}

/// What the adapter knows about one session.
#[derive(Debug, Default)]
struct SessionState {
    /// A `session/load` replay is in progress.
    loading: bool,
    /// The current run saw agent content (for `session/load` run cuts).
    agent_content: bool,
    /// The user's prompt text of the current run.
    user_message: String,
    /// Counts of updates that carry nothing for rounds, by type.
    other_updates: EventCounts,
}

/// Translates ACP messages into calls, keeping the per-stream state the
/// translation needs. One adapter per connection (or recorded stream).
///
/// ```
/// use roundup::adapters::acp::AcpAdapter;
/// use roundup::{Call, RoundBuilder, StreamHandler};
///
/// let builder = RoundBuilder::new();
/// let mut acp = AcpAdapter::new();
/// let mut to_builder = |_: Option<&str>, call: Call<'_>| builder.call(call);
/// let declare = serde_json::json!({"sessionId": "s", "update": {
///     "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "rawInput": {"path": "."}}});
/// let finish = serde_json::json!({"sessionId": "s", "update": {
///     "sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
///     "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}]}});
/// acp.message(&declare, &mut to_builder);
/// acp.message(&finish, &mut to_builder);
/// let call = &builder.rounds()[0].tool_calls[0];
/// assert_eq!((call.arguments.as_str(), call.result.content()), (r#"{"path":"."}"#, Some("a.txt")));
/// ```
#[derive(Debug, Default)]
pub struct AcpAdapter {
    /// Prompt and load requests awaiting their response: id → session.
    requests: HashMap<String, String>,
    sessions: HashMap<String, SessionState>,
    tools: HashMap<(String, String), ToolState>,
}

impl Adapter for AcpAdapter {
    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        self.message(&parse_event(payload)?, calls);
        Ok(())
    }
}

impl AcpAdapter {
    /// An adapter with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Translates one message already parsed: a JSON-RPC request, response
    /// or notification of a client's traffic, or a bare
    /// `SessionNotification`.
    pub fn message(&mut self, message: &Value, calls: &mut dyn CallSink) {
        let Some(object) = message.as_object() else {
            return report(calls,
                None,
                AnomalyKind::UnknownEvent,
                &format!("acp: a message that is not an object: {message}"),
            );
        };
        match (object.get("method").and_then(Value::as_str), object.get("id")) {
            (Some(method), id) => self.request(method, id, object.get("params").unwrap_or(&Value::Null), calls),
            (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
                self.response(id, object, calls)
            }
            (None, _) if object.contains_key("sessionId") && object.contains_key("update") => {
                self.notification(message, calls)
            }
            _ => report(calls,
                None,
                AnomalyKind::UnknownEvent,
                &format!("acp: a message that is neither JSON-RPC nor a SessionNotification: {message}"),
            ),
        }
    }

    /// A typed `SessionNotification` of the official schema crate.
    #[cfg(feature = "acp")]
    pub fn translate_notification(
        &mut self,
        notification: &agent_client_protocol_schema::v1::SessionNotification,
        calls: &mut dyn CallSink,
    ) {
        match serde_json::to_value(notification) {
            Ok(value) => self.notification(&value, calls),
            Err(error) => {
                report(calls, None, AnomalyKind::UnknownEvent, &format!("acp: unserialisable notification: {error}"))
            }
        }
    }

    fn request(&mut self, method: &str, id: Option<&Value>, params: &Value, calls: &mut dyn CallSink) {
        let session = params.get("sessionId").and_then(Value::as_str);
        match (method, session) {
            ("session/update", Some(_)) => self.notification(params, calls),
            ("session/prompt" | "session/load", Some(session)) => {
                if let Some(id) = id {
                    self.requests.insert(id.to_string(), session.to_owned());
                }
                let state = self.sessions.entry(session.to_owned()).or_default();
                state.loading = method == "session/load";
                state.agent_content = false;
                state.user_message.clear();
                calls.call(Some(session), Call::Start);
            }
            // A permission request names the tool call it is about, with its
            // latest title and input; its content is a preview for the user
            // (a diff to approve), not the tool's output.
            ("session/request_permission", Some(session)) => {
                if let Some(tool_call) = params.get("toolCall").and_then(Value::as_object) {
                    let fields = ["toolCallId", "title", "rawInput"];
                    let declared: serde_json::Map<String, Value> = tool_call
                        .iter()
                        .filter(|(k, _)| fields.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    self.tool_call(session, &Value::Object(declared), false, calls);
                }
            }
            // The rest of the protocol (initialize, session/new, file and
            // terminal requests of the agent, ...) carries nothing for rounds.
            _ => {}
        }
    }

    fn response(&mut self, id: &Value, object: &serde_json::Map<String, Value>, calls: &mut dyn CallSink) {
        let Some(session) = self.requests.remove(&id.to_string()) else {
            return; // The response to a request that opens no run.
        };
        if let Some(state) = self.sessions.get_mut(&session) {
            state.loading = false;
        }
        let stop_reason = object.get("result").and_then(|r| r.get("stopReason")).and_then(Value::as_str);
        let mut meta = Meta::new();
        if let Some(stop_reason) = stop_reason {
            meta.insert("acp_stop_reason".into(), stop_reason.into());
        }
        if let Some(error) = object.get("error") {
            meta.insert("acp_error".into(), error.clone());
        }
        if !meta.is_empty() {
            calls.call(Some(&session), Call::RunMeta { meta: &meta });
        }
        let reason = if stop_reason == Some("cancelled") { FinishReason::Canceled } else { FinishReason::Interrupted };
        calls.call(Some(&session), Call::Finish { reason });
    }

    fn notification(&mut self, params: &Value, calls: &mut dyn CallSink) {
        let Some(session) = params.get("sessionId").and_then(Value::as_str) else {
            return report(calls,
                None,
                AnomalyKind::UnknownEvent,
                &format!("acp: session/update without a sessionId: {params}"),
            );
        };
        let update = params.get("update").unwrap_or(&Value::Null);
        // Subagent traffic goes to a session of its own, so that it does not
        // supersede the parent's Task call.
        let parent = at_path(update, &["_meta", "claudeCode", "parentToolUseId"]).and_then(Value::as_str);
        let session = match parent {
            Some(parent) => format!("{session}/{parent}"),
            None => session.to_owned(),
        };
        let kind = update.get("sessionUpdate").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                let state = self.sessions.entry(session.clone()).or_default();
                state.agent_content = true;
                let content = update.get("content").unwrap_or(&Value::Null);
                match text_of(content) {
                    Some(text) if kind == "agent_message_chunk" => calls.call(Some(&session), Call::Message { text }),
                    Some(text) => calls.call(Some(&session), Call::Thought { text }),
                    None => report(calls,
                        Some(&session),
                        AnomalyKind::UnknownContent,
                        &format!("acp: {kind} with non-text content: {content}"),
                    ),
                }
            }
            "user_message_chunk" => {
                let state = self.sessions.entry(session.clone()).or_default();
                // In a session/load replay, the user's next prompt after
                // agent content begins the next run.
                if state.loading && state.agent_content {
                    state.agent_content = false;
                    state.user_message.clear();
                    calls.call(Some(&session), Call::Start);
                }
                let state = self.sessions.entry(session.clone()).or_default();
                let content = update.get("content").unwrap_or(&Value::Null);
                match text_of(content) {
                    Some(text) => {
                        state.user_message.push_str(text);
                        let meta = one("acp_user_message", state.user_message.clone().into());
                        calls.call(Some(&session), Call::RunMeta { meta: &meta });
                    }
                    None => report(calls,
                        Some(&session),
                        AnomalyKind::UnknownContent,
                        &format!("acp: {kind} with non-text content: {content}"),
                    ),
                }
            }
            "tool_call" => {
                self.sessions.entry(session.clone()).or_default().agent_content = true;
                self.tool_call(&session, update, true, calls);
            }
            "tool_call_update" => self.tool_call(&session, update, false, calls),
            "usage_update" => {
                if let Some(used) = update.get("used").and_then(Value::as_u64) {
                    calls.call(Some(&session), Call::TokenUsage { total: used });
                }
                let mut meta = Meta::new();
                for (field, key) in [("size", "acp_context_size"), ("cost", "acp_cost")] {
                    if let Some(value) = update.get(field) {
                        meta.insert(key.into(), value.clone());
                    }
                }
                if !meta.is_empty() {
                    calls.call(Some(&session), Call::RunMeta { meta: &meta });
                }
            }
            "plan" => {
                let meta = one("acp_plan", update.get("entries").cloned().unwrap_or(Value::Null));
                calls.call(Some(&session), Call::RunMeta { meta: &meta });
            }
            "available_commands_update" | "current_mode_update" | "config_option_update" | "session_info_update" => {
                let state = self.sessions.entry(session.clone()).or_default();
                state.other_updates.count("acp_other_updates", kind, Some(&session), calls);
            }
            other => report(calls,
                Some(&session),
                AnomalyKind::UnknownEvent,
                &format!("acp: sessionUpdate `{other}`: {update}"),
            ),
        }
    }

    /// A `tool_call` (a declaration, `declare`) or `tool_call_update`.
    fn tool_call(&mut self, session: &str, update: &Value, declare: bool, calls: &mut dyn CallSink) {
        let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
            let detail = format!("acp: tool call without a toolCallId: {update}");
            return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
        };
        let title = update.get("title").and_then(Value::as_str).unwrap_or_default();
        let state = self.tools.entry((session.to_owned(), id.to_owned())).or_default();
        // A declaration, or a title upsert; after the result, the call may
        // sit in a closed round, where a declaration would open a new one.
        if !state.done && (declare || !title.is_empty()) {
            calls.call(Some(session), Call::ToolCall { id, title });
        }
        // What has no call of its own is kept with the tool call.
        let mut meta = pick(update, &["kind", "locations", "rawOutput", "_meta"]);
        if state.done {
            // After the result: refinements (a diff, locations) only.
            if let Some(content) = update.get("content") {
                meta.insert("content".to_owned(), content.clone());
            }
            if !meta.is_empty() {
                calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
            }
            return;
        }
        if let Some(raw_input) = update.get("rawInput") {
            state.has_raw_input = true;
            calls.call(Some(session), Call::ArgsSnapshot { id, args: &json_text(raw_input) });
        }
        let status = update.get("status").and_then(Value::as_str);
        if let Some(content) = update.get("content") {
            // Kimi CLI sends the arguments of a pending call without rawInput
            // as its content: a snapshot, not output.
            let arguments = !state.has_raw_input && matches!(status, Some("pending") | None);
            match render(content, "") {
                Some(text) if arguments && !text.is_empty() && only_text(content) => {
                    calls.call(Some(session), Call::ArgsSnapshot { id, args: &text });
                }
                _ => state.content = Some(content.clone()),
            }
        }
        if let Some(raw_output) = update.get("rawOutput") {
            state.raw_output = Some(raw_output.clone());
        }
        if let Some(data) = at_path(update, &["_meta", "terminal_output_delta", "data"]).and_then(Value::as_str) {
            state.terminal.push_str(data);
        }
        if let Some(data) = at_path(update, &["_meta", "terminal_output", "data"]).and_then(Value::as_str) {
            state.terminal.clear();
            state.terminal.push_str(data);
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        let status = match status {
            None | Some("pending" | "in_progress") => return,
            Some("completed") => ToolCallStatus::Completed,
            Some("failed") => ToolCallStatus::Failed,
            Some(other) => {
                let detail = format!("acp: tool call `{id}` status `{other}`");
                return report(calls, Some(session), AnomalyKind::UnknownStatus, &detail);
            }
        };
        let result = state.result();
        state.done = true;
        calls.call(Some(session), Call::ToolUpdate { id, content: &result, status });
    }
}

impl ToolState {
    /// The result: the latest output seen, content blocks rendered as text
    /// (terminal blocks by the terminal output gathered), else `rawOutput`.
    fn result(&self) -> String {
        if let Some(text) = self.content.as_ref().and_then(|content| render(content, &self.terminal)) {
            if !text.is_empty() {
                return text;
            }
        }
        if !self.terminal.is_empty() {
            return self.terminal.clone();
        }
        output_text(self.raw_output.as_ref()).into_owned()
    }
}

/// Renders an ACP `content` array (tool call content) as text: text blocks
/// as they are, diffs as a unified-looking patch, terminal blocks as the
/// terminal output. `None` when the array holds nothing renderable.
fn render(content: &Value, terminal: &str) -> Option<String> {
    let blocks = content.as_array()?;
    let mut parts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("content") => parts.extend(block.get("content").and_then(text_of).map(str::to_owned)),
            Some("diff") => {
                // JetBrains Air attaches the real patch when old and new
                // text are not given.
                if let Some(patch) =
                    at_path(block, &["_meta", "jetbrains", "air", "diffPatch", "text"]).and_then(Value::as_str)
                {
                    parts.push(patch.to_owned());
                    continue;
                }
                let path = block.get("path").and_then(Value::as_str).unwrap_or_default();
                let old = block.get("oldText").and_then(Value::as_str);
                let new = block.get("newText").and_then(Value::as_str).unwrap_or_default();
                let mut diff = format!("--- {}\n+++ {path}\n", if old.is_some() { path } else { "/dev/null" });
                for line in old.unwrap_or_default().lines() {
                    diff.push_str(&format!("-{line}\n"));
                }
                for line in new.lines() {
                    diff.push_str(&format!("+{line}\n"));
                }
                parts.push(diff);
            }
            Some("terminal") if !terminal.is_empty() => parts.push(terminal.to_owned()),
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// Whether every block of a content array is a text content block.
fn only_text(content: &Value) -> bool {
    content.as_array().is_some_and(|blocks| {
        blocks.iter().all(|b| {
            b.get("type").and_then(Value::as_str) == Some("content") && b.get("content").and_then(text_of).is_some()
        })
    })
}

/// The text of a text content block (`{"type":"text","text":...}`).
fn text_of(block: &Value) -> Option<&str> {
    (block.get("type").and_then(Value::as_str) == Some("text")).then(|| block.get("text").and_then(Value::as_str))?
}
