//! The live UI events as deepwork Events, the form deepwork clients consume:
//! each stamped with `meta.seq` (counted per session) and `meta.ts`, and
//! with `source` naming the session.
//!
//! A deepwork `tool_start` carries the whole input, so every argument delta
//! re-sends the input shown so far. Live tool output, which deepwork has no
//! event for, goes out as a `status` event (`"status": "tool_output"`, with
//! `tool`, `content` and `replace`); a run's end as `done` with its reason.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::UiEvent;
//!
//! let mut encoder = OutputFormat::named("deepwork").unwrap().encoder();
//! let mut out = Frames::new(Framing::Lines);
//! encoder.ui_event(None, &UiEvent::MessageDelta { text: "Hi" }, 1_000, &mut out);
//! let event: serde_json::Value = serde_json::from_slice(out.bytes()).unwrap();
//! assert_eq!(event, serde_json::json!({"kind": "text", "content": "Hi", "meta": {"seq": 0, "ts": 1000}}));
//! ```

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::ui::UiEvent;
use crate::wire;

/// The registry row of deepwork Events.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::named("deepwork"), Some(&roundup::encoders::deepwork::FORMAT));
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "deepwork",
    about: "the live UI events as deepwork Events, with
meta.seq, meta.ts, and source = the session",
    encoder: || Box::<DeepworkEncoder>::default(),
};

/// Writes UI events as deepwork Events, one numbering per session.
///
/// ```
/// use roundup::encoders::{deepwork::DeepworkEncoder, Encoder, Framing, Frames};
/// use roundup::UiEvent;
///
/// let mut encoder = DeepworkEncoder::default();
/// let mut out = Frames::new(Framing::Lines);
/// encoder.ui_event(Some("a"), &UiEvent::MessageDelta { text: "x" }, 5, &mut out);
/// encoder.ui_event(Some("b"), &UiEvent::MessageDelta { text: "y" }, 6, &mut out);
/// // Each session counts its own `meta.seq`.
/// let seqs: Vec<u64> = std::str::from_utf8(out.bytes()).unwrap().lines()
///     .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["meta"]["seq"].as_u64().unwrap())
///     .collect();
/// assert_eq!(seqs, [0, 0]);
/// ```
#[derive(Debug, Default)]
pub struct DeepworkEncoder {
    unnamed: SessionEvents,
    named: HashMap<String, SessionEvents>,
}

impl Encoder for DeepworkEncoder {
    fn reads(&self) -> Reads {
        Reads::UiEvents
    }

    fn ui_event(&mut self, session: Option<&str>, event: &UiEvent<'_>, at_ms: u64, out: &mut Frames) {
        let events = match session {
            None => &mut self.unnamed,
            Some(name) => {
                // Looked up by `&str` first: a session's name is copied once,
                // not on every event.
                if !self.named.contains_key(name) {
                    self.named.insert(name.to_owned(), SessionEvents::default());
                }
                let Some(events) = self.named.get_mut(name) else { return };
                events
            }
        };
        let Some(mut event) = events.event(event, at_ms) else {
            return;
        };
        if let Some(session) = session {
            event["source"] = session.into();
        }
        out.frame(|buf| wire::write_json(buf, &event));
    }
}

/// One session's deepwork numbering, and per tool call its name and the
/// arguments shown so far.
#[derive(Debug, Default)]
struct SessionEvents {
    seq: u64,
    /// Per tool call: its name and the arguments shown so far, since a
    /// deepwork `tool_start` carries the whole input.
    tools: HashMap<String, (String, String)>,
}

impl SessionEvents {
    /// The deepwork Event for a UI event at clock reading `ts_ms`; `None`
    /// for UI events deepwork has no Event for (starts and ends of text,
    /// round ends).
    fn event(&mut self, event: &UiEvent<'_>, ts_ms: u64) -> Option<Value> {
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
            // deepwork has no live-output event: a `status` event says what
            // the tool is doing, which is what live output is; roundup's
            // deepwork adapter reads it back as `tool_output`.
            UiEvent::ToolCallOutput { id, content, replace } => {
                let name = self.tools.get(id).map(|t| t.0.clone()).unwrap_or_default();
                json!({"kind": "status", "status": "tool_output", "tool": {"id": id, "name": name},
                       "content": content, "replace": replace})
            }
            UiEvent::RunEnd { reason, .. } => json!({"kind": "done", "reason": reason.as_str()}),
            UiEvent::MessageStart
            | UiEvent::MessageEnd
            | UiEvent::ThoughtStart
            | UiEvent::ThoughtEnd
            | UiEvent::ToolCallEnd { .. }
            | UiEvent::RoundEnd { .. }
            | UiEvent::RunStart { .. } => return None,
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
