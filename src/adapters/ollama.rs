//! The Ollama adapter: `/api/chat` NDJSON streams (and `/api/generate`
//! ones), and the host's messages between responses in a recorded agent
//! loop.
//!
//! A response is one model call: its lines carry `message.content` and
//! `message.thinking` fragments, and tool calls that each come **whole**
//! (`function.arguments` is a JSON object: the call's arguments at once).
//! Older servers send no tool call `id`: the adapter makes one up from the
//! call's place in the stream (`ollama-<response>-<call>`, the same on every
//! replay). The last line has `done: true`, the `done_reason` (`stop`,
//! `length`, `load`, `unload`; missing on older servers) and the counts and
//! durations. A response that called tools is not the end of the turn: the
//! host runs them and sends `{"role":"tool","content":...,"tool_name":...}`
//! messages (with `tool_call_id` on current servers; without it, a result
//! answers the oldest waiting call of its `tool_name` or `name`); a response that
//! ends without calling tools ends the run. A `{"role":"user"}` message
//! begins a new run; an `{"error":...}` line (sent after streaming began,
//! with HTTP 200) ends the run as failed.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut ollama = InputFormat::named("ollama").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"model":"qwen3","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"","thinking":"Check the weather."},"done":false}"#,
//!     r#"{"model":"qwen3","created_at":"2025-06-01T10:00:01Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}"#,
//!     r#"{"model":"qwen3","created_at":"2025-06-01T10:00:02Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":12}"#,
//!     r#"{"role":"tool","tool_name":"get_weather","content":"18°C"}"#,
//! ] {
//!     ollama.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.thought, "Check the weather.");
//! let call = &round.tool_calls[0];
//! assert_eq!((call.id.as_str(), call.name.as_str()), ("ollama-0-0", "get_weather"));
//! assert_eq!(call.arguments, r#"{"city":"Paris"}"#);
//! assert_eq!(call.result.content(), Some("18°C"));
//! assert_eq!(round.meta["ollama_done_reason"], "stop");
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{raw_text, raw_value, utf8};
use super::openai_chat::Function;
use super::support::{one, report, rfc3339_ms};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Ollama streams.
///
/// ```
/// let ollama = &roundup::adapters::ollama::FORMAT;
/// let line = br#"{"model":"llama3.2","created_at":"2023-12-12T14:13:43.416799Z","message":{"role":"assistant","content":"Hi"},"done":false}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(line), ollama);
/// assert_eq!(roundup::adapters::InputFormat::detect(br#"{"error":"model not found"}"#), ollama);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "ollama",
    about: "Ollama /api/chat (or /api/generate)
NDJSON lines, with the host's role:tool
messages between responses; a response
without tool calls ends the run; one
session",
    detect: |event: &Map<String, Value>| {
        let response = event.get("model").is_some_and(Value::is_string)
            && event.get("created_at").is_some_and(Value::is_string)
            && event.get("done").is_some_and(Value::is_boolean);
        // An error is a bare `{"error": "..."}`, which no other format sends.
        response || (event.len() == 1 && event.get("error").is_some_and(Value::is_string))
    },
    adapter: || Box::<OllamaAdapter>::default(),
};

/// Calls remembered as waiting for the host's result at most (a real
/// response makes a few).
const MAX_WAITING: usize = 256;

/// Translates Ollama response lines and host messages into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OllamaAdapter {
    /// Responses ended so far: the current one's number, in made-up ids.
    responses: u64,
    /// Tool calls of the current response so far.
    calls: u64,
    /// The current response has begun (a line of it was read).
    open: bool,
    /// The last response ended the run: the next one begins the next run.
    ended: bool,
    /// The calls waiting for the host's result, oldest first, with their
    /// names (a result without an id answers by name).
    waiting: SmallVec<[(String, String); 2]>,
}

/// One line: a response line, an error, or a host message.
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
struct Line<'a> {
    model: Option<Cow<'a, str>>,
    created_at: Option<Cow<'a, str>>,
    message: Option<Message<'a>>,
    /// `/api/generate`: the text and reasoning at the top level.
    response: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
    done: Option<bool>,
    done_reason: Option<Cow<'a, str>>,
    total_duration: Option<Raw<'a>>,
    load_duration: Option<Raw<'a>>,
    prompt_eval_count: Option<Raw<'a>>,
    prompt_eval_duration: Option<Raw<'a>>,
    eval_count: Option<Raw<'a>>,
    eval_duration: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    /// A host message: `role`, `content`, `tool_name`, `tool_call_id`.
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    tool_name: Option<Cow<'a, str>>,
    /// The tool's name as OpenAI-style hosts write it.
    name: Option<Cow<'a, str>>,
    tool_call_id: Option<Cow<'a, str>>,
}

read_in_place!(Line {
    "model" => model as OptCow,
    "created_at" => created_at as OptCow,
    "message" => message in place,
    "response" => response as OptCow,
    "thinking" => thinking as OptCow,
    "done" => done,
    "done_reason" => done_reason as OptCow,
    "total_duration" => total_duration,
    "load_duration" => load_duration,
    "prompt_eval_count" => prompt_eval_count,
    "prompt_eval_duration" => prompt_eval_duration,
    "eval_count" => eval_count,
    "eval_duration" => eval_duration,
    "error" => error,
    "role" => role as OptCow,
    "content" => content,
    "tool_name" => tool_name as OptCow,
    "name" => name as OptCow,
    "tool_call_id" => tool_call_id as ScalarText,
});

#[derive(Debug, Default)]
struct Message<'a> {
    content: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
}

read_in_place!(Message {
    "content" => content as OptCow,
    "thinking" => thinking as OptCow,
    "tool_calls" => tool_calls in place,
});

#[derive(Debug, Default)]
struct ToolCall<'a> {
    id: Option<Cow<'a, str>>,
    /// OpenAI's shape, but `arguments` is a JSON object (a string from
    /// some servers): the whole arguments at once.
    function: Option<Function<'a>>,
}

read_in_place!(ToolCall {
    "id" => id as ScalarText,
    "function" => function in place,
});

impl Adapter for OllamaAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let mut line = Line::default();
        Line::read_into(utf8(payload)?, &mut line).map_err(|error| BadLine::json(&error))?;
        if let Some(error) = line.error {
            report(calls, None, AnomalyKind::ProtocolError, &format!("ollama: error: {}", raw_text(error)));
            self.end_response();
            if !std::mem::replace(&mut self.ended, true) {
                calls.call(None, Call::Finish { reason: FinishReason::Failed });
            }
            return Ok(());
        }
        let response = line.model.is_some() || line.message.is_some() || line.done.is_some();
        if !response {
            return self.host_message(&line, payload, calls);
        }
        if let Some(at_ms) = line.created_at.as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
        }
        if !self.open {
            // The first line of a response: the host's results for the
            // last one are in, and a run the last one ended is over.
            self.open = true;
            self.waiting.clear();
            if std::mem::take(&mut self.ended) {
                calls.call(None, Call::Start);
            }
        }
        let message = line.message.as_ref();
        for text in [line.thinking.as_deref(), message.and_then(|m| m.thinking.as_deref())].into_iter().flatten() {
            calls.call(None, Call::Thought { text });
        }
        for text in [line.response.as_deref(), message.and_then(|m| m.content.as_deref())].into_iter().flatten() {
            calls.call(None, Call::Message { text });
        }
        for tool in message.into_iter().flat_map(|m| m.tool_calls.iter().flatten()) {
            self.tool_call(tool, calls);
        }
        if line.done == Some(true) {
            self.done(&line, calls);
        }
        Ok(())
    }
}

impl OllamaAdapter {
    /// One whole tool call: declared, its arguments at once, and waiting
    /// for the host's result.
    fn tool_call(&mut self, tool: &ToolCall<'_>, calls: &mut dyn CallSink) {
        let made_up;
        let id = match tool.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => {
                made_up = format!("ollama-{}-{}", self.responses, self.calls);
                made_up.as_str()
            }
        };
        self.calls = self.calls.saturating_add(1);
        let function = tool.function.as_ref();
        let name = function.and_then(|f| f.name.as_deref()).unwrap_or("");
        calls.call(None, Call::ToolCall { id, title: name, name });
        if let Some(arguments) = function.and_then(|f| f.arguments).filter(|a| a.get() != "null") {
            calls.call(None, Call::ArgsSnapshot { id, args: &raw_text(arguments) });
        }
        if self.waiting.len() >= MAX_WAITING {
            self.waiting.remove(0);
        }
        self.waiting.push((id.to_owned(), name.to_owned()));
    }

    /// The response's last line: its reason, model and metrics as the
    /// round's metadata, the context it used as the token gauge, and the
    /// end of the run when no tool call waits for a result.
    fn done(&mut self, line: &Line<'_>, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        if let Some(reason) = &line.done_reason {
            meta.insert("ollama_done_reason".into(), Value::from(reason.as_ref()));
        }
        if let Some(model) = &line.model {
            meta.insert("ollama_model".into(), Value::from(model.as_ref()));
        }
        let metrics: Map<String, Value> = [
            ("total_duration", line.total_duration),
            ("load_duration", line.load_duration),
            ("prompt_eval_count", line.prompt_eval_count),
            ("prompt_eval_duration", line.prompt_eval_duration),
            ("eval_count", line.eval_count),
            ("eval_duration", line.eval_duration),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_owned(), raw_value(value?))))
        .collect();
        let count = |value: Option<Raw<'_>>| value.and_then(|v| v.get().parse::<u64>().ok());
        let (prompt, generated) = (count(line.prompt_eval_count), count(line.eval_count));
        if !metrics.is_empty() {
            meta.insert("ollama_metrics".into(), Value::Object(metrics));
        }
        if !meta.is_empty() {
            calls.call(None, Call::RoundMeta { meta: &meta });
        }
        // Counts of zero are left out (`omitempty`): either may be absent.
        if prompt.is_some() || generated.is_some() {
            let total = prompt.unwrap_or(0).saturating_add(generated.unwrap_or(0));
            calls.call(None, Call::TokenUsage { total });
        }
        let called = self.calls > 0;
        self.end_response();
        if !called {
            // Whatever the reason (`stop`, `length`, a model loaded or
            // unloaded, none from an older server): the model ended it.
            self.ended = true;
            calls.call(None, Call::Finish { reason: FinishReason::Completed });
        }
    }

    fn end_response(&mut self) {
        if self.open {
            self.responses = self.responses.saturating_add(1);
        }
        self.open = false;
        self.calls = 0;
    }

    /// A message of the conversation between responses: a tool's result
    /// or the user's next prompt.
    fn host_message(&mut self, line: &Line<'_>, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let content = line.content.filter(|c| c.get() != "null").map_or(Cow::Borrowed(""), raw_text);
        match line.role.as_deref() {
            Some("tool") => {
                // The call it answers: the one it names; else the oldest
                // waiting call of its tool, else the oldest waiting call.
                let named = line.tool_call_id.as_deref().filter(|id| !id.is_empty());
                let at = match (named, line.tool_name.as_deref().or(line.name.as_deref())) {
                    (Some(id), _) => self.waiting.iter().position(|(waiting, _)| waiting == id),
                    (None, Some(name)) => self.waiting.iter().position(|(_, waiting)| waiting == name),
                    (None, None) => None,
                };
                let at = at.or_else(|| (named.is_none() && !self.waiting.is_empty()).then_some(0));
                let answered = at.map(|at| self.waiting.remove(at).0);
                // Nothing to answer: the machine reports the result, with
                // its content, as one for a call never declared.
                let id = named.or(answered.as_deref()).unwrap_or("");
                calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Completed });
            }
            Some("user") => {
                self.waiting.clear();
                self.ended = false;
                calls.call(None, Call::Start);
                calls.call(None, Call::RunMeta { meta: &one("ollama_user_message", Value::from(content.as_ref())) });
            }
            Some("system") => {
                calls.call(None, Call::RunMeta { meta: &one("ollama_system_message", Value::from(content.as_ref())) });
            }
            _ => {
                let detail = format!(
                    "ollama: a line that is neither a response nor a message: {}",
                    String::from_utf8_lossy(payload)
                );
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
        Ok(())
    }
}
