//! Each run as AG-UI's compact form: `RUN_STARTED`, one `MESSAGES_SNAPSHOT`
//! of the thread so far, and the run's end. What a server sends a client
//! that (re)connects to a thread, instead of the live events that built it
//! (`--emit agui`); AG-UI's own compaction exists only in its TypeScript
//! SDK.
//!
//! The messages are those the live events make the client build (checked
//! by the real client in `tests/agui`, on every vector and fixture, against
//! the same rounds): for each round its reasoning (a `reasoning` message),
//! its text and tool calls (an `assistant` message: `toolCalls` with the
//! tool's machine name, else its title, and the final arguments), and one
//! `tool` message a call with its result (`no result: {reason}` for a
//! placeholder, the late result where one came). Ids are the live stream's:
//! `{thread}/run-{n}/round-{i}` for a round, `{round}/{tool id}` for a call.
//!
//! A snapshot replaces the client's messages, so it holds the whole thread:
//! the encoder keeps a session's messages until the session ends (the
//! memory of a session's history, which the live form does not hold). A
//! run that held nothing (an empty input) writes nothing.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::{ReplayOptions, replay};
//!
//! let ops = b"{\"op\":\"message\",\"text\":\"Hi\"}\n{\"op\":\"finish\",\"reason\":\"completed\"}\n";
//! let options = ReplayOptions::new().to(OutputFormat::named("agui-compact").unwrap());
//! let mut out = Vec::new();
//! replay(&ops[..], &mut out, &options, &mut ()).unwrap();
//! let events: Vec<serde_json::Value> =
//!     std::str::from_utf8(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
//! assert_eq!(events[1]["type"], "MESSAGES_SNAPSHOT");
//! assert_eq!(events[1]["messages"][0]["content"], "Hi");
//! assert_eq!(events[2]["outcome"], serde_json::json!({"type": "success"}));
//! ```

use serde_json::{json, Value};

use super::agui::run_end;
use super::{Encoder, Frames, OutputFormat, Reads};
use crate::model::{Round, Summary, ToolResult};
use crate::sink::SinkRecord;
use crate::wire;

/// The registry row of compact AG-UI (one snapshot a run).
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("agui-compact").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "agui-compact",
    about: "each run as AG-UI's compact form: one
MESSAGES_SNAPSHOT of the thread so far between
the run's start and end (what a client that
reconnects is sent); --emit agui --compact",
    encoder: || Box::<AguiCompactEncoder>::default(),
};

/// The thread of events without a session (as `--emit agui` names it).
const UNNAMED: &str = "roundup";

/// Writes each run as one snapshot of its session's thread.
#[derive(Debug, Default)]
pub struct AguiCompactEncoder {
    /// The thread's messages so far, as AG-UI messages.
    messages: Vec<Value>,
}

impl Encoder for AguiCompactEncoder {
    fn reads(&self) -> Reads {
        Reads::Records
    }

    fn save(&self) -> Option<Value> {
        Some(Value::Array(self.messages.clone()))
    }

    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        match state {
            Value::Array(messages) => {
                self.messages = messages;
                Ok(())
            }
            Value::Null => {
                self.messages.clear();
                Ok(())
            }
            _ => Err(crate::CheckpointError::NotSaveable("an agui-compact state that is not a list".into())),
        }
    }

    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        match record {
            SinkRecord::Round(round) => self.round(round),
            SinkRecord::Stitch(stitch) => {
                let thread = stitch.session.as_deref().unwrap_or(UNNAMED);
                let call = format!("{thread}/run-{}/round-{}/{}", stitch.run, stitch.round, stitch.id);
                let tool = self.messages.iter_mut().rev().find(|m| m["role"] == "tool" && m["toolCallId"] == call);
                if let Some(tool) = tool {
                    tool["content"] = result_text(&stitch.result).into();
                }
            }
            SinkRecord::Summary(summary) => self.run_end(summary, out),
            SinkRecord::Anomaly(_) | SinkRecord::Meta(_) => {}
        }
    }
}

/// What a call's `tool` message says of its result.
fn result_text(result: &ToolResult) -> String {
    match result.placeholder_reason() {
        Some(reason) => format!("no result: {}", reason.as_str()),
        None => result.content().unwrap_or_default().to_owned(),
    }
}

impl AguiCompactEncoder {
    /// A closed round as the messages the client builds from it.
    fn round(&mut self, round: &Round) {
        let thread = round.session.as_deref().unwrap_or(UNNAMED);
        let id = format!("{thread}/run-{}/round-{}", round.run, round.index);
        if !round.thought.is_empty() {
            self.messages.push(json!({"id": format!("{id}/reasoning"), "role": "reasoning", "content": round.thought}));
        }
        if round.message.is_empty() && round.tool_calls.is_empty() {
            return;
        }
        let mut assistant = json!({"id": id, "role": "assistant"});
        if !round.message.is_empty() {
            assistant["content"] = round.message.as_str().into();
        }
        if !round.tool_calls.is_empty() {
            let calls: Vec<Value> = round
                .tool_calls
                .iter()
                .map(|call| {
                    let name = if call.name.is_empty() { &call.title } else { &call.name };
                    json!({
                        "id": format!("{id}/{}", call.id),
                        "type": "function",
                        "function": {"name": name, "arguments": call.arguments},
                    })
                })
                .collect();
            assistant["toolCalls"] = Value::Array(calls);
        }
        self.messages.push(assistant);
        for call in &round.tool_calls {
            let call_id = format!("{id}/{}", call.id);
            let mut tool = json!({
                "id": format!("{call_id}/result"),
                "role": "tool",
                "toolCallId": call_id,
                "content": result_text(&call.result),
            });
            if call.result.is_failed() {
                tool["error"] = result_text(&call.result).into();
            }
            self.messages.push(tool);
        }
    }

    /// The run's end: its start, the snapshot, and how it ended.
    fn run_end(&mut self, summary: &Summary, out: &mut Frames) {
        if super::held_nothing(summary) && self.messages.is_empty() {
            return;
        }
        let thread = summary.session.as_deref().unwrap_or(UNNAMED);
        let run_id = format!("{thread}/run-{}", summary.run);
        let mut events = vec![
            json!({"type": "RUN_STARTED", "threadId": thread, "runId": run_id}),
            json!({"type": "MESSAGES_SNAPSHOT", "messages": self.messages}),
        ];
        let end = run_end(thread, &run_id, summary.finish_reason, summary.last_token_usage);
        events.push(end);
        for event in &events {
            out.frame(|buf| wire::write_json(buf, event));
        }
    }
}
