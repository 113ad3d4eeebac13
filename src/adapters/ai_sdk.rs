//! The Vercel AI SDK UI message stream adapter (v1, the body a `useChat`
//! endpoint returns with `x-vercel-ai-ui-message-stream: v1`): one chunk
//! per SSE `data:` event (or per line), `[DONE]` at the end.
//!
//! Each HTTP response is one assistant message, `start` … `finish`, made of
//! steps (one model call each, `start-step` … `finish-step`; some producers
//! send no steps at all, or a step's tool chunks before its `start-step`).
//! The builder's rules make the rounds: a step that calls tools closes with
//! their results or with the next step's first text, and a step without
//! tool calls is the message's last (the SDK's loop goes on only after tool
//! calls), so steps and rounds coincide without the adapter closing any.
//!
//! A run is the exchange until the assistant is done: a `finish` ends it
//! unless a call of the run is still without a result (a tool the browser
//! runs, an approval asked for). Then the run waits, and the next response
//! of the capture, which carries that result, goes on with it (the
//! approval flows of `useChat`, where the second request answers the
//! first).
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut ai_sdk = InputFormat::named("ai-sdk").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for chunk in [
//!     r#"{"type":"start","messageId":"m1"}"#,
//!     r#"{"type":"start-step"}"#,
//!     r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"get_weather"}"#,
//!     r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"city\":"}"#,
//!     r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"get_weather","input":{"city":"Paris"}}"#,
//!     r#"{"type":"tool-output-available","toolCallId":"c1","output":{"sky":"clear"}}"#,
//!     r#"{"type":"finish-step"}"#,
//!     r#"{"type":"finish","finishReason":"stop"}"#,
//!     "[DONE]",
//! ] {
//!     ai_sdk.translate(chunk.as_bytes(), &mut apply).unwrap();
//! }
//! let call = &builder.rounds()[0].tool_calls[0];
//! assert_eq!(call.name, "get_weather");
//! assert_eq!(call.arguments, r#"{"city":"Paris"}"#, "the whole input replaces the deltas");
//! assert_eq!(call.result.content(), Some(r#"{"sky":"clear"}"#));
//! ```

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{raw_text, raw_value, utf8};
use super::support::{is_done_marker, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of AI SDK UI message streams.
///
/// ```
/// let ai_sdk = &roundup::adapters::ai_sdk::FORMAT;
/// let chunk = br#"{"type":"start","messageId":"msg_1"}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(chunk), ai_sdk);
/// let delta = br#"{"type":"text-delta","id":"0","delta":"Hi"}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(delta), ai_sdk);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "ai-sdk",
    about: "Vercel AI SDK UI message stream (v1,
a useChat endpoint's body); a response
whose calls wait for the client goes on
in the next; one session",
    detect: |event: &Map<String, Value>| {
        let Some(kind) = event.get("type").and_then(Value::as_str) else { return false };
        // The hyphenated types are this protocol's alone; the generic ones
        // only with no field but their own.
        let only = |fields: &[&str]| event.keys().all(|key| key == "type" || fields.contains(&key.as_str()));
        match kind {
            "start" => only(&["messageId", "messageMetadata"]),
            "finish" => only(&["finishReason", "messageMetadata"]),
            "abort" => only(&["reason"]),
            "error" => event.len() == 2 && event.get("errorText").is_some_and(Value::is_string),
            "file" => only(&["url", "mediaType", "providerMetadata"]) && event.contains_key("mediaType"),
            kind => {
                HYPHENATED.contains(&kind)
                    || (kind.starts_with("data-") && event.contains_key("data") && only(&["id", "data", "transient"]))
            }
        }
    },
    adapter: || Box::<AiSdkAdapter>::default(),
};

/// The chunk types with a hyphen, which no other format sends.
const HYPHENATED: [&str; 21] = [
    "start-step",
    "finish-step",
    "reset-step",
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-available",
    "tool-input-error",
    "tool-approval-request",
    "tool-output-available",
    "tool-output-error",
    "tool-output-denied",
    "source-url",
    "source-document",
    "reasoning-file",
    "message-metadata",
];

/// Translates UI message stream chunks into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AiSdkAdapter {
    /// The calls of the run declared and still without a result: a
    /// `finish` with any left waits for the next response. Ordered, so that
    /// a checkpoint is the same value whatever the insertion order.
    pending: BTreeSet<String>,
    /// The run ended (a `finish` with nothing waiting, an `abort`): the
    /// next response begins the next run.
    finished: bool,
    /// An `error` chunk was reported: the run fails at its `finish`, or at
    /// the end of input.
    failed: bool,
    /// What each response of the run said about itself (`messageId`,
    /// `messageMetadata`, `finishReason`), in order: run meta
    /// `ai_sdk_responses`.
    responses: Vec<Map<String, Value>>,
}

/// One chunk, as the adapter reads it: every field of every chunk type,
/// borrowed from the payload.
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
struct Chunk<'a> {
    kind: Cow<'a, str>,
    delta: Option<Cow<'a, str>>,
    tool_call_id: Option<Cow<'a, str>>,
    tool_name: Option<Cow<'a, str>>,
    title: Option<Cow<'a, str>>,
    input_text_delta: Option<Cow<'a, str>>,
    input: Option<Raw<'a>>,
    output: Option<Raw<'a>>,
    error_text: Option<Cow<'a, str>>,
    preliminary: Option<bool>,
    transient: Option<bool>,
    dynamic: Option<bool>,
    provider_executed: Option<bool>,
    provider_metadata: Option<Raw<'a>>,
    meta: Option<Raw<'a>>,
    approval_id: Option<Cow<'a, str>>,
    message_id: Option<Cow<'a, str>>,
    message_metadata: Option<Raw<'a>>,
    finish_reason: Option<Cow<'a, str>>,
    reason: Option<Cow<'a, str>>,
}

read_in_place!(Chunk {
    "type" => kind as CowStr (required),
    "delta" => delta as OptCow,
    "toolCallId" => tool_call_id as ScalarText,
    "toolName" => tool_name as OptCow,
    "title" => title as OptCow,
    "inputTextDelta" => input_text_delta as OptCow,
    "input" => input,
    "output" => output,
    "errorText" => error_text as OptCow,
    "preliminary" => preliminary,
    "transient" => transient,
    "dynamic" => dynamic,
    "providerExecuted" => provider_executed,
    "providerMetadata" => provider_metadata,
    "_meta" => meta,
    "approvalId" => approval_id as ScalarText,
    "messageId" => message_id as ScalarText,
    "messageMetadata" => message_metadata,
    "finishReason" => finish_reason as OptCow,
    "reason" => reason as OptCow,
});

impl Adapter for AiSdkAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if is_done_marker(payload) {
            return Ok(());
        }
        let text = utf8(payload)?;
        let mut chunk = Chunk::default();
        Chunk::read_into(text, &mut chunk).map_err(|error| BadLine::json(&error))?;
        let kind = chunk.kind.as_ref();
        if self.finished {
            let transient = kind.starts_with("data-") && chunk.transient == Some(true);
            if matches!(kind, "finish" | "abort") || transient {
                // The response already ended its run (an `abort` and then
                // its `finish`): nothing more to end, and nothing dropped.
                // A transient data part after it adds to no message
                // (roundup's own `--emit ai-sdk` sends an anomaly that
                // follows a run's end so): not a next response either.
                let detail = format!("ai-sdk: {kind} after the run ended: {text}");
                report(calls, None, AnomalyKind::AfterFinish, &detail);
                return Ok(());
            }
            // The next response (or a chunk of one that lost its `start`).
            self.begin(calls);
        }
        if let Err(missing) = self.chunk(&chunk, text, calls) {
            let detail = match missing {
                Some(field) => format!("ai-sdk: {kind} without {field}: {text}"),
                None => format!("ai-sdk: unknown chunk: {text}"),
            };
            report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
        Ok(())
    }

    /// An `error` with no `finish` after it still fails the run; a run
    /// left running gets its responses whole (the end of input finishes
    /// it).
    fn end(&mut self, calls: &mut dyn CallSink) {
        if self.failed && !self.finished {
            self.end_run(FinishReason::Failed, calls);
        } else if !self.finished {
            // Left running: the end of input finishes it.
            self.give_responses(calls);
        }
    }
}

/// Why a chunk was not translated: the required field it lacks, or `None`
/// for a type this protocol does not define.
type Untranslated = Option<&'static str>;

impl AiSdkAdapter {
    /// One chunk of the run being read.
    fn chunk(&mut self, chunk: &Chunk<'_>, text: &str, calls: &mut dyn CallSink) -> Result<(), Untranslated> {
        let kind = chunk.kind.as_ref();
        match kind {
            "start" => {
                let mut response = Map::new();
                if let Some(id) = chunk.message_id.as_deref() {
                    response.insert("message_id".into(), Value::from(id));
                }
                self.responses.push(response);
                match chunk.message_metadata {
                    Some(metadata) => self.message_metadata(metadata, calls),
                    None => self.tell_responses(calls),
                }
            }
            "text-delta" => calls.call(None, Call::Message { text: chunk.delta.as_deref().ok_or(Some("delta"))? }),
            "reasoning-delta" => {
                calls.call(None, Call::Thought { text: chunk.delta.as_deref().ok_or(Some("delta"))? });
            }
            "text-start" | "text-end" | "reasoning-start" | "reasoning-end" => {
                // The parts' ids only group deltas that already came in
                // order; what a provider attaches (a reasoning signature,
                // encrypted reasoning) goes back with the next request.
                if chunk.provider_metadata.is_some() {
                    keep(calls, "ai_sdk_provider_metadata", text);
                }
            }
            "tool-input-start" => {
                let id = tool_id(chunk)?;
                self.declare(id, chunk, calls)?;
            }
            "tool-input-delta" => {
                let id = tool_id(chunk)?;
                let delta = chunk.input_text_delta.as_deref().ok_or(Some("inputTextDelta"))?;
                calls.call(None, Call::ToolUpdate { id, content: delta, status: ToolCallStatus::InProgress });
            }
            "tool-input-available" | "tool-input-error" => {
                let id = tool_id(chunk)?;
                if !self.pending.contains(id) {
                    self.declare(id, chunk, calls)?;
                } else {
                    self.tool_meta(id, chunk, calls);
                }
                if let Some(input) = chunk.input {
                    calls.call(None, Call::ArgsSnapshot { id, args: &raw_text(input) });
                }
                if kind == "tool-input-error" {
                    let error = chunk.error_text.as_deref().ok_or(Some("errorText"))?;
                    self.result_or_none(id, error, chunk, calls);
                }
            }
            "tool-approval-request" => {
                let id = tool_id(chunk)?;
                let approval = chunk.approval_id.as_deref().ok_or(Some("approvalId"))?;
                calls.call(None, Call::ToolMeta { id, meta: &one("ai_sdk_approval_id", Value::from(approval)) });
            }
            "tool-output-available" => {
                let id = tool_id(chunk)?;
                let output = chunk.output.map_or(Cow::Borrowed("null"), raw_text);
                if chunk.preliminary == Some(true) {
                    // A streaming tool's output so far: each replaces the last.
                    calls.call(None, Call::ToolOutput { id, content: &output, replace: true });
                } else {
                    self.result(id, &output, ToolCallStatus::Completed, calls);
                }
            }
            "tool-output-error" => {
                let id = tool_id(chunk)?;
                let error = chunk.error_text.as_deref().ok_or(Some("errorText"))?;
                self.result_or_none(id, error, chunk, calls);
            }
            "tool-output-denied" => {
                let id = tool_id(chunk)?;
                calls.call(None, Call::ToolMeta { id, meta: &one("ai_sdk_denied", Value::Bool(true)) });
                self.result(id, "denied", ToolCallStatus::Failed, calls);
            }
            "source-url" | "source-document" => keep(calls, "ai_sdk_sources", text),
            "file" | "reasoning-file" => keep(calls, "ai_sdk_files", text),
            "custom" => keep(calls, "ai_sdk_custom", text),
            kind if kind.starts_with("data-") => keep(calls, "ai_sdk_data", text),
            "message-metadata" => {
                self.message_metadata(chunk.message_metadata.ok_or(Some("messageMetadata"))?, calls);
            }
            "start-step" | "finish-step" => {}
            "reset-step" => {
                // What the client drops of the step was already delivered:
                // the round says it holds such parts.
                calls.call(None, Call::RoundMeta { meta: &one("ai_sdk_reset_step", Value::Bool(true)) });
            }
            "finish" => self.finish(chunk, calls),
            "abort" => {
                if let Some(reason) = chunk.reason.as_deref() {
                    calls.call(None, Call::RunMeta { meta: &one("ai_sdk_abort_reason", Value::from(reason)) });
                }
                self.end_run(FinishReason::Canceled, calls);
            }
            "error" => {
                let error = chunk.error_text.as_deref().ok_or(Some("errorText"))?;
                report(calls, None, AnomalyKind::ProtocolError, &format!("ai-sdk: error: {error}"));
                self.failed = true;
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// A new tool call: `name` is the tool's, the title the producer's
    /// `title` when it gives one.
    fn declare(&mut self, id: &str, chunk: &Chunk<'_>, calls: &mut dyn CallSink) -> Result<(), Untranslated> {
        let name = chunk.tool_name.as_deref().ok_or(Some("toolName"))?;
        let title = chunk.title.as_deref().unwrap_or(name);
        calls.call(None, Call::ToolCall { id, title, name });
        self.pending.insert(id.to_owned());
        self.tool_meta(id, chunk, calls);
        Ok(())
    }

    /// What a chunk says about its call beyond name and arguments.
    fn tool_meta(&self, id: &str, chunk: &Chunk<'_>, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        for (key, flag) in [("ai_sdk_dynamic", chunk.dynamic), ("ai_sdk_provider_executed", chunk.provider_executed)] {
            if let Some(flag) = flag {
                meta.insert(key.into(), Value::Bool(flag));
            }
        }
        for (key, value) in [("ai_sdk_provider_metadata", chunk.provider_metadata), ("ai_sdk_meta", chunk.meta)] {
            if let Some(value) = value {
                meta.insert(key.into(), raw_value(value));
            }
        }
        if !meta.is_empty() {
            calls.call(None, Call::ToolMeta { id, meta: &meta });
        }
    }

    /// A call's result.
    fn result(&mut self, id: &str, content: &str, status: ToolCallStatus, calls: &mut dyn CallSink) {
        self.pending.remove(id);
        calls.call(None, Call::ToolUpdate { id, content, status });
    }

    /// An error output: the call's failed result, unless it says that the
    /// call got none (`providerMetadata.roundup.placeholder`, what
    /// roundup's `--emit ai-sdk` writes for a placeholder). Such a call
    /// waits for nothing: the run's end gives it its placeholder again, so
    /// that reading roundup's stream back gives the same rounds.
    fn result_or_none(&mut self, id: &str, error: &str, chunk: &Chunk<'_>, calls: &mut dyn CallSink) {
        let placeholder =
            chunk.provider_metadata.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok()).is_some_and(
                |metadata| metadata.get("roundup").and_then(|r| r.get("placeholder")).is_some_and(Value::is_string),
            );
        if placeholder {
            self.pending.remove(id);
        } else {
            self.result(id, error, ToolCallStatus::Failed, calls);
        }
    }

    /// `messageMetadata` (of `start`, `message-metadata` or `finish`):
    /// merged into the response's, as `useChat` merges it; a `usage` in it
    /// is the token gauge.
    fn message_metadata(&mut self, metadata: Raw<'_>, calls: &mut dyn CallSink) {
        let metadata = raw_value(metadata);
        if let Some(total) = metadata.get("usage").and_then(usage_total) {
            calls.call(None, Call::TokenUsage { total });
        }
        let response = self.response();
        match (response.get_mut("metadata"), metadata) {
            (Some(Value::Object(kept)), Value::Object(new)) => kept.extend(new),
            (_, metadata) => {
                response.insert("metadata".into(), metadata);
            }
        }
        self.tell_responses(calls);
    }

    /// The response being read (one is made for chunks before any `start`).
    fn response(&mut self) -> &mut Map<String, Value> {
        if self.responses.is_empty() {
            self.responses.push(Map::new());
        }
        let last = self.responses.len() - 1;
        &mut self.responses[last]
    }

    /// The run's responses while it has one, which fixes the key's place
    /// among the run's metadata; later ones wait for the run's end
    /// ([`give_responses`](Self::give_responses)): given whole after every
    /// response, a run of n responses would copy n²/2 of them.
    fn tell_responses(&self, calls: &mut dyn CallSink) {
        if self.responses.len() == 1 {
            self.give_responses(calls);
        }
    }

    /// The run's responses, whole (none when it has none).
    fn give_responses(&self, calls: &mut dyn CallSink) {
        if self.responses.is_empty() {
            return;
        }
        let responses = self.responses.iter().cloned().map(Value::Object).collect();
        let meta = one("ai_sdk_responses", Value::Array(responses));
        calls.call(None, Call::RunMeta { meta: &meta });
    }

    /// `finish`: the end of a response, and of the run unless calls wait.
    fn finish(&mut self, chunk: &Chunk<'_>, calls: &mut dyn CallSink) {
        let native = chunk.finish_reason.as_deref();
        if let Some(native) = native {
            self.response().insert("finish_reason".into(), Value::from(native));
        }
        match chunk.message_metadata {
            Some(metadata) => self.message_metadata(metadata, calls),
            None => self.tell_responses(calls),
        }
        if self.failed {
            return self.end_run(FinishReason::Failed, calls);
        }
        if !self.pending.is_empty() {
            // The client runs a tool or answers an approval, and sends the
            // results in its next request: the run goes on there.
            return;
        }
        let reason = match native {
            None | Some("stop" | "length" | "tool-calls" | "other") => FinishReason::Completed,
            Some("content-filter" | "error") => FinishReason::Failed,
            // The SDK's reason for a provider stream that ended without a
            // completion signal.
            Some("interrupted") => FinishReason::Interrupted,
            Some(other) => {
                report(calls, None, AnomalyKind::UnknownStatus, &format!("ai-sdk: finish reason {other}"));
                FinishReason::Completed
            }
        };
        if let Some(native) = native {
            calls.call(None, Call::RunMeta { meta: &one("ai_sdk_finish_reason", Value::from(native)) });
        }
        self.end_run(reason, calls);
    }

    fn end_run(&mut self, reason: FinishReason, calls: &mut dyn CallSink) {
        self.give_responses(calls);
        calls.call(None, Call::Finish { reason });
        self.finished = true;
    }

    /// The next run: what the last one kept is forgotten.
    fn begin(&mut self, calls: &mut dyn CallSink) {
        calls.call(None, Call::Start);
        self.finished = false;
        self.failed = false;
        self.pending.clear();
        self.responses.clear();
    }
}

/// The chunk's `toolCallId`.
fn tool_id<'c>(chunk: &'c Chunk<'_>) -> Result<&'c str, Untranslated> {
    chunk.tool_call_id.as_deref().ok_or(Some("toolCallId"))
}

/// A chunk kept whole in the round's metadata, under `key` (a list).
fn keep(calls: &mut dyn CallSink, key: &str, text: &str) {
    calls.call(None, Call::RoundMeta { meta: &one(key, Value::Array(vec![raw_value_of(text)])) });
}

/// A chunk's JSON text as a value.
fn raw_value_of(text: &str) -> Value {
    super::borrowed::json_value(text)
}

/// The token total of a `usage` object: its total, else input plus
/// output (the SDK's names, then the older prompt and completion ones).
fn usage_total(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    field("totalTokens")
        .or_else(|| field("inputTokens")?.checked_add(field("outputTokens")?))
        .or_else(|| field("promptTokens")?.checked_add(field("completionTokens")?))
}
