//! The live UI events as deepwork Events, the form deepwork clients consume:
//! each stamped with `meta.seq` (counted per session) and `meta.ts`, and
//! with `source` naming the session.
//!
//! A deepwork `tool_start` carries the whole input, and a repeated one for
//! the same id updates it. Re-sending the input at every argument delta
//! would make the output quadratic in the arguments, so streamed arguments
//! are coalesced: a `tool_start` goes out at the declaration, whenever the
//! arguments have doubled since the last one sent, at every snapshot, and
//! before the call's result with the final input. The output stays a valid
//! deepwork stream, at most twice the arguments' size plus one event per
//! doubling. Live tool output, which deepwork has no
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

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use smallvec::SmallVec;

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::hash::HashMap;
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

    /// The unnamed session's numbering and tools, and each named one's, as
    /// `{"unnamed": .., "named": [[name, ..], ..]}` (`null` when new).
    fn save(&self) -> Option<Value> {
        if self.named.is_empty() && self.unnamed == SessionEvents::default() {
            return Some(Value::Null);
        }
        let unnamed = serde_json::to_value(&self.unnamed).ok()?;
        Some(json!({"unnamed": unnamed, "named": crate::pairs::to_value(&self.named)?}))
    }

    fn restore(&mut self, mut state: Value) -> Result<(), crate::CheckpointError> {
        if state.is_null() {
            *self = DeepworkEncoder::default();
            return Ok(());
        }
        let unnamed = serde_json::from_value(state["unnamed"].take()).map_err(crate::CheckpointError::Corrupt)?;
        let named = crate::pairs::from_value(state["named"].take())?;
        *self = DeepworkEncoder { unnamed, named };
        Ok(())
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
        // At most two events (a held-back input, then the result): inline.
        let mut batch = Events::new();
        events.events(event, at_ms, &mut batch);
        for mut event in batch {
            if let Some(session) = session {
                event["source"] = session.into();
            }
            out.frame(|buf| wire::write_json(buf, &event));
        }
    }
}

/// The deepwork Events one UI event becomes.
type Events = SmallVec<[Value; 2]>;

/// One session's deepwork numbering, and its current run's tool calls.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SessionEvents {
    seq: u64,
    /// The run's tool calls, forgotten at the run's end.
    #[serde(with = "crate::pairs")]
    tools: HashMap<String, Tool>,
}

/// What a tool call's next `tool_start` needs.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Tool {
    name: String,
    /// The arguments so far (released at the call's end).
    args: String,
    /// How much of them the last `tool_start` showed.
    sent: usize,
}

impl SessionEvents {
    /// The deepwork Events for a UI event at clock reading `ts_ms`, into
    /// `out`: none for UI events deepwork has no Event for (starts and ends
    /// of text, round ends) and for held-back argument deltas; two for a
    /// result whose final input was held back.
    fn events(&mut self, event: &UiEvent<'_>, ts_ms: u64, out: &mut Events) {
        let event = match *event {
            UiEvent::MessageDelta { text } => json!({"kind": "text", "content": text}),
            UiEvent::ThoughtDelta { text } => json!({"kind": "thinking", "content": text}),
            UiEvent::ToolCallStart { id, title, .. } => {
                self.tools.insert(id.to_owned(), Tool { name: title.to_owned(), ..Tool::default() });
                self.tool_start(id)
            }
            UiEvent::ToolCallTitle { id, title, .. } => {
                self.tools.entry(id.to_owned()).or_default().name = title.to_owned();
                self.tool_start(id)
            }
            UiEvent::ToolCallArgs { id, args, replace } => {
                let tool = self.tools.entry(id.to_owned()).or_default();
                if replace {
                    tool.args.clear();
                    tool.sent = 0;
                }
                tool.args.push_str(args);
                // A snapshot is sent as it is (its size is the input's); an
                // append only once the arguments have doubled.
                if !replace && tool.args.len() < 2 * tool.sent.max(64) {
                    return;
                }
                self.tool_start(id)
            }
            UiEvent::ToolCallResult { id, content, success }
            | UiEvent::ToolCallStitched { id, content, success, .. } => {
                self.final_input(id, ts_ms, out);
                json!({"kind": "tool_result", "tool": {"id": id, "name": self.name(id), "output": content, "is_error": !success}})
            }
            UiEvent::ToolCallInterrupted { id, reason } => {
                let output = format!("no result: {}", reason.as_str());
                self.final_input(id, ts_ms, out);
                json!({"kind": "tool_result", "tool": {"id": id, "name": self.name(id), "output": output, "is_error": true}})
            }
            UiEvent::ToolCallEnd { id } => {
                if let Some(tool) = self.tools.get_mut(id) {
                    (tool.args, tool.sent) = (String::new(), 0);
                }
                return;
            }
            UiEvent::TokenUsage { total } => json!({"kind": "usage", "usage": {"input_tokens": total}}),
            // deepwork has no live-output event: a `status` event says what
            // the tool is doing, which is what live output is; roundup's
            // deepwork adapter reads it back as `tool_output`.
            UiEvent::ToolCallOutput { id, content, replace } => {
                json!({"kind": "status", "status": "tool_output", "tool": {"id": id, "name": self.name(id)},
                       "content": content, "replace": replace})
            }
            UiEvent::RunEnd { reason, .. } => {
                self.tools.clear();
                self.tools.shrink_to(64);
                json!({"kind": "done", "reason": reason.as_str()})
            }
            UiEvent::MessageStart
            | UiEvent::MessageEnd
            | UiEvent::ThoughtStart
            | UiEvent::ThoughtEnd
            | UiEvent::RoundEnd { .. }
            | UiEvent::RunStart { .. } => return,
        };
        out.push(self.stamp(event, ts_ms));
    }

    fn stamp(&mut self, mut event: Value, ts_ms: u64) -> Value {
        event["meta"] = json!({"seq": self.seq, "ts": ts_ms});
        self.seq += 1;
        event
    }

    fn name(&self, id: &str) -> String {
        self.tools.get(id).map(|t| t.name.clone()).unwrap_or_default()
    }

    /// The final input, before a call's result, when streamed arguments
    /// were held back.
    fn final_input(&mut self, id: &str, ts_ms: u64, out: &mut Events) {
        if self.tools.get(id).is_some_and(|t| t.sent != t.args.len()) {
            let start = self.tool_start(id);
            out.push(self.stamp(start, ts_ms));
        }
    }

    /// A `tool_start` with the whole input so far (JSON when it parses,
    /// else the text).
    fn tool_start(&mut self, id: &str) -> Value {
        let tool = self.tools.entry(id.to_owned()).or_default();
        tool.sent = tool.args.len();
        let input = serde_json::from_str::<Value>(&tool.args).unwrap_or_else(|_| Value::String(tool.args.clone()));
        json!({"kind": "tool_start", "tool": {"id": id, "name": tool.name, "input": input}})
    }
}
