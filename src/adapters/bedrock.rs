//! The AWS Bedrock `ConverseStream` adapter: the events of a Converse
//! response, as the AWS SDKs log them (`{"messageStart":{...}}`, one event
//! per line) or as the replay decodes them from a raw
//! `application/vnd.amazon.eventstream` body (each frame handed on in that
//! same shape), and the host's turns between responses in a recorded agent
//! loop.
//!
//! A response is one model call. Its content blocks are keyed by
//! `contentBlockIndex`; text and reasoning blocks have no
//! `contentBlockStart` (their first delta opens them), tool blocks do. A
//! client tool's result comes from the host, as a user message
//! `{"role":"user","content":[{"toolResult":{...}}]}` before the next
//! response; a server tool's (`type: server_tool_use`) is a block of the
//! stream. The response's `metadata` (usage, metrics) comes after its
//! `messageStop`, so a `stopReason` that ends the turn ends the run once
//! the response is over: at its metadata, at the next event of another
//! response, or at the end of the stream.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut bedrock = InputFormat::named("bedrock").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"messageStart":{"role":"assistant"}}"#,
//!     r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Let me look."}}}"#,
//!     r#"{"contentBlockStart":{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"ls"}}}}"#,
//!     r#"{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"dir\":"}}}}"#,
//!     r#"{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\".\"}"}}}}"#,
//!     r#"{"contentBlockStop":{"contentBlockIndex":1}}"#,
//!     r#"{"messageStop":{"stopReason":"tool_use"}}"#,
//!     r#"{"metadata":{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":90}}}"#,
//!     r#"{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"a.txt"}],"status":"success"}}]}"#,
//! ] {
//!     bedrock.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.message, "Let me look.");
//! let call = &round.tool_calls[0];
//! assert_eq!((call.id.as_str(), call.name.as_str()), ("tooluse_1", "ls"));
//! assert_eq!(call.arguments, r#"{"dir":"."}"#);
//! assert_eq!(call.result.content(), Some("a.txt"));
//! assert_eq!(round.meta["bedrock_stop_reason"], "tool_use");
//! assert_eq!(round.meta["bedrock_usage"]["totalTokens"], 15);
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::anthropic::AnthropicAdapter;
use super::borrowed::{
    opt_cow, raw_text, raw_value, scalar_text, scan_count_field, scan_whole, utf8, view_of, Fields, InPlace, Key,
    OptCow, Scan, Within,
};
use super::support::{base64_decode, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The event names of a `ConverseStream` response.
const EVENTS: [&str; 6] =
    ["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"];

/// The registry row of Bedrock `ConverseStream` events.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let bedrock = &roundup::adapters::bedrock::FORMAT;
/// assert_eq!(InputFormat::detect(br#"{"messageStart":{"role":"assistant"}}"#), bedrock);
/// assert_eq!(InputFormat::detect(br#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}"#), bedrock);
/// assert_eq!(InputFormat::detect(br#"{"throttlingException":{"message":"Too many requests"}}"#), bedrock);
/// assert_ne!(InputFormat::detect(br#"{"metadata":{"source":"x"}}"#), bedrock);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "bedrock",
    about: "AWS Bedrock ConverseStream events: a raw
application/vnd.amazon.eventstream body
(told by its first bytes) or the SDKs'
{\"<event>\":{...}} lines, with the host's
toolResult turns between responses; one
session",
    detect: |event: &Map<String, Value>| {
        let mut keys = event.iter().filter(|(key, _)| *key != "p");
        let (Some((key, value)), None) = (keys.next(), keys.next()) else {
            return event.get("role").and_then(Value::as_str) == Some("user")
                && event.get("content").and_then(Value::as_array).is_some_and(|blocks| {
                    blocks.iter().any(|block| block.get("toolResult").is_some_and(Value::is_object))
                });
        };
        let Some(body) = value.as_object() else { return false };
        match key.as_str() {
            // A `metadata` object is common; Bedrock's has usage or metrics.
            "metadata" => body.contains_key("usage") || body.contains_key("metrics"),
            // `InvokeModelWithResponseStream`: the model's event, base64.
            "chunk" => body.get("bytes").is_some_and(Value::is_string),
            key if EVENTS.contains(&key) => true,
            key => is_exception(key) && body.get("message").is_some_and(Value::is_string),
        }
    },
    adapter: || Box::<BedrockAdapter>::default(),
};

/// Whether an event name is an exception's (`throttlingException`,
/// `modelStreamErrorException`, ...; an event stream's `error` frames are
/// named by their code, which names an exception too).
fn is_exception(name: &str) -> bool {
    name.len() >= "exception".len()
        && name.get(name.len() - "exception".len()..).is_some_and(|tail| tail.eq_ignore_ascii_case("exception"))
}

/// Translates `ConverseStream` events and host turns into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct BedrockAdapter {
    /// The response's open blocks, by `contentBlockIndex`.
    blocks: SmallVec<[(u64, Block); 4]>,
    /// `messageStop` came: the response is over but for its metadata.
    stopped: bool,
    /// How the run ends once the response is over (its `stopReason`).
    ending: Option<FinishReason>,
    /// The response's `metadata` came (some producers send it before
    /// `messageStop`).
    metadata: bool,
    /// The run ended: what comes next begins the next one.
    finished: bool,
    /// `InvokeModelWithResponseStream` chunks: the model's own events,
    /// read by that model's adapter (Anthropic's, for Claude on Bedrock).
    #[serde(default)]
    invoke: Option<AnthropicAdapter>,
}

/// An open content block.
#[derive(Debug, Serialize, Deserialize)]
enum Block {
    Text,
    /// Reasoning: its text, and what the client sends back with it as it
    /// came (the signature, or the redacted content).
    Reasoning {
        text: String,
        signature: String,
        redacted: String,
    },
    /// A tool call, and whether any argument text came.
    Tool {
        id: String,
        arguments: bool,
    },
    /// A server tool's result, gathered until the block stops.
    Result {
        id: String,
        status: String,
        kind: String,
        content: String,
    },
    Other,
}

/// Open blocks kept at most (a real response has a few).
const MAX_OPEN_BLOCKS: usize = 256;

/// One payload: its events (one, in the SDKs' shape), or a host turn.
#[derive(Debug, Default)]
struct Payload<'a> {
    events: SmallVec<[Event<'a>; 1]>,
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
}

#[derive(Debug)]
enum Event<'a> {
    MessageStart,
    BlockStart(BlockStart<'a>),
    BlockDelta(BlockDelta<'a>),
    BlockStop(BlockStop),
    MessageStop(MessageStop<'a>),
    Metadata(Metadata<'a>),
    /// `InvokeModelWithResponseStream`: the model's own event, base64.
    Chunk(Chunk<'a>),
    Exception,
    Unknown,
}

/// An `InvokeModelWithResponseStream` chunk: the model provider's own
/// stream event (Anthropic's Messages events, for Claude), base64-encoded.
#[derive(Debug, Default)]
struct Chunk<'a> {
    bytes: Option<Cow<'a, str>>,
}

read_in_place!(Chunk { "bytes" => bytes as OptCow });

#[derive(Debug, Deserialize)]
struct MessageStart {}

#[derive(Debug, Default)]
struct BlockStart<'a> {
    content_block_index: Option<u64>,
    /// Read again as a [`Start`] (block starts are few).
    start: Option<Raw<'a>>,
}

read_in_place!(BlockStart { "contentBlockIndex" => content_block_index, "start" => start });

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start<'a> {
    #[serde(borrow, default)]
    tool_use: Option<ToolStart<'a>>,
    #[serde(borrow, default)]
    tool_result: Option<ToolStart<'a>>,
}

/// A `toolUse` or `toolResult` block's start.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolStart<'a> {
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    status: Option<Cow<'a, str>>,
}

/// A content block's delta: read in place ([`read_in_place!`]), as the
/// most of a stream is these and a derived read moves each layer out
/// through its `Result`.
#[derive(Debug, Default)]
struct BlockDelta<'a> {
    content_block_index: Option<u64>,
    delta: Option<Delta<'a>>,
}

read_in_place!(BlockDelta { "contentBlockIndex" => content_block_index, "delta" => delta in place });

#[derive(Debug, Default)]
struct Delta<'a> {
    text: Option<Cow<'a, str>>,
    reasoning_content: Option<Reasoning<'a>>,
    tool_use: Option<ToolUseDelta<'a>>,
    tool_result: Option<Raw<'a>>,
}

read_in_place!(Delta {
    "text" => text as OptCow,
    "reasoningContent" => reasoning_content in place,
    "toolUse" => tool_use in place,
    "toolResult" => tool_result,
});

#[derive(Debug, Default)]
struct Reasoning<'a> {
    text: Option<Cow<'a, str>>,
    signature: Option<Cow<'a, str>>,
    redacted_content: Option<Cow<'a, str>>,
}

read_in_place!(Reasoning {
    "text" => text as OptCow,
    "signature" => signature as OptCow,
    "redactedContent" => redacted_content as OptCow,
});

#[derive(Debug, Default)]
struct ToolUseDelta<'a> {
    /// A fragment of the arguments' JSON text (a string), or whole
    /// arguments as a value.
    input: Option<Raw<'a>>,
}

read_in_place!(ToolUseDelta { "input" => input });

/// A block's stop: one number, read by value (nothing to gain reading it
/// in place).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    #[serde(default)]
    content_block_index: Option<u64>,
}

#[derive(Debug, Default)]
struct MessageStop<'a> {
    stop_reason: Option<Cow<'a, str>>,
    additional_model_response_fields: Option<Raw<'a>>,
}

read_in_place!(MessageStop {
    "stopReason" => stop_reason as OptCow,
    "additionalModelResponseFields" => additional_model_response_fields,
});

#[derive(Debug, Default)]
struct Metadata<'a> {
    usage: Option<Raw<'a>>,
    metrics: Option<Raw<'a>>,
    trace: Option<Raw<'a>>,
    performance_config: Option<Raw<'a>>,
    service_tier: Option<Raw<'a>>,
}

read_in_place!(Metadata {
    "usage" => usage,
    "metrics" => metrics,
    "trace" => trace,
    "performanceConfig" => performance_config,
    "serviceTier" => service_tier,
});

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_write_input_tokens: Option<u64>,
}

/// One item of a tool result's content (`text`, `json`, or another kind
/// kept as it came).
#[derive(Debug, Deserialize)]
struct ResultItem<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    json: Option<Raw<'a>>,
}

/// A host's `toolResult` block.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HostResult<'a> {
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Raw<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    status: Option<Cow<'a, str>>,
}

impl<'a> Payload<'a> {
    /// Reads `text`, a JSON object, into `slot` (an empty payload) in one
    /// pass: each key names its event, whose body is read in place into
    /// the event as it is pushed.
    fn read_into(text: &'a str, slot: &mut Payload<'a>) -> Result<(), serde_json::Error> {
        if scan_whole(text, |value| slot.scan_in(value)) {
            return Ok(());
        }
        *slot = Payload::default();
        let mut reader = serde_json::Deserializer::from_str(text);
        serde::Deserializer::deserialize_map(&mut reader, PayloadSlot(slot))?;
        reader.end()
    }
}

impl<'a> Payload<'a> {
    /// [`Payload::read_into`] through the scanner ([`crate::json_scan`]),
    /// as [`PayloadSlot`] reads it through serde; where the payload ends,
    /// or `None` to leave it to serde.
    fn scan_in(&mut self, value: crate::json_scan::Value<'a>) -> Option<usize> {
        value.object(|key, value| {
            let event = match key {
                "messageStart" => {
                    let end = value.object(|_, value| value.skip())?;
                    self.events.push(Event::MessageStart);
                    return Some(end);
                }
                "contentBlockStop" => {
                    let (content_block_index, end) = scan_count_field(value, "contentBlockIndex")?;
                    self.events.push(Event::BlockStop(BlockStop { content_block_index }));
                    return Some(end);
                }
                "contentBlockStart" => Event::BlockStart(BlockStart::default()),
                "contentBlockDelta" => Event::BlockDelta(BlockDelta::default()),
                "messageStop" => Event::MessageStop(MessageStop::default()),
                "metadata" => Event::Metadata(Metadata::default()),
                "chunk" => Event::Chunk(Chunk::default()),
                "role" => {
                    let (role, end) = OptCow::scan(value)?;
                    self.role = role.0;
                    return Some(end);
                }
                "content" => {
                    let (content, end) = Raw::scan(value)?;
                    self.content = Some(content);
                    return Some(end);
                }
                name => {
                    let end = value.skip()?;
                    // `p`: random-length padding, against guessing lengths.
                    if name != "p" {
                        self.events.push(if is_exception(name) { Event::Exception } else { Event::Unknown });
                    }
                    return Some(end);
                }
            };
            self.events.push(event);
            match self.events.last_mut()? {
                Event::BlockStart(view) => view.scan_in(value),
                Event::BlockDelta(view) => view.scan_in(value),
                Event::MessageStop(view) => view.scan_in(value),
                Event::Metadata(view) => view.scan_in(value),
                Event::Chunk(view) => view.scan_in(value),
                _ => None,
            }
        })
    }
}

/// The payload being read.
struct PayloadSlot<'s, 'a>(&'s mut Payload<'a>);

impl<'de: 'a, 'a> Visitor<'de> for PayloadSlot<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let payload = self.0;
        while let Some(Key(key)) = map.next_key::<Key<'a>>()? {
            let event = match key.as_ref() {
                "messageStart" => {
                    map.next_value::<MessageStart>()?;
                    Event::MessageStart
                }
                "contentBlockStart" => Event::BlockStart(BlockStart::default()),
                "contentBlockDelta" => Event::BlockDelta(BlockDelta::default()),
                "contentBlockStop" => Event::BlockStop(map.next_value()?),
                "messageStop" => Event::MessageStop(MessageStop::default()),
                "metadata" => Event::Metadata(Metadata::default()),
                "chunk" => Event::Chunk(Chunk::default()),
                "role" => {
                    payload.role = map.next_value::<Role<'a>>()?.0;
                    continue;
                }
                "content" => {
                    payload.content = Some(map.next_value()?);
                    continue;
                }
                // Random-length padding, against guessing lengths.
                "p" => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                name => {
                    map.next_value::<IgnoredAny>()?;
                    if is_exception(name) {
                        Event::Exception
                    } else {
                        Event::Unknown
                    }
                }
            };
            payload.events.push(event);
            match payload.events.last_mut() {
                Some(Event::BlockStart(view)) => map.next_value_seed(Within(view))?,
                Some(Event::BlockDelta(view)) => map.next_value_seed(Within(view))?,
                Some(Event::MessageStop(view)) => map.next_value_seed(Within(view))?,
                Some(Event::Metadata(view)) => map.next_value_seed(Within(view))?,
                Some(Event::Chunk(view)) => map.next_value_seed(Within(view))?,
                _ => {}
            }
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
struct Role<'a>(#[serde(borrow, deserialize_with = "opt_cow")] Option<Cow<'a, str>>);

impl Adapter for BedrockAdapter {
    state_is_self!();

    /// The response the stream ended in is over: its blocks end, and a
    /// run its `stopReason` ended finishes.
    fn end(&mut self, calls: &mut dyn CallSink) {
        self.end_blocks(calls);
        self.stopped = true;
        self.settle(calls);
        if let Some(model) = self.invoke.as_mut() {
            model.end(calls);
        }
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        let mut read = Payload::default();
        Payload::read_into(text, &mut read).map_err(|error| BadLine::json(&error))?;
        if read.events.is_empty() {
            return match (read.role.as_deref(), read.content) {
                (Some("user"), Some(content)) => {
                    self.host_turn(content, calls);
                    Ok(())
                }
                _ => {
                    report(calls, None, AnomalyKind::UnknownEvent, &format!("bedrock: unknown event: {text}"));
                    Ok(())
                }
            };
        }
        for event in &read.events {
            self.event(event, text, calls);
        }
        Ok(())
    }
}

impl BedrockAdapter {
    fn event(&mut self, event: &Event<'_>, text: &str, calls: &mut dyn CallSink) {
        match event {
            Event::Metadata(metadata) => return self.metadata(metadata, calls),
            Event::Chunk(chunk) => return self.chunk(chunk, text, calls),
            Event::Unknown => {
                return report(calls, None, AnomalyKind::UnknownEvent, &format!("bedrock: unknown event: {text}"));
            }
            Event::Exception => {
                // The response being read failed, stopped or not: its run
                // fails, whatever its stop reason said.
                self.stopped = false;
                self.ending = None;
            }
            _ => {}
        }
        // Any other event after `messageStop` is another response's.
        self.settle(calls);
        self.begin(calls);
        match event {
            Event::MessageStart => {
                // Blocks the last response never stopped end with it.
                self.end_blocks(calls);
                self.metadata = false;
            }
            Event::BlockStart(start) => self.block_start(start, text, calls),
            Event::BlockDelta(delta) => self.block_delta(delta, text, calls),
            Event::BlockStop(stop) => {
                let at = stop.content_block_index.and_then(|index| self.blocks.iter().position(|(i, _)| *i == index));
                if let Some(at) = at {
                    let (_, block) = self.blocks.remove(at);
                    block_stop(block, calls);
                }
            }
            Event::MessageStop(stop) => self.message_stop(stop, calls),
            Event::Exception => {
                // The model call failed: what it began ends, the run fails.
                self.end_blocks(calls);
                report(calls, None, AnomalyKind::ProtocolError, &format!("bedrock: exception: {text}"));
                calls.call(None, Call::Finish { reason: FinishReason::Failed });
                self.finished = true;
                self.metadata = false;
            }
            Event::Metadata(_) | Event::Chunk(_) | Event::Unknown => {}
        }
    }

    /// An `InvokeModelWithResponseStream` chunk: its bytes decoded and read
    /// as the model's own stream event. Claude's are Anthropic Messages
    /// events (its `message_stop` also carries Bedrock's
    /// `amazon-bedrock-invocationMetrics`, kept with the event); another
    /// model's events are reported, kept whole, as Anthropic's adapter
    /// reports what it does not know.
    fn chunk(&mut self, chunk: &Chunk<'_>, text: &str, calls: &mut dyn CallSink) {
        let Some(bytes) = chunk.bytes.as_deref().and_then(base64_decode) else {
            let detail = format!("bedrock: a chunk whose bytes are not base64: {text}");
            return report(calls, None, AnomalyKind::UnknownEvent, &detail);
        };
        let model = self.invoke.get_or_insert_with(AnthropicAdapter::default);
        if let Err(error) = model.translate(&bytes, calls) {
            let detail = format!(
                "bedrock: a chunk's event could not be read ({}): {}",
                error.reason,
                String::from_utf8_lossy(&bytes)
            );
            report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
    }

    /// The run begins again (`start`) after one that ended.
    fn begin(&mut self, calls: &mut dyn CallSink) {
        if std::mem::take(&mut self.finished) {
            calls.call(None, Call::Start);
        }
    }

    /// The response that stopped is over: a run its `stopReason` ended
    /// finishes.
    fn settle(&mut self, calls: &mut dyn CallSink) {
        if !std::mem::take(&mut self.stopped) {
            return;
        }
        self.metadata = false;
        if let Some(reason) = self.ending.take() {
            calls.call(None, Call::Finish { reason });
            self.finished = true;
        }
    }

    fn block_start(&mut self, start: &BlockStart<'_>, text: &str, calls: &mut dyn CallSink) {
        let Some(index) = start.content_block_index else {
            return report(
                calls,
                None,
                AnomalyKind::UnknownContent,
                &format!("bedrock: a block with no index: {text}"),
            );
        };
        let raw = start.start.map_or("{}", Raw::get);
        let read = serde_json::from_str::<Start<'_>>(raw);
        let block = match &read {
            Ok(Start { tool_use: Some(tool), .. }) => {
                let id = tool.tool_use_id.as_deref().unwrap_or("");
                let name = tool.name.as_deref().unwrap_or("");
                calls.call(None, Call::ToolCall { id, title: name, name });
                if let Some(kind) = tool.kind.as_deref().filter(|kind| *kind != "tool_use") {
                    calls.call(None, Call::ToolMeta { id, meta: &one("bedrock_tool_type", Value::from(kind)) });
                }
                Block::Tool { id: id.to_owned(), arguments: false }
            }
            Ok(Start { tool_result: Some(result), .. }) => Block::Result {
                id: result.tool_use_id.as_deref().unwrap_or("").to_owned(),
                status: result.status.as_deref().unwrap_or("").to_owned(),
                kind: result.kind.as_deref().unwrap_or("").to_owned(),
                content: String::new(),
            },
            // `start: {}` (or none): a text block.
            Ok(_) if is_empty_start(raw) => Block::Text,
            _ => {
                let detail = format!("bedrock: a block of a kind this format does not know: {text}");
                report(calls, None, AnomalyKind::UnknownContent, &detail);
                Block::Other
            }
        };
        self.open(index, block, calls);
    }

    /// Opens block `index` (a block open at that index ends first).
    fn open(&mut self, index: u64, block: Block, calls: &mut dyn CallSink) -> usize {
        if let Some(at) = self.blocks.iter().position(|(i, _)| *i == index) {
            let (_, replaced) = self.blocks.remove(at);
            block_stop(replaced, calls);
        }
        // A stream that opens blocks and never stops them is bounded: the
        // oldest ends as if stopped.
        if self.blocks.len() >= MAX_OPEN_BLOCKS {
            let (_, oldest) = self.blocks.remove(0);
            block_stop(oldest, calls);
        }
        self.blocks.push((index, block));
        self.blocks.len() - 1
    }

    fn block_delta(&mut self, delta: &BlockDelta<'_>, text: &str, calls: &mut dyn CallSink) {
        let (Some(index), Some(delta)) = (delta.content_block_index, &delta.delta) else {
            let detail = format!("bedrock: a delta with no index or no delta: {text}");
            return report(calls, None, AnomalyKind::UnknownContent, &detail);
        };
        let mut known = false;
        if let Some(said) = &delta.text {
            known = true;
            calls.call(None, Call::Message { text: said });
        }
        if let Some(reasoning) = &delta.reasoning_content {
            known = true;
            if let Some(thought) = &reasoning.text {
                calls.call(None, Call::Thought { text: thought });
            }
            let at = match self.blocks.iter().position(|(i, b)| *i == index && matches!(b, Block::Reasoning { .. })) {
                Some(at) => at,
                None => self.open(
                    index,
                    Block::Reasoning { text: String::new(), signature: String::new(), redacted: String::new() },
                    calls,
                ),
            };
            if let (_, Block::Reasoning { text: kept, signature, redacted }) = &mut self.blocks[at] {
                for (held, piece) in [
                    (kept, &reasoning.text),
                    (signature, &reasoning.signature),
                    (redacted, &reasoning.redacted_content),
                ] {
                    held.push_str(piece.as_deref().unwrap_or(""));
                }
            }
        }
        let block = self.blocks.iter_mut().find(|(i, _)| *i == index).map(|(_, block)| block);
        match (&delta.tool_use, &delta.tool_result, block) {
            (Some(tool), _, Some(Block::Tool { id, arguments })) => {
                known = true;
                let input = tool.input.map_or("", Raw::get);
                if input.starts_with('"') {
                    let fragment = tool.input.map(raw_text).unwrap_or_default();
                    *arguments |= !fragment.is_empty();
                    let status = ToolCallStatus::InProgress;
                    calls.call(None, Call::ToolUpdate { id, content: &fragment, status });
                } else if !input.is_empty() && input != "null" {
                    // Whole arguments as a value, not text.
                    *arguments = true;
                    calls.call(None, Call::ArgsSnapshot { id, args: input });
                }
            }
            (_, Some(result), Some(Block::Result { content, .. })) => {
                known = true;
                result_text(*result, content);
            }
            (None, None, _) => {}
            _ => {
                let detail = format!("bedrock: a delta for block {index}, which is not open for it: {text}");
                return report(calls, None, AnomalyKind::UnknownContent, &detail);
            }
        }
        if !known {
            let detail = format!("bedrock: a delta of a kind this format does not know: {text}");
            report(calls, None, AnomalyKind::UnknownContent, &detail);
        }
    }

    /// `messageStop`: the blocks end, the reason is kept, and how the run
    /// ends is held until the response's metadata (which follows).
    /// `end_turn`, `stop_sequence`, `max_tokens` and
    /// `model_context_window_exceeded` complete it; `guardrail_intervened`
    /// and `content_filtered` fail it; `tool_use` (the host runs the tools
    /// and calls again) and a reason this format does not know go on.
    fn message_stop(&mut self, stop: &MessageStop<'_>, calls: &mut dyn CallSink) {
        self.end_blocks(calls);
        let mut meta = Meta::new();
        if let Some(reason) = &stop.stop_reason {
            meta.insert("bedrock_stop_reason".into(), Value::from(reason.as_ref()));
        }
        if let Some(fields) = stop.additional_model_response_fields {
            meta.insert("bedrock_additional_model_response_fields".into(), raw_value(fields));
        }
        if !meta.is_empty() {
            calls.call(None, Call::RoundMeta { meta: &meta });
        }
        self.ending = match stop.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence" | "max_tokens" | "model_context_window_exceeded") => {
                Some(FinishReason::Completed)
            }
            Some("guardrail_intervened" | "content_filtered") => Some(FinishReason::Failed),
            _ => None,
        };
        self.stopped = true;
        if self.metadata {
            self.settle(calls);
        }
    }

    /// `metadata`: the response's usage (per request, never added up) as
    /// the token gauge; usage, metrics and trace kept in the round.
    fn metadata(&mut self, metadata: &Metadata<'_>, calls: &mut dyn CallSink) {
        if !self.stopped {
            self.begin(calls);
        }
        let mut meta = Meta::new();
        if let Some(usage) = metadata.usage {
            match serde_json::from_str::<Usage>(usage.get()) {
                Ok(counts) => {
                    let total = counts.total_tokens.or_else(|| {
                        [counts.input_tokens, counts.output_tokens, counts.cache_read_input_tokens]
                            .into_iter()
                            .chain([counts.cache_write_input_tokens])
                            .flatten()
                            .reduce(u64::saturating_add)
                    });
                    if let Some(total) = total {
                        calls.call(None, Call::TokenUsage { total });
                    }
                }
                Err(error) => {
                    let detail = format!("bedrock: usage that does not read ({error}): {}", usage.get());
                    report(calls, None, AnomalyKind::UnknownContent, &detail);
                }
            }
            meta.insert("bedrock_usage".into(), raw_value(usage));
        }
        for (key, value) in [
            ("bedrock_metrics", metadata.metrics),
            ("bedrock_trace", metadata.trace),
            ("bedrock_performance_config", metadata.performance_config),
            ("bedrock_service_tier", metadata.service_tier),
        ] {
            if let Some(value) = value {
                meta.insert(key.into(), raw_value(value));
            }
        }
        if !meta.is_empty() {
            calls.call(None, Call::RoundMeta { meta: &meta });
        }
        self.metadata = true;
        self.settle(calls);
    }

    /// Ends the blocks still open (as `contentBlockStop` would).
    fn end_blocks(&mut self, calls: &mut dyn CallSink) {
        for (_, block) in std::mem::take(&mut self.blocks) {
            block_stop(block, calls);
        }
    }

    /// A user message between responses: its `toolResult` blocks are
    /// results; anything else in it is the user's next prompt, a new run.
    fn host_turn(&mut self, content: Raw<'_>, calls: &mut dyn CallSink) {
        self.end_blocks(calls);
        self.stopped = true;
        self.settle(calls);
        let blocks: Vec<Raw<'_>> = match serde_json::from_str(content.get()) {
            Ok(blocks) => blocks,
            Err(_) => vec![content],
        };
        let mut prompt = Vec::new();
        for raw in blocks {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct HostBlock<'a> {
                #[serde(borrow, default)]
                tool_result: Option<HostResult<'a>>,
            }
            match serde_json::from_str::<HostBlock<'_>>(raw.get()) {
                Ok(HostBlock { tool_result: Some(result) }) => {
                    let id = result.tool_use_id.as_deref().unwrap_or("");
                    let mut text = String::new();
                    if let Some(content) = result.content {
                        result_text(content, &mut text);
                    }
                    let failed = result.status.as_deref() == Some("error");
                    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                    calls.call(None, Call::ToolUpdate { id, content: &text, status });
                }
                _ => prompt.push(raw_value(raw)),
            }
        }
        if !prompt.is_empty() {
            self.finished = false;
            calls.call(None, Call::Start);
            calls.call(None, Call::RunMeta { meta: &one("bedrock_user_message", Value::Array(prompt)) });
        }
    }
}

/// A block's end: a tool call with no argument text has `{}`; reasoning
/// with a signature or redacted content is kept whole in the round's
/// metadata, in the shape a client sends it back; a server tool's result
/// is its call's.
fn block_stop(block: Block, calls: &mut dyn CallSink) {
    match block {
        Block::Tool { id, arguments: false } => calls.call(None, Call::ArgsSnapshot { id: &id, args: "{}" }),
        Block::Reasoning { text, signature, redacted } => {
            let kept = if !redacted.is_empty() {
                serde_json::json!({ "reasoningContent": { "redactedContent": redacted } })
            } else if !signature.is_empty() {
                serde_json::json!({ "reasoningContent": { "reasoningText": { "text": text, "signature": signature } } })
            } else {
                return;
            };
            calls.call(None, Call::RoundMeta { meta: &one("bedrock_kept_blocks", Value::Array(vec![kept])) });
        }
        Block::Result { id, status, kind, content } => {
            let mut meta = Meta::new();
            if !kind.is_empty() {
                meta.insert("bedrock_result_type".into(), Value::from(kind));
            }
            if !status.is_empty() {
                meta.insert("bedrock_result_status".into(), Value::from(status.as_str()));
            }
            if !meta.is_empty() {
                calls.call(None, Call::ToolMeta { id: &id, meta: &meta });
            }
            let failed = !status.is_empty() && status != "success";
            let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
            calls.call(None, Call::ToolUpdate { id: &id, content: &content, status });
        }
        Block::Tool { .. } | Block::Text | Block::Other => {}
    }
}

/// Whether a block's start names no kind of block (`{}`, padding aside).
fn is_empty_start(raw: &str) -> bool {
    serde_json::from_str::<Fields<'_>>(raw).is_ok_and(|fields| fields.0.iter().all(|(key, _)| key == "p"))
}

/// A tool result's content as text, appended to `out`: each item's text
/// as it is, a `json` item as its JSON as sent, another item (an image, a
/// document) as its JSON; a content that is not a list, as its text.
fn result_text(content: Raw<'_>, out: &mut String) {
    let Some(items) = view_of::<Vec<Raw<'_>>>(content) else {
        return out.push_str(&raw_text(content));
    };
    for item in items {
        match serde_json::from_str::<ResultItem<'_>>(item.get()) {
            Ok(ResultItem { text: Some(text), .. }) => out.push_str(&text),
            Ok(ResultItem { json: Some(json), .. }) => out.push_str(json.get()),
            _ => out.push_str(item.get()),
        }
    }
}
