//! The deepwork adapter: deepwork `Event`s in, as JSON lines, SSE frames, or
//! native transcripts whose `progress` lines carry the Event in
//! `workstream`. (The way out, live UI events as deepwork Events, is the
//! `deepwork` encoder.)
//!
//! ```
//! use roundup::adapters::{deepwork::DeepworkAdapter, Adapter};
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut deepwork = DeepworkAdapter::new();
//! let event = br#"{"kind":"text","content":"Hi"}"#;
//! deepwork.translate(event, &mut |_: Option<&str>, call: Call<'_>| builder.call(call)).unwrap();
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "Hi");
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{raw_text, raw_text_in, raw_value, utf8};
use super::support::{
    at_path, id_text, json_text, one, output_text, parse_event, report, rfc3339_ms, text_field, EventCounts,
};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::HashMap;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of deepwork Events and transcripts.
///
/// ```
/// let deepwork = &roundup::adapters::deepwork::FORMAT;
/// assert_eq!(roundup::adapters::InputFormat::detect(br#"{"kind":"text","content":"Hi"}"#), deepwork);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "deepwork",
    about: "deepwork Events, or deepwork transcripts
(progress lines carry the Event in
workstream); source keys the session",
    detect: |event: &Map<String, Value>| {
        event.get("kind").is_some_and(Value::is_string)
            || event.contains_key("workstream")
            || event.contains_key("deepworkSessionId")
    },
    adapter: || Box::<DeepworkAdapter>::default(),
};

/// Translates deepwork Events (or transcript lines) into calls.
///
/// ```
/// use roundup::adapters::deepwork::DeepworkAdapter;
/// use roundup::Call;
///
/// let mut deepwork = DeepworkAdapter::new();
/// let mut sessions = Vec::new();
/// let event = serde_json::json!({"kind": "text", "content": "Hi", "source": "worker-1"});
/// deepwork.line(&event, &mut |session: Option<&str>, _: Call<'_>| sessions.push(session.map(str::to_owned)));
/// assert_eq!(sessions, [Some("worker-1".to_owned())]);
/// ```
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DeepworkAdapter {
    /// Per session: `status` events counted, by status.
    #[serde(with = "crate::pairs")]
    statuses: HashMap<Option<String>, EventCounts>,
    /// Where an escaped text fragment is decoded (reused: not state).
    #[serde(skip)]
    scratch: String,
}

impl Adapter for DeepworkAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        // The events of a stream (text, reasoning, tool starts and results,
        // usage, live output) decode into a view borrowed from the line;
        // the rest (transcript lines, statuses, ends, errors, odd shapes)
        // take the general path over a `Value`.
        if let Ok(text) = utf8(payload) {
            let mut event = FastEvent::default();
            if FastEvent::read_into(text, &mut event).is_ok() && self.fast(&event, calls) {
                return Ok(());
            }
        }
        let line = parse_event(payload)?;
        if let Some(at_ms) = event_time_ms(&line) {
            calls.clock(at_ms);
        }
        self.line(&line, calls);
        Ok(())
    }
}

/// A deepwork Event as the fast path reads it: the fields of the frequent
/// kinds, borrowed from the line, read in place (the view is some 300
/// bytes, which a derived read copies some five times a line).
#[derive(Debug, Default)]
struct FastEvent<'a> {
    kind: Option<Cow<'a, str>>,
    source: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    tool: Option<FastTool<'a>>,
    meta: Option<Raw<'a>>,
    usage: Option<FastUsage>,
    status: Option<Cow<'a, str>>,
    replace: Option<bool>,
    /// A transcript line: the general path reads it.
    timestamp: Option<Raw<'a>>,
}

read_in_place!(FastEvent {
    "kind" => kind as OptCow,
    "source" => source as ScalarText,
    "content" => content,
    "tool" => tool in place,
    "meta" => meta,
    "usage" => usage,
    "status" => status as OptCow,
    "replace" => replace,
    "timestamp" => timestamp,
});

#[derive(Debug, Default)]
struct FastTool<'a> {
    id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    input: Option<Raw<'a>>,
    output: Option<Raw<'a>>,
    is_error: Option<bool>,
    duration_ms: Option<Raw<'a>>,
}

read_in_place!(FastTool {
    "id" => id as ScalarText,
    "name" => name as ScalarText,
    "input" => input,
    "output" => output,
    "is_error" => is_error,
    "duration_ms" => duration_ms,
});

#[derive(Debug, Deserialize)]
struct FastUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

scan_by_serde!(FastUsage);

/// The clock reading of a line: a transcript's `timestamp`, else the
/// Event's `meta.ts` (unix milliseconds or RFC 3339).
fn event_time_ms(line: &Value) -> Option<u64> {
    let stamp = line.get("timestamp").or_else(|| at_path(line, &["meta", "ts"]))?;
    match stamp {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => rfc3339_ms(s),
        _ => None,
    }
}

impl DeepworkAdapter {
    /// An adapter with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The frequent kinds, from the borrowed view; `false` for what the
    /// general path must read (another kind, a transcript line, a shape the
    /// view does not hold, a clock stamp in `meta`).
    fn fast(&mut self, event: &FastEvent<'_>, calls: &mut dyn CallSink) -> bool {
        if event.timestamp.is_some() {
            return false;
        }
        if let Some(meta) = event.meta.filter(|meta| meta.get().contains("\"ts\"")) {
            #[derive(Deserialize)]
            struct Stamp<'a> {
                #[serde(borrow, default)]
                ts: Option<Raw<'a>>,
            }
            let stamp = serde_json::from_str::<Stamp<'_>>(meta.get()).ok().and_then(|stamp| stamp.ts);
            if let Some(at_ms) = stamp.and_then(|ts| match raw_text(ts) {
                text if ts.get().starts_with('"') => rfc3339_ms(&text),
                text => text.parse().ok(),
            }) {
                calls.clock(at_ms);
            }
        }
        let session = event.source.as_deref().filter(|s| !s.is_empty());
        let tool = event.tool.as_ref();
        let id = tool.and_then(|t| t.id.as_deref()).unwrap_or("");
        match event.kind.as_deref() {
            Some(kind @ ("text" | "thinking")) => {
                let text = match event.content {
                    None => "",
                    Some(raw) if raw.get() == "null" => "",
                    Some(raw) if raw.get().starts_with('"') => raw_text_in(raw, &mut self.scratch),
                    // Rich content: the general path reports it.
                    Some(_) => return false,
                };
                if kind == "text" {
                    calls.call(session, Call::Message { text });
                } else {
                    calls.call(session, Call::Thought { text });
                }
            }
            Some("tool_start") => {
                let name = tool.and_then(|t| t.name.as_deref()).unwrap_or("");
                calls.call(session, Call::ToolCall { id, title: name, name });
                if let Some(input) = tool.and_then(|t| t.input) {
                    calls.call(session, Call::ArgsSnapshot { id, args: &raw_text(input) });
                }
                let duration = tool.and_then(|t| t.duration_ms).map(raw_value);
                tool_meta(event.meta.map(raw_value), duration, session, id, calls);
            }
            Some("tool_result") => {
                let duration = tool.and_then(|t| t.duration_ms).map(raw_value);
                tool_meta(event.meta.map(raw_value), duration, session, id, calls);
                let failed = tool.and_then(|t| t.is_error) == Some(true);
                let output =
                    tool.and_then(|t| t.output).filter(|o| o.get() != "null").map(raw_text).unwrap_or_default();
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                calls.call(session, Call::ToolUpdate { id, content: &output, status });
            }
            Some("usage") => {
                let Some(usage) = &event.usage else { return false };
                let input = [usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens]
                    .into_iter()
                    .flatten()
                    .reduce(u64::saturating_add);
                let Some(total) = input.or(usage.total_tokens) else { return false };
                calls.call(session, Call::TokenUsage { total });
            }
            Some("status") if event.status.as_deref() == Some("tool_output") && !id.is_empty() => {
                let content = event.content.filter(|c| c.get() != "null").map(raw_text).unwrap_or_default();
                let replace = event.replace == Some(true);
                calls.call(session, Call::ToolOutput { id, content: &content, replace });
            }
            _ => return false,
        }
        true
    }

    /// Translates one line already parsed: a deepwork Event, or a
    /// transcript line (whose `progress` lines carry the Event in
    /// `workstream`, and whose `user` lines begin a new run). Its time
    /// stamp is not read as a clock reading here: [`Adapter::translate`]
    /// does that.
    pub fn line(&mut self, line: &Value, calls: &mut dyn CallSink) {
        if line.get("kind").is_some() {
            return self.event(line, None, calls);
        }
        let transcript_session = line.get("sessionId").and_then(Value::as_str);
        match line.get("type").and_then(Value::as_str) {
            Some("progress") => match line.get("workstream") {
                Some(event) => self.event(event, transcript_session, calls),
                None => report(
                    calls,
                    transcript_session,
                    AnomalyKind::UnknownEvent,
                    &format!("deepwork: progress line without workstream: {line}"),
                ),
            },
            Some("user") => {
                calls.call(transcript_session, Call::Start);
                let text = at_path(line, &["message", "content"]).cloned().unwrap_or(Value::Null);
                let meta = one("deepwork_user_message", text);
                calls.call(transcript_session, Call::RunMeta { meta: &meta });
            }
            _ => report(
                calls,
                transcript_session,
                AnomalyKind::UnknownEvent,
                &format!("deepwork: line of unknown type: {line}"),
            ),
        }
    }

    fn event(&mut self, event: &Value, transcript_session: Option<&str>, calls: &mut dyn CallSink) {
        // Multi-source attribution keys the session.
        let source = event.get("source").map(|source| id_text(Some(source))).filter(|s| !s.is_empty());
        let session = source.as_deref().or(transcript_session);
        let kind = event.get("kind").and_then(Value::as_str).unwrap_or_default();
        let text = |field: &str| event.get(field).and_then(Value::as_str).unwrap_or_default();
        let tool = |field: &str| at_path(event, &["tool", field]);
        let id = id_text(tool("id"));
        let id = id.as_ref();
        match kind {
            "text" | "thinking" => match text_field(event, "content") {
                Ok(text) if kind == "text" => calls.call(session, Call::Message { text }),
                Ok(text) => calls.call(session, Call::Thought { text }),
                Err(_) => {
                    let detail = format!("deepwork: {kind} whose content is not a string: {event}");
                    report(calls, session, AnomalyKind::UnknownContent, &detail)
                }
            },
            "tool_start" => {
                let name = id_text(tool("name"));
                let name = name.as_ref();
                // A repeated tool_start for the same id is an update: the
                // declaration upserts, the input replaces.
                calls.call(session, Call::ToolCall { id, title: name, name });
                if let Some(input) = tool("input") {
                    calls.call(session, Call::ArgsSnapshot { id, args: &json_text(input) });
                }
                let duration = at_path(event, &["tool", "duration_ms"]).cloned();
                tool_meta(event.get("meta").cloned(), duration, session, id, calls);
            }
            "tool_result" => {
                let duration = at_path(event, &["tool", "duration_ms"]).cloned();
                tool_meta(event.get("meta").cloned(), duration, session, id, calls);
                let failed = tool("is_error").and_then(Value::as_bool) == Some(true);
                let output = output_text(tool("output"));
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                calls.call(session, Call::ToolUpdate { id, content: &output, status });
            }
            "usage" => match usage_total(event) {
                Some(total) => calls.call(session, Call::TokenUsage { total }),
                None => report(
                    calls,
                    session,
                    AnomalyKind::UnknownEvent,
                    &format!("deepwork: usage without a token count: {event}"),
                ),
            },
            "done" => {
                if let Some(meta) = event.get("meta") {
                    let meta = one("deepwork_done", meta.clone());
                    calls.call(session, Call::RunMeta { meta: &meta });
                }
                let reason = event.get("reason").or_else(|| event.get("status")).and_then(Value::as_str);
                let reason = match reason {
                    Some("cancel" | "canceled" | "cancelled") => FinishReason::Canceled,
                    Some("error" | "failed" | "failure") => FinishReason::Failed,
                    Some("interrupted") => FinishReason::Interrupted,
                    // A run that says it is done, without a reason or with
                    // another (`complete`, `stop`): a normal end.
                    _ => FinishReason::Completed,
                };
                calls.call(session, Call::Finish { reason });
            }
            "error" => report(calls, session, AnomalyKind::ProtocolError, &format!("deepwork: error: {event}")),
            // roundup's own deepwork output sends live tool output this way.
            "status" if text("status") == "tool_output" && !id.is_empty() => {
                let replace = event.get("replace").and_then(Value::as_bool) == Some(true);
                let content = output_text(event.get("content"));
                calls.call(session, Call::ToolOutput { id, content: &content, replace });
            }
            "status" => {
                let statuses = self.statuses.entry(session.map(str::to_owned)).or_default();
                statuses.count("deepwork_statuses", text("status"), session, calls);
                // The latest status whole, with its meta: what a view of the
                // run would show now.
                let mut latest = event.as_object().cloned().unwrap_or_default();
                latest.remove("kind");
                let meta = one("deepwork_status", Value::Object(latest));
                calls.call(session, Call::RunMeta { meta: &meta });
            }
            "raw" => report(calls, session, AnomalyKind::UnknownEvent, &format!("deepwork: raw event: {event}")),
            other => {
                report(calls, session, AnomalyKind::UnknownEvent, &format!("deepwork: event kind `{other}`: {event}"))
            }
        }
    }
}

/// Keeps a tool event's `meta` and `duration_ms` with the tool call (from
/// either path: the borrowed view gives them as raw values).
fn tool_meta(
    meta: Option<Value>,
    duration_ms: Option<Value>,
    session: Option<&str>,
    id: &str,
    calls: &mut dyn CallSink,
) {
    let kept: Meta = [("deepwork_meta", meta), ("duration_ms", duration_ms)]
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect();
    if !kept.is_empty() {
        calls.call(session, Call::ToolMeta { id, meta: &kept });
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
        .reduce(u64::saturating_add);
    input.or_else(|| field("total_tokens"))
}
