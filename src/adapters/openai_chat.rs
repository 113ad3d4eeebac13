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

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{opt_cow, raw_text, raw_value, scalar_text, utf8};
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
}

/// Tool indexes remembered per completion at most (a real one has a few).
const MAX_TOOL_INDEXES: usize = 256;

/// One line: a chunk, a whole completion, or a host message.
#[derive(Debug, Deserialize)]
struct Line<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    object: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    system_fingerprint: Option<Cow<'a, str>>,
    /// Unix seconds.
    #[serde(default)]
    created: Option<u64>,
    /// One choice in almost every chunk: held inline.
    #[serde(borrow, default)]
    choices: Option<SmallVec<[Choice<'a>; 1]>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    x_groq: Option<XGroq<'a>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    /// A host message line: `role`, `content`, `tool_call_id`, ...
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    tool_call_id: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct XGroq<'a> {
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u64,
    /// A chunk's fragment.
    #[serde(borrow, default)]
    delta: Option<Message<'a>>,
    /// A whole completion's message.
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    finish_reason: Option<Cow<'a, str>>,
}

/// A delta, a completion's message, or a host message: the same fields.
#[derive(Debug, Default, Deserialize)]
struct Message<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    tool_call_id: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct ToolCall<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Debug, Deserialize)]
struct Function<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

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
        let line: Line<'_> = serde_json::from_str(utf8(payload)?).map_err(|error| BadLine::json(&error))?;
        self.line(line, payload, calls);
        Ok(())
    }
}

impl OpenAiChatAdapter {
    /// The runs of the choices whose turn the model ended finish, each
    /// with what its `finish_reason` said.
    fn end_turns(&mut self, calls: &mut dyn CallSink) {
        for (choice, reason) in std::mem::take(&mut self.ending) {
            calls.call(choice_session(choice).as_deref(), Call::Finish { reason });
            self.ended.push(choice);
        }
    }

    fn line(&mut self, line: Line<'_>, payload: &[u8], calls: &mut dyn CallSink) {
        if let Some(error) = line.error {
            // A provider's error mid-stream: the model call is over.
            report(calls, None, AnomalyKind::ProtocolError, &format!("openai-chat: error: {}", error.get()));
            calls.call(None, Call::Finish { reason: FinishReason::Failed });
            return;
        }
        let Some(choices) = line.choices else {
            let message = Message {
                role: line.role,
                content: line.content,
                tool_calls: line.tool_calls,
                tool_call_id: line.tool_call_id,
                ..Message::default()
            };
            return self.host_message(message, payload, calls);
        };
        if let Some(created) = line.created {
            calls.clock(created.saturating_mul(1_000));
        }
        let id = line.id.as_deref().unwrap_or("");
        if id != self.completion {
            self.completion.clear();
            self.completion.push_str(id);
            self.tools.clear();
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
                self.fragment(choice.index, delta, whole, session, calls);
            }
            if let Some(reason) = &choice.finish_reason {
                let ends = match reason.as_ref() {
                    "stop" | "length" => Some(FinishReason::Completed),
                    "content_filter" => Some(FinishReason::Failed),
                    // `tool_calls`: the host runs them and calls again.
                    _ => None,
                };
                if let Some(ends) = ends {
                    self.ending.retain(|(c, _)| *c != choice.index);
                    self.ending.push((choice.index, ends));
                }
                let mut meta = Meta::new();
                meta.insert("openai_finish_reason".into(), Value::from(reason.as_ref()));
                for (key, value) in [("openai_completion_id", &line.id), ("openai_model", &line.model)] {
                    if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                        meta.insert(key.into(), Value::from(value));
                    }
                }
                if let Some(fingerprint) = &line.system_fingerprint {
                    meta.insert("openai_system_fingerprint".into(), Value::from(fingerprint.as_ref()));
                }
                calls.call(session, Call::RoundMeta { meta: &meta });
            }
        }
        let usage = line.usage.filter(|u| u.get() != "null").or(line.x_groq.and_then(|x| x.usage));
        if let Some(usage) = usage {
            let usage = raw_value(usage);
            if let Some(total) = context_tokens(&usage) {
                calls.call(None, Call::TokenUsage { total });
            }
            calls.call(None, Call::RoundMeta { meta: &one("openai_usage", usage) });
        }
    }

    /// One choice's delta (or a whole completion's message).
    fn fragment(
        &mut self,
        choice: u64,
        delta: &Message<'_>,
        whole: bool,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) {
        for reasoning in [&delta.reasoning_content, &delta.reasoning].into_iter().flatten() {
            calls.call(session, Call::Thought { text: reasoning });
        }
        if let Some(content) = delta.content.filter(|c| c.get() != "null") {
            let text = raw_text(content);
            calls.call(session, Call::Message { text: &text });
        }
        if let Some(refusal) = &delta.refusal {
            calls.call(session, Call::Message { text: refusal });
            calls.call(session, Call::RoundMeta { meta: &one("openai_refusal", Value::Bool(true)) });
        }
        for (position, tool) in delta.tool_calls.iter().flatten().enumerate() {
            let index = tool.index.unwrap_or(position as u64);
            let function = tool.function.as_ref();
            // Only the first fragment names the call; later ones may carry
            // `"id": ""` or `"name": ""`.
            let declared = tool.id.as_deref().filter(|id| !id.is_empty());
            if let Some(id) = declared.filter(|id| self.tool(choice, index) != Some(*id)) {
                let name = function.and_then(|f| f.name.as_deref()).unwrap_or("");
                calls.call(session, Call::ToolCall { id, title: name, name });
                self.tools.retain(|(c, i, _)| (*c, *i) != (choice, index));
                // Bounded for a completion that declares calls without end:
                // fragments for a forgotten index are reported, with their
                // text, as fragments no call declared.
                if self.tools.len() >= MAX_TOOL_INDEXES {
                    self.tools.remove(0);
                }
                self.tools.push((choice, index, id.to_owned()));
            }
            let Some(id) = declared.or_else(|| self.tool(choice, index)) else {
                let arguments = function.and_then(|f| f.arguments).map_or("null", RawValue::get);
                let detail = format!(
                    "openai-chat: a tool-call fragment for index {index} that no fragment declared: {arguments}"
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

    /// The tool id the fragments at `index` of `choice` belong to.
    fn tool(&self, choice: u64, index: u64) -> Option<&str> {
        self.tools.iter().find(|(c, i, _)| (*c, *i) == (choice, index)).map(|(_, _, id)| id.as_str())
    }

    /// A message of the conversation between completions: a tool result,
    /// the user's next prompt, instructions, or an assistant message sent
    /// whole.
    fn host_message(&mut self, message: Message<'_>, payload: &[u8], calls: &mut dyn CallSink) {
        let content = message.content.map(raw_text);
        match message.role.as_deref() {
            Some("tool" | "function") => {
                let Some(id) = message.tool_call_id.as_deref() else {
                    let detail =
                        format!("openai-chat: a tool message without tool_call_id: {}", content.unwrap_or_default());
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
                calls.call(None, Call::RunMeta { meta: &one("openai_user_message", text) });
            }
            Some(role @ ("system" | "developer")) => {
                let text = message.content.map(raw_value).unwrap_or(Value::Null);
                calls.call(None, Call::RunMeta { meta: &one(&format!("openai_{role}_message"), text) });
            }
            Some("assistant") => {
                self.tools.clear();
                self.fragment(0, &message, true, None, calls);
            }
            _ => {
                let detail = format!(
                    "openai-chat: a line that is neither a chunk nor a message: {}",
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

/// The context the completion occupied: `total_tokens`, else prompt plus
/// completion tokens.
fn context_tokens(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    field("total_tokens")
        .or_else(|| Some(field("prompt_tokens")?.saturating_add(field("completion_tokens").unwrap_or(0))))
}
