//! The Anthropic Messages adapter: `message_start` … `message_stop`
//! streams (SSE, or one event per line), and the host's tool results
//! between messages in a recorded agent loop.
//!
//! A message is one model call: its client `tool_use` results come from the
//! host, as a user message `{"role":"user","content":[{"type":"tool_result",
//! ...}]}` or a bare `{"type":"tool_result",...}` line before the next
//! `message_start`. Server tools (web search, web fetch, code execution,
//! tool search, MCP) have their result in the stream itself. A user message
//! with text begins a new run.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut anthropic = InputFormat::named("anthropic").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":10}}}"#,
//!     r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}"#,
//!     r#"{"type":"content_block_stop","index":0}"#,
//!     r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
//!     r#"{"type":"message_stop"}"#,
//!     r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}"#,
//! ] {
//!     anthropic.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, "{}", "a tool with no arguments has {{}}");
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! assert_eq!(round.meta["anthropic_stop_reason"], "tool_use");
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{opt_cow, raw_text, raw_value, utf8};
use super::support::{is_done_marker, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Anthropic Messages streams.
///
/// ```
/// let anthropic = &roundup::adapters::anthropic::FORMAT;
/// let event = br#"{"type":"message_start","message":{"id":"msg_1"}}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(event), anthropic);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "anthropic",
    about: "Anthropic Messages stream events, with
the host's tool_result blocks (or user
messages) between messages; one session",
    detect: |event: &Map<String, Value>| {
        let kind = event.get("type").and_then(Value::as_str);
        matches!(
            kind,
            Some("message_start" | "content_block_start" | "content_block_delta" | "content_block_stop")
                | Some("message_delta" | "message_stop" | "ping")
        ) || (kind == Some("tool_result") && event.contains_key("tool_use_id"))
            || (event.get("role").and_then(Value::as_str) == Some("user")
                && event.get("content").and_then(Value::as_array).is_some_and(|blocks| {
                    blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                }))
    },
    adapter: || Box::<AnthropicAdapter>::default(),
};

/// Translates Anthropic Messages events and host tool results into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AnthropicAdapter {
    messages: MessageStream,
    /// The last message's `stop_reason`, from its `message_delta`.
    #[serde(default)]
    stop_reason: Option<String>,
    /// The run ended with a message that ended the turn: what comes next
    /// (another message, the user's) begins a new run.
    #[serde(default)]
    finished: bool,
}

impl Adapter for AnthropicAdapter {
    state_is_self!();

    fn end(&mut self, calls: &mut dyn CallSink) {
        self.messages.end(None, calls);
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if is_done_marker(payload) {
            return Ok(());
        }
        let text = utf8(payload)?;
        let mut event = Event::default();
        Event::read_into(text, &mut event).map_err(|error| BadLine::json(&error))?;
        let kind = event.kind.as_deref();
        // After a turn that ended, the next message or user turn is the
        // next run.
        if self.finished && matches!(kind, None | Some("message_start")) {
            self.finished = false;
            calls.call(None, Call::Start);
        }
        if kind.is_none() && event.role.as_deref() == Some("user") {
            self.messages.user_message(event.content, None, calls);
            return Ok(());
        }
        if kind == Some("message_delta") {
            if let Some(reason) = event.delta.as_ref().and_then(|d| d.stop_reason.as_deref()) {
                self.stop_reason = Some(reason.to_owned());
            }
        }
        if !self.messages.event(&event, text, None, calls) {
            let detail = format!("anthropic: unknown event: {}", String::from_utf8_lossy(payload));
            report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
        if kind == Some("message_stop") {
            // A message that ends the turn ends the run, at once: a live
            // view sees the turn end when the model ends it, not at the end
            // of the stream. `tool_use` (the host runs the tools and calls
            // again) and `pause_turn` go on.
            let reason = match self.stop_reason.take().as_deref() {
                Some("end_turn" | "stop_sequence" | "max_tokens" | "model_context_window_exceeded") => {
                    Some(FinishReason::Completed)
                }
                Some("refusal") => Some(FinishReason::Failed),
                _ => None,
            };
            if let Some(reason) = reason {
                self.messages.end(None, calls);
                calls.call(None, Call::Finish { reason });
                self.finished = true;
            }
        }
        Ok(())
    }
}

/// One stream event (or host line), as the adapter reads it.
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
pub(crate) struct Event<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub index: Option<u64>,
    pub message: Option<MessageInfo<'a>>,
    /// Decoded in the same pass as the event; the rare paths that keep a
    /// block or delta as it came read it again from the event's text.
    pub content_block: Option<Block<'a>>,
    pub delta: Option<Delta<'a>>,
    pub usage: Option<Raw<'a>>,
    pub context_management: Option<Raw<'a>>,
    pub error: Option<Raw<'a>>,
    /// A host line: a user message's role and content, or a bare
    /// `tool_result` block's fields.
    pub role: Option<Cow<'a, str>>,
    pub content: Option<Raw<'a>>,
    pub tool_use_id: Option<Cow<'a, str>>,
    pub is_error: Option<bool>,
}

read_in_place!(Event {
    "type" => kind as OptCow,
    "index" => index,
    "message" => message in place,
    "content_block" => content_block in place,
    "delta" => delta in place,
    "usage" => usage,
    "context_management" => context_management,
    "error" => error,
    "role" => role as OptCow,
    "content" => content,
    "tool_use_id" => tool_use_id as ScalarText,
    "is_error" => is_error,
});

#[derive(Debug, Default)]
pub(crate) struct MessageInfo<'a> {
    pub id: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub usage: Option<Raw<'a>>,
}

read_in_place!(MessageInfo {
    "id" => id as OptCow,
    "model" => model as OptCow,
    "usage" => usage,
});

/// A content block as `content_block_start` opens it (or as a user
/// message carries it).
#[derive(Debug, Default)]
pub(crate) struct Block<'a> {
    pub kind: Cow<'a, str>,
    pub id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    /// A tool call's whole input: a stream's `content_block_start` has only
    /// `{}` (the deltas carry it); a Claude Code snapshot has it all.
    pub input: Option<Raw<'a>>,
    pub text: Option<Cow<'a, str>>,
    pub thinking: Option<Cow<'a, str>>,
    pub signature: Option<Cow<'a, str>>,
    pub tool_use_id: Option<Cow<'a, str>>,
    pub content: Option<Raw<'a>>,
    pub is_error: Option<bool>,
}

read_in_place!(Block {
    "type" => kind as CowStr,
    "id" => id as ScalarText,
    "name" => name as OptCow,
    "input" => input,
    "text" => text as OptCow,
    "thinking" => thinking as OptCow,
    "signature" => signature as OptCow,
    "tool_use_id" => tool_use_id as ScalarText,
    "content" => content,
    "is_error" => is_error,
});

#[derive(Debug, Default)]
pub(crate) struct Delta<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub text: Option<Cow<'a, str>>,
    pub thinking: Option<Cow<'a, str>>,
    pub partial_json: Option<Cow<'a, str>>,
    pub signature: Option<Cow<'a, str>>,
    pub citation: Option<Raw<'a>>,
    pub content: Option<Cow<'a, str>>,
    pub stop_reason: Option<Cow<'a, str>>,
    pub stop_sequence: Option<Cow<'a, str>>,
    pub stop_details: Option<Raw<'a>>,
}

read_in_place!(Delta {
    "type" => kind as OptCow,
    "text" => text as OptCow,
    "thinking" => thinking as OptCow,
    "partial_json" => partial_json as OptCow,
    "signature" => signature as OptCow,
    "citation" => citation,
    "content" => content as OptCow,
    "stop_reason" => stop_reason as OptCow,
    "stop_sequence" => stop_sequence as OptCow,
    "stop_details" => stop_details,
});

/// Open blocks kept per message at most (a real message has a few).
const MAX_OPEN_BLOCKS: usize = 256;

/// The state of one Messages stream: the message being read and its open
/// blocks. Shared with the Claude Code adapter, whose `stream_event` lines
/// carry these events.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct MessageStream {
    /// The message being read (`message_start`'s id): a repeated
    /// `message_start` (a proxy's retry) is read once.
    message: String,
    model: String,
    /// The usage `message_start` gave; `message_delta` adds to it.
    usage: Map<String, Value>,
    /// Blocks by `index` (which restarts at 0 in every message).
    blocks: SmallVec<[(u64, OpenBlock); 4]>,
}

#[derive(Debug, Serialize, Deserialize)]
enum OpenBlock {
    Text,
    /// A tool call, and whether any argument text came.
    Tool {
        id: String,
        arguments: bool,
    },
    /// A block kept whole in the round's metadata when it ends (thinking
    /// and its signature, compaction): what a client sends back unchanged.
    Kept {
        kind: String,
        text: String,
        signature: String,
    },
    Other,
}

impl MessageStream {
    /// Translates one stream event for `session`; `false` when the event
    /// is not one of the Messages stream (for the caller to report).
    /// `event_text` is the event's JSON, read again for what is kept as it
    /// came.
    pub(crate) fn event(
        &mut self,
        event: &Event<'_>,
        event_text: &str,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) -> bool {
        match event.kind.as_deref().unwrap_or("") {
            "message_start" => {
                let Some(message) = &event.message else { return true };
                let id = message.id.as_deref().unwrap_or("");
                if !id.is_empty() && id == self.message {
                    return true;
                }
                self.message = id.to_owned();
                self.model = message.model.as_deref().unwrap_or("").to_owned();
                self.usage = message.usage.map(raw_value).and_then(into_object).unwrap_or_default();
                // Blocks the last message never stopped end with it.
                self.end(session, calls);
            }
            "content_block_start" => {
                let (Some(index), Some(block)) = (event.index, &event.content_block) else { return false };
                let open = self.block_start(block, event_text, session, calls);
                if let Some(at) = self.blocks.iter().position(|(i, _)| *i == index) {
                    let (_, replaced) = self.blocks.remove(at);
                    block_stop(replaced, session, calls);
                }
                // A stream that opens blocks and never stops them (nor starts
                // a message) is bounded: the oldest is ended as if stopped.
                if self.blocks.len() >= MAX_OPEN_BLOCKS {
                    let (_, oldest) = self.blocks.remove(0);
                    block_stop(oldest, session, calls);
                }
                self.blocks.push((index, open));
            }
            "content_block_delta" => {
                let (Some(index), Some(delta)) = (event.index, &event.delta) else { return false };
                self.block_delta(index, delta, event_text, session, calls);
            }
            "content_block_stop" => {
                let Some(index) = event.index else { return false };
                let Some(at) = self.blocks.iter().position(|(i, _)| *i == index) else { return true };
                let (_, block) = self.blocks.remove(at);
                block_stop(block, session, calls);
            }
            "message_delta" => self.message_delta(event, session, calls),
            "message_stop" | "ping" => {}
            "error" => {
                let error = event.error.map_or("", |e| e.get());
                report(calls, session, AnomalyKind::ProtocolError, &format!("anthropic: error: {error}"));
                calls.call(session, Call::Finish { reason: FinishReason::Failed });
            }
            "tool_result" => {
                let id = event.tool_use_id.as_deref().unwrap_or("");
                tool_result(id, event.content, event.is_error == Some(true), session, calls);
            }
            _ => return false,
        }
        true
    }

    fn block_start(
        &mut self,
        block: &Block<'_>,
        event_text: &str,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) -> OpenBlock {
        match block.kind.as_ref() {
            "text" => {
                if let Some(text) = &block.text {
                    calls.call(session, Call::Message { text });
                }
                OpenBlock::Text
            }
            kind @ ("thinking" | "redacted_thinking" | "compaction") => {
                let text = block.thinking.as_deref().or(block.text.as_deref()).unwrap_or("");
                calls.call(session, Call::Thought { text });
                if kind == "redacted_thinking" {
                    // Nothing streams into it: kept as it came.
                    let whole = Value::Array(vec![field_of(event_text, "content_block")]);
                    calls.call(session, Call::RoundMeta { meta: &one("anthropic_kept_blocks", whole) });
                    return OpenBlock::Other;
                }
                let text =
                    if kind == "compaction" { block.content.map(raw_text).unwrap_or_default() } else { text.into() };
                let signature = block.signature.as_deref().unwrap_or("").to_owned();
                OpenBlock::Kept { kind: kind.to_owned(), text: text.into_owned(), signature }
            }
            "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                let id = block.id.as_deref().unwrap_or("");
                let name = block.name.as_deref().unwrap_or("");
                calls.call(session, Call::ToolCall { id, title: name, name });
                if block.kind != "tool_use" {
                    calls.call(
                        session,
                        Call::ToolMeta { id, meta: &one("anthropic_block_type", Value::from(block.kind.as_ref())) },
                    );
                }
                // `input: {}` here is not the final value: the deltas are.
                OpenBlock::Tool { id: id.to_owned(), arguments: false }
            }
            kind if kind.ends_with("_tool_result") => {
                let id = block.tool_use_id.as_deref().unwrap_or("");
                let failed = block.is_error == Some(true) || result_is_error(block.content);
                tool_result(id, block.content, failed, session, calls);
                OpenBlock::Other
            }
            _ => {
                let block = field_of(event_text, "content_block");
                report(calls, session, AnomalyKind::UnknownContent, &format!("anthropic: content block: {block}"));
                OpenBlock::Other
            }
        }
    }

    fn block_delta(
        &mut self,
        index: u64,
        delta: &Delta<'_>,
        event_text: &str,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) {
        let block = self.blocks.iter_mut().find(|(i, _)| *i == index).map(|(_, b)| b);
        match (delta.kind.as_deref().unwrap_or(""), block) {
            ("text_delta", _) => calls.call(session, Call::Message { text: delta.text.as_deref().unwrap_or("") }),
            ("thinking_delta", block) => {
                let text = delta.thinking.as_deref().unwrap_or("");
                calls.call(session, Call::Thought { text });
                if let Some(OpenBlock::Kept { text: kept, .. }) = block {
                    kept.push_str(text);
                }
            }
            ("signature_delta", Some(OpenBlock::Kept { signature, .. })) => {
                signature.push_str(delta.signature.as_deref().unwrap_or(""));
            }
            ("compaction_delta", Some(OpenBlock::Kept { text, .. })) => {
                text.push_str(delta.content.as_deref().unwrap_or(""));
            }
            ("input_json_delta", Some(OpenBlock::Tool { id, arguments })) => {
                let fragment = delta.partial_json.as_deref().unwrap_or("");
                *arguments |= !fragment.is_empty();
                calls.call(session, Call::ToolUpdate { id, content: fragment, status: ToolCallStatus::InProgress });
            }
            ("citations_delta", _) => {
                let citation = delta.citation.map(raw_value).unwrap_or(Value::Null);
                calls
                    .call(session, Call::RoundMeta { meta: &one("anthropic_citations", Value::Array(vec![citation])) });
            }
            (kind, _) => {
                let delta = field_of(event_text, "delta");
                let detail = format!("anthropic: a {kind} delta for block {index}, which is not open for it: {delta}");
                report(calls, session, AnomalyKind::UnknownContent, &detail);
            }
        }
    }

    fn message_delta(&mut self, event: &Event<'_>, session: Option<&str>, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        if let Some(delta) = &event.delta {
            if let Some(reason) = &delta.stop_reason {
                meta.insert("anthropic_stop_reason".into(), Value::from(reason.as_ref()));
            }
            if let Some(sequence) = &delta.stop_sequence {
                meta.insert("anthropic_stop_sequence".into(), Value::from(sequence.as_ref()));
            }
            if let Some(details) = delta.stop_details {
                meta.insert("anthropic_stop_details".into(), raw_value(details));
            }
        }
        if let Some(context) = event.context_management {
            meta.insert("anthropic_context_management".into(), raw_value(context));
        }
        if !self.message.is_empty() {
            meta.insert("anthropic_message_id".into(), Value::from(self.message.as_str()));
        }
        if !self.model.is_empty() {
            meta.insert("anthropic_model".into(), Value::from(self.model.as_str()));
        }
        if let Some(usage) = event.usage.map(raw_value).and_then(into_object) {
            // Cumulative within the message: its fields replace.
            self.usage.extend(usage);
            let field = |name: &str| self.usage.get(name).and_then(Value::as_u64).unwrap_or(0);
            let total = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"]
                .into_iter()
                .map(field)
                .fold(0, u64::saturating_add);
            calls.call(session, Call::TokenUsage { total });
            meta.insert("anthropic_usage".into(), Value::Object(self.usage.clone()));
        }
        // A message with no content (a refusal before any text) makes no
        // round: the machine keeps round metadata without a round in the
        // run's, in the order it came.
        calls.call(session, Call::RoundMeta { meta: &meta });
    }

    /// Ends the blocks still open (as `content_block_stop` would): at a new
    /// message, and at the end of the stream, so that what a block kept
    /// (a thinking block's signature) is not lost with it.
    pub(crate) fn end(&mut self, session: Option<&str>, calls: &mut dyn CallSink) {
        for (_, block) in std::mem::take(&mut self.blocks) {
            block_stop(block, session, calls);
        }
    }

    /// A user message between model calls: its `tool_result` blocks are
    /// results; text in it is the user's next prompt, a new run.
    pub(crate) fn user_message(&mut self, content: Option<Raw<'_>>, session: Option<&str>, calls: &mut dyn CallSink) {
        let blocks: Vec<Raw<'_>> = match content.map(|c| serde_json::from_str(c.get())) {
            Some(Ok(blocks)) => blocks,
            _ => {
                // A string, or blocks the adapter does not read: a prompt.
                calls.call(session, Call::Start);
                let text = content.map(raw_value).unwrap_or(Value::Null);
                return calls.call(session, Call::RunMeta { meta: &one("anthropic_user_message", text) });
            }
        };
        let mut prompt = Vec::new();
        for raw in blocks {
            match Block::read(raw.get()) {
                Ok(block) if block.kind == "tool_result" => {
                    let id = block.tool_use_id.as_deref().unwrap_or("");
                    tool_result(id, block.content, block.is_error == Some(true), session, calls);
                }
                _ => prompt.push(raw_value(raw)),
            }
        }
        if !prompt.is_empty() {
            calls.call(session, Call::Start);
            calls.call(session, Call::RunMeta { meta: &one("anthropic_user_message", Value::Array(prompt)) });
        }
    }
}

/// A block's end: a tool call with no argument text has `{}`; a kept
/// block goes whole into the round's metadata.
fn block_stop(block: OpenBlock, session: Option<&str>, calls: &mut dyn CallSink) {
    match block {
        OpenBlock::Tool { id, arguments: false } => calls.call(session, Call::ArgsSnapshot { id: &id, args: "{}" }),
        OpenBlock::Kept { kind, text, signature } => {
            let mut kept = Map::new();
            kept.insert("type".into(), Value::from(kind.as_str()));
            let field = if kind == "compaction" { "content" } else { "thinking" };
            kept.insert(field.into(), Value::from(text));
            if !signature.is_empty() {
                kept.insert("signature".into(), Value::from(signature));
            }
            let meta = one("anthropic_kept_blocks", Value::Array(vec![Value::Object(kept)]));
            calls.call(session, Call::RoundMeta { meta: &meta });
        }
        OpenBlock::Tool { .. } | OpenBlock::Text | OpenBlock::Other => {}
    }
}

/// A tool's result: the content as text (a string as is, blocks as their
/// JSON), failed when the producer says so.
fn tool_result(id: &str, content: Option<Raw<'_>>, failed: bool, session: Option<&str>, calls: &mut dyn CallSink) {
    let content = content.map(raw_text).unwrap_or_default();
    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    calls.call(session, Call::ToolUpdate { id, content: &content, status });
}

/// A server tool's result content that reports an error
/// (`{"type":"..._error","error_code":...}`).
fn result_is_error(content: Option<Raw<'_>>) -> bool {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
        kind: Option<Cow<'a, str>>,
        #[serde(default)]
        error_code: Option<Raw<'a>>,
    }
    content
        .and_then(|c| serde_json::from_str::<Head<'_>>(c.get()).ok())
        .is_some_and(|head| head.error_code.is_some() || head.kind.is_some_and(|k| k.ends_with("_error")))
}

/// A field of an event as it came (for what is kept whole or reported),
/// from `text`: the event's JSON, or a line that carries it under `event`
/// (Claude Code's `stream_event`). Only the rare paths read it again.
fn field_of(text: &str, field: &str) -> Value {
    let Ok(mut line) = serde_json::from_str::<Map<String, Value>>(text) else { return Value::Null };
    match line.remove(field) {
        Some(value) => value,
        None => line.get_mut("event").and_then(|event| event.get_mut(field)).map(Value::take).unwrap_or(Value::Null),
    }
}

fn into_object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}
