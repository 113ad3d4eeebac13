//! The deepwork adapter: deepwork `Event`s in (JSON lines, SSE frames, or
//! native transcripts whose `progress` lines carry the Event in
//! `workstream`), and live UI events out as deepwork Events
//! (`roundup replay --emit deepwork`).
//!
//! ```
//! use roundup::deepwork::DeepworkTranslator;
//! use roundup::{Call, RoundBuilder};
//!
//! let builder = RoundBuilder::new();
//! let mut deepwork = DeepworkTranslator::new();
//! let event = serde_json::json!({"kind": "text", "content": "Hi"});
//! deepwork.translate(&event, &mut |_, call: Call<'_>| call.apply(&builder));
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "Hi");
//! ```

use std::collections::HashMap;

use serde_json::{json, Value};

pub use crate::adapter::Emit;
use crate::adapter::{at_path, one, report};
use crate::anomaly::AnomalyKind;
use crate::call::Call;
use crate::handler::{FinishReason, ToolCallStatus};
use crate::round::Meta;
use crate::uagent::parse_rfc3339;
use crate::ui::UiEvent;

/// Translates deepwork Events (or transcript lines) into calls.
#[derive(Debug, Default)]
pub struct DeepworkTranslator {
    /// Per session: `status` events counted, by status.
    statuses: HashMap<Option<String>, Meta>,
}

impl DeepworkTranslator {
    /// A translator with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The clock reading of a line: a transcript's `timestamp`, else the
    /// Event's `meta.ts` (unix milliseconds or RFC 3339).
    pub fn event_time_ms(line: &Value) -> Option<u64> {
        let stamp = line.get("timestamp").or_else(|| at_path(line, &["meta", "ts"]))?;
        match stamp {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => u64::try_from(parse_rfc3339(s)? / 1_000_000).ok(),
            _ => None,
        }
    }

    /// Translates one line: a deepwork Event, or a transcript line (whose
    /// `progress` lines carry the Event in `workstream`, and whose `user`
    /// lines begin a new run).
    pub fn translate(&mut self, line: &Value, emit: &mut Emit<'_>) {
        if line.get("kind").is_some() {
            return self.event(line, None, emit);
        }
        let transcript_session = line.get("sessionId").and_then(Value::as_str);
        match line.get("type").and_then(Value::as_str) {
            Some("progress") => match line.get("workstream") {
                Some(event) => self.event(event, transcript_session, emit),
                None => report(
                    emit,
                    transcript_session,
                    AnomalyKind::UnknownEvent,
                    format!("deepwork: progress line without workstream: {line}"),
                ),
            },
            Some("user") => {
                emit(transcript_session, Call::Start);
                let text = at_path(line, &["message", "content"]).cloned().unwrap_or(Value::Null);
                let meta = one("deepwork_user_message", text);
                emit(transcript_session, Call::RunMeta { meta: &meta });
            }
            _ => report(
                emit,
                transcript_session,
                AnomalyKind::UnknownEvent,
                format!("deepwork: line of unknown type: {line}"),
            ),
        }
    }

    fn event(&mut self, event: &Value, transcript_session: Option<&str>, emit: &mut Emit<'_>) {
        // Multi-source attribution keys the session.
        let session = event.get("source").and_then(Value::as_str).or(transcript_session);
        let kind = event.get("kind").and_then(Value::as_str).unwrap_or_default();
        let text = |field: &str| event.get(field).and_then(Value::as_str).unwrap_or_default();
        let tool = |field: &str| at_path(event, &["tool", field]);
        match kind {
            "text" => emit(session, Call::Message { text: text("content") }),
            "thinking" => emit(session, Call::Thought { text: text("content") }),
            "tool_start" => {
                let id = tool("id").and_then(Value::as_str).unwrap_or_default();
                let name = tool("name").and_then(Value::as_str).unwrap_or_default();
                // A repeated tool_start for the same id is an update: the
                // declaration upserts, the input replaces.
                emit(session, Call::ToolCall { id, title: name });
                if let Some(input) = tool("input") {
                    let args = match input {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    emit(session, Call::ArgsSnapshot { id, args: &args });
                }
                tool_meta(event, session, id, emit);
            }
            "tool_result" => {
                let id = tool("id").and_then(Value::as_str).unwrap_or_default();
                tool_meta(event, session, id, emit);
                let failed = tool("is_error").and_then(Value::as_bool) == Some(true);
                let output = match tool("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                };
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                emit(session, Call::ToolUpdate { id, content: &output, status });
            }
            "usage" => match usage_total(event) {
                Some(total) => emit(session, Call::TokenUsage { total }),
                None => report(
                    emit,
                    session,
                    AnomalyKind::UnknownEvent,
                    format!("deepwork: usage without a token count: {event}"),
                ),
            },
            "done" => {
                if let Some(meta) = event.get("meta") {
                    let meta = one("deepwork_done", meta.clone());
                    emit(session, Call::RunMeta { meta: &meta });
                }
                let reason = event.get("reason").or_else(|| event.get("status")).and_then(Value::as_str);
                let canceled = matches!(reason, Some("cancel" | "canceled" | "cancelled"));
                let reason = if canceled { FinishReason::Canceled } else { FinishReason::Interrupted };
                emit(session, Call::Finish { reason });
            }
            "error" => {
                let detail = format!("deepwork: error: {event}");
                emit(session, Call::Anomaly { kind: AnomalyKind::ProtocolError, id: None, detail: &detail });
            }
            "status" => {
                let statuses = self.statuses.entry(session.map(str::to_owned)).or_default();
                let status = text("status");
                let count = statuses.get(status).and_then(Value::as_u64).unwrap_or(0);
                statuses.insert(status.to_owned(), (count + 1).into());
                let meta = one("deepwork_statuses", Value::Object(statuses.clone()));
                emit(session, Call::RunMeta { meta: &meta });
            }
            "raw" => report(emit, session, AnomalyKind::UnknownEvent, format!("deepwork: raw event: {event}")),
            other => {
                report(emit, session, AnomalyKind::UnknownEvent, format!("deepwork: event kind `{other}`: {event}"))
            }
        }
    }
}

/// Keeps a tool event's `meta` and `duration_ms` with the tool call.
fn tool_meta(event: &Value, session: Option<&str>, id: &str, emit: &mut Emit<'_>) {
    let mut meta = Meta::new();
    if let Some(value) = event.get("meta") {
        meta.insert("deepwork_meta".to_owned(), value.clone());
    }
    if let Some(value) = at_path(event, &["tool", "duration_ms"]) {
        meta.insert("duration_ms".to_owned(), value.clone());
    }
    if !meta.is_empty() {
        emit(session, Call::ToolMeta { id, meta: &meta });
    }
}

/// The context-window occupancy of a `usage` event: its input tokens,
/// cached ones included (that is what fills the window; output tokens of
/// the turn are not counted), or a `total_tokens` when that is all there is.
fn usage_total(event: &Value) -> Option<u64> {
    let usage = event.get("usage").unwrap_or(event);
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let input = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
        .iter()
        .filter_map(|name| field(name))
        .reduce(|a, b| a + b);
    input.or_else(|| field("total_tokens"))
}

/// Turns live UI events into deepwork Events, the form deepwork clients
/// consume, stamping each with `meta.seq` and `meta.ts`.
///
/// ```
/// use roundup::deepwork::DeepworkEmitter;
/// use roundup::UiEvent;
///
/// let mut emitter = DeepworkEmitter::new();
/// let event = emitter.event(&UiEvent::MessageDelta { text: "Hi" }, 1_000).unwrap();
/// assert_eq!(event, serde_json::json!({"kind": "text", "content": "Hi", "meta": {"seq": 0, "ts": 1000}}));
/// ```
#[derive(Debug, Default)]
pub struct DeepworkEmitter {
    seq: u64,
    /// Per tool call: its name and the arguments shown so far, since a
    /// deepwork `tool_start` carries the whole input.
    tools: HashMap<String, (String, String)>,
}

impl DeepworkEmitter {
    /// An emitter counting from `seq` 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The deepwork Event for a UI event at clock reading `ts_ms`; `None`
    /// for UI events deepwork has no Event for (starts and ends of text,
    /// round ends).
    pub fn event(&mut self, event: &UiEvent<'_>, ts_ms: u64) -> Option<Value> {
        let mut out = match *event {
            UiEvent::MessageDelta { text } => json!({"kind": "text", "content": text}),
            UiEvent::ThoughtDelta { text } => json!({"kind": "thinking", "content": text}),
            UiEvent::ToolCallStart { id, title } => {
                self.tools.insert(id.to_owned(), (title.to_owned(), String::new()));
                self.tool_start(id)
            }
            UiEvent::ToolCallTitle { id, title } => {
                self.tools.entry(id.to_owned()).or_default().0 = title.to_owned();
                self.tool_start(id)
            }
            UiEvent::ToolCallArgs { id, args, replace } => {
                let shown = &mut self.tools.entry(id.to_owned()).or_default().1;
                if replace {
                    shown.clear();
                }
                shown.push_str(args);
                self.tool_start(id)
            }
            UiEvent::ToolCallResult { id, content, success }
            | UiEvent::ToolCallStitched { id, content, success, .. } => {
                let name = self.tools.get(id).map(|t| t.0.clone()).unwrap_or_default();
                json!({"kind": "tool_result", "tool": {"id": id, "name": name, "output": content, "is_error": !success}})
            }
            UiEvent::ToolCallInterrupted { id, reason } => {
                let name = self.tools.get(id).map(|t| t.0.clone()).unwrap_or_default();
                let output = format!("no result: {}", reason.as_str());
                json!({"kind": "tool_result", "tool": {"id": id, "name": name, "output": output, "is_error": true}})
            }
            UiEvent::TokenUsage { total } => json!({"kind": "usage", "usage": {"input_tokens": total}}),
            UiEvent::MessageStart
            | UiEvent::MessageEnd
            | UiEvent::ThoughtStart
            | UiEvent::ThoughtEnd
            | UiEvent::ToolCallEnd { .. }
            | UiEvent::RoundEnd { .. } => return None,
        };
        out["meta"] = json!({"seq": self.seq, "ts": ts_ms});
        self.seq += 1;
        Some(out)
    }

    /// A `tool_start` with the whole input shown so far (JSON when it
    /// parses, else the text).
    fn tool_start(&self, id: &str) -> Value {
        let (name, args) = self.tools.get(id).cloned().unwrap_or_default();
        let input = serde_json::from_str::<Value>(&args).unwrap_or(Value::String(args));
        json!({"kind": "tool_start", "tool": {"id": id, "name": name, "input": input}})
    }
}
