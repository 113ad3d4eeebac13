//! The live UI events as the Vercel AI SDK UI message stream (v1): the
//! body a `useChat` endpoint returns (`x-vercel-ai-ui-message-stream: v1`),
//! checked in CI by the real `ai` package (`tests/ai-sdk`).
//!
//! A run is one assistant message (`start` with `messageId`
//! `{session}/run-{n}` … `finish`), as one response of a chat endpoint is;
//! a round is one step (`start-step` … `finish-step`), as one model call
//! is. Text and reasoning are `text-*` and `reasoning-*` parts; a tool call
//! is `tool-input-start` when it is declared, its argument deltas
//! `tool-input-delta`, and, when it ends, `tool-input-available` with the
//! final input and then its one output: `tool-output-available`, or
//! `tool-output-error` for a failed result. The client keeps one part per
//! call and one output per part:
//!
//! - **Inputs and outputs as values.** The SDK's inputs and outputs are
//!   JSON values. Arguments or a result that are a JSON value (not a JSON
//!   string) go out as that value, with the producer's own text; anything
//!   else goes out as a string of the text, so that reading the stream
//!   back gives the same text. No arguments are the SDK's empty input,
//!   `{}`.
//! - **Arguments that change.** A snapshot that extends what was streamed
//!   goes out as a delta; one that does not restarts the call's input
//!   (`tool-input-start` again, which the client reads as a reset) and
//!   streams the new text. A rename does the same, with the new name.
//! - **Live output** (a terminal's bytes) is `tool-output-available` with
//!   `preliminary: true`, the whole output so far each time (each replaces
//!   the last in the client); appended output goes out when it has doubled
//!   since the last one sent, so that the bytes written stay linear in the
//!   output, and what was held goes out before the call ends.
//! - **No result.** A call its run ended without answering (a placeholder)
//!   gets `tool-output-error` with `errorText` `no result: {reason}` and
//!   `providerMetadata: {"roundup": {"placeholder": reason}}`; when its
//!   arguments are not JSON (a stream cut off mid-arguments) it gets
//!   `tool-input-error` instead: the SDK's own word for a call whose input
//!   could not be used, which is what such a call is. A call with
//!   arguments that are not JSON and a result (a command line, a free-form
//!   tool input) ran on them: its input is the text.
//! - **Late results.** A call that the next text closed (a `superseded`
//!   placeholder) may still get its result: it stays without output, the
//!   tool still running for the client, and a late result (a stitch, always
//!   in the same run) is its output when it comes, in whichever step is
//!   open, marked `providerMetadata: {"roundup": {"stitched": true}}`. One
//!   that never gets one gets its `no result: superseded` error when the
//!   run ends. So no call ever has two outputs.
//! - **Anomalies** are `data-roundup-anomaly` parts holding the anomaly
//!   record: part of the message of the run they happened in (a view shows
//!   them in place, a stored chat keeps them); one that comes while no
//!   message is open (after a run ended) is `transient`, since no message
//!   holds it.
//! - **Metadata.** `start` carries `messageMetadata: {"roundup": {"run":
//!   n}}` (and `session`); each token gauge reading is a `message-metadata`
//!   `{"usage": {"totalTokens": n}}`; the run's summary record is a
//!   `message-metadata` `{"roundup": {"summary": {...}}}` right before the
//!   message ends.
//! - **The end.** `finish` with `finishReason` `stop` (completed), `error`
//!   (failed) or `interrupted` (the SDK's reason for a stream that ended
//!   without a completion signal); a canceled run ends with `abort` (the
//!   SDK's own end of a stopped stream, which has no finish reason). With
//!   `--sse`, `data: [DONE]` follows, as it ends each SDK response.
//! - **Sessions.** A UI message stream is one chat. Every chunk of a named
//!   session carries `session` (a field the SDK's chunk schemas let
//!   through and its client ignores), so `--session NAME` gives one chat's
//!   stream; several sessions' chunks interleave as their events do.
//!
//! What a session's message holds is released when its run ends.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::UiEvent;
//!
//! let mut encoder = OutputFormat::named("ai-sdk").unwrap().encoder();
//! let mut out = Frames::new(Framing::Lines);
//! encoder.ui_event(None, &UiEvent::RunStart { run: 0 }, 0, &mut out);
//! encoder.ui_event(None, &UiEvent::MessageStart, 0, &mut out);
//! encoder.ui_event(None, &UiEvent::MessageDelta { text: "Hi" }, 0, &mut out);
//! let lines: Vec<serde_json::Value> =
//!     std::str::from_utf8(out.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
//! assert_eq!(lines[0], serde_json::json!({"type": "start", "messageId": "roundup/run-0", "messageMetadata": {"roundup": {"run": 0}}}));
//! assert_eq!(lines[1]["type"], "start-step");
//! assert_eq!(lines[3], serde_json::json!({"type": "text-delta", "id": "round-0/text-0", "delta": "Hi"}));
//! ```

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::history::valid_tool_name;
use super::{Encoder, Frames, Framing, OutputFormat, Reads};
use crate::hash::HashMap;
use crate::model::{FinishReason, PlaceholderReason};
use crate::sink::SinkRecord;
use crate::ui::UiEvent;
use crate::wire;

/// The registry row of the AI SDK UI message stream.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::named("ai-sdk"), Some(&roundup::encoders::ai_sdk::FORMAT));
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "ai-sdk",
    about: "the live UI events as the Vercel AI SDK
UI message stream (a run is a message, a
round a step); with --sse, what useChat
reads",
    encoder: || Box::<AiSdkEncoder>::default(),
};

/// The name of the session without one, in message ids.
const UNNAMED: &str = "roundup";

/// Writes records and UI events as UI message stream chunks, one message
/// per run of each session.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AiSdkEncoder {
    /// The open message of each session (none between runs).
    #[serde(with = "crate::pairs")]
    messages: HashMap<String, Message>,
    /// A run's summary that came before its message began (a run with
    /// nothing in it is summed up before its UI events), by session.
    #[serde(default, skip_serializing_if = "HashMap::is_empty", with = "crate::pairs")]
    early: HashMap<String, Value>,
}

/// One run's message: where it is, and the calls that still owe the
/// client something.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Message {
    run: u64,
    /// The round (step) being written.
    round: u64,
    /// A step is open.
    step: bool,
    /// Text and reasoning parts written so far (their ids' counter).
    parts: u64,
    /// The id of the open text part, and of the open reasoning part.
    text: Option<String>,
    reasoning: Option<String>,
    /// The calls of the run without an output yet: those of the open
    /// round, and those that the next text closed, which wait for a late
    /// result.
    calls: Vec<PendingCall>,
    /// Every `toolCallId` written in the message: one that a source uses
    /// again gets a suffix, since the client finds a call by its id.
    ids: BTreeSet<String>,
    /// The last token gauge sent.
    usage: Option<u64>,
    /// The run's summary record, sent just before the message ends.
    summary: Option<Value>,
}

/// A call that has not had its output.
#[derive(Debug, Default, Serialize, Deserialize)]
struct PendingCall {
    /// roundup's id, and the `toolCallId` written for it.
    id: String,
    wire: String,
    name: String,
    title: String,
    /// The arguments, and how much of them the client has streamed.
    arguments: String,
    streamed: usize,
    /// The input the client was last told as available, if any.
    available: Option<String>,
    /// The live output, and how much of it the client has.
    output: String,
    output_sent: usize,
    output_held: bool,
    /// The result, until the call ends.
    result: Option<(String, bool)>,
    /// The round closed without its result: it waits for a late one.
    waiting: bool,
}

impl Encoder for AiSdkEncoder {
    fn reads(&self) -> Reads {
        Reads::Both
    }

    /// The open messages, as `[session, message]` pairs in name order;
    /// `null` when none is open.
    fn save(&self) -> Option<Value> {
        if self.messages.is_empty() && self.early.is_empty() {
            return Some(Value::Null);
        }
        serde_json::to_value(self).ok()
    }

    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        *self = match state {
            Value::Null => AiSdkEncoder::default(),
            state => serde_json::from_value(state)
                .map_err(|error| crate::CheckpointError::Inconsistent(format!("ai-sdk output state: {error}")))?,
        };
        Ok(())
    }

    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        match record {
            SinkRecord::Anomaly(anomaly) => {
                let name = anomaly.session.as_deref().unwrap_or(UNNAMED);
                let data = serde_json::to_value(anomaly).unwrap_or(Value::Null);
                let mut part = json!({"type": "data-roundup-anomaly", "data": data});
                if !self.messages.contains_key(name) {
                    // No message is open to hold it: the client hears of
                    // it and keeps no part.
                    part["transient"] = Value::Bool(true);
                }
                write(out, anomaly.session.as_deref(), part);
            }
            SinkRecord::Summary(summary) => {
                let name = summary.session.as_deref().unwrap_or(UNNAMED);
                let value = serde_json::to_value(summary).unwrap_or(Value::Null);
                match self.messages.get_mut(name) {
                    Some(message) => message.summary = Some(value),
                    None => {
                        self.early.insert(name.to_owned(), value);
                    }
                }
            }
            // The UI events carry rounds, stitches and metadata as they
            // happen.
            _ => {}
        }
    }

    fn ui_event(&mut self, session: Option<&str>, event: &UiEvent<'_>, _at_ms: u64, out: &mut Frames) {
        let name = session.unwrap_or(UNNAMED);
        let mut chunks = Chunks { out, session };
        if let UiEvent::RunStart { run } = *event {
            let mut metadata = json!({"run": run});
            if let Some(session) = session {
                metadata = json!({"session": session, "run": run});
            }
            let message_id = format!("{name}/run-{run}");
            chunks.emit(json!({"type": "start", "messageId": message_id, "messageMetadata": {"roundup": metadata}}));
            let summary = self.early.remove(name);
            self.messages.insert(name.to_owned(), Message { run, summary, ..Message::default() });
            return;
        }
        let Some(message) = self.messages.get_mut(name) else { return };
        if let UiEvent::RunEnd { reason, .. } = *event {
            message.end(reason, &mut chunks);
            self.messages.remove(name);
            return;
        }
        message.event(event, &mut chunks);
    }
}

/// Where chunks go: framed into the output, with the session named on
/// each when it has a name.
struct Chunks<'a, 'o> {
    out: &'o mut Frames,
    session: Option<&'a str>,
}

impl Chunks<'_, '_> {
    fn emit(&mut self, chunk: Value) {
        write(self.out, self.session, chunk);
    }

    /// A chunk with an `input` or `output` written as the producer's own
    /// JSON text.
    fn emit_with(&mut self, mut chunk: Value, field: &str, value: &str) {
        if let (Some(session), Some(object)) = (self.session, chunk.as_object_mut()) {
            object.insert("session".into(), Value::from(session));
        }
        let mut line = Vec::new();
        wire::write_json(&mut line, &chunk);
        let payload = Payload::of(value);
        // `{...}` becomes `{..., "field": value}`.
        if line.last() != Some(&b'}') {
            return;
        }
        line.pop();
        if line.len() > 1 {
            line.push(b',');
        }
        wire::write_json(&mut line, &field);
        line.push(b':');
        match payload {
            Payload::Raw(raw) => line.extend_from_slice(raw.get().as_bytes()),
            Payload::Text(text) => wire::write_json(&mut line, &text),
        }
        line.push(b'}');
        self.out.frame(|buf| buf.extend_from_slice(&line));
    }

    fn done(&mut self) {
        if self.out.framing() == Framing::Sse {
            self.out.frame(|buf| buf.extend_from_slice(b"[DONE]"));
        }
    }
}

/// Writes one chunk, `session` last when there is one.
fn write(out: &mut Frames, session: Option<&str>, mut chunk: Value) {
    if let (Some(session), Some(object)) = (session, chunk.as_object_mut()) {
        object.insert("session".into(), Value::from(session));
    }
    out.frame(|buf| wire::write_json(buf, &chunk));
}

/// How a text goes out as an SDK value: as the JSON value it is, or as a
/// string.
enum Payload<'a> {
    Raw(&'a RawValue),
    Text(&'a str),
}

impl<'a> Payload<'a> {
    /// A JSON value other than a string, on one line and without
    /// surrounding space, is written as it came; anything else as a string
    /// of its text (a JSON string too, so that its quotes come back).
    fn of(text: &'a str) -> Payload<'a> {
        let plain = !text.starts_with('"') && text.trim() == text && !text.contains(['\n', '\r']);
        match serde_json::from_str::<&RawValue>(text) {
            Ok(raw) if plain && !text.is_empty() => Payload::Raw(raw),
            _ => Payload::Text(text),
        }
    }
}

/// Whether a call's arguments are a JSON value (empty ones count: no input).
fn is_json(arguments: &str) -> bool {
    arguments.is_empty() || serde_json::from_str::<&RawValue>(arguments).is_ok()
}

impl PendingCall {
    fn tool_name(&self) -> String {
        valid_tool_name(&self.name, &self.title)
    }

    /// `tool-input-start` (again, for a reset or a rename), and the
    /// arguments so far as one delta.
    fn start(&mut self, chunks: &mut Chunks<'_, '_>) {
        let mut start = json!({"type": "tool-input-start", "toolCallId": self.wire, "toolName": self.tool_name()});
        if !self.title.is_empty() {
            start["title"] = Value::from(self.title.as_str());
        }
        chunks.emit(start);
        self.streamed = 0;
        self.available = None;
        self.stream(chunks);
    }

    /// The arguments the client has not streamed yet, as a delta.
    fn stream(&mut self, chunks: &mut Chunks<'_, '_>) {
        let rest = self.arguments.get(self.streamed..).unwrap_or_default();
        if !rest.is_empty() {
            chunks.emit(json!({"type": "tool-input-delta", "toolCallId": self.wire, "inputTextDelta": rest}));
            self.streamed = self.arguments.len();
        }
    }

    /// `tool-input-available` with the final input, unless the client has
    /// it already.
    fn make_available(&mut self, chunks: &mut Chunks<'_, '_>) {
        if self.available.as_deref() == Some(self.arguments.as_str()) {
            return;
        }
        let mut chunk = json!({"type": "tool-input-available", "toolCallId": self.wire, "toolName": self.tool_name()});
        if !self.title.is_empty() {
            chunk["title"] = Value::from(self.title.as_str());
        }
        // No arguments is the SDK's empty input, `{}` (what a tool with no
        // parameters is called with).
        let input = if self.arguments.is_empty() { "{}" } else { self.arguments.as_str() };
        chunks.emit_with(chunk, "input", input);
        self.streamed = self.arguments.len();
        self.available = Some(self.arguments.clone());
    }

    /// The live output so far, as a preliminary output, if the client
    /// lacks some of it.
    fn flush_output(&mut self, chunks: &mut Chunks<'_, '_>) {
        if !self.output_held {
            return;
        }
        self.make_available(chunks);
        let chunk = json!({"type": "tool-output-available", "toolCallId": self.wire, "output": self.output, "preliminary": true});
        chunks.emit(chunk);
        self.output_sent = self.output.len();
        self.output_held = false;
    }

    /// The call's one output: its result.
    fn output(&mut self, content: &str, success: bool, stitched: bool, chunks: &mut Chunks<'_, '_>) {
        self.make_available(chunks);
        let mut chunk = if success {
            json!({"type": "tool-output-available", "toolCallId": self.wire})
        } else {
            json!({"type": "tool-output-error", "toolCallId": self.wire, "errorText": content})
        };
        if stitched {
            chunk["providerMetadata"] = json!({"roundup": {"stitched": true}});
        }
        if success {
            chunks.emit_with(chunk, "output", content);
        } else {
            chunks.emit(chunk);
        }
    }

    /// The output of a call that never got a result.
    fn no_result(&mut self, reason: PlaceholderReason, chunks: &mut Chunks<'_, '_>) {
        let reason = reason.as_str();
        let error = format!("no result: {reason}");
        let marker = json!({"roundup": {"placeholder": reason}});
        if is_json(&self.arguments) {
            self.make_available(chunks);
            chunks.emit(json!({
                "type": "tool-output-error",
                "toolCallId": self.wire,
                "errorText": error,
                "providerMetadata": marker,
            }));
        } else {
            // Arguments that are not JSON and no result: the SDK's input
            // error, with the text as the input.
            let mut chunk = json!({
                "type": "tool-input-error",
                "toolCallId": self.wire,
                "toolName": self.tool_name(),
                "input": self.arguments,
                "errorText": error,
                "providerMetadata": marker,
            });
            if !self.title.is_empty() {
                chunk["title"] = Value::from(self.title.as_str());
            }
            chunks.emit(chunk);
        }
    }
}

impl Message {
    /// Opens the round's step before its first part.
    fn step(&mut self, chunks: &mut Chunks<'_, '_>) {
        if !self.step {
            chunks.emit(json!({"type": "start-step"}));
            self.step = true;
        }
    }

    fn part_id(&mut self, kind: &str) -> String {
        let id = format!("round-{}/{kind}-{}", self.round, self.parts);
        self.parts += 1;
        id
    }

    /// The call `id` of the open round (the latest of that id).
    fn open_call(&mut self, id: &str) -> Option<&mut PendingCall> {
        self.calls.iter_mut().rev().find(|call| call.id == id && !call.waiting)
    }

    /// A `toolCallId` not yet used in the message.
    fn wire_id(&mut self, id: &str) -> String {
        let mut wire = id.to_owned();
        let mut n = 1;
        while self.ids.contains(&wire) {
            n += 1;
            wire = format!("{id}#{n}");
        }
        self.ids.insert(wire.clone());
        wire
    }

    fn event(&mut self, event: &UiEvent<'_>, chunks: &mut Chunks<'_, '_>) {
        match *event {
            UiEvent::MessageStart => {
                self.step(chunks);
                let id = self.part_id("text");
                chunks.emit(json!({"type": "text-start", "id": id}));
                self.text = Some(id);
            }
            UiEvent::MessageDelta { text } if !text.is_empty() => {
                if let Some(id) = &self.text {
                    chunks.emit(json!({"type": "text-delta", "id": id, "delta": text}));
                }
            }
            UiEvent::MessageEnd => {
                if let Some(id) = self.text.take() {
                    chunks.emit(json!({"type": "text-end", "id": id}));
                }
            }
            UiEvent::ThoughtStart => {
                self.step(chunks);
                let id = self.part_id("reasoning");
                chunks.emit(json!({"type": "reasoning-start", "id": id}));
                self.reasoning = Some(id);
            }
            UiEvent::ThoughtDelta { text } if !text.is_empty() => {
                if let Some(id) = &self.reasoning {
                    chunks.emit(json!({"type": "reasoning-delta", "id": id, "delta": text}));
                }
            }
            UiEvent::ThoughtEnd => {
                if let Some(id) = self.reasoning.take() {
                    chunks.emit(json!({"type": "reasoning-end", "id": id}));
                }
            }
            UiEvent::ToolCallStart { id, title, name } | UiEvent::ToolCallTitle { id, title, name } => {
                self.step(chunks);
                let renamed = matches!(event, UiEvent::ToolCallTitle { .. });
                if let Some(call) = self.open_call(id) {
                    // Declared again (an upsert: what is non-empty
                    // replaces), or renamed (both as they are now): the
                    // client takes a new name when the call's input
                    // starts again.
                    let (title, name) = match renamed {
                        true => (title, name),
                        false => (
                            if title.is_empty() { call.title.as_str() } else { title },
                            if name.is_empty() { call.name.as_str() } else { name },
                        ),
                    };
                    if (title, name) != (call.title.as_str(), call.name.as_str()) {
                        let (title, name) = (title.to_owned(), name.to_owned());
                        call.title = title;
                        call.name = name;
                        call.start(chunks);
                    }
                    return;
                }
                let wire = self.wire_id(id);
                let mut call = PendingCall {
                    id: id.to_owned(),
                    wire,
                    name: name.to_owned(),
                    title: title.to_owned(),
                    ..PendingCall::default()
                };
                call.start(chunks);
                self.calls.push(call);
            }
            UiEvent::ToolCallArgs { id, args, replace } => {
                if let Some(call) = self.open_call(id) {
                    // A snapshot that extends what the client streamed is
                    // the rest of it as a delta; any other restarts it.
                    let extends =
                        !replace || call.arguments.get(..call.streamed).is_some_and(|sent| args.starts_with(sent));
                    if replace {
                        call.arguments.clear();
                    }
                    call.arguments.push_str(args);
                    // Once the input is available (live output came), the
                    // final one is sent again when the call ends.
                    if call.available.is_none() {
                        if extends {
                            call.stream(chunks);
                        } else {
                            call.start(chunks);
                        }
                    }
                }
            }
            UiEvent::ToolCallOutput { id, content, replace } => {
                if let Some(call) = self.open_call(id) {
                    if replace {
                        call.output.clear();
                        call.output_sent = 0;
                    }
                    call.output.push_str(content);
                    call.output_held = true;
                    // A whole value goes out as it came; appended output
                    // when it has doubled.
                    if replace || call.output.len() >= 2 * call.output_sent.max(1) {
                        call.flush_output(chunks);
                    }
                }
            }
            UiEvent::ToolCallResult { id, content, success } => {
                if let Some(call) = self.open_call(id) {
                    call.result = Some((content.to_owned(), success));
                }
            }
            UiEvent::ToolCallEnd { id } => {
                if let Some(at) = self.calls.iter().rposition(|call| call.id == id && !call.waiting) {
                    let mut call = self.calls.remove(at);
                    let (content, success) = call.result.take().unwrap_or_default();
                    call.output(&content, success, false, chunks);
                }
            }
            UiEvent::ToolCallInterrupted { id, reason } => {
                if let Some(at) = self.calls.iter().rposition(|call| call.id == id && !call.waiting) {
                    let call = &mut self.calls[at];
                    call.flush_output(chunks);
                    if reason == PlaceholderReason::Superseded {
                        // A late result may still come: the call keeps
                        // running for the client.
                        call.make_available(chunks);
                        call.waiting = true;
                    } else {
                        let mut call = self.calls.remove(at);
                        call.no_result(reason, chunks);
                    }
                }
            }
            UiEvent::ToolCallStitched { id, content, success, .. } => {
                // The oldest waiting call of that id, as the stitch itself.
                match self.calls.iter().position(|call| call.id == id && call.waiting) {
                    Some(at) => {
                        let mut call = self.calls.remove(at);
                        call.output(content, success, true, chunks);
                    }
                    None => {
                        let mut call = PendingCall {
                            wire: id.to_owned(),
                            available: Some(String::new()),
                            ..PendingCall::default()
                        };
                        call.output(content, success, true, chunks);
                    }
                }
            }
            UiEvent::TokenUsage { total } if self.usage != Some(total) => {
                self.usage = Some(total);
                chunks.emit(json!({"type": "message-metadata", "messageMetadata": {"usage": {"totalTokens": total}}}));
            }
            UiEvent::RoundEnd { .. } => {
                // Every start has its end before the round's: these only
                // close what a later version might leave open.
                if let Some(id) = self.text.take() {
                    chunks.emit(json!({"type": "text-end", "id": id}));
                }
                if let Some(id) = self.reasoning.take() {
                    chunks.emit(json!({"type": "reasoning-end", "id": id}));
                }
                if self.step {
                    chunks.emit(json!({"type": "finish-step"}));
                    self.step = false;
                }
                self.round += 1;
            }
            // Empty fragments, the run's bounds (handled by the encoder),
            // and what later versions add.
            _ => {}
        }
    }

    /// The end of the run: the calls still waiting get their error, the
    /// summary goes out, and the message ends.
    fn end(&mut self, reason: FinishReason, chunks: &mut Chunks<'_, '_>) {
        for mut call in std::mem::take(&mut self.calls) {
            call.flush_output(chunks);
            let reason = if call.waiting { PlaceholderReason::Superseded } else { reason.into() };
            call.no_result(reason, chunks);
        }
        if self.step {
            chunks.emit(json!({"type": "finish-step"}));
            self.step = false;
        }
        if let Some(summary) = self.summary.take() {
            let mut roundup = Map::new();
            roundup.insert("summary".into(), summary);
            chunks.emit(json!({"type": "message-metadata", "messageMetadata": {"roundup": roundup}}));
        }
        chunks.emit(match reason {
            FinishReason::Completed => json!({"type": "finish", "finishReason": "stop"}),
            FinishReason::Failed => json!({"type": "finish", "finishReason": "error"}),
            FinishReason::Interrupted => json!({"type": "finish", "finishReason": "interrupted"}),
            FinishReason::Canceled => json!({"type": "abort", "reason": "canceled"}),
        });
        chunks.done();
    }
}
