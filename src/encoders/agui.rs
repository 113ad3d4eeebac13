//! The live UI events as AG-UI events (the open protocol agent UIs read:
//! `@ag-ui/client`, CopilotKit), checked in CI by the real client
//! (`tests/agui`).
//!
//! A session is an AG-UI thread, a run a run, a round one assistant
//! message: its text is that message, its reasoning a reasoning message,
//! its tool calls carry it as `parentMessageId`. Ids are derived, stable and
//! unique in the thread: `{thread}/run-{n}` for a run, `{run}/round-{i}` for
//! a round's message, `{round}/{tool id}` for a tool call.
//!
//! AG-UI's tool-call arguments only ever append, and nothing may follow a
//! call's `TOOL_CALL_END`; roundup's arguments can be replaced by a
//! snapshot and can still change after the result, until the round closes.
//! So a call starts live (`TOOL_CALL_START` when it is declared) and its
//! arguments, end and result go out when its round closes, final: what the
//! client rebuilds is then exactly the round. A call without a result gets
//! `TOOL_CALL_RESULT` with the content `no result: {reason}` and metadata
//! `{"roundup": {"placeholder": reason}}`; a failed result is marked
//! `{"roundup": {"success": false}}`. A call the next text cut off
//! (`superseded`) may still get its result late, in the same run: its
//! `TOOL_CALL_RESULT` waits for it, and is the late result (marked
//! `{"roundup": {"stitched": true}}`) when it comes, the placeholder when
//! the run ends without it, so the client holds one result a call. Live tool output, which AG-UI has no
//! event for, goes out as `CUSTOM` events (`roundup.tool_call_output`).
//! A call's `toolCallName` is the tool's machine name when the source gave
//! one (`Bash`, `get_weather`), else its title. AG-UI has no rename (a
//! second `TOOL_CALL_START` is applied with a warning), so a call starts
//! once, with a name that is final: live, as soon as it has a machine name
//! (at its declaration, for most sources); named by its title (which
//! describes the call as it goes: `Terminal`, then `ls -la`) when its round
//! closes. A title change goes out as a `CUSTOM` event
//! (`roundup.tool_call_title`) when it happens; a machine name that changes
//! after the call started (rare) keeps the started one in the client and
//! goes out as `CUSTOM` `roundup.tool_call_renamed` (`from`, `name`).
//!
//! A run ends as SPEC v3's finish reason says: `completed` is
//! `RUN_FINISHED` with `outcome: {"type": "success"}`, `canceled` with
//! `outcome: {"type": "cancelled"}`, `interrupted` (the input ended with the
//! run open) with no outcome, and `failed` is `RUN_ERROR` (`code:
//! "failed"`, the thread and run in `metadata.roundup`), which ends the
//! run's stream: a client reads each run on a connection of its own. Each
//! carries the last token gauge as `usage` (`[{"totalTokens": n}]`).
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::UiEvent;
//!
//! let mut encoder = OutputFormat::named("agui").unwrap().encoder();
//! let mut out = Frames::new(Framing::Lines);
//! encoder.ui_event(Some("s1"), &UiEvent::RunStart { run: 0 }, 1_000, &mut out);
//! encoder.ui_event(Some("s1"), &UiEvent::MessageStart, 1_000, &mut out);
//! encoder.ui_event(Some("s1"), &UiEvent::MessageDelta { text: "Hi" }, 1_000, &mut out);
//! let lines: Vec<serde_json::Value> =
//!     std::str::from_utf8(out.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
//! assert_eq!(lines[0]["type"], "RUN_STARTED");
//! assert_eq!(lines[0]["runId"], "s1/run-0");
//! assert_eq!(lines[2], serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "s1/run-0/round-0", "delta": "Hi", "timestamp": 1000}));
//! ```

use serde::{Deserialize, Serialize};
use std::io::Write as _;

use serde_json::{json, Value};

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::hash::HashMap;
use crate::model::FinishReason;
use crate::ui::UiEvent;
use crate::wire;

/// The registry row of AG-UI events.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::named("agui"), Some(&roundup::encoders::agui::FORMAT));
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "agui",
    about: "the live UI events as AG-UI events (a
session is a thread, a round one assistant
message); with --sse, what an AG-UI client
reads",
    encoder: || Box::<AguiEncoder>::default(),
};

/// A run's end as AG-UI says it, by SPEC v3's finish reason: `RUN_FINISHED`
/// with `outcome` success (completed) or cancelled (canceled), none when
/// the input ended with the run open; `RUN_ERROR` for a failed run, which
/// ends that run's stream (the thread's next run starts anew), its thread
/// and run in `metadata.roundup` since the event names neither. The last
/// token gauge as `usage`.
pub(super) fn run_end(thread: &str, run_id: &str, reason: Option<FinishReason>, usage: Option<u64>) -> Value {
    let mut end = match reason {
        Some(FinishReason::Failed) => json!({
            "type": "RUN_ERROR",
            "message": "the run failed (the records' anomalies say why)",
            "code": "failed",
            "metadata": {"roundup": {"threadId": thread, "runId": run_id}},
        }),
        _ => json!({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id}),
    };
    match reason {
        Some(FinishReason::Completed) => end["outcome"] = json!({"type": "success"}),
        Some(FinishReason::Canceled) => end["outcome"] = json!({"type": "cancelled"}),
        _ => {}
    }
    if let Some(total) = usage {
        end["usage"] = json!([{"totalTokens": total}]);
    }
    end
}

/// The thread of events without a session.
const UNNAMED: &str = "roundup";

/// Writes UI events as AG-UI events, one thread per session.
#[derive(Debug, Default)]
pub struct AguiEncoder {
    threads: HashMap<String, Thread>,
}

/// One session's thread: its current run and round, and the tool calls of
/// the open round (what is held until it closes).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Thread {
    run: u64,
    round: u64,
    calls: Vec<HeldCall>,
    usage: Option<u64>,
    /// The results of calls the next text cut off (`superseded`), by round
    /// and id, held until their late result comes or the run ends: the
    /// client then holds one result a call, never the placeholder and the
    /// late result both. (A late result comes in the run of its call.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    waiting: Vec<(u64, String, Value)>,
    /// The message id of the round of this run and index, made once for
    /// the deltas of a round rather than for each.
    #[serde(skip)]
    round_id: Option<(u64, u64, String)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct HeldCall {
    id: String,
    /// The `toolCallName` it was started with, empty while it is held: a
    /// call starts when it has a machine name (at once, for most sources),
    /// else when its round closes, named by its title, final by then (ACP
    /// titles describe a call as it goes). AG-UI has no rename, so a call
    /// whose machine name changes after its start keeps this one in the
    /// client, and the final name goes out as a `CUSTOM` event.
    started_as: String,
    /// The tool's machine name, when the source gave one: then the
    /// `toolCallName`, which a title change does not touch.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    name: String,
    title: String,
    arguments: String,
    result: Option<Value>,
}

impl Encoder for AguiEncoder {
    fn reads(&self) -> Reads {
        Reads::UiEvents
    }

    /// The threads, as `[name, thread]` pairs in name order.
    fn save(&self) -> Option<Value> {
        crate::pairs::to_value(&self.threads)
    }

    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        self.threads = crate::pairs::from_value(state)?;
        Ok(())
    }

    fn ui_event(&mut self, session: Option<&str>, event: &UiEvent<'_>, at_ms: u64, out: &mut Frames) {
        let name = session.unwrap_or(UNNAMED);
        if !self.threads.contains_key(name) {
            self.threads.insert(name.to_owned(), Thread::default());
        }
        let Some(thread) = self.threads.get_mut(name) else { return };
        if let Some((kind, suffix, delta)) = delta_of(event) {
            let round = thread.round_id(name);
            let id = if suffix.is_empty() { round } else { &format!("{round}{suffix}") };
            write_delta(out, kind, id, delta, at_ms);
            return;
        }
        let mut emit = |mut event: Value| {
            // A source without clock readings leaves the replay's clock at
            // 0: no timestamp says so better than one of 1970.
            if at_ms > 0 {
                event["timestamp"] = at_ms.into();
            }
            out.frame(|buf| wire::write_json(buf, &event));
        };
        thread.event(name, event, &mut emit);
    }
}

/// A text or reasoning delta (the bulk of a stream): its event type, the
/// suffix of its message id, and its text; `None` for any other event and
/// for an empty delta (which says nothing).
fn delta_of<'a>(event: &UiEvent<'a>) -> Option<(&'static str, &'static str, &'a str)> {
    match *event {
        UiEvent::MessageDelta { text } if !text.is_empty() => Some(("TEXT_MESSAGE_CONTENT", "", text)),
        UiEvent::ThoughtDelta { text } if !text.is_empty() => Some(("REASONING_MESSAGE_CONTENT", "/reasoning", text)),
        _ => None,
    }
}

/// Writes a delta's event straight to its bytes: the bytes the general path
/// writes for it (the same keys in the same order, strings escaped by the
/// same serializer), without building a JSON value for each of the events
/// a long text is made of.
fn write_delta(out: &mut Frames, kind: &str, message_id: &str, delta: &str, at_ms: u64) {
    out.frame(|buf| {
        buf.extend_from_slice(b"{\"type\":\"");
        buf.extend_from_slice(kind.as_bytes());
        buf.extend_from_slice(b"\",\"messageId\":");
        wire::write_json(buf, &message_id);
        buf.extend_from_slice(b",\"delta\":");
        wire::write_json(buf, &delta);
        if at_ms > 0 {
            // Writing into memory cannot fail.
            let _ = write!(buf, ",\"timestamp\":{at_ms}");
        }
        buf.push(b'}');
    });
}

impl HeldCall {
    /// What AG-UI names the tool: its machine name, else its title.
    fn tool_name(&self) -> &str {
        if self.name.is_empty() {
            &self.title
        } else {
            &self.name
        }
    }
}

impl Thread {
    /// Starts a held call that has a machine name now (`TOOL_CALL_START`,
    /// live); one named only by its title waits for its round to close.
    fn start_if_named(&mut self, thread: &str, id: &str, emit: &mut dyn FnMut(Value)) {
        let starts = |call: &HeldCall| call.started_as.is_empty() && !call.name.is_empty();
        if !self.calls.iter().rev().find(|call| call.id == id).is_some_and(starts) {
            return;
        }
        // Its ids are made only for a call that starts (a declaration and
        // each title change ask).
        let (message_id, tool_call_id) = (self.message_id(thread), self.call_id(thread, id));
        let Some(call) = self.held(id) else { return };
        call.started_as.clone_from(&call.name);
        emit(json!({
            "type": "TOOL_CALL_START",
            "toolCallId": tool_call_id,
            "toolCallName": call.started_as,
            "parentMessageId": message_id,
        }));
    }

    fn run_id(&self, thread: &str) -> String {
        format!("{thread}/run-{}", self.run)
    }

    /// [`message_id`](Self::message_id), made once a round.
    fn round_id(&mut self, thread: &str) -> &str {
        let (run, round) = (self.run, self.round);
        if !matches!(&self.round_id, Some((r, n, _)) if (*r, *n) == (run, round)) {
            self.round_id = Some((run, round, self.message_id(thread)));
        }
        self.round_id.as_ref().map_or("", |(_, _, id)| id.as_str())
    }

    fn message_id(&self, thread: &str) -> String {
        format!("{thread}/run-{}/round-{}", self.run, self.round)
    }

    fn call_id(&self, thread: &str, id: &str) -> String {
        format!("{}/{id}", self.message_id(thread))
    }

    fn event(&mut self, thread: &str, event: &UiEvent<'_>, emit: &mut dyn FnMut(Value)) {
        match *event {
            UiEvent::RunStart { run } => {
                self.run = run;
                self.round = 0;
                self.usage = None;
                emit(json!({"type": "RUN_STARTED", "threadId": thread, "runId": self.run_id(thread)}));
            }
            UiEvent::MessageStart => {
                emit(json!({"type": "TEXT_MESSAGE_START", "messageId": self.message_id(thread), "role": "assistant"}))
            }
            UiEvent::MessageDelta { text } if !text.is_empty() => {
                emit(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": self.message_id(thread), "delta": text}))
            }
            UiEvent::MessageEnd => emit(json!({"type": "TEXT_MESSAGE_END", "messageId": self.message_id(thread)})),
            UiEvent::ThoughtStart => {
                let id = format!("{}/reasoning", self.message_id(thread));
                emit(json!({"type": "REASONING_START", "messageId": id}));
                emit(json!({"type": "REASONING_MESSAGE_START", "messageId": id, "role": "reasoning"}));
            }
            UiEvent::ThoughtDelta { text } if !text.is_empty() => {
                let id = format!("{}/reasoning", self.message_id(thread));
                emit(json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": text}));
            }
            UiEvent::ThoughtEnd => {
                let id = format!("{}/reasoning", self.message_id(thread));
                emit(json!({"type": "REASONING_MESSAGE_END", "messageId": id}));
                emit(json!({"type": "REASONING_END", "messageId": id}));
            }
            UiEvent::ToolCallStart { id, title, name } if self.held(id).is_some() => {
                // Declared again (an upsert): it may now have its name.
                if let Some(call) = self.held(id) {
                    call.title.clear();
                    call.title.push_str(title);
                    if !name.is_empty() {
                        call.name = name.to_owned();
                    }
                }
                self.start_if_named(thread, id, emit);
            }
            UiEvent::ToolCallStart { id, title, name } => {
                self.calls.push(HeldCall {
                    id: id.to_owned(),
                    started_as: String::new(),
                    name: name.to_owned(),
                    title: title.to_owned(),
                    arguments: String::new(),
                    result: None,
                });
                self.start_if_named(thread, id, emit);
            }
            UiEvent::ToolCallTitle { id, title, name } => {
                if let Some(call) = self.held(id) {
                    call.title.clear();
                    call.title.push_str(title);
                    call.name.clear();
                    call.name.push_str(name);
                }
                emit(json!({
                    "type": "CUSTOM",
                    "name": "roundup.tool_call_title",
                    "value": {"toolCallId": self.call_id(thread, id), "title": title},
                }));
                self.start_if_named(thread, id, emit);
            }
            UiEvent::ToolCallArgs { id, args, replace } => {
                if let Some(call) = self.held(id) {
                    if replace {
                        call.arguments.clear();
                    }
                    call.arguments.push_str(args);
                }
            }
            UiEvent::ToolCallOutput { id, content, replace } => emit(json!({
                "type": "CUSTOM",
                "name": "roundup.tool_call_output",
                "value": {"toolCallId": self.call_id(thread, id), "content": content, "replace": replace},
            })),
            UiEvent::ToolCallResult { id, content, success } => {
                let mut result = json!({"content": content});
                if !success {
                    result["metadata"] = json!({"roundup": {"success": false}});
                }
                if let Some(call) = self.held(id) {
                    call.result = Some(result);
                }
            }
            UiEvent::ToolCallInterrupted { id, reason } => {
                let reason = reason.as_str();
                let result = json!({
                    "content": format!("no result: {reason}"),
                    "metadata": {"roundup": {"placeholder": reason}},
                });
                if let Some(call) = self.held(id) {
                    call.result = Some(result);
                }
            }
            UiEvent::ToolCallStitched { id, run, round, content, success } => {
                let call = format!("{thread}/run-{run}/round-{round}/{id}");
                let waited = self.waiting.iter().position(|(r, i, _)| run == self.run && *r == round && i == id);
                // The call's one result, where its placeholder waited; a
                // result for a call not waiting (no such round in this
                // run) is a result of its own.
                let message_id = match waited {
                    Some(at) => {
                        self.waiting.remove(at);
                        format!("{call}/result")
                    }
                    None => format!("{call}/stitched-{}", self.run),
                };
                emit(json!({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": message_id,
                    "toolCallId": call,
                    "role": "tool",
                    "content": content,
                    "metadata": {"roundup": {"stitched": true, "success": success}},
                }));
            }
            UiEvent::TokenUsage { total } => self.usage = Some(total),
            UiEvent::RoundEnd { .. } => {
                for call in std::mem::take(&mut self.calls) {
                    let tool_call_id = self.call_id(thread, &call.id);
                    if call.started_as.is_empty() {
                        // Named by its title, final now.
                        emit(json!({
                            "type": "TOOL_CALL_START",
                            "toolCallId": tool_call_id,
                            "toolCallName": call.tool_name(),
                            "parentMessageId": self.message_id(thread),
                        }));
                    } else if call.tool_name() != call.started_as {
                        emit(json!({
                            "type": "CUSTOM",
                            "name": "roundup.tool_call_renamed",
                            "value": {"toolCallId": tool_call_id, "from": call.started_as, "name": call.tool_name()},
                        }));
                    }
                    if !call.arguments.is_empty() {
                        emit(json!({"type": "TOOL_CALL_ARGS", "toolCallId": tool_call_id, "delta": call.arguments}));
                    }
                    emit(json!({"type": "TOOL_CALL_END", "toolCallId": tool_call_id}));
                    let mut result = call.result.unwrap_or_else(|| json!({"content": "no result"}));
                    result["type"] = "TOOL_CALL_RESULT".into();
                    result["messageId"] = format!("{tool_call_id}/result").into();
                    result["toolCallId"] = tool_call_id.into();
                    result["role"] = "tool".into();
                    if result["metadata"]["roundup"]["placeholder"] == "superseded" {
                        // Its late result may yet come, in this run.
                        self.waiting.push((self.round, call.id, result));
                    } else {
                        emit(result);
                    }
                }
                self.round += 1;
            }
            UiEvent::RunEnd { reason, .. } => {
                // No late result came for these: their placeholders stand.
                for (_, _, result) in std::mem::take(&mut self.waiting) {
                    emit(result);
                }
                emit(run_end(thread, &self.run_id(thread), Some(reason), self.usage));
            }
            // Empty fragments, and what later versions add.
            _ => {}
        }
    }

    /// The held tool call `id` of the open round (the latest of that id).
    fn held(&mut self, id: &str) -> Option<&mut HeldCall> {
        self.calls.iter_mut().rev().find(|call| call.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::Framing;

    /// A delta written straight to bytes is the bytes of its JSON value, as
    /// every other event is written: escapes, non-ASCII names, no clock.
    #[test]
    fn deltas_are_the_bytes_of_their_json_value() {
        for (session, text, at_ms) in [
            (Some("s1"), "Hi", 1_000),
            (Some("quote\"and\\back\nslash"), "line\nbreak \"q\" \u{1}\t é 😀", 0),
            (None, "</script>", 42),
        ] {
            for (event, kind, suffix) in [
                (UiEvent::MessageDelta { text }, "TEXT_MESSAGE_CONTENT", ""),
                (UiEvent::ThoughtDelta { text }, "REASONING_MESSAGE_CONTENT", "/reasoning"),
            ] {
                let mut encoder = AguiEncoder::default();
                let mut out = Frames::new(Framing::Lines);
                encoder.ui_event(session, &UiEvent::RunStart { run: 3 }, at_ms, &mut out);
                out.clear();
                encoder.ui_event(session, &event, at_ms, &mut out);
                let thread = session.unwrap_or(UNNAMED);
                let mut expected =
                    json!({"type": kind, "messageId": format!("{thread}/run-3/round-0{suffix}"), "delta": text});
                if at_ms > 0 {
                    expected["timestamp"] = at_ms.into();
                }
                let mut line = Vec::new();
                wire::write_json(&mut line, &expected);
                line.push(b'\n');
                assert_eq!(String::from_utf8_lossy(out.bytes()), String::from_utf8_lossy(&line));
            }
        }
    }
}
