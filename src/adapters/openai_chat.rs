//! The OpenAI Chat Completions adapter: `chat.completion.chunk` streams
//! (as SSE or one chunk per line), from OpenAI and the endpoints that speak
//! its dialect (DeepSeek, Groq, Qwen, Azure, OpenRouter, ...), and the
//! host's messages between completions in a recorded agent loop.
//!
//! A completion is one model call, not a run: its `finish_reason` ends the
//! assistant message, and the tool results come from the host, as
//! `{"role":"tool","tool_call_id":..,"content":..}` lines between
//! completions. A `{"role":"user"}` line begins a new run.
//!
//! ```
//! use roundup::adapters::{Adapter, InputFormat};
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut chat = InputFormat::named("openai-chat").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"ls","arguments":""}}]}}]}"#,
//!     r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
//!     "[DONE]",
//!     r#"{"role":"tool","tool_call_id":"call_1","content":"a.txt"}"#,
//! ] {
//!     chat.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, "{}");
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{opt_cow, raw_text, raw_text_in, raw_value, utf8};
use super::support::{is_done_marker, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of OpenAI Chat Completions streams.
///
/// ```
/// let chat = &roundup::adapters::openai_chat::FORMAT;
/// let chunk = br#"{"object":"chat.completion.chunk","choices":[]}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(chunk), chat);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "openai-chat",
    about: "OpenAI Chat Completions chunks (and
compatible endpoints), with the host's
role:tool messages between completions;
choice 0 is the session, choice k of
n > 1 is session choice-k",
    detect: |event: &Map<String, Value>| {
        let object = event.get("object").and_then(Value::as_str);
        matches!(object, Some("chat.completion.chunk" | "chat.completion"))
            || (event.contains_key("choices") && !event.contains_key("type"))
            || (event.get("role").and_then(Value::as_str) == Some("tool") && event.contains_key("tool_call_id"))
    },
    adapter: || Box::<OpenAiChatAdapter>::default(),
};

/// Translates Chat Completions chunks and host messages into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OpenAiChatAdapter {
    /// The completion being read (its `id`): a new one forgets the tool
    /// indexes of the last.
    completion: String,
    /// Per choice of the completion: which tool id each `index` names
    /// (only a call's first fragment carries it).
    tools: SmallVec<[(u64, u64, String); 4]>,
    /// The choices of the completion whose `finish_reason` ends the turn
    /// (`stop`, `length`, `content_filter`): their runs end at `[DONE]`,
    /// after the usage chunk that may follow the reason.
    #[serde(default)]
    ending: SmallVec<[(u64, FinishReason); 1]>,
    /// The choices whose run ended at `[DONE]`: the next completion begins
    /// their next run.
    #[serde(default)]
    ended: SmallVec<[u64; 1]>,
    /// The calls whose server sent no id (some vLLM versions, models
    /// relayed by Mistral): the id made up for each, by choice and index,
    /// with the function name that declared it.
    #[serde(default)]
    unnamed: SmallVec<[(u64, u64, String); 1]>,
    /// Ids made up so far: the next one's number.
    #[serde(default)]
    made_up: u64,
    /// Where an escaped text fragment is decoded (reused: not state).
    #[serde(skip)]
    scratch: String,
}

/// Tool indexes remembered per completion at most (a real one has a few).
const MAX_TOOL_INDEXES: usize = 256;

/// What tells apart the providers whose streams are read as chat
/// completion chunks (Mistral's chat completions are): the names their
/// metadata and reports go by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    /// The format's name, which reports begin with (`openai-chat`).
    pub(crate) format: &'static str,
    /// The prefix of the metadata keys (`openai` for `openai_usage`).
    pub(crate) meta: &'static str,
}

/// OpenAI's own dialect, and that of the endpoints that copy it.
pub(crate) const OPENAI: Dialect = Dialect { format: "openai-chat", meta: "openai" };

impl Dialect {
    /// The metadata key `name` in this dialect (`openai_usage`).
    fn key(&self, name: &str) -> String {
        [self.meta, "_", name].concat()
    }
}

/// One line: a chunk, a whole completion, or a host message. Read in
/// place ([`read_in_place!`]): the view is some 420 bytes, which a derived
/// read copies some five times a line.
#[derive(Debug, Default)]
pub(crate) struct Line<'a> {
    /// An event type (`type`): chunks have none (a dialect with other
    /// events, such as Mistral's Conversations, reads it to tell them
    /// apart).
    pub(crate) kind: Option<Raw<'a>>,
    id: Option<Cow<'a, str>>,
    object: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    system_fingerprint: Option<Cow<'a, str>>,
    /// Unix seconds.
    created: Option<u64>,
    /// One choice in almost every chunk: held inline.
    choices: Option<SmallVec<[Choice<'a>; 1]>>,
    usage: Option<Raw<'a>>,
    x_groq: Option<XGroq<'a>>,
    error: Option<Raw<'a>>,
    /// A host message line: `role`, `content`, `tool_call_id`, ...
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
    tool_call_id: Option<Cow<'a, str>>,
}

read_in_place!(Line {
    "type" => kind,
    "id" => id as OptCow,
    "object" => object as OptCow,
    "model" => model as OptCow,
    "system_fingerprint" => system_fingerprint as OptCow,
    "created" => created,
    "choices" => choices in place,
    "usage" => usage,
    "x_groq" => x_groq,
    "error" => error,
    "role" => role as OptCow,
    "content" => content,
    "tool_calls" => tool_calls in place,
    "tool_call_id" => tool_call_id as ScalarText,
});

#[derive(Debug, Deserialize)]
struct XGroq<'a> {
    #[serde(borrow, default)]
    usage: Option<Raw<'a>>,
}

scan_by_serde!(XGroq<'a>);

impl<'a> Line<'a> {
    /// Decodes one payload's text into `slot` (a default line).
    pub(crate) fn parse(text: &'a str, slot: &mut Line<'a>) -> Result<(), BadLine> {
        Line::read_into(text, slot).map_err(|error| BadLine::json(&error))
    }
}

#[derive(Debug, Default)]
struct Choice<'a> {
    index: u64,
    /// A chunk's fragment.
    delta: Option<Message<'a>>,
    /// A whole completion's message.
    message: Option<Message<'a>>,
    finish_reason: Option<Cow<'a, str>>,
    /// Usage on the choice rather than the chunk (Moonshot's endpoint puts
    /// it there, on the finish chunk).
    usage: Option<Raw<'a>>,
}

read_in_place!(Choice {
    "index" => index,
    "delta" => delta in place,
    "message" => message in place,
    "finish_reason" => finish_reason as OptCow,
    "usage" => usage,
});

/// A delta, a completion's message, or a host message: the same fields.
#[derive(Debug, Default)]
struct Message<'a> {
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    reasoning_content: Option<Cow<'a, str>>,
    reasoning: Option<Cow<'a, str>>,
    refusal: Option<Cow<'a, str>>,
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
    tool_call_id: Option<Cow<'a, str>>,
}

read_in_place!(Message {
    "role" => role as OptCow,
    "content" => content,
    "reasoning_content" => reasoning_content as OptCow,
    "reasoning" => reasoning as OptCow,
    "refusal" => refusal as OptCow,
    "tool_calls" => tool_calls in place,
    "tool_call_id" => tool_call_id as ScalarText,
});

#[derive(Debug, Default)]
struct ToolCall<'a> {
    index: Option<u64>,
    id: Option<Cow<'a, str>>,
    function: Option<Function<'a>>,
}

read_in_place!(ToolCall {
    "index" => index,
    "id" => id as ScalarText,
    "function" => function in place,
});

/// A tool call's function: its name and arguments, as sent (a fragment of
/// JSON text here; Ollama's NDJSON, which shares the shape, sends an
/// object).
#[derive(Debug, Default)]
pub(crate) struct Function<'a> {
    pub(crate) name: Option<Cow<'a, str>>,
    pub(crate) arguments: Option<Raw<'a>>,
}

read_in_place!(Function {
    "name" => name as OptCow,
    "arguments" => arguments,
});

impl Adapter for OpenAiChatAdapter {
    state_is_self!();

    /// A recording of chunks without `[DONE]`: a turn its last completion
    /// ended is ended all the same.
    fn end(&mut self, calls: &mut dyn CallSink) {
        self.end_turns(calls);
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if is_done_marker(payload) {
            // The end of the stream of a completion: a turn the model ended
            // ends its run now, not at the end of the input.
            self.end_turns(calls);
            return Ok(());
        }
        let mut line = Line::default();
        Line::parse(utf8(payload)?, &mut line)?;
        self.line(&mut line, payload, &OPENAI, calls);
        Ok(())
    }
}

impl OpenAiChatAdapter {
    /// The runs of the choices whose turn the model ended finish, each
    /// with what its `finish_reason` said: at `[DONE]`, and at the end of
    /// a recording that has none.
    pub(crate) fn end_turns(&mut self, calls: &mut dyn CallSink) {
        for (choice, reason) in std::mem::take(&mut self.ending) {
            calls.call(choice_session(choice).as_deref(), Call::Finish { reason });
            self.ended.push(choice);
        }
    }

    /// Translates one chunk, whole completion or host message of `dialect`.
    pub(crate) fn line(&mut self, line: &mut Line<'_>, payload: &[u8], dialect: &Dialect, calls: &mut dyn CallSink) {
        if let Some(error) = line.error {
            // A provider's error mid-stream: the model call is over.
            let detail = format!("{}: error: {}", dialect.format, error.get());
            report(calls, None, AnomalyKind::ProtocolError, &detail);
            calls.call(None, Call::Finish { reason: FinishReason::Failed });
            return;
        }
        let Some(choices) = &line.choices else {
            let message = Message {
                role: line.role.take(),
                content: line.content,
                tool_calls: line.tool_calls.take(),
                tool_call_id: line.tool_call_id.take(),
                ..Message::default()
            };
            return self.host_message(message, payload, dialect, calls);
        };
        if let Some(created) = line.created {
            calls.clock(created.saturating_mul(1_000));
        }
        let id = line.id.as_deref().unwrap_or("");
        if id != self.completion {
            self.completion.clear();
            self.completion.push_str(id);
            self.tools.clear();
            self.unnamed.clear();
            self.ending.clear();
            for choice in std::mem::take(&mut self.ended) {
                calls.call(choice_session(choice).as_deref(), Call::Start);
            }
        }
        let whole = line.object.as_deref() == Some("chat.completion");
        for choice in choices {
            let session = choice_session(choice.index);
            let session = session.as_deref();
            if let Some(delta) = choice.delta.as_ref().or(choice.message.as_ref()) {
                self.fragment(choice.index, delta, whole, session, dialect, calls);
            }
            if let Some(reason) = &choice.finish_reason {
                let ends = match reason.as_ref() {
                    // Mistral's `model_length`: the model's context is full.
                    "stop" | "length" | "model_length" => Some(FinishReason::Completed),
                    "content_filter" | "error" => Some(FinishReason::Failed),
                    // `tool_calls`: the host runs them and calls again.
                    _ => None,
                };
                if let Some(ends) = ends {
                    self.ending.retain(|(c, _)| *c != choice.index);
                    self.ending.push((choice.index, ends));
                }
                let mut meta = Meta::new();
                meta.insert(dialect.key("finish_reason"), Value::from(reason.as_ref()));
                for (key, value) in [("completion_id", &line.id), ("model", &line.model)] {
                    if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                        meta.insert(dialect.key(key), Value::from(value));
                    }
                }
                if let Some(fingerprint) = &line.system_fingerprint {
                    meta.insert(dialect.key("system_fingerprint"), Value::from(fingerprint.as_ref()));
                }
                calls.call(session, Call::RoundMeta { meta: &meta });
            }
            if let Some(usage) = choice.usage {
                usage_calls(usage, session, dialect, calls);
            }
        }
        let usage = line.usage.filter(|u| u.get() != "null").or(line.x_groq.as_ref().and_then(|x| x.usage));
        if let Some(usage) = usage {
            usage_calls(usage, None, dialect, calls);
        }
    }

    /// One choice's delta (or a whole completion's message).
    fn fragment(
        &mut self,
        choice: u64,
        delta: &Message<'_>,
        whole: bool,
        session: Option<&str>,
        dialect: &Dialect,
        calls: &mut dyn CallSink,
    ) {
        for reasoning in [&delta.reasoning_content, &delta.reasoning].into_iter().flatten() {
            calls.call(session, Call::Thought { text: reasoning });
        }
        if let Some(content) = delta.content {
            content_calls(content, &mut self.scratch, session, dialect, calls);
        }
        if let Some(refusal) = &delta.refusal {
            refusal_calls(refusal, session, dialect, calls);
        }
        for (position, tool) in delta.tool_calls.iter().flatten().enumerate() {
            let index = tool.index.unwrap_or(position as u64);
            let function = tool.function.as_ref();
            let name = function.and_then(|f| f.name.as_deref()).unwrap_or("");
            // Only the first fragment names the call; later ones may carry
            // `"id": ""`, `"name": ""`, or (Mistral) `"id": "null"`.
            let mut declared = tool.id.as_deref().filter(|id| !id.is_empty() && *id != "null");
            let made_up;
            let given = declared.is_some();
            if !given && !name.is_empty() && self.unnamed_call(choice, index, name) {
                // A server that sends no id at all: a fragment that names a
                // function at an index with no call (or with a call of
                // another function) is a new call, with an id made up from
                // its place in the stream.
                made_up = format!("{}-call-{}", dialect.format, self.made_up);
                self.made_up = self.made_up.saturating_add(1);
                self.unnamed.retain(|(c, i, _)| (*c, *i) != (choice, index));
                if self.unnamed.len() >= MAX_TOOL_INDEXES {
                    self.unnamed.remove(0);
                }
                self.unnamed.push((choice, index, name.to_owned()));
                declared = Some(made_up.as_str());
            }
            if let Some(id) = declared.filter(|id| self.tool(choice, index) != Some(*id)) {
                calls.call(session, Call::ToolCall { id, title: name, name });
                self.tools.retain(|(c, i, _)| (*c, *i) != (choice, index));
                if given {
                    self.unnamed.retain(|(c, i, _)| (*c, *i) != (choice, index));
                }
                // Bounded for a completion that declares calls without end:
                // fragments for a forgotten index are reported, with their
                // text, as fragments no call declared.
                if self.tools.len() >= MAX_TOOL_INDEXES {
                    self.tools.remove(0);
                }
                self.tools.push((choice, index, id.to_owned()));
            }
            let Some(id) = declared.or_else(|| self.tool(choice, index)) else {
                let arguments = function.and_then(|f| f.arguments).map_or("null", Raw::get);
                let detail = format!(
                    "{}: a tool-call fragment for index {index} that no fragment declared: {arguments}",
                    dialect.format
                );
                report(calls, session, AnomalyKind::UnknownToolCall, &detail);
                continue;
            };
            let Some(arguments) = function.and_then(|f| f.arguments) else { continue };
            let arguments = raw_text(arguments);
            if whole {
                calls.call(session, Call::ArgsSnapshot { id, args: &arguments });
            } else {
                calls.call(session, Call::ToolUpdate { id, content: &arguments, status: ToolCallStatus::InProgress });
            }
        }
    }

    /// Whether an id-less fragment naming `name` at `index` of `choice`
    /// begins a call: no call is at that index, or the call there had no
    /// id either and names another function (a server that repeats the
    /// name on every fragment repeats the same one).
    fn unnamed_call(&self, choice: u64, index: u64, name: &str) -> bool {
        let made_up = self.unnamed.iter().find(|(c, i, _)| (*c, *i) == (choice, index));
        match (self.tool(choice, index), made_up) {
            (None, _) => true,
            (Some(_), Some((_, _, declared))) => declared != name,
            (Some(_), None) => false,
        }
    }

    /// The tool id the fragments at `index` of `choice` belong to.
    fn tool(&self, choice: u64, index: u64) -> Option<&str> {
        self.tools.iter().find(|(c, i, _)| (*c, *i) == (choice, index)).map(|(_, _, id)| id.as_str())
    }

    /// A message of the conversation between completions: a tool result,
    /// the user's next prompt, instructions, or an assistant message sent
    /// whole.
    fn host_message(&mut self, message: Message<'_>, payload: &[u8], dialect: &Dialect, calls: &mut dyn CallSink) {
        let content = message.content.map(raw_text);
        match message.role.as_deref() {
            Some("tool" | "function") => {
                let Some(id) = message.tool_call_id.as_deref() else {
                    let detail = format!(
                        "{}: a tool message without tool_call_id: {}",
                        dialect.format,
                        content.unwrap_or_default()
                    );
                    return report(calls, None, AnomalyKind::UnknownContent, &detail);
                };
                let content = content.unwrap_or_default();
                calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Completed });
            }
            Some("user") => {
                // The user's turn begins the next run (a run already ended
                // at `[DONE]` is not begun twice).
                self.ended.clear();
                self.ending.clear();
                calls.call(None, Call::Start);
                let text = message.content.map(raw_value).unwrap_or(Value::Null);
                calls.call(None, Call::RunMeta { meta: &one(&dialect.key("user_message"), text) });
            }
            Some(role @ ("system" | "developer")) => {
                let text = message.content.map(raw_value).unwrap_or(Value::Null);
                calls.call(None, Call::RunMeta { meta: &one(&dialect.key(&format!("{role}_message")), text) });
            }
            Some("assistant") => {
                self.tools.clear();
                self.unnamed.clear();
                self.fragment(0, &message, true, None, dialect, calls);
            }
            _ => {
                let detail = format!(
                    "{}: a line that is neither a chunk nor a message: {}",
                    dialect.format,
                    String::from_utf8_lossy(payload)
                );
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
    }
}

/// The session of choice `index`: the stream's own for the first, a
/// session of its own for each other (`n > 1` asks for alternatives).
fn choice_session(index: u64) -> Option<String> {
    (index > 0).then(|| format!("choice-{index}"))
}

/// A usage object (of the chunk, or of a choice): the context it reports
/// as the token gauge, and the object kept whole as round metadata.
fn usage_calls(usage: Raw<'_>, session: Option<&str>, dialect: &Dialect, calls: &mut dyn CallSink) {
    if usage.get() == "null" {
        return;
    }
    let usage = raw_value(usage);
    if let Some(total) = context_tokens(&usage) {
        calls.call(session, Call::TokenUsage { total });
    }
    calls.call(session, Call::RoundMeta { meta: &one(&dialect.key("usage"), usage) });
}

/// The context the completion occupied: `total_tokens`, else prompt plus
/// completion tokens (or, from gateways that rename them, input plus
/// output tokens).
fn context_tokens(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let sum = |first: &str, second: &str| Some(field(first)?.saturating_add(field(second).unwrap_or(0)));
    field("total_tokens")
        .or_else(|| sum("prompt_tokens", "completion_tokens"))
        .or_else(|| sum("input_tokens", "output_tokens"))
}

/// A refusal: the model's words, and round metadata that says so.
fn refusal_calls(refusal: &str, session: Option<&str>, dialect: &Dialect, calls: &mut dyn CallSink) {
    calls.call(session, Call::Message { text: refusal });
    calls.call(session, Call::RoundMeta { meta: &one(&dialect.key("refusal"), Value::Bool(true)) });
}

/// One part of content sent as an array of typed parts (Mistral's
/// reasoning models, and histories in OpenAI's own request shape).
#[derive(Debug, Deserialize)]
struct Part<'a> {
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    text: Option<Cow<'a, str>>,
    /// A `thinking` part's reasoning: parts of its own (Mistral), or text.
    #[serde(borrow, default)]
    thinking: Option<Raw<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    refusal: Option<Cow<'a, str>>,
}

/// A message's `content`: a string is text; an array holds typed parts
/// (`text` is text, `thinking` reasoning, `refusal` a refusal), and a
/// part of any other kind (a reference, an image) is kept whole in the
/// round's metadata, `<dialect>_content_parts`.
/// An escaped string is decoded into `scratch`.
pub(crate) fn content_calls(
    content: Raw<'_>,
    scratch: &mut String,
    session: Option<&str>,
    dialect: &Dialect,
    calls: &mut dyn CallSink,
) {
    let json = content.get();
    if json == "null" {
        return;
    }
    if !json.starts_with('[') {
        calls.call(session, Call::Message { text: raw_text_in(content, scratch) });
        return;
    }
    let Ok(parts) = serde_json::from_str::<SmallVec<[Raw<'_>; 2]>>(json) else {
        // Valid JSON nested too deep to read as parts: its text, as sent.
        calls.call(session, Call::Message { text: json });
        return;
    };
    for part in parts {
        part_calls(part, session, dialect, calls);
    }
}

/// One typed content part (of an array, or sent alone as Mistral's
/// Conversations events do): text, reasoning, a refusal, or kept whole.
pub(crate) fn part_calls(part: Raw<'_>, session: Option<&str>, dialect: &Dialect, calls: &mut dyn CallSink) {
    let Ok(read) = serde_json::from_str::<Part<'_>>(part.get()) else {
        return keep_part(part, session, dialect, calls);
    };
    match (read.kind.as_deref(), &read.text, read.thinking, &read.refusal) {
        (Some("text") | None, Some(text), _, _) => calls.call(session, Call::Message { text }),
        (Some("thinking"), _, Some(thinking), _) => thinking_calls(thinking, session, dialect, calls),
        (Some("thinking"), Some(text), None, _) => calls.call(session, Call::Thought { text }),
        (Some("refusal"), _, _, Some(refusal)) => refusal_calls(refusal, session, dialect, calls),
        _ => keep_part(part, session, dialect, calls),
    }
}

/// A `thinking` part's reasoning: its text parts are reasoning; a part of
/// another kind is kept whole, as in [`content_calls`].
fn thinking_calls(thinking: Raw<'_>, session: Option<&str>, dialect: &Dialect, calls: &mut dyn CallSink) {
    let json = thinking.get();
    if !json.starts_with('[') {
        calls.call(session, Call::Thought { text: &raw_text(thinking) });
        return;
    }
    let Ok(parts) = serde_json::from_str::<SmallVec<[Raw<'_>; 1]>>(json) else {
        return keep_part(thinking, session, dialect, calls);
    };
    for part in parts {
        match serde_json::from_str::<Part<'_>>(part.get()) {
            Ok(Part { kind, text: Some(text), .. }) if matches!(kind.as_deref(), Some("text") | None) => {
                calls.call(session, Call::Thought { text: &text })
            }
            _ => keep_part(part, session, dialect, calls),
        }
    }
}

/// A content part that is neither text nor reasoning, kept whole in the
/// round's metadata (a list: parts accumulate).
fn keep_part(part: Raw<'_>, session: Option<&str>, dialect: &Dialect, calls: &mut dyn CallSink) {
    let meta = one(&dialect.key("content_parts"), Value::Array(vec![raw_value(part)]));
    calls.call(session, Call::RoundMeta { meta: &meta });
}
