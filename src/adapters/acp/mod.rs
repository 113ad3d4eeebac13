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
//!   client and agent number their requests independently (`rpc.rs`);
//! - per session: whether a run is going on, a subagent's parent, text
//!   being gathered for run metadata, and the ids of the tool calls of the
//!   machine's open round, with or without their result, so that a
//!   `tool_call` for one of them is read as the machine reads it
//!   (`sessions.rs`);
//! - per tool call of the current run: the session it was declared in (a
//!   call's session is fixed at its declaration), whether it has
//!   `rawInput`, output or its result (`tool_call.rs`). Released when the
//!   run ends, since a late result can reach the call until then and
//!   nothing after.
//!
//! This file reads a line and hands each `sessionUpdate` kind to its
//! handler; the updates that carry only metadata are `metadata.rs`, the
//! line's typed views `wire.rs`, a tool's content as text `render.rs`.
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

use std::collections::BTreeMap;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::borrowed::utf8;
use super::support::{one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::HashMap;
use crate::model::AnomalyKind;

mod metadata;
mod render;
mod rpc;
mod sessions;
mod tool_call;
mod wire;

use rpc::{AgentRequest, ClientRequest};
use sessions::SessionState;
use tool_call::{CallState, TaskOf};
use wire::{ContentBlock, Message, Update, UpdateKind, UpdateMeta};

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
///
/// Its state is what a checkpoint saves; the maps are written sorted by
/// key, so that the same state is always the same bytes (a store can skip
/// writing a checkpoint that did not change).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AcpAdapter {
    /// The client's requests awaiting a response, by id as sent.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    client_requests: HashMap<Box<str>, ClientRequest>,
    /// The agent's requests awaiting a response, by id as sent.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    agent_requests: HashMap<Box<str>, AgentRequest>,
    /// Every session seen, subagents' included, by name.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    sessions: HashMap<Box<str>, SessionState>,
    /// The tool calls of the current runs, by root session, then by id.
    #[serde(serialize_with = "sorted_twice")]
    calls: HashMap<Box<str>, HashMap<Box<str>, CallState>>,
    /// Background tasks (`async_task_*`) by id: the tool call they run for.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    tasks: HashMap<Box<str>, TaskOf>,
    /// The agent sends a pending call's arguments as its content (Kimi CLI,
    /// known from the `initialize` response's `agentInfo`).
    content_is_arguments: bool,
}

/// Writes a map of maps sorted by key, at both levels.
fn sorted_twice<V: Serialize, S: Serializer>(
    map: &HashMap<Box<str>, HashMap<Box<str>, V>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let sorted: BTreeMap<&str, BTreeMap<&str, &V>> =
        map.iter().map(|(key, map)| (&**key, map.iter().map(|(key, value)| (&**key, value)).collect())).collect();
    sorted.serialize(serializer)
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
        let mut message = Message::default();
        Message::read_into(text, &mut message).map_err(|error| BadLine::json(&error))?;
        let is_acp = message.jsonrpc.is_some()
            || message.method.is_some()
            || (message.id.is_some() && (message.result.is_some() || message.error.is_some()))
            || (message.session_id.is_some() && message.update.is_some());
        if !is_acp {
            return Err(BadLine::new("not an ACP message: neither JSON-RPC nor a SessionNotification"));
        }
        self.dispatch(&message, payload, calls);
        Ok(())
    }

    /// Sends the text still being gathered (a prompt's chunks in a capture
    /// that ends before its response).
    fn end(&mut self, calls: &mut dyn CallSink) {
        let mut gathering: Vec<Box<str>> =
            self.sessions.iter().filter(|(_, s)| s.has_gathered()).map(|(name, _)| name.clone()).collect();
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
        let members: Vec<Raw<'_>> = serde_json::from_slice(payload).map_err(|error| BadLine::json(&error))?;
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

    /// A request (or notification) by its method, a response by its id,
    /// a bare `SessionNotification` by its session.
    fn dispatch(&mut self, message: &Message<'_>, payload: &[u8], calls: &mut dyn CallSink) {
        let id = message.id.map(|id| Box::<str>::from(id.get()));
        match (message.method.as_deref(), id) {
            (Some(method), id) => self.request(method, id, message.params.as_ref(), payload, calls),
            (None, Some(id)) if message.result.is_some() || message.error.is_some() => {
                self.response(id, message.result, message.error, calls)
            }
            (None, _) => match (&message.session_id, &message.update) {
                (Some(session), Some(update)) => self.notification(session, update, payload, true, calls),
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

    /// A `session/update` (or a bare notification) for `session`, by its
    /// kind. `bare` says where the update is in the line, for the kinds
    /// read again whole.
    fn notification(
        &mut self,
        session: &str,
        update: &Update<'_>,
        payload: &[u8],
        bare: bool,
        calls: &mut dyn CallSink,
    ) {
        let kind = update.session_update.as_ref().unwrap_or(&UpdateKind::MISSING);
        let meta = UpdateMeta::read(update.meta.as_ref(), || {
            crate::utf8::from_utf8(payload).ok().and_then(|line| wire::raw_meta(line, bare)).map(wire::value)
        });
        match kind {
            UpdateKind::AgentMessageChunk | UpdateKind::AgentThoughtChunk => {
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), None);
                self.link(&target, meta.parent_tool_use_id.as_deref(), calls);
                self.ensure_running(&target, calls);
                let state = self.session_mut(&target);
                state.saw_agent_content();
                let Some(text) = update.content.and_then(ContentBlock::text) else {
                    let content = update.content.map_or("null", Raw::get);
                    let detail = format!("acp: {} with non-text content: {content}", kind.name());
                    return report(calls, Some(&target), AnomalyKind::UnknownContent, &detail);
                };
                state.round.text(&text);
                match kind {
                    UpdateKind::AgentMessageChunk => calls.call(Some(&target), Call::Message { text: &text }),
                    _ => calls.call(Some(&target), Call::Thought { text: &text }),
                }
                if let Some(message_id) = update.message_id.as_deref() {
                    if state.last_message_id.as_deref() != Some(message_id) {
                        state.last_message_id = Some(message_id.into());
                        let meta = one("acp_message_ids", Value::Array(vec![message_id.into()]));
                        calls.call(Some(&target), Call::RoundMeta { meta: &meta });
                    }
                }
            }
            UpdateKind::UserMessageChunk => {
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), None);
                // In a session/load replay, the user's next prompt after
                // agent content begins the next run.
                if self.session_mut(&target).replay_cut() {
                    self.begin_run(&target, true, calls);
                }
                match update.content.and_then(ContentBlock::text) {
                    Some(text) => self.gather(&target, "acp_user_message", &text),
                    None => {
                        let content = update.content.map_or("null", Raw::get);
                        let detail = format!("acp: {} with non-text content: {content}", kind.name());
                        report(calls, Some(&target), AnomalyKind::UnknownContent, &detail);
                    }
                }
            }
            UpdateKind::ToolCall | UpdateKind::ToolCallUpdate => {
                let Some(id) = update.tool_call_id.as_deref() else {
                    let name = kind.name();
                    let detail = format!("acp: {name} without a toolCallId: {}", String::from_utf8_lossy(payload));
                    return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
                };
                let target = self.route(session, meta.parent_tool_use_id.as_deref(), Some(id));
                self.link(&target, meta.parent_tool_use_id.as_deref(), calls);
                self.ensure_running(&target, calls);
                self.tool_call(&target, id, update, meta, *kind == UpdateKind::ToolCall, calls);
            }
            UpdateKind::Metadata(kind) => {
                let whole = whole_update(payload, bare);
                self.metadata_update(session, *kind, &whole, calls);
            }
            UpdateKind::Unknown(name) => {
                // Kept whole: what a later version of the protocol adds is
                // reported, never dropped.
                let whole = whole_update(payload, bare);
                let detail = format!("acp: sessionUpdate `{name}`: {whole}");
                report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
            }
        }
    }
}

/// The whole update of a line as a value, for the kinds read that way
/// (`bare`: a `SessionNotification`, else a `session/update` request).
fn whole_update(payload: &[u8], bare: bool) -> Value {
    let Ok(mut line) = serde_json::from_slice::<Value>(payload) else { return Value::Null };
    let update = if bare { line.get_mut("update") } else { line.pointer_mut("/params/update") };
    update.map(Value::take).unwrap_or(Value::Null)
}
