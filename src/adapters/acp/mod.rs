//! The Agent Client Protocol (ACP v1) adapter: JSON-RPC traffic of a
//! client, or bare `SessionNotification`s, translated into
//! [`StreamHandler`](crate::StreamHandler) calls.
//!
//! The adapter only translates; the rules stay in the state machine, and
//! so does a tool's output (ACP sends it with replace semantics, in
//! `content`, `rawOutput` or Claude Code's terminal `_meta`: each becomes a
//! `tool_output`, and the terminal status takes it as the result, SPEC rule
//! 13). What the adapter keeps is what translating needs, for as long as it
//! needs it:
//!
//! - the requests of each side still waiting for their response, since
//!   client and agent number their requests independently;
//! - per session: whether a run is going on, a subagent's parent, text
//!   being gathered for run metadata;
//! - per tool call of the current run: the session it was declared in
//!   (a call's session is fixed at its declaration), whether it has
//!   `rawInput`, output or its result. Released when the run ends, since a
//!   late result can reach the call until then and nothing after.
//!
//! How each native event maps to calls is tabled in `docs/adapters.md`.
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

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::borrowed::utf8;
use super::support::{one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

mod render;
mod wire;

use render::render;
use wire::{ContentBlock, Message, Params, Update, UpdateMeta};

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
starts a run, its response finishes it;
subagents are sessions of their own",
    detect: |event: &Map<String, Value>| {
        event.contains_key("jsonrpc") || (event.contains_key("sessionId") && event.contains_key("update"))
    },
    adapter: || Box::<AcpAdapter>::default(),
};

/// Translates ACP messages into calls. One adapter per connection (or
/// recorded stream).
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
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AcpAdapter {
    /// The client's requests awaiting a response, by id as sent.
    client_requests: HashMap<Box<str>, ClientRequest>,
    /// The agent's requests awaiting a response, by id as sent.
    agent_requests: HashMap<Box<str>, AgentRequest>,
    sessions: HashMap<Box<str>, SessionState>,
    /// The tool calls of the current runs, by root session, then by id.
    calls: HashMap<Box<str>, HashMap<Box<str>, CallState>>,
    /// Background tasks (`async_task_*`) by id: the tool call they run for.
    tasks: HashMap<Box<str>, TaskOf>,
    /// The agent sends a pending call's arguments as its content (Kimi CLI,
    /// known from the `initialize` response's `agentInfo`).
    content_is_arguments: bool,
}

/// A request of the client that the adapter answers for.
#[derive(Debug, Serialize, Deserialize)]
enum ClientRequest {
    Initialize,
    /// `session/prompt` or `session/load`: its response ends the run.
    Run {
        session: Box<str>,
    },
    Other,
}

/// A request of the agent (`session/request_permission`, `fs/*`,
/// `terminal/*`); a permission names the tool call it asks about.
#[derive(Debug, Serialize, Deserialize)]
struct AgentRequest {
    permission_for: Option<(Box<str>, Box<str>)>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionState {
    /// The session whose subagent this one is.
    parent: Option<Box<str>>,
    /// Subagent sessions of this one.
    children: Vec<Box<str>>,
    /// Made up by the adapter (`session/parentToolUseId`) for subagent
    /// traffic that came under its parent's id: forgotten with the run.
    made_up: bool,
    /// A run was started and has not finished.
    running: bool,
    /// A `session/load` replay is in progress.
    loading: bool,
    /// The current run saw agent content (for `session/load` run cuts).
    agent_content: bool,
    /// Text gathered for run-metadata keys (the prompt), sent whole when
    /// the run ends, so that n chunks cost n and not n².
    gathering: Vec<(Cow<'static, str>, String)>,
    /// The run's context compactions, each its latest update with its
    /// summary text whole, sent when the run ends.
    compactions: Vec<Map<String, Value>>,
    /// The message id last put in the round's metadata.
    last_message_id: Option<Box<str>>,
    /// The parent's Task call was told this session's name.
    linked: bool,
}

/// What the adapter knows of one tool call of a current run.
#[derive(Debug, Serialize, Deserialize)]
struct CallState {
    /// The session it was declared in.
    session: Box<str>,
    /// A `rawInput` was seen: `content` is output, never arguments.
    raw_input: bool,
    /// Where its live output came from last.
    output: Option<OutputFrom>,
    /// It has its result: later updates are metadata, a second terminal a
    /// duplicate.
    done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
enum OutputFrom {
    /// `rawOutput`: a stand-in until real output comes, which replaces it.
    RawOutput,
    Content,
    Terminal,
}

#[derive(Debug, Serialize, Deserialize)]
struct TaskOf {
    /// The root session of the call's session, whose run end forgets it.
    root: Box<str>,
    session: Box<str>,
    call: Box<str>,
}

/// The methods an agent sends to its client; every other request is the
/// client's.
fn is_agent_method(method: &str) -> bool {
    method == "session/request_permission" || method.starts_with("fs/") || method.starts_with("terminal/")
}

/// Subagent and background-task states after which nothing more comes.
fn is_final_state(state: &str) -> bool {
    matches!(
        state,
        "idle"
            | "completed"
            | "complete"
            | "done"
            | "failed"
            | "error"
            | "cancelled"
            | "canceled"
            | "killed"
            | "stopped"
    )
}

fn reason_of_state(state: &str) -> FinishReason {
    match state {
        "cancelled" | "canceled" | "killed" | "stopped" => FinishReason::Canceled,
        _ => FinishReason::Interrupted,
    }
}

impl Adapter for AcpAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if payload.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return self.batch(payload, calls);
        }
        // Validated once as UTF-8, then read as text: the raw values the
        // views keep need no second validation.
        let text = utf8(payload)?;
        let message: Message<'_> = serde_json::from_str(text).map_err(|error| BadLine::json(&error))?;
        let is_acp = message.jsonrpc.is_some()
            || message.method.is_some()
            || (message.id.is_some() && (message.result.is_some() || message.error.is_some()))
            || (message.session_id.is_some() && message.update.is_some());
        if !is_acp {
            return Err(BadLine::new("not an ACP message: neither JSON-RPC nor a SessionNotification"));
        }
        self.dispatch(message, payload, calls);
        Ok(())
    }

    /// Sends the text still being gathered (a prompt's chunks in a capture
    /// that ends before its response).
    fn end(&mut self, calls: &mut dyn CallSink) {
        let mut gathering: Vec<Box<str>> = self
            .sessions
            .iter()
            .filter(|(_, s)| !s.gathering.is_empty() || !s.compactions.is_empty())
            .map(|(name, _)| name.clone())
            .collect();
        gathering.sort();
        for session in gathering {
            self.flush(&session, calls);
        }
    }
}

impl AcpAdapter {
    /// An adapter with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// A JSON-RPC batch: each member is translated in turn; a member that
    /// cannot be is reported with its text, and the others still are.
    fn batch(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let members: Vec<&RawValue> = serde_json::from_slice(payload).map_err(|error| BadLine::json(&error))?;
        for member in members {
            if let Err(error) = self.translate(member.get().as_bytes(), calls) {
                let detail = format!("acp: batch member: {error}: {}", member.get());
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
        Ok(())
    }

    /// Translates one message already parsed as a `serde_json::Value`: a
    /// JSON-RPC request, response or notification, or a bare
    /// `SessionNotification`. [`translate`](Adapter::translate) on the
    /// line as received keeps the agent's own JSON text of the arguments;
    /// a `Value` has lost it (key order follows serde_json's map).
    pub fn message(&mut self, message: &Value, calls: &mut dyn CallSink) {
        let bytes = serde_json::to_vec(message).unwrap_or_default();
        if let Err(error) = self.translate(&bytes, calls) {
            let detail = format!("acp: {error}: {message}");
            report(calls, None, AnomalyKind::UnknownEvent, &detail);
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
            Ok(value) => self.message(&value, calls),
            Err(error) => {
                report(calls, None, AnomalyKind::UnknownEvent, &format!("acp: unserialisable notification: {error}"))
            }
        }
    }

    fn dispatch(&mut self, message: Message<'_>, payload: &[u8], calls: &mut dyn CallSink) {
        let id = message.id.map(|id| Box::<str>::from(id.get()));
        match (message.method.as_deref(), id) {
            (Some(method), id) => self.request(method, id, message.params, payload, calls),
            (None, Some(id)) if message.result.is_some() || message.error.is_some() => {
                self.response(id, message.result, message.error, calls)
            }
            (None, _) => match (message.session_id, message.update) {
                (Some(session), Some(update)) => self.notification(&session, &update, payload, true, calls),
                _ => report(
                    calls,
                    None,
                    AnomalyKind::UnknownEvent,
                    &format!(
                        "acp: a message that is neither JSON-RPC nor a SessionNotification: {}",
                        String::from_utf8_lossy(payload)
                    ),
                ),
            },
        }
    }

    fn request(
        &mut self,
        method: &str,
        id: Option<Box<str>>,
        params: Option<Params<'_>>,
        payload: &[u8],
        calls: &mut dyn CallSink,
    ) {
        let session = params.as_ref().and_then(|p| p.session_id.as_deref());
        if let Some(id) = id.clone() {
            if is_agent_method(method) {
                let permission_for = match (method, session, params.as_ref().and_then(Params::tool_call)) {
                    ("session/request_permission", Some(session), Some(tool_call)) => {
                        tool_call.tool_call_id.as_deref().map(|call| {
                            let meta = UpdateMeta::read(tool_call.meta);
                            let routed = self.route(session, meta.parent_tool_use_id.as_deref(), Some(call));
                            (Box::from(routed.as_ref()), Box::from(call))
                        })
                    }
                    _ => None,
                };
                self.agent_requests.insert(id, AgentRequest { permission_for });
            } else {
                let request = match (method, session) {
                    ("initialize", _) => ClientRequest::Initialize,
                    ("session/prompt" | "session/load", Some(session)) => {
                        ClientRequest::Run { session: session.into() }
                    }
                    _ => ClientRequest::Other,
                };
                self.client_requests.insert(id, request);
            }
        }
        let Some(params) = params else { return };
        let needs_session =
            matches!(method, "session/update" | "session/prompt" | "session/load" | "session/request_permission");
        if needs_session && params.session_id.is_none() {
            let detail = format!("acp: {method} without a sessionId: {}", String::from_utf8_lossy(payload));
            return report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
        match (method, params.session_id.as_deref()) {
            ("session/update", Some(session)) => {
                if let Some(update) = &params.update {
                    self.notification(session, update, payload, false, calls);
                }
            }
            ("session/prompt" | "session/load", Some(session)) => {
                self.begin_run(session, method == "session/load", calls);
                if let Some(prompt) = params.prompt {
                    self.prompt(session, prompt, calls);
                }
            }
            ("session/request_permission", Some(session)) => {
                if let Some(tool_call) = params.tool_call() {
                    self.permission(session, &tool_call, params.options, calls);
                }
            }
            // The rest (initialize, session/new, the agent's file and
            // terminal requests, ...) carries nothing for rounds.
            _ => {}
        }
    }

    /// Matches a response to the request it answers. Client and agent
    /// number their requests independently, so an id may be pending on
    /// both sides; then the result's shape decides (a prompt's result has
    /// `stopReason`, a permission's `outcome`), and failing that the
    /// agent's request, which was sent while the client's was pending and
    /// so is answered first.
    fn response(
        &mut self,
        id: Box<str>,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
        calls: &mut dyn CallSink,
    ) {
        let result_value = result.map(wire::value);
        let client_pending = self.client_requests.contains_key(&id);
        let agent_pending = self.agent_requests.contains_key(&id);
        let answers_client = match (client_pending, agent_pending) {
            (true, false) => true,
            (false, true) => false,
            (false, false) => {
                let body = match (result, error) {
                    (Some(result), _) => format!("result {}", result.get()),
                    (None, Some(error)) => format!("error {}", error.get()),
                    (None, None) => String::new(),
                };
                let detail = format!("acp: a response to no request seen, id {id}: {body}");
                return report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
            (true, true) => {
                let has = |key: &str| result_value.as_ref().is_some_and(|r| r.get(key).is_some());
                has("stopReason") && !has("outcome")
            }
        };
        if !answers_client {
            let Some(AgentRequest { permission_for: Some((session, call)) }) = self.agent_requests.remove(&id) else {
                return;
            };
            let mut meta = Meta::new();
            if let Some(outcome) = result_value.as_ref().and_then(|r| r.get("outcome")) {
                meta.insert("acp_permission_outcome".into(), outcome.clone());
            }
            if let Some(error) = error {
                meta.insert("acp_permission_error".into(), wire::value(error));
            }
            if !meta.is_empty() {
                calls.call(Some(&session), Call::ToolMeta { id: &call, meta: &meta });
            }
            return;
        }
        match self.client_requests.remove(&id) {
            Some(ClientRequest::Initialize) => {
                let name = result_value.as_ref().and_then(|r| r.pointer("/agentInfo/name")).and_then(Value::as_str);
                self.content_is_arguments = name.is_some_and(|name| name.to_ascii_lowercase().contains("kimi"));
            }
            Some(ClientRequest::Run { session }) => {
                let mut meta = Meta::new();
                let stop_reason = result_value.as_ref().and_then(|r| r.get("stopReason")).and_then(Value::as_str);
                if let Some(stop_reason) = stop_reason {
                    meta.insert("acp_stop_reason".into(), stop_reason.into());
                }
                for (field, key) in [("usage", "acp_usage"), ("_meta", "acp_response_meta")] {
                    if let Some(value) = result_value.as_ref().and_then(|r| r.get(field)) {
                        meta.insert(key.into(), value.clone());
                    }
                }
                if let Some(error) = error {
                    meta.insert("acp_error".into(), wire::value(error));
                }
                let reason =
                    if stop_reason == Some("cancelled") { FinishReason::Canceled } else { FinishReason::Interrupted };
                self.end_run(&session, reason, &meta, calls);
            }
            Some(ClientRequest::Other) | None => {}
        }
    }

    /// A `session/update` (or a bare notification) for `session`.
    fn notification(
        &mut self,
        session: &str,
        update: &Update<'_>,
        payload: &[u8],
        bare: bool,
        calls: &mut dyn CallSink,
    ) {
        let kind = update.session_update.as_deref().unwrap_or_default();
        let meta = UpdateMeta::read(update.meta);
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), None);
                self.link(&target, meta.parent_tool_use_id.as_deref(), calls);
                self.ensure_running(&target, calls);
                let state = self.session_mut(&target);
                state.agent_content = true;
                match update.content.and_then(ContentBlock::text) {
                    Some(text) if kind == "agent_message_chunk" => {
                        calls.call(Some(&target), Call::Message { text: &text })
                    }
                    Some(text) => calls.call(Some(&target), Call::Thought { text: &text }),
                    None => {
                        let content = update.content.map_or("null", RawValue::get);
                        let detail = format!("acp: {kind} with non-text content: {content}");
                        return report(calls, Some(&target), AnomalyKind::UnknownContent, &detail);
                    }
                }
                if let Some(message_id) = update.message_id.as_deref() {
                    if state.last_message_id.as_deref() != Some(message_id) {
                        state.last_message_id = Some(message_id.into());
                        let meta = one("acp_message_ids", Value::Array(vec![message_id.into()]));
                        calls.call(Some(&target), Call::RoundMeta { meta: &meta });
                    }
                }
            }
            "user_message_chunk" => {
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), None);
                let state = self.session_mut(&target);
                // In a session/load replay, the user's next prompt after
                // agent content begins the next run.
                if state.loading && state.agent_content {
                    self.begin_run(&target, true, calls);
                }
                match update.content.and_then(ContentBlock::text) {
                    Some(text) => self.gather(&target, "acp_user_message", &text),
                    None => {
                        let content = update.content.map_or("null", RawValue::get);
                        let detail = format!("acp: {kind} with non-text content: {content}");
                        report(calls, Some(&target), AnomalyKind::UnknownContent, &detail);
                    }
                }
            }
            "tool_call" | "tool_call_update" => {
                let Some(id) = update.tool_call_id.as_deref() else {
                    let detail = format!("acp: {kind} without a toolCallId: {}", String::from_utf8_lossy(payload));
                    return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
                };
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), Some(id));
                self.link(&target, meta.parent_tool_use_id.as_deref(), calls);
                self.ensure_running(&target, calls);
                self.tool_call(&target, id, update, meta, kind == "tool_call", calls);
            }
            _ => {
                let whole = whole_update(payload, bare);
                self.metadata_update(session, kind, &whole, calls);
            }
        }
    }

    /// The session a message goes to. A tool call's session is fixed when
    /// it is declared, so its later updates follow it wherever they are
    /// sent. Subagent traffic (`_meta.claudeCode.parentToolUseId`) sent
    /// under its parent's session id goes to a session of its own,
    /// `{session}/{parentToolUseId}`; a subagent that has its own session
    /// id already (JetBrains Air's `subagent_*` events) keeps it.
    fn route<'s>(&mut self, session: &'s str, parent_tool: Option<&str>, call: Option<&str>) -> Cow<'s, str> {
        let root = self.root_of(session);
        if let Some(state) = call.and_then(|call| self.calls.get(root)?.get(call)) {
            return Cow::Owned(state.session.to_string());
        }
        let is_child = self.sessions.get(session).is_some_and(|s| s.parent.is_some());
        match parent_tool {
            Some(parent_tool) if !is_child => {
                let child = format!("{session}/{parent_tool}");
                if !self.sessions.contains_key(child.as_str()) {
                    self.adopt(session, &child);
                    if let Some(state) = self.sessions.get_mut(child.as_str()) {
                        state.made_up = true;
                    }
                }
                Cow::Owned(child)
            }
            _ => Cow::Borrowed(session),
        }
    }

    /// Names a subagent's session in the metadata of the parent's call
    /// that runs it (Claude Code's Task), once, so that a consumer can
    /// link the two.
    fn link(&mut self, child: &str, parent_tool: Option<&str>, calls: &mut dyn CallSink) {
        let Some(parent_tool) = parent_tool else { return };
        if self.sessions.get(child).map_or(true, |s| s.linked || s.parent.is_none()) {
            return;
        }
        let root = self.root(child);
        let Some(call) = self.calls.get(&root).and_then(|c| c.get(parent_tool)) else { return };
        let session = call.session.clone();
        if let Some(state) = self.sessions.get_mut(child) {
            state.linked = true;
        }
        let meta = one("acp_child_session", child.into());
        calls.call(Some(&session), Call::ToolMeta { id: parent_tool, meta: &meta });
    }

    /// The topmost parent of a session (itself when it has none), owned,
    /// for callers that change the adapter next.
    fn root(&self, session: &str) -> Box<str> {
        self.root_of(session).into()
    }

    /// The topmost parent of a session (itself when it has none).
    fn root_of<'s>(&'s self, session: &'s str) -> &'s str {
        let mut at = session;
        // Parents form a forest ([`adopt`](Self::adopt) refuses cycles);
        // the bound only guards against a bug.
        for _ in 0..64 {
            match self.sessions.get(at).and_then(|s| s.parent.as_deref()) {
                Some(parent) => at = parent,
                None => break,
            }
        }
        at
    }

    /// A session's state, made on first sight (the name is copied only
    /// then: `entry` would copy it on every event).
    fn session_mut(&mut self, session: &str) -> &mut SessionState {
        if !self.sessions.contains_key(session) {
            self.sessions.insert(session.into(), SessionState::default());
        }
        self.sessions.get_mut(session).expect("the session was inserted above")
    }

    /// Makes `child` a subagent session of `parent` (unless it has a
    /// parent already or that would make a cycle).
    fn adopt(&mut self, parent: &str, child: &str) {
        if parent == child || &*self.root(parent) == child {
            return;
        }
        let state = self.sessions.entry(child.into()).or_default();
        if state.parent.is_some() {
            return;
        }
        state.parent = Some(parent.into());
        self.sessions.entry(parent.into()).or_default().children.push(child.into());
    }

    /// A subagent session begins a run at its first traffic after its
    /// last one finished. (A top-level session's runs are its prompts.)
    fn ensure_running(&mut self, session: &str, calls: &mut dyn CallSink) {
        let state = self.session_mut(session);
        if state.parent.is_some() && !state.running {
            state.running = true;
            state.agent_content = false;
            state.last_message_id = None;
            calls.call(Some(session), Call::Start);
        }
    }

    /// A prompt (or load) begins a run of `session`; subagents still
    /// running from the last one end with it.
    fn begin_run(&mut self, session: &str, loading: bool, calls: &mut dyn CallSink) {
        self.flush(session, calls);
        self.end_children(session, FinishReason::Interrupted, calls);
        let root = self.root(session);
        self.release(&root);
        let state = self.sessions.entry(session.into()).or_default();
        state.running = true;
        state.loading = loading;
        state.agent_content = false;
        state.last_message_id = None;
        calls.call(Some(session), Call::Start);
    }

    /// The response to a prompt (or load): the run ends, with what the
    /// response said; so do the runs of the session's subagents.
    fn end_run(&mut self, session: &str, reason: FinishReason, meta: &Meta, calls: &mut dyn CallSink) {
        self.end_children(session, reason, calls);
        self.flush(session, calls);
        if !meta.is_empty() {
            calls.call(Some(session), Call::RunMeta { meta });
        }
        calls.call(Some(session), Call::Finish { reason });
        let state = self.sessions.entry(session.into()).or_default();
        state.running = false;
        state.loading = false;
        let root = self.root(session);
        if &*root == session {
            self.release(&root);
        }
    }

    /// Ends the runs of `session`'s subagents (depth first), and forgets
    /// the sessions the adapter made up for them.
    fn end_children(&mut self, session: &str, reason: FinishReason, calls: &mut dyn CallSink) {
        let children = self.sessions.get(session).map(|s| s.children.clone()).unwrap_or_default();
        for child in &children {
            self.end_children(child, reason, calls);
            self.end_child(child, reason, calls);
        }
        let made_up: Vec<Box<str>> =
            children.into_iter().filter(|c| self.sessions.get(c).is_some_and(|s| s.made_up)).collect();
        if made_up.is_empty() {
            return;
        }
        for child in &made_up {
            self.sessions.remove(child);
        }
        if let Some(state) = self.sessions.get_mut(session) {
            state.children.retain(|c| !made_up.contains(c));
        }
    }

    fn end_child(&mut self, child: &str, reason: FinishReason, calls: &mut dyn CallSink) {
        self.flush(child, calls);
        if let Some(state) = self.sessions.get_mut(child) {
            if state.running {
                state.running = false;
                calls.call(Some(child), Call::Finish { reason });
            }
        }
    }

    /// Forgets the tool calls and background tasks of a root session's
    /// run: no late result can reach them any more.
    fn release(&mut self, root: &str) {
        self.calls.remove(root);
        if !self.tasks.is_empty() {
            self.tasks.retain(|_, task| &*task.root != root);
        }
    }

    /// Appends text to a run-metadata key, sent whole by
    /// [`flush`](Self::flush).
    fn gather(&mut self, session: &str, key: &'static str, text: &str) {
        let gathering = &mut self.sessions.entry(session.into()).or_default().gathering;
        match gathering.iter_mut().find(|(k, _)| *k == key) {
            Some((_, gathered)) => gathered.push_str(text),
            None => gathering.push((Cow::Borrowed(key), text.to_owned())),
        }
    }

    /// Sends gathered text as run metadata: before anything else of the
    /// session, and before its run ends.
    fn flush(&mut self, session: &str, calls: &mut dyn CallSink) {
        let Some(state) = self.sessions.get_mut(session) else { return };
        let mut meta: Meta =
            state.gathering.drain(..).map(|(key, text)| (key.into_owned(), Value::String(text))).collect();
        if !state.compactions.is_empty() {
            let compactions = state.compactions.drain(..).map(Value::Object).collect();
            meta.insert("acp_compactions".into(), Value::Array(compactions));
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::RunMeta { meta: &meta });
        }
    }

    /// The entry of compaction `id` in the session's run.
    fn compaction(&mut self, session: &str, id: &Value) -> &mut Map<String, Value> {
        let compactions = &mut self.sessions.entry(session.into()).or_default().compactions;
        let at = match compactions.iter().position(|c| c.get("compactionId") == Some(id)) {
            Some(at) => at,
            None => {
                compactions.push(Map::from_iter([("compactionId".to_owned(), id.clone())]));
                compactions.len() - 1
            }
        };
        &mut compactions[at]
    }

    /// The prompt's text (its text blocks, joined) and its other blocks.
    fn prompt(&mut self, session: &str, prompt: &RawValue, calls: &mut dyn CallSink) {
        let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(prompt.get()) else {
            let meta = one("acp_prompt", wire::value(prompt));
            return calls.call(Some(session), Call::RunMeta { meta: &meta });
        };
        let mut others = Vec::new();
        for block in blocks {
            match ContentBlock::text(block) {
                Some(text) => self.gather(session, "acp_user_message", &text),
                None => others.push(wire::value(block)),
            }
        }
        if !others.is_empty() {
            let meta = one("acp_prompt_attachments", Value::Array(others));
            calls.call(Some(session), Call::RunMeta { meta: &meta });
        }
    }

    /// A permission request names the tool call it is about, with its
    /// latest title and input; its content is a preview for the user (a
    /// diff to approve), kept as metadata, not output.
    fn permission(
        &mut self,
        session: &str,
        tool_call: &Update<'_>,
        options: Option<&RawValue>,
        calls: &mut dyn CallSink,
    ) {
        let Some(id) = tool_call.tool_call_id.as_deref() else {
            let detail = "acp: session/request_permission without a toolCall.toolCallId";
            return report(calls, Some(session), AnomalyKind::UnknownEvent, detail);
        };
        let meta = UpdateMeta::read(tool_call.meta);
        let target = self.route(session, meta.parent_tool_use_id.as_deref(), Some(id));
        self.ensure_running(&target, calls);
        let mut asked = Meta::new();
        if let Some(options) = options {
            asked.insert("acp_permission_options".into(), wire::value(options));
        }
        if let Some(content) = tool_call.content {
            asked.insert("acp_permission_preview".into(), wire::value(content));
        }
        let declaration = Update {
            session_update: None,
            tool_call_id: tool_call.tool_call_id.clone(),
            title: tool_call.title.clone(),
            status: None,
            content: None,
            raw_input: tool_call.raw_input,
            raw_output: None,
            kind: tool_call.kind,
            locations: tool_call.locations,
            meta: None,
            message_id: None,
        };
        self.tool_call(&target, id, &declaration, meta, false, calls);
        if !asked.is_empty() && self.calls.get(&self.root(&target)).is_some_and(|c| c.contains_key(id)) {
            calls.call(Some(&target), Call::ToolMeta { id, meta: &asked });
        }
    }

    /// A `tool_call` (`declare`) or `tool_call_update` for a call of
    /// `session`.
    fn tool_call(
        &mut self,
        session: &str,
        id: &str,
        update: &Update<'_>,
        update_meta: UpdateMeta<'_>,
        declare: bool,
        calls: &mut dyn CallSink,
    ) {
        let root = self.root(session);
        let title = update.title.as_deref().unwrap_or_default();
        if let Some(state) = self.sessions.get_mut(session) {
            // A tool call ends a message: text after it is a new message.
            state.last_message_id = None;
        }
        let done = self.calls.get(&root).and_then(|c| c.get(id)).map(|c| c.done);
        if (declare && done != Some(false)) || (done.is_none() && !title.is_empty()) {
            // A declaration, or an update that names an unknown call with a
            // title (an upsert); a `tool_call` for an id that already has
            // its result declares a new call (SPEC §6).
            let state = CallState { session: session.into(), raw_input: false, output: None, done: false };
            self.calls.entry(root.clone()).or_default().insert(id.into(), state);
        }
        let content_is_arguments = self.content_is_arguments;
        let Some(state) = self.calls.get_mut(&root).and_then(|c| c.get_mut(id)) else {
            // An update for a call never declared: the machine says so.
            return self.undeclared(session, id, update, update_meta, calls);
        };
        let mut meta = update_meta.rest;
        raw_fields(
            &mut meta,
            [("kind", update.kind), ("locations", update.locations), ("rawOutput", update.raw_output)],
        );
        if state.done && !declare {
            // After the result: what changes is metadata, and a second
            // terminal a duplicate the machine reports.
            if !title.is_empty() {
                meta.insert("title".into(), title.into());
            }
            let status = terminal_status(update.status.as_deref());
            // A second terminal carries its output in the duplicate the
            // machine reports: its content, else its rawOutput.
            let mut duplicate = String::new();
            if status.is_some() {
                let rendered = update.content.and_then(render).map(|r| r.text).unwrap_or_default();
                let from_raw_output;
                (duplicate, from_raw_output) = result_text(rendered, update.raw_output);
                if from_raw_output {
                    meta.remove("rawOutput");
                }
            }
            let content = update.content.filter(|_| duplicate.is_empty());
            raw_fields(&mut meta, [("rawInput", update.raw_input), ("content", content)]);
            // Terminal output after the result has no call to go to: the
            // machine reports it with the output (SPEC rule 13), each piece.
            for (data, replace) in [(&update_meta.terminal_whole, true), (&update_meta.terminal_delta, false)] {
                if let Some(data) = data {
                    calls.call(Some(session), Call::ToolOutput { id, content: data, replace });
                }
            }
            if !meta.is_empty() {
                calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
            }
            if let Some(status) = status {
                calls.call(Some(session), Call::ToolUpdate { id, content: &duplicate, status });
            }
            return;
        }
        if declare || !title.is_empty() {
            calls.call(Some(session), Call::ToolCall { id, title, name: "" });
        }
        if let Some(raw_input) = update.raw_input {
            state.raw_input = true;
            calls.call(Some(session), Call::ArgsSnapshot { id, args: &wire::text(raw_input) });
        }
        let status = update.status.as_deref();
        let mut result: Option<String> = None;
        if let Some(content) = update.content {
            match render(content) {
                // Kimi CLI sends the arguments of a pending call without
                // rawInput as its content: a snapshot, not output.
                Some(rendered)
                    if content_is_arguments
                        && !state.raw_input
                        && matches!(status, Some("pending") | None)
                        && rendered.only_text =>
                {
                    calls.call(Some(session), Call::ArgsSnapshot { id, args: &rendered.text });
                }
                Some(rendered) => {
                    if rendered.unrendered {
                        meta.insert("content".into(), wire::value(content));
                    }
                    if !rendered.text.is_empty() {
                        state.output = Some(OutputFrom::Content);
                        result = Some(rendered.text);
                    }
                }
                None => {
                    meta.insert("content".into(), wire::value(content));
                }
            }
        }
        if let (Some(raw_output), None) = (update.raw_output, state.output) {
            let text = wire::text(raw_output);
            if raw_output.get() != "null" && !text.is_empty() {
                state.output = Some(OutputFrom::RawOutput);
                calls.call(Some(session), Call::ToolOutput { id, content: &text, replace: true });
            }
        }
        if let Some(text) = &result {
            if terminal_status(status).is_none() {
                calls.call(Some(session), Call::ToolOutput { id, content: text, replace: true });
            }
        }
        if let Some(data) = &update_meta.terminal_whole {
            state.output = Some(OutputFrom::Terminal);
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace: true });
        }
        if let Some(data) = &update_meta.terminal_delta {
            // Terminal bytes replace a rawOutput stand-in, and add to
            // earlier terminal or content output.
            let replace = state.output == Some(OutputFrom::RawOutput);
            state.output = Some(OutputFrom::Terminal);
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace });
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        match status {
            None | Some("pending" | "in_progress") => {}
            Some(other) => match terminal_status(Some(other)) {
                Some(status) => {
                    state.done = true;
                    // A terminal with content has it as its result; one
                    // without takes the live output (SPEC rule 13).
                    let content = result.unwrap_or_default();
                    calls.call(Some(session), Call::ToolUpdate { id, content: &content, status });
                }
                None => {
                    let detail = format!("acp: tool call `{id}` status `{other}`");
                    report(calls, Some(session), AnomalyKind::UnknownStatus, &detail);
                }
            },
        }
    }

    /// An update for a call the adapter never saw declared: passed on as
    /// is, so the machine reports it (`unknown_tool_call`, or
    /// `undeclared_terminal` with the result) and nothing is lost.
    fn undeclared(
        &mut self,
        session: &str,
        id: &str,
        update: &Update<'_>,
        update_meta: UpdateMeta<'_>,
        calls: &mut dyn CallSink,
    ) {
        let mut meta = update_meta.rest;
        raw_fields(
            &mut meta,
            [
                ("kind", update.kind),
                ("locations", update.locations),
                ("rawOutput", update.raw_output),
                ("rawInput", update.raw_input),
            ],
        );
        let content = update.content.and_then(render);
        if let Some(content) = update.content.filter(|_| content.as_ref().map_or(true, |r| r.unrendered)) {
            meta.insert("content".into(), wire::value(content));
        }
        for data in [&update_meta.terminal_whole, &update_meta.terminal_delta].into_iter().flatten() {
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace: false });
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        match (update.status.as_deref(), terminal_status(update.status.as_deref())) {
            (_, Some(status)) => {
                let (text, _) = result_text(content.map(|r| r.text).unwrap_or_default(), update.raw_output);
                calls.call(Some(session), Call::ToolUpdate { id, content: &text, status });
            }
            (None | Some("pending" | "in_progress"), None) => {}
            (Some(other), None) => {
                let detail = format!("acp: tool call `{id}` status `{other}`");
                report(calls, Some(session), AnomalyKind::UnknownStatus, &detail);
            }
        }
    }

    /// The updates that carry metadata of a run, a subagent or a
    /// background task, read as a whole value.
    fn metadata_update(&mut self, session: &str, kind: &str, update: &Value, calls: &mut dyn CallSink) {
        let field = |name: &str| update.get(name).cloned().unwrap_or(Value::Null);
        let text_of = |name: &str| update.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut rest = update.as_object().cloned().unwrap_or_default();
        rest.remove("sessionUpdate");
        let run_meta = |calls: &mut dyn CallSink, session: &str, key: &str, value: Value| {
            calls.call(Some(session), Call::RunMeta { meta: &one(key, value) });
        };
        match kind {
            "usage_update" => {
                if let Some(used) = update.get("used").and_then(Value::as_u64) {
                    calls.call(Some(session), Call::TokenUsage { total: used });
                }
                let mut meta = Meta::new();
                for (field, key) in [("size", "acp_context_size"), ("cost", "acp_cost"), ("_meta", "acp_usage_meta")] {
                    if let Some(value) = update.get(field) {
                        meta.insert(key.into(), value.clone());
                    }
                }
                if !meta.is_empty() {
                    calls.call(Some(session), Call::RunMeta { meta: &meta });
                }
            }
            "plan" => run_meta(calls, session, "acp_plan", field("entries")),
            "available_commands_update" => {
                run_meta(calls, session, "acp_available_commands", field("availableCommands"))
            }
            "current_mode_update" => run_meta(calls, session, "acp_mode", field("currentModeId")),
            "config_option_update" => run_meta(calls, session, "acp_config_options", field("configOptions")),
            "session_info_update" => run_meta(calls, session, "acp_session_info", Value::Object(rest)),
            "compaction_update" => {
                let id = update.get("compactionId").cloned().unwrap_or(Value::Null);
                self.compaction(session, &id).extend(rest);
            }
            "compaction_summary_chunk" => {
                match update.get("content").and_then(|c| c.get("text")).and_then(Value::as_str) {
                    Some(text) => {
                        let id = update.get("compactionId").cloned().unwrap_or(Value::Null);
                        let summary = self.compaction(session, &id).entry("summary").or_insert_with(|| "".into());
                        if let Value::String(summary) = summary {
                            summary.push_str(text);
                        }
                    }
                    None => {
                        let detail = format!("acp: {kind} with non-text content: {update}");
                        report(calls, Some(session), AnomalyKind::UnknownContent, &detail);
                    }
                }
            }
            "subagent_spawned" | "subagent_update" | "subagent_state_update" => {
                let child = text_of("subagentSessionId").or_else(|| text_of("sessionId"));
                let Some(child) = child.filter(|child| child != session) else {
                    let detail = format!("acp: {kind} without a subagent session: {update}");
                    return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
                };
                self.adopt(session, &child);
                let state = match update.get("state") {
                    Some(Value::Object(state)) => state.get("state").and_then(Value::as_str).map(str::to_owned),
                    Some(Value::String(state)) => Some(state.clone()),
                    _ => None,
                };
                rest.remove("state");
                rest.remove("sessionId");
                rest.remove("subagentSessionId");
                if state.as_deref().is_some_and(is_final_state) {
                    let state = state.unwrap_or_default();
                    if self.sessions.get(&*child).is_some_and(|s| s.running) {
                        run_meta(calls, &child, "acp_subagent_state", state.as_str().into());
                    }
                    self.end_children(&child, reason_of_state(&state), calls);
                    return self.end_child(&child, reason_of_state(&state), calls);
                }
                self.ensure_running(&child, calls);
                run_meta(calls, &child, "acp_parent_session", session.into());
                if !rest.is_empty() {
                    run_meta(calls, &child, "acp_subagent", Value::Object(rest));
                }
                if let Some(state) = state {
                    run_meta(calls, &child, "acp_subagent_state", state.into());
                }
            }
            "session_message" => {
                let recipient = text_of("recipientSessionId").unwrap_or_else(|| session.to_owned());
                let sender = text_of("senderSessionId");
                if let Some(sender) = &sender {
                    self.adopt(sender, &recipient);
                }
                self.ensure_running(&recipient, calls);
                let texts: Option<Vec<&str>> = update
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|blocks| blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect());
                let mut meta = Meta::new();
                match texts {
                    Some(texts) => meta.insert("acp_user_message".into(), texts.concat().into()),
                    None => meta.insert("acp_session_message".into(), Value::Object(rest.clone())),
                };
                if let Some(sender) = sender {
                    meta.insert("acp_message_from".into(), sender.into());
                }
                calls.call(Some(&recipient), Call::RunMeta { meta: &meta });
            }
            "async_task_spawned" => {
                let (Some(task), Some(call)) = (text_of("asyncTaskId"), text_of("toolCallId")) else {
                    let detail = format!("acp: {kind} without asyncTaskId or toolCallId: {update}");
                    return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
                };
                let target = self.route(session, None, Some(&call));
                let root = self.root(&target);
                self.tasks
                    .insert(task.into(), TaskOf { root, session: target.as_ref().into(), call: call.as_str().into() });
                let meta = one("acp_async_task", Value::Object(rest));
                calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
            }
            "async_task_progress" | "async_task_state_update" => {
                let task_id = text_of("asyncTaskId").unwrap_or_default();
                let Some(task) = self.tasks.get(task_id.as_str()) else {
                    let detail = format!("acp: {kind} for a background task not seen spawned: {update}");
                    return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
                };
                let (target, call) = (task.session.clone(), task.call.clone());
                rest.remove("asyncTaskId");
                let root = self.root(&target);
                let running = self.calls.get(&root).and_then(|c| c.get(&*call)).is_some_and(|c| !c.done);
                if kind == "async_task_progress" {
                    // A running task's progress is its call's live output;
                    // after the call's result, it is metadata.
                    if let (true, Some(summary)) = (running, text_of("summary")) {
                        calls.call(Some(&target), Call::ToolOutput { id: &call, content: &summary, replace: true });
                    }
                    let meta = one("acp_async_task_progress", Value::Object(rest));
                    calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
                } else {
                    let finished = text_of("state").as_deref().is_some_and(is_final_state);
                    let meta = one("acp_async_task_state", Value::Object(rest));
                    calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
                    if finished {
                        self.tasks.remove(task_id.as_str());
                    }
                }
            }
            other => {
                let detail = format!("acp: sessionUpdate `{other}`: {update}");
                report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
            }
        }
    }
}

/// The whole update of a line as a value, for the kinds read that way.
fn whole_update(payload: &[u8], bare: bool) -> Value {
    let Ok(mut line) = serde_json::from_slice::<Value>(payload) else { return Value::Null };
    let update = if bare { line.get_mut("update") } else { line.pointer_mut("/params/update") };
    update.map(Value::take).unwrap_or(Value::Null)
}

/// Raw fields an update has, as metadata under their own names.
fn raw_fields<const N: usize>(meta: &mut Meta, fields: [(&str, Option<&RawValue>); N]) {
    for (field, raw) in fields {
        if let Some(raw) = raw {
            meta.insert(field.into(), wire::value(raw));
        }
    }
}

/// What an update carries as a tool's result, for the machine to report
/// when it cannot be the result (a duplicate, an undeclared call): its
/// rendered content, else its `rawOutput` as text; and whether it is the
/// `rawOutput`.
fn result_text(rendered: String, raw_output: Option<&RawValue>) -> (String, bool) {
    match raw_output.filter(|_| rendered.is_empty()) {
        Some(raw) => (wire::text(raw).into_owned(), true),
        None => (rendered, false),
    }
}

fn terminal_status(status: Option<&str>) -> Option<ToolCallStatus> {
    match status {
        Some("completed") => Some(ToolCallStatus::Completed),
        Some("failed") => Some(ToolCallStatus::Failed),
        _ => None,
    }
}
