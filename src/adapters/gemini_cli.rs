//! The Gemini CLI adapter: `gemini --output-format stream-json` lines
//! (`init`, `message`, `tool_use`, `tool_result`, `error`, `result`).
//!
//! One invocation of the CLI is a run: `init` begins it, `result` ends it
//! (`success` completes it, `error` fails it). The CLI sends no reasoning
//! and does not mark model calls: assistant text comes as `message` deltas,
//! and each tool comes whole, its `parameters` a snapshot of the arguments
//! and its `tool_result` the result. `error` events (a loop detected, a
//! turn limit) are reported and do not end the run.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut cli = InputFormat::named("gemini-cli").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"init","timestamp":"2026-01-15T10:00:00Z","session_id":"s1","model":"gemini-2.5-pro"}"#,
//!     r#"{"type":"message","timestamp":"2026-01-15T10:00:01Z","role":"assistant","content":"Listing.","delta":true}"#,
//!     r#"{"type":"tool_use","timestamp":"2026-01-15T10:00:02Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}"#,
//!     r#"{"type":"tool_result","timestamp":"2026-01-15T10:00:03Z","tool_id":"t1","status":"success","output":"a.txt"}"#,
//!     r#"{"type":"result","timestamp":"2026-01-15T10:00:04Z","status":"success","stats":{"total_tokens":120}}"#,
//! ] {
//!     cli.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.message, "Listing.");
//! assert_eq!(round.tool_calls[0].arguments, r#"{"command":"ls"}"#);
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! assert_eq!(builder.summary().last_token_usage, Some(120));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{opt_cow, raw_text, raw_value, utf8};
use super::support::{one, report, rfc3339_ms};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Gemini CLI `stream-json` lines.
///
/// ```
/// let cli = &roundup::adapters::gemini_cli::FORMAT;
/// let init = br#"{"type":"init","timestamp":"2026-01-15T10:00:00Z","session_id":"s1","model":"gemini-2.5-pro"}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(init), cli);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "gemini-cli",
    about: "Gemini CLI --output-format stream-json
lines (init, message, tool_use,
tool_result, error, result); an
invocation is a run; one session",
    detect: |event: &Map<String, Value>| {
        let has = |key: &str| event.contains_key(key);
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        match text("type") {
            Some("init") => has("session_id") && has("model") && !has("subtype"),
            Some("tool_use") => has("tool_id") && has("tool_name"),
            Some("tool_result") => has("tool_id") && has("status"),
            Some("message") => {
                event.get("content").is_some_and(Value::is_string)
                    && matches!(text("role"), Some("user" | "assistant"))
                    && has("timestamp")
            }
            Some("result") => event.get("stats").is_some_and(Value::is_object) && !has("session_id"),
            Some("error") => has("severity") && has("timestamp"),
            _ => false,
        }
    },
    adapter: || Box::<GeminiCliAdapter>::default(),
};

/// Translates Gemini CLI `stream-json` lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GeminiCliAdapter {
    /// A `result` ended the run: the next line begins the next one.
    finished: bool,
    /// The last line was a whole assistant message (an older CLI sends no
    /// deltas): the next whole one is a paragraph of its own.
    whole_message: bool,
    /// How many tool ids were made up, for a `tool_use` without one.
    made_up: u64,
}

/// One line, as the adapter reads it.
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Cow<'a, str>,
    timestamp: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
    delta: Option<bool>,
    tool_name: Option<Cow<'a, str>>,
    tool_id: Option<Cow<'a, str>>,
    parameters: Option<Raw<'a>>,
    status: Option<Cow<'a, str>>,
    output: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    severity: Option<Cow<'a, str>>,
    message: Option<Raw<'a>>,
    stats: Option<Raw<'a>>,
}

read_in_place!(Line {
    "type" => kind as CowStr (required),
    "timestamp" => timestamp as OptCow,
    "session_id" => session_id as OptCow,
    "model" => model as OptCow,
    "role" => role as OptCow,
    "content" => content,
    "delta" => delta,
    "tool_name" => tool_name as OptCow,
    "tool_id" => tool_id as ScalarText,
    "parameters" => parameters,
    "status" => status as OptCow,
    "output" => output,
    "error" => error,
    "severity" => severity as OptCow,
    "message" => message,
    "stats" => stats,
});

/// An `error` object (`{"type","message"}`), for its message.
#[derive(Debug, Deserialize)]
struct ErrorInfo<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    message: Option<Cow<'a, str>>,
}

/// The token counters of `result.stats`.
#[derive(Debug, Deserialize)]
struct Stats {
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl Adapter for GeminiCliAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        let mut line = Line::default();
        Line::read_into(text, &mut line).map_err(|error| BadLine::json(&error))?;
        if let Some(at_ms) = line.timestamp.as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
        }
        let kind = line.kind.as_ref();
        // A new invocation, or content after the last one's result (a log
        // of several invocations), begins the next run; a warning or an
        // unknown event after a result is reported in the run that ended.
        let content = matches!(kind, "message" | "tool_use" | "tool_result" | "result");
        if kind == "init" || (self.finished && content) {
            self.finished = false;
            calls.call(None, Call::Start);
        }
        if kind != "message" {
            self.whole_message = false;
        }
        match kind {
            "init" => {
                let mut meta = Meta::new();
                for (key, value) in [("gemini_cli_session_id", &line.session_id), ("gemini_cli_model", &line.model)] {
                    if let Some(value) = value {
                        meta.insert(key.into(), Value::from(value.as_ref()));
                    }
                }
                calls.call(None, Call::RunMeta { meta: &meta });
            }
            "message" => self.message(&line, text, calls),
            "tool_use" => self.tool_use(&line, calls),
            "tool_result" => tool_result(&line, text, calls),
            "error" => {
                let message = line.message.map(raw_text).unwrap_or_default();
                let severity = line.severity.as_deref().unwrap_or("error");
                report(calls, None, AnomalyKind::ProtocolError, &format!("gemini-cli: {severity}: {message}"));
            }
            "result" => {
                self.result(&line, text, calls);
                self.finished = true;
            }
            _ => report(calls, None, AnomalyKind::UnknownEvent, &format!("gemini-cli: unknown event: {text}")),
        }
        Ok(())
    }
}

impl GeminiCliAdapter {
    /// A `message`: the user's prompt (kept in the run) or assistant text,
    /// a delta, or a whole message from a CLI that sends no deltas.
    fn message(&mut self, line: &Line<'_>, text: &str, calls: &mut dyn CallSink) {
        let content = line.content.filter(|c| c.get() != "null").map(raw_text).unwrap_or_default();
        match line.role.as_deref() {
            Some("user") => {
                calls.call(None, Call::RunMeta { meta: &one("gemini_cli_user_message", Value::from(content)) });
            }
            Some("assistant") => {
                let whole = line.delta != Some(true);
                let content = if whole && self.whole_message && !content.is_empty() {
                    Cow::Owned(format!("\n\n{content}"))
                } else {
                    content
                };
                self.whole_message = whole;
                calls.call(None, Call::Message { text: &content });
            }
            _ => {
                let detail = format!("gemini-cli: a message of no role this format knows: {text}");
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
    }

    /// A `tool_use`: the call, named by the tool, its parameters a snapshot
    /// of the arguments.
    fn tool_use(&mut self, line: &Line<'_>, calls: &mut dyn CallSink) {
        let name = line.tool_name.as_deref().unwrap_or("");
        let id = match line.tool_id.as_deref() {
            Some(id) => Cow::Borrowed(id),
            None => {
                self.made_up = self.made_up.saturating_add(1);
                Cow::Owned(format!("gemini-cli-{}", self.made_up))
            }
        };
        calls.call(None, Call::ToolCall { id: &id, title: name, name });
        let args = line.parameters.filter(|p| p.get() != "null").map_or(Cow::Borrowed("{}"), raw_text);
        calls.call(None, Call::ArgsSnapshot { id: &id, args: &args });
    }

    /// A `result`: the run's token usage and statistics, and its end:
    /// `success` completes it, `error` fails it.
    fn result(&mut self, line: &Line<'_>, text: &str, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        if let Some(stats) = line.stats {
            match serde_json::from_str::<Stats>(stats.get()) {
                Ok(counts) => {
                    let total = counts.total_tokens.or_else(|| {
                        [counts.input_tokens, counts.output_tokens].into_iter().flatten().reduce(u64::saturating_add)
                    });
                    if let Some(total) = total {
                        calls.call(None, Call::TokenUsage { total });
                    }
                }
                Err(error) => {
                    let detail = format!("gemini-cli: stats whose token counts do not read ({error}): {}", stats.get());
                    report(calls, None, AnomalyKind::UnknownContent, &detail);
                }
            }
            meta.insert("gemini_cli_stats".into(), raw_value(stats));
        }
        if let Some(status) = &line.status {
            meta.insert("gemini_cli_status".into(), Value::from(status.as_ref()));
        }
        if let Some(error) = line.error {
            meta.insert("gemini_cli_error".into(), raw_value(error));
            report(calls, None, AnomalyKind::ProtocolError, &format!("gemini-cli: result error: {}", error.get()));
        }
        calls.call(None, Call::RunMeta { meta: &meta });
        let reason = match line.status.as_deref() {
            Some("success") => FinishReason::Completed,
            Some("error") => FinishReason::Failed,
            Some("cancelled" | "canceled") => FinishReason::Canceled,
            _ => {
                let detail = format!("gemini-cli: a result of a status this format does not know: {text}");
                report(calls, None, AnomalyKind::UnknownStatus, &detail);
                FinishReason::Interrupted
            }
        };
        calls.call(None, Call::Finish { reason });
    }
}

/// A `tool_result`: `success` completes the call with its output, `error`
/// fails it with its output or the error's message (the error kept whole
/// in the call's metadata).
fn tool_result(line: &Line<'_>, text: &str, calls: &mut dyn CallSink) {
    let id = line.tool_id.as_deref().unwrap_or("");
    let output = line.output.filter(|o| o.get() != "null").map(raw_text).unwrap_or_default();
    let status = match line.status.as_deref() {
        Some("success") => ToolCallStatus::Completed,
        Some("error") => ToolCallStatus::Failed,
        _ => {
            let detail = format!("gemini-cli: a tool result of a status this format does not know: {text}");
            return report(calls, None, AnomalyKind::UnknownStatus, &detail);
        }
    };
    let mut content = output;
    if let Some(error) = line.error.filter(|e| e.get() != "null") {
        calls.call(None, Call::ToolMeta { id, meta: &one("gemini_cli_error", raw_value(error)) });
        if content.is_empty() {
            content = match serde_json::from_str::<ErrorInfo<'_>>(error.get()) {
                Ok(ErrorInfo { message: Some(message) }) => Cow::Owned(message.into_owned()),
                _ => raw_text(error),
            };
        }
    }
    calls.call(None, Call::ToolUpdate { id, content: &content, status });
}
