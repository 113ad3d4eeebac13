//! The Mistral adapter: chat completion chunks (`/v1/chat/completions`
//! with `stream: true`), and the events of the Conversations API
//! (`/v1/conversations` streamed: `conversation.response.*`,
//! `message.output.delta`, `function.call.delta`, `tool.execution.*`,
//! `agent.handoff.*`), with the host's lines between model calls in a
//! recorded agent loop.
//!
//! Chat chunks are OpenAI's shape, read by the same code as `openai-chat`
//! (one model call per completion, the host's `role: tool` messages as
//! results, a completion that ends the turn ends the run), with Mistral's
//! own ways: a tool call usually comes whole in one chunk, with no `index`
//! (a new id is a new call); `content` can be an array of typed chunks,
//! whose `thinking` chunks are reasoning; `finish_reason` may be
//! `model_length` (the context is full: the turn ended) or `error` (it
//! failed). Metadata keys begin with `mistral_`.
//!
//! A conversation response is one model call of the Conversations API: its
//! built-in tools (web search, code interpreter, ...) run on Mistral's side
//! and have their results in the stream; a `function.call` is the host's to
//! run, and its result is a `{"type":"function.result",...}` line before the
//! next response. A response that ends with no function call waiting ends
//! the run.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut mistral = InputFormat::named("mistral").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"id":"5319bd0299614c679a0068a4f2c8ffd0","object":"chat.completion.chunk","model":"magistral-small-2509","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Look first."}]}]}}]}"#,
//!     r#"{"id":"5319bd0299614c679a0068a4f2c8ffd0","object":"chat.completion.chunk","model":"magistral-small-2509","choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"id":"gSIMJiOkT","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#,
//!     "[DONE]",
//!     r#"{"role":"tool","tool_call_id":"gSIMJiOkT","name":"ls","content":"a.txt"}"#,
//! ] {
//!     mistral.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.thought, "Look first.");
//! assert_eq!((round.tool_calls[0].name.as_str(), round.tool_calls[0].arguments.as_str()), ("ls", "{}"));
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! assert_eq!(round.meta["mistral_finish_reason"], "tool_calls");
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{json_value, opt_cow, raw_text, raw_value, scalar_text, utf8};
use super::openai_chat::{content_calls, part_calls, Dialect, Line, OpenAiChatAdapter};
use super::support::{is_done_marker, one, report, rfc3339_ms};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, ToolCallStatus};

/// The registry row of Mistral streams.
///
/// A chat chunk is Mistral's when its `id` is Mistral's (32 hexadecimal
/// digits, no prefix) and its model one of Mistral's families; an OpenAI
/// chunk (`chatcmpl-...`), or a Mistral model served by another endpoint,
/// stays `openai-chat`.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let mistral = &roundup::adapters::mistral::FORMAT;
/// let chunk = br#"{"id":"5319bd0299614c679a0068a4f2c8ffd0","object":"chat.completion.chunk","model":"mistral-small-latest","choices":[]}"#;
/// assert_eq!(InputFormat::detect(chunk), mistral);
/// let event = br#"{"type":"conversation.response.started","conversation_id":"conv_1"}"#;
/// assert_eq!(InputFormat::detect(event), mistral);
/// let openai = br#"{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"mistral-small-latest","choices":[]}"#;
/// assert_eq!(InputFormat::detect(openai).name(), "openai-chat");
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "mistral",
    about: "Mistral chat completion chunks and
Conversations API events, with the host's
tool results between model calls; a call
that ends the turn ends the run; one
session",
    detect: |event: &Map<String, Value>| {
        let kind = event.get("type").and_then(Value::as_str);
        if let Some(kind) = kind {
            return is_conversation_event(kind);
        }
        // Early chunks had no `object`, and ids `cmpl-` + 32 digits.
        let object = event.get("object").and_then(Value::as_str);
        let chunk = matches!(object, Some("chat.completion.chunk" | "chat.completion"))
            || (object.is_none() && event.contains_key("choices"));
        let id = event.get("id").and_then(Value::as_str).unwrap_or("");
        let model = event.get("model").and_then(Value::as_str).unwrap_or("");
        chunk && is_mistral_id(id.strip_prefix("cmpl-").unwrap_or(id)) && is_mistral_model(model)
    },
    adapter: || Box::<MistralAdapter>::default(),
};

/// Mistral's names for the metadata and reports of its chat chunks.
const MISTRAL: Dialect = Dialect { format: "mistral", meta: "mistral" };

/// The event types of a streamed conversation response.
fn is_conversation_event(kind: &str) -> bool {
    kind.starts_with("conversation.response.")
        || kind.starts_with("tool.execution.")
        || kind.starts_with("agent.handoff.")
        || matches!(kind, "message.output.delta" | "function.call.delta")
}

/// A completion id as Mistral makes them: 32 lowercase hexadecimal digits.
fn is_mistral_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A model of Mistral's families (`mistral-small-latest`,
/// `magistral-medium-2507`, `open-mixtral-8x22b`, `labs-devstral-...`).
fn is_mistral_model(model: &str) -> bool {
    let name = model.strip_prefix("labs-").unwrap_or(model);
    let mut words = name.split('-');
    let (Some(family), Some(next)) = (words.next(), words.next()) else { return false };
    match family {
        "mistral" | "magistral" | "codestral" | "devstral" | "ministral" | "pixtral" | "voxtral" => true,
        "open" => matches!(next, "mistral" | "mixtral" | "codestral"),
        _ => false,
    }
}

/// Tool calls remembered per conversation response at most (a real one
/// has a few).
const MAX_CALLS: usize = 256;

/// Translates Mistral chat chunks and conversation events into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct MistralAdapter {
    /// The chat completion chunks' state (OpenAI's reader).
    chat: OpenAiChatAdapter,
    /// The Conversations events' state.
    #[serde(default)]
    conversation: Conversation,
}

/// What reading conversation responses keeps between events.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Conversation {
    /// The tool calls of the current response already declared (their
    /// deltas follow), so that one is declared once.
    declared: SmallVec<[String; 4]>,
    /// The function calls waiting for the host's result: while one waits,
    /// the end of a response is not the end of the turn.
    waiting: SmallVec<[String; 2]>,
    /// The run ended: the next response or user message begins the next.
    ended: bool,
    /// The last model and agent named, sent to the run's metadata when
    /// they change.
    model: String,
    agent: String,
}

/// One conversation event (or host entry), as the adapter reads it.
#[derive(Debug, Deserialize)]
struct Event<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    conversation_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    agent_id: Option<Cow<'a, str>>,
    /// A tool's name: a built-in tool's, a connector's or a function's.
    #[serde(borrow, default)]
    name: Option<Raw<'a>>,
    #[serde(borrow, default)]
    arguments: Option<Raw<'a>>,
    /// Text, or one typed chunk (`text`, `thinking`, `tool_reference`, ...).
    #[serde(borrow, default)]
    content: Option<Raw<'a>>,
    #[serde(borrow, default)]
    info: Option<Raw<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    confirmation_status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    usage: Option<Raw<'a>>,
    /// A host `function.result` entry's result.
    #[serde(borrow, default)]
    result: Option<Raw<'a>>,
}

impl Adapter for MistralAdapter {
    state_is_self!();

    fn end(&mut self, calls: &mut dyn CallSink) {
        self.chat.end_turns(calls);
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if is_done_marker(payload) {
            self.chat.end_turns(calls);
            return Ok(());
        }
        let text = utf8(payload)?;
        let mut line = Line::default();
        Line::parse(text, &mut line)?;
        if line.kind.is_none() {
            self.chat.line(&mut line, payload, &MISTRAL, calls);
            return Ok(());
        }
        let event: Event<'_> = serde_json::from_str(text).map_err(|error| BadLine::json(&error))?;
        self.conversation.event(&event, text, calls);
        Ok(())
    }
}

impl Conversation {
    fn event(&mut self, event: &Event<'_>, text: &str, calls: &mut dyn CallSink) {
        if let Some(at_ms) = event.created_at.as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
        }
        let kind = event.kind.as_ref();
        if self.ended && kind != "function.result" {
            // The next response (or the user's next message) of a
            // conversation whose last response ended the turn.
            self.ended = false;
            self.declared.clear();
            self.waiting.clear();
            calls.call(None, Call::Start);
        }
        match kind {
            "conversation.response.started" => {
                self.declared.clear();
                if let Some(id) = event.conversation_id.as_deref() {
                    calls.call(None, Call::RunMeta { meta: &one("mistral_conversation_id", Value::from(id)) });
                }
            }
            "message.output.delta" => {
                self.models(event, calls);
                // Text, one typed chunk, or (as entries hold them) a list.
                match event.content {
                    Some(content) if content.get().starts_with('{') => part_calls(content, None, &MISTRAL, calls),
                    Some(content) => content_calls(content, &mut String::new(), None, &MISTRAL, calls),
                    None => {}
                }
            }
            "function.call.delta" => {
                self.models(event, calls);
                let id = event.tool_call_id.as_deref().or(event.id.as_deref()).unwrap_or("");
                if self.declare(id, event.name, calls) {
                    self.waiting.push(id.to_owned());
                    if self.waiting.len() > MAX_CALLS {
                        self.waiting.remove(0);
                    }
                }
                if let Some(status) = &event.confirmation_status {
                    let meta = one("mistral_confirmation_status", Value::from(status.as_ref()));
                    calls.call(None, Call::ToolMeta { id, meta: &meta });
                }
                arguments(id, event.arguments, calls);
            }
            "tool.execution.started" | "tool.execution.delta" => {
                self.models(event, calls);
                let id = event.id.as_deref().unwrap_or("");
                self.declare(id, event.name, calls);
                arguments(id, event.arguments, calls);
            }
            "tool.execution.done" => {
                let id = event.id.as_deref().unwrap_or("");
                self.declare(id, event.name, calls);
                let content = event.info.filter(|i| i.get() != "null").map_or(Cow::Borrowed(""), raw_text);
                calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Completed });
            }
            "agent.handoff.started" | "agent.handoff.done" => {
                let meta = one("mistral_handoffs", Value::Array(vec![json_value(text)]));
                calls.call(None, Call::RoundMeta { meta: &meta });
            }
            "conversation.response.done" => {
                if let Some(usage) = event.usage.filter(|u| u.get() != "null").map(raw_value) {
                    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
                    let total = field("total_tokens").or_else(|| {
                        Some(field("prompt_tokens")?.saturating_add(field("completion_tokens").unwrap_or(0)))
                    });
                    if let Some(total) = total {
                        calls.call(None, Call::TokenUsage { total });
                    }
                    calls.call(None, Call::RoundMeta { meta: &one("mistral_usage", usage) });
                }
                self.declared.clear();
                // A function call waiting for the host's result: the turn
                // goes on with the next response.
                if self.waiting.is_empty() {
                    self.end(FinishReason::Completed, calls);
                }
            }
            "conversation.response.error" => {
                report(calls, None, AnomalyKind::ProtocolError, &format!("mistral: {text}"));
                self.end(FinishReason::Failed, calls);
            }
            "function.result" => {
                let id = event.tool_call_id.as_deref().unwrap_or("");
                self.waiting.retain(|waiting| waiting != id);
                let content = event.result.map_or(Cow::Borrowed(""), raw_text);
                calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Completed });
            }
            "message.input" => {
                // The user's next message begins the next run.
                self.declared.clear();
                self.waiting.clear();
                calls.call(None, Call::Start);
                let content = event.content.map_or(Value::Null, raw_value);
                calls.call(None, Call::RunMeta { meta: &one("mistral_user_message", content) });
            }
            _ => report(calls, None, AnomalyKind::UnknownEvent, &format!("mistral: unknown event: {text}")),
        }
    }

    /// Declares tool call `id` once per response; `true` when this did.
    fn declare(&mut self, id: &str, name: Option<Raw<'_>>, calls: &mut dyn CallSink) -> bool {
        if self.declared.iter().any(|declared| declared == id) {
            return false;
        }
        let name = name.filter(|n| n.get() != "null").map_or(Cow::Borrowed(""), raw_text);
        calls.call(None, Call::ToolCall { id, title: &name, name: &name });
        if self.declared.len() >= MAX_CALLS {
            self.declared.remove(0);
        }
        self.declared.push(id.to_owned());
        true
    }

    /// The model and agent a response names, into the run's metadata when
    /// they change.
    fn models(&mut self, event: &Event<'_>, calls: &mut dyn CallSink) {
        if let Some(model) = event.model.as_deref().filter(|m| *m != self.model) {
            self.model = model.to_owned();
            calls.call(None, Call::RunMeta { meta: &one("mistral_model", Value::from(model)) });
        }
        if let Some(agent) = event.agent_id.as_deref().filter(|a| *a != self.agent) {
            self.agent = agent.to_owned();
            calls.call(None, Call::RunMeta { meta: &one("mistral_agent_id", Value::from(agent)) });
        }
    }

    fn end(&mut self, reason: FinishReason, calls: &mut dyn CallSink) {
        self.ended = true;
        calls.call(None, Call::Finish { reason });
    }
}

/// A tool call's argument fragment (appended).
fn arguments(id: &str, arguments: Option<Raw<'_>>, calls: &mut dyn CallSink) {
    if let Some(arguments) = arguments.filter(|a| a.get() != "null") {
        let content = raw_text(arguments);
        calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::InProgress });
    }
}
