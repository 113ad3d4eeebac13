//! The Claude Code adapter: `claude -p --output-format stream-json`
//! lines, with or without `--include-partial-messages`.
//!
//! A prompt is a run: it begins at the stream's first line or the first
//! line after a `result`, and ends at its `result`. With partial messages on, each block
//! arrives twice, as `stream_event` deltas (the Anthropic Messages events,
//! read by the same code as the `anthropic` adapter) and as an `assistant`
//! snapshot line: the deltas are taken, the snapshot of a streamed message
//! is not. Lines with a `parent_tool_use_id` belong to a subagent: they go
//! to a session of that name, whose run ends with its parent's.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut claude = InputFormat::named("claude-code").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"system","subtype":"init","session_id":"s","model":"claude"}"#,
//!     r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},"parent_tool_use_id":null}"#,
//!     r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}]},"parent_tool_use_id":null}"#,
//!     r#"{"type":"result","subtype":"success","is_error":false,"usage":{"input_tokens":3,"output_tokens":4}}"#,
//! ] {
//!     claude.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, r#"{"command":"ls"}"#);
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::anthropic::{Block, Event, MessageStream};
use super::borrowed::{json_value, opt_cow, raw_text, raw_value, utf8, view_of};
use super::support::{one, report, EventCounts};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta};

/// The registry row of Claude Code stream-json lines.
///
/// ```
/// let claude = &roundup::adapters::claude_code::FORMAT;
/// let init = br#"{"type":"system","subtype":"init","session_id":"s"}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(init), claude);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "claude-code",
    about: "Claude Code --output-format stream-json
lines; a prompt is a run, a subagent
(parent_tool_use_id) a session of that
name",
    detect: |event: &Map<String, Value>| {
        let kind = event.get("type").and_then(Value::as_str);
        matches!(kind, Some("system" | "assistant" | "user" | "result" | "stream_event" | "rate_limit_event"))
            && (event.contains_key("session_id") || event.contains_key("parent_tool_use_id"))
            || kind == Some("control_request")
    },
    adapter: || Box::<ClaudeCodeAdapter>::default(),
};

/// Translates Claude Code stream-json lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClaudeCodeAdapter {
    /// The Messages stream of the main agent and of each subagent.
    streams: Vec<(Option<String>, MessageStream)>,
    /// Messages whose blocks came as `stream_event` deltas: their
    /// `assistant` snapshots are not read again (the last few).
    streamed: Vec<String>,
    /// A `result` ended the prompt: the next line begins another.
    between_prompts: bool,
    /// The user interrupted the prompt: its run ends `canceled`.
    interrupted: bool,
    /// Subagent sessions seen in this prompt: they end with it.
    children: Vec<String>,
    /// The usage of the latest API message: the context it occupied.
    last_usage: Option<u64>,
    /// Lines that carry nothing for rounds, counted by kind.
    counts: EventCounts,
    /// The prompt's user texts (the prompt, and any injected after it),
    /// by session: sent as one list when the prompt ends.
    user_texts: Vec<(Option<String>, Value)>,
}

/// Read in place ([`read_in_place!`]).
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Cow<'a, str>,
    subtype: Option<Cow<'a, str>>,
    parent_tool_use_id: Option<Cow<'a, str>>,
    event: Option<Event<'a>>,
    message: Option<Message<'a>>,
    request: Option<Raw<'a>>,
    is_error: Option<bool>,
    is_replay: Option<bool>,
    terminal_reason: Option<Cow<'a, str>>,
}

read_in_place!(Line {
    "type" => kind as CowStr (required),
    "subtype" => subtype as OptCow,
    "parent_tool_use_id" => parent_tool_use_id as OptCow,
    "event" => event in place,
    "message" => message in place,
    "request" => request,
    "is_error" => is_error,
    "isReplay" => is_replay,
    "terminal_reason" => terminal_reason as OptCow,
});

#[derive(Debug, Default)]
struct Message<'a> {
    id: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    usage: Option<Raw<'a>>,
}

read_in_place!(Message {
    "id" => id as OptCow,
    "content" => content,
    "usage" => usage,
});

/// A permission request's fields the adapter reads.
#[derive(Debug, Deserialize)]
struct Request<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    tool_use_id: Option<Cow<'a, str>>,
}

/// The `result` fields kept in the run's metadata.
const RESULT_FIELDS: [&str; 12] = [
    "subtype",
    "is_error",
    "result",
    "stop_reason",
    "terminal_reason",
    "num_turns",
    "duration_ms",
    "duration_api_ms",
    "usage",
    "total_cost_usd",
    "modelUsage",
    "permission_denials",
];

impl Adapter for ClaudeCodeAdapter {
    state_is_self!();

    /// A prompt cut off before its `result` keeps its user texts and what
    /// its open blocks held.
    fn end(&mut self, calls: &mut dyn CallSink) {
        for (session, stream) in &mut self.streams {
            stream.end(session.as_deref(), calls);
        }
        self.flush_user_texts(calls);
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        let mut line = Line::default();
        Line::read_into(text, &mut line).map_err(|error| BadLine::json(&error))?;
        let session = line.parent_tool_use_id.as_deref();
        let init = line.kind == "system" && line.subtype.as_deref() == Some("init");
        // The first prompt's run is the stream's first (hooks come before
        // its `system/init`); each later one begins after a `result`.
        if std::mem::take(&mut self.between_prompts) {
            calls.call(None, Call::Start);
        }
        if let Some(child) = session.filter(|child| !self.children.iter().any(|c| c == child)) {
            self.children.push(child.to_owned());
        }
        match line.kind.as_ref() {
            "stream_event" => {
                let Some(event) = &line.event else { return Err(BadLine::new("stream_event without an event")) };
                if event.kind.as_deref() == Some("message_start") {
                    if let Some(id) = event.message.as_ref().and_then(|m| m.id.as_deref()) {
                        self.remember_streamed(id);
                    }
                }
                if !self.stream(session).event(event, text, session, calls) {
                    let detail = format!("claude-code: stream event: {}", String::from_utf8_lossy(payload));
                    report(calls, session, AnomalyKind::UnknownEvent, &detail);
                }
            }
            "assistant" => self.assistant(line.message.as_ref(), session, calls),
            "user" => self.user(&line, session, calls),
            "result" => self.result(&line, payload, calls),
            "control_request" => {
                let request = line.request.and_then(|raw| serde_json::from_str::<Request<'_>>(raw.get()).ok());
                match request.as_ref().and_then(|r| Some((r.subtype.as_deref()?, r.tool_use_id.as_deref()?))) {
                    Some(("can_use_tool", id)) => {
                        let asked = line.request.map(raw_value).unwrap_or(Value::Null);
                        calls.call(session, Call::ToolMeta { id, meta: &one("claude_permission_request", asked) });
                    }
                    _ => self.counts.count("claude_events", "control_request", None, calls),
                }
            }
            "system" if init => {
                let init = json_value(&String::from_utf8_lossy(payload));
                let fields = [
                    ("session_id", "claude_session_id"),
                    ("model", "claude_model"),
                    ("cwd", "claude_cwd"),
                    ("permissionMode", "claude_permission_mode"),
                    ("claude_code_version", "claude_code_version"),
                ];
                let meta: Meta = fields
                    .iter()
                    .filter_map(|(field, key)| Some(((*key).to_owned(), init.get(*field)?.clone())))
                    .collect();
                calls.call(None, Call::RunMeta { meta: &meta });
            }
            "system" | "rate_limit_event" | "control_response" => {
                let kind = match &line.subtype {
                    Some(subtype) => format!("{}/{subtype}", line.kind),
                    None => line.kind.clone().into_owned(),
                };
                self.counts.count("claude_events", &kind, None, calls);
            }
            _ => {
                let detail = format!("claude-code: unknown line: {}", String::from_utf8_lossy(payload));
                report(calls, session, AnomalyKind::UnknownEvent, &detail);
            }
        }
        Ok(())
    }
}

impl ClaudeCodeAdapter {
    fn stream(&mut self, session: Option<&str>) -> &mut MessageStream {
        let at = match self.streams.iter().position(|(s, _)| s.as_deref() == session) {
            Some(at) => at,
            None => {
                self.streams.push((session.map(str::to_owned), MessageStream::default()));
                self.streams.len() - 1
            }
        };
        &mut self.streams[at].1
    }

    fn remember_streamed(&mut self, id: &str) {
        if self.streamed.len() >= 16 {
            self.streamed.remove(0);
        }
        self.streamed.push(id.to_owned());
    }

    /// An `assistant` snapshot: its blocks, unless they were streamed.
    fn assistant(&mut self, message: Option<&Message<'_>>, session: Option<&str>, calls: &mut dyn CallSink) {
        let Some(message) = message else { return };
        if let Some(total) = message.usage.map(raw_value).as_ref().and_then(context_tokens) {
            self.last_usage = Some(total);
        }
        let id = message.id.as_deref().unwrap_or("");
        if !id.is_empty() && self.streamed.iter().any(|streamed| streamed == id) {
            return;
        }
        let blocks: Vec<Raw<'_>> = message.content.and_then(view_of).unwrap_or_default();
        for raw in blocks {
            let Ok(block) = Block::read(raw.get()) else {
                report(calls, session, AnomalyKind::UnknownContent, &format!("claude-code: block: {}", raw.get()));
                continue;
            };
            match block.kind.as_ref() {
                "text" => calls.call(session, Call::Message { text: block.text.as_deref().unwrap_or("") }),
                "thinking" | "redacted_thinking" => {
                    calls.call(session, Call::Thought { text: block.thinking.as_deref().unwrap_or("") });
                    let kept = Value::Array(vec![raw_value(raw)]);
                    calls.call(session, Call::RoundMeta { meta: &one("anthropic_kept_blocks", kept) });
                }
                "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                    let id = block.id.as_deref().unwrap_or("");
                    let name = block.name.as_deref().unwrap_or("");
                    calls.call(session, Call::ToolCall { id, title: name, name });
                    let args = block.input.map_or(Cow::Borrowed("{}"), raw_text);
                    calls.call(session, Call::ArgsSnapshot { id, args: &args });
                }
                _ => report(calls, session, AnomalyKind::UnknownContent, &format!("claude-code: block: {}", raw.get())),
            }
        }
    }

    /// A `user` line: tool results, or the prompt (echoed, or injected).
    fn user(&mut self, line: &Line<'_>, session: Option<&str>, calls: &mut dyn CallSink) {
        let content = line.message.as_ref().and_then(|m| m.content);
        if content.is_some_and(|c| c.get().contains("[Request interrupted by user")) {
            self.interrupted = true;
        }
        if line.is_replay == Some(true) || content.is_some_and(|c| c.get().starts_with('"')) {
            // The prompt, or a text injected into it: what the run is
            // about, listed when it ends.
            let text = content.map(raw_value).unwrap_or(Value::Null);
            self.user_texts.push((session.map(str::to_owned), text));
            return;
        }
        self.stream(session).user_message(content, session, calls);
    }

    /// The prompt's end: usage, what the result says, the run's end (and
    /// its subagents').
    fn result(&mut self, line: &Line<'_>, payload: &[u8], calls: &mut dyn CallSink) {
        let result = json_value(&String::from_utf8_lossy(payload));
        self.flush_user_texts(calls);
        if let Some(total) = self.last_usage.take() {
            calls.call(None, Call::TokenUsage { total });
        }
        let meta: Meta =
            RESULT_FIELDS.iter().filter_map(|key| Some((format!("claude_{key}"), result.get(*key)?.clone()))).collect();
        calls.call(None, Call::RunMeta { meta: &meta });
        if line.is_error == Some(true) {
            let what = result.get("errors").or(result.get("result")).cloned().unwrap_or(Value::Null);
            report(calls, None, AnomalyKind::ProtocolError, &format!("claude-code: the prompt failed: {what}"));
        }
        let aborted = line.terminal_reason.as_deref().is_some_and(|r| r.starts_with("aborted"));
        let reason = if aborted || std::mem::take(&mut self.interrupted) {
            FinishReason::Canceled
        } else if line.is_error == Some(true) {
            FinishReason::Failed
        } else {
            FinishReason::Completed
        };
        for child in std::mem::take(&mut self.children) {
            calls.call(Some(&child), Call::Finish { reason });
            self.streams.retain(|(s, _)| s.as_deref() != Some(child.as_str()));
        }
        calls.call(None, Call::Finish { reason });
        self.between_prompts = true;
    }
}

impl ClaudeCodeAdapter {
    /// Sends each session's user texts of the prompt as one list.
    fn flush_user_texts(&mut self, calls: &mut dyn CallSink) {
        let mut texts = std::mem::take(&mut self.user_texts);
        while let Some((session, _)) = texts.first() {
            let session = session.clone();
            let (mine, rest): (Vec<_>, Vec<_>) = texts.into_iter().partition(|(s, _)| *s == session);
            texts = rest;
            let list = Value::Array(mine.into_iter().map(|(_, text)| text).collect());
            calls.call(session.as_deref(), Call::RunMeta { meta: &one("claude_user_messages", list) });
        }
    }
}

/// The context an API message occupied: input, cache reads and writes,
/// and output.
fn context_tokens(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let input = field("input_tokens")?;
    // Counts come from the wire: a huge one saturates, never overflows.
    Some(
        ["cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"]
            .into_iter()
            .fold(input, |total, name| total.saturating_add(field(name).unwrap_or(0))),
    )
}
