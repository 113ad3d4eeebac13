//! The OpenCode adapter: `opencode run --format json` lines (`step_start`,
//! `text`, `reasoning`, `tool_use`, `step_finish`, `error`, `done`).
//!
//! A prompt is a run, made of steps (one model call each). OpenCode sends
//! no deltas: a `text` or `reasoning` part comes whole once it has ended,
//! and a tool only once it has **finished**, so each `tool_use` line is the
//! call's declaration, its arguments (`state.input`) and its result
//! (`state.output`, or `state.error` for a failed one) at once; the round
//! closes at that result, and a step that ran several tools is a round per
//! tool. `step_finish` gives the step's tokens (per step, not cumulative;
//! `input` leaves out the cached tokens), its cost and why it ended:
//! `tool-calls` means another step follows; another reason ends the turn,
//! and the run finishes at `done` (the session went idle), at the next
//! prompt's first step, or at the end of the stream. An `error` line fails
//! the run (`MessageAbortedError`: the user stopped it).
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut opencode = InputFormat::named("opencode").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"step_start","timestamp":1000,"sessionID":"ses_1","part":{"type":"step-start"}}"#,
//!     r#"{"type":"tool_use","timestamp":1200,"sessionID":"ses_1","part":{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a.txt\n","title":"List files"}}}"#,
//!     r#"{"type":"step_finish","timestamp":1300,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","cost":0.001,"tokens":{"input":90,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}}"#,
//! ] {
//!     opencode.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! opencode.end(&mut apply);
//! let call = &builder.rounds()[0].tool_calls[0];
//! assert_eq!((call.title.as_str(), call.name.as_str()), ("List files", "bash"));
//! assert_eq!(call.arguments, r#"{"command":"ls"}"#);
//! assert_eq!(call.result.content(), Some("a.txt\n"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{opt_cow, raw_text, raw_value, utf8};
use super::support::{one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of OpenCode's JSON lines.
///
/// ```
/// let opencode = &roundup::adapters::opencode::FORMAT;
/// let line = br#"{"type":"step_start","timestamp":1767037000000,"sessionID":"ses_1","part":{"type":"step-start"}}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(line), opencode);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "opencode",
    about: "OpenCode run --format json lines
(step_*, text, reasoning, tool_use, error,
done); a prompt is a run, a tool call its
declaration and result at once; one
session",
    detect: |event: &Map<String, Value>| {
        let kind = event.get("type").and_then(Value::as_str);
        matches!(kind, Some("step_start" | "step_finish" | "text" | "reasoning" | "tool_use" | "error" | "done"))
            && event.get("sessionID").is_some_and(Value::is_string)
            && event.get("timestamp").is_some_and(Value::is_number)
    },
    adapter: || Box::<OpenCodeAdapter>::default(),
};

/// Translates OpenCode's JSON lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OpenCodeAdapter {
    /// How the run ends, once a step or an error said so: the reason, and
    /// whether it was said (a `step_finish` with no reason may be followed
    /// by another step).
    ending: Option<(FinishReason, bool)>,
    /// The run finished: the next line begins the next one.
    ended: bool,
    /// The run's metadata that is sent once (its session, its first
    /// snapshot) was sent.
    begun: bool,
    /// What the last whole text was (`true`: a message), to separate two
    /// that follow each other in a round.
    last_text: Option<bool>,
    /// The message of the texts since the last tool, sent once to their
    /// round's metadata.
    #[serde(default)]
    last_message: String,
    /// Where a text is written after the blank line that separates it
    /// from the one before (reused: not state).
    #[serde(skip)]
    paragraph: String,
    /// The run's totals over its steps (what it cost, not what it holds).
    steps: u64,
    tokens: Tokens,
    cost: f64,
}

/// A step's tokens, as OpenCode counts them.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
struct Tokens {
    #[serde(default, deserialize_with = "count")]
    input: u64,
    #[serde(default, deserialize_with = "count")]
    output: u64,
    #[serde(default, deserialize_with = "count")]
    reasoning: u64,
    #[serde(default)]
    cache: Cache,
}

scan_by_serde!(Tokens);

#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
struct Cache {
    #[serde(default, deserialize_with = "count")]
    read: u64,
    #[serde(default, deserialize_with = "count")]
    write: u64,
}

/// A token count: any JSON number (a fraction truncated, below zero as
/// zero), `null` as zero; a line with an odd count is still read.
fn count<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let number: Option<serde_json::Number> = Deserialize::deserialize(deserializer)?;
    // `as` saturates: a float beyond u64 is u64::MAX, never a panic.
    Ok(number.map_or(0, |n| n.as_u64().unwrap_or_else(|| n.as_f64().map_or(0, |f| f.max(0.0) as u64))))
}

impl Tokens {
    /// The context the step occupied: what it read, cached or not, and
    /// what it wrote.
    fn context(&self) -> u64 {
        [self.output, self.reasoning, self.cache.read, self.cache.write]
            .into_iter()
            .fold(self.input, u64::saturating_add)
    }

    fn add(&mut self, step: &Tokens) {
        self.input = self.input.saturating_add(step.input);
        self.output = self.output.saturating_add(step.output);
        self.reasoning = self.reasoning.saturating_add(step.reasoning);
        self.cache.read = self.cache.read.saturating_add(step.cache.read);
        self.cache.write = self.cache.write.saturating_add(step.cache.write);
    }
}

/// Read in place ([`read_in_place!`]).
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Cow<'a, str>,
    /// Unix milliseconds.
    timestamp: Option<Raw<'a>>,
    session_id: Option<Cow<'a, str>>,
    part: Option<Part<'a>>,
    error: Option<Raw<'a>>,
    /// `done`: why the session stopped (`idle`), and the permissions it
    /// refused.
    reason: Option<Cow<'a, str>>,
    rejected: Option<Raw<'a>>,
}

read_in_place!(Line {
    "type" => kind as CowStr (required),
    "timestamp" => timestamp,
    "sessionID" => session_id as OptCow,
    "part" => part in place,
    "error" => error,
    "reason" => reason as OptCow,
    "rejected" => rejected,
});

#[derive(Debug, Default)]
struct Part<'a> {
    id: Option<Cow<'a, str>>,
    message_id: Option<Cow<'a, str>>,
    text: Option<Cow<'a, str>>,
    call_id: Option<Cow<'a, str>>,
    tool: Option<Cow<'a, str>>,
    state: Option<State<'a>>,
    reason: Option<Cow<'a, str>>,
    snapshot: Option<Cow<'a, str>>,
    cost: Option<Raw<'a>>,
    tokens: Option<Tokens>,
}

read_in_place!(Part {
    "id" => id as ScalarText,
    "messageID" => message_id as OptCow,
    "text" => text as OptCow,
    "callID" => call_id as ScalarText,
    "tool" => tool as OptCow,
    "state" => state in place,
    "reason" => reason as OptCow,
    "snapshot" => snapshot as OptCow,
    "cost" => cost,
    "tokens" => tokens,
});

#[derive(Debug, Default)]
struct State<'a> {
    status: Option<Cow<'a, str>>,
    input: Option<Raw<'a>>,
    output: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    title: Option<Cow<'a, str>>,
    metadata: Option<Raw<'a>>,
    time: Option<Raw<'a>>,
    attachments: Option<Raw<'a>>,
}

read_in_place!(State {
    "status" => status as OptCow,
    "input" => input,
    "output" => output,
    "error" => error,
    "title" => title as OptCow,
    "metadata" => metadata,
    "time" => time,
    "attachments" => attachments,
});

impl Adapter for OpenCodeAdapter {
    state_is_self!();

    /// A stream that ends after a step that ended the turn: the run ends
    /// as that step said (OpenCode's older versions send no `done`).
    fn end(&mut self, calls: &mut dyn CallSink) {
        if let Some((reason, _)) = self.ending.take() {
            self.finish(reason, calls);
        }
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let mut line = Line::default();
        Line::read_into(utf8(payload)?, &mut line).map_err(|error| BadLine::json(&error))?;
        if let Some(at_ms) = line.timestamp.and_then(|t| t.get().parse::<u64>().ok()) {
            calls.clock(at_ms);
        }
        let kind = line.kind.as_ref();
        if kind == "step_start" {
            // After a turn that ended, this step is the next prompt's; a
            // step that ended without saying why, followed by another, was
            // not the turn's last.
            if let Some((reason, true)) = self.ending.take() {
                self.finish(reason, calls);
            }
        }
        if self.ended && kind != "done" && kind != "error" {
            self.ended = false;
            self.begun = false;
            self.last_text = None;
            calls.call(None, Call::Start);
        }
        if !self.begun && !self.ended {
            self.begun = true;
            if let Some(session) = line.session_id.as_deref().filter(|s| !s.is_empty()) {
                calls.call(None, Call::RunMeta { meta: &one("opencode_session_id", Value::from(session)) });
            }
        }
        let part = line.part.as_ref();
        match (kind, part) {
            ("step_start", Some(part)) => {
                if let Some(snapshot) = &part.snapshot {
                    if self.steps == 0 {
                        let meta = one("opencode_start_snapshot", Value::from(snapshot.as_ref()));
                        calls.call(None, Call::RunMeta { meta: &meta });
                    }
                }
            }
            ("text" | "reasoning", Some(part)) => {
                let message = kind == "text";
                let mut text = part.text.as_deref().unwrap_or("");
                let after_text = self.last_text.is_some();
                // Whole texts that follow each other in a round are
                // paragraphs, not fragments of one.
                if !text.is_empty() && self.last_text.replace(message) == Some(message) {
                    self.paragraph.clear();
                    self.paragraph.push_str("\n\n");
                    self.paragraph.push_str(text);
                    text = &self.paragraph;
                }
                let call = if message { Call::Message { text } } else { Call::Thought { text } };
                calls.call(None, call);
                // Texts in a row are in one round: their message is named
                // once.
                let id = part.message_id.as_deref().unwrap_or("");
                if !after_text || id != self.last_message {
                    self.last_message.clear();
                    self.last_message.push_str(id);
                    message_id(part, calls);
                }
            }
            ("tool_use", Some(part)) => {
                self.last_text = None;
                tool_use(part, payload, calls);
            }
            ("step_finish", Some(part)) => self.step_finish(part, calls),
            ("error", _) => {
                let error = line.error.map_or("null", Raw::get);
                report(calls, None, AnomalyKind::ProtocolError, &format!("opencode: error: {error}"));
                let aborted = line.error.is_some_and(|e| error_name(e).as_deref() == Some("MessageAbortedError"));
                if !self.ended {
                    self.ending = Some((if aborted { FinishReason::Canceled } else { FinishReason::Failed }, true));
                }
            }
            ("done", _) => {
                let mut meta = Meta::new();
                if let Some(reason) = &line.reason {
                    meta.insert("opencode_done_reason".into(), Value::from(reason.as_ref()));
                }
                if let Some(rejected) = line.rejected.filter(|r| !matches!(r.get(), "[]" | "null")) {
                    meta.insert("opencode_rejected_permissions".into(), raw_value(rejected));
                }
                if !meta.is_empty() {
                    calls.call(None, Call::RunMeta { meta: &meta });
                }
                // The session went idle: the turn is over, as its last
                // step or error said (no step said otherwise: completed).
                let reason = self.ending.take().map_or(FinishReason::Completed, |(reason, _)| reason);
                self.finish(reason, calls);
            }
            _ => {
                let detail = format!("opencode: unknown event: {}", String::from_utf8_lossy(payload));
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
        Ok(())
    }
}

impl OpenCodeAdapter {
    /// The run ends (once).
    fn finish(&mut self, reason: FinishReason, calls: &mut dyn CallSink) {
        self.ending = None;
        if !std::mem::replace(&mut self.ended, true) {
            calls.call(None, Call::Finish { reason });
        }
        self.steps = 0;
        self.tokens = Tokens::default();
        self.cost = 0.0;
    }

    /// A step ended: the context it used as the token gauge, the run's
    /// totals as its metadata, and whether the turn ends with it.
    fn step_finish(&mut self, part: &Part<'_>, calls: &mut dyn CallSink) {
        self.steps = self.steps.saturating_add(1);
        let mut meta = Meta::new();
        meta.insert("opencode_steps".into(), Value::from(self.steps));
        if let Some(tokens) = &part.tokens {
            calls.call(None, Call::TokenUsage { total: tokens.context() });
            self.tokens.add(tokens);
            let Tokens { input, output, reasoning, cache } = self.tokens;
            let totals = serde_json::json!({"input": input, "output": output, "reasoning": reasoning,
                "cache": {"read": cache.read, "write": cache.write}});
            meta.insert("opencode_tokens".into(), totals);
        }
        match part.cost.map(|c| (c, c.get().parse::<f64>())) {
            Some((_, Ok(cost))) if cost.is_finite() => {
                self.cost += cost;
                meta.insert("opencode_cost".into(), Value::from(self.cost));
            }
            // A cost that is not a number is kept as it came.
            Some((raw, _)) => {
                meta.insert("opencode_step_cost".into(), raw_value(raw));
            }
            None => {}
        }
        if let Some(reason) = &part.reason {
            meta.insert("opencode_finish_reason".into(), Value::from(reason.as_ref()));
        }
        if let Some(snapshot) = &part.snapshot {
            meta.insert("opencode_end_snapshot".into(), Value::from(snapshot.as_ref()));
        }
        calls.call(None, Call::RunMeta { meta: &meta });
        self.ending = match part.reason.as_deref() {
            Some("tool-calls") => None,
            Some("content-filter" | "error") => Some((FinishReason::Failed, true)),
            // `stop`, `length`, `other`, ...: the model ended the turn.
            Some(_) => Some((FinishReason::Completed, true)),
            None => Some((FinishReason::Completed, false)),
        };
    }
}

/// A tool that finished: declared (its title is OpenCode's `state.title`,
/// else the tool), its arguments, what OpenCode says about it beside its
/// result, and its result.
fn tool_use(part: &Part<'_>, payload: &[u8], calls: &mut dyn CallSink) {
    let id = part.call_id.as_deref().or(part.id.as_deref()).unwrap_or("");
    let name = part.tool.as_deref().unwrap_or("");
    let Some(state) = &part.state else {
        calls.call(None, Call::ToolCall { id, title: name, name });
        let detail = format!("opencode: a tool_use without a state: {}", String::from_utf8_lossy(payload));
        return report(calls, None, AnomalyKind::UnknownContent, &detail);
    };
    let title = state.title.as_deref().filter(|t| !t.is_empty()).unwrap_or(name);
    calls.call(None, Call::ToolCall { id, title, name });
    if let Some(input) = state.input.filter(|i| i.get() != "null") {
        calls.call(None, Call::ArgsSnapshot { id, args: &raw_text(input) });
    }
    message_id(part, calls);
    let meta: Meta = [
        ("opencode_metadata", state.metadata),
        ("opencode_time", state.time),
        ("opencode_attachments", state.attachments),
    ]
    .into_iter()
    .filter_map(|(key, value)| Some((key.to_owned(), raw_value(value.filter(|v| v.get() != "null")?))))
    .collect();
    if !meta.is_empty() {
        calls.call(None, Call::ToolMeta { id, meta: &meta });
    }
    fn text(value: Option<Raw<'_>>) -> Cow<'_, str> {
        value.filter(|v| v.get() != "null").map_or(Cow::Borrowed(""), raw_text)
    }
    match state.status.as_deref() {
        Some("completed") => {
            let content = text(state.output);
            calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Completed });
        }
        Some("error") => {
            let content = text(state.error);
            calls.call(None, Call::ToolUpdate { id, content: &content, status: ToolCallStatus::Failed });
        }
        // Not sent in JSON mode today: a call still running.
        Some("pending" | "running") => {}
        other => {
            let detail = format!("opencode: tool {id} has status {}", other.unwrap_or("(none)"));
            calls.call(None, Call::Anomaly { kind: AnomalyKind::UnknownStatus, id: Some(id), detail: &detail });
        }
    }
}

/// The OpenCode message a part belongs to, into the round's metadata (a
/// list: a round can hold the parts of several messages).
fn message_id(part: &Part<'_>, calls: &mut dyn CallSink) {
    if let Some(message) = part.message_id.as_deref().filter(|m| !m.is_empty()) {
        let meta = one("opencode_message_ids", Value::Array(vec![Value::from(message)]));
        calls.call(None, Call::RoundMeta { meta: &meta });
    }
}

/// An error's `name` (`APIError`, `MessageAbortedError`, ...).
fn error_name(error: Raw<'_>) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow, default, deserialize_with = "opt_cow")]
        name: Option<Cow<'a, str>>,
    }
    serde_json::from_str::<Named<'_>>(error.get()).ok()?.name
}
