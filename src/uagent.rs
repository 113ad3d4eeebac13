//! The uagent `--stream` JSONL (schema v1) adapter, with the `uah`
//! superset's `text_delta` and `reasoning_delta`.
//!
//! Besides translating events into calls, it recomputes uagent's own run
//! statistics from the events (the algorithm of uagent's `core/stats.go`,
//! summarised in tests/fixtures/README.md) and puts them into the run's
//! summary line as `uagent_stats`, with uagent's field names.
//!
//! ```
//! use roundup::uagent::UagentTranslator;
//! use roundup::{Call, RoundBuilder};
//!
//! let builder = RoundBuilder::new();
//! let mut uagent = UagentTranslator::new();
//! for line in [
//!     r#"{"type":"run_started","session_id":"s","at":"2026-01-01T00:00:00Z","v":1}"#,
//!     r#"{"type":"assistant_message","text":"hello","final":true,"at":"2026-01-01T00:00:01Z","v":1}"#,
//! ] {
//!     uagent.translate(&serde_json::from_str(line).unwrap(), &mut |_, call: Call<'_>| call.apply(&builder));
//! }
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "hello");
//! ```

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

pub use crate::adapter::Emit;
use crate::adapter::{one, pick};
use crate::anomaly::AnomalyKind;
use crate::call::Call;
use crate::handler::{FinishReason, ToolCallStatus};
use crate::round::Meta;

/// A span of time, in nanoseconds since the epoch.
type Span = (i128, i128);

/// What uagent's statistics need, gathered over one run.
#[derive(Debug, Default)]
struct Stats {
    first: Option<i128>,
    last: Option<i128>,
    /// Turns: start of the open one, and the finished spans.
    turn_open: Option<i128>,
    model_spans: Vec<Span>,
    /// Tools: open spans by op id, finished spans.
    tools_open: HashMap<String, i128>,
    tool_spans: Vec<Span>,
    turns: u64,
    user_messages: u64,
    model_responses: u64,
    tool_calls: u64,
    failed_tool_calls: u64,
    tools_by_name: BTreeMap<String, u64>,
    tokens: BTreeMap<String, u64>,
    stop_reasons: BTreeMap<String, u64>,
    final_answer: bool,
}

impl Stats {
    fn saw(&mut self, at: Option<i128>) {
        if let Some(at) = at {
            self.first = Some(self.first.map_or(at, |f| f.min(at)));
            self.last = Some(self.last.map_or(at, |l| l.max(at)));
        }
    }

    /// The statistics, with uagent's field names. Unfinished spans end at
    /// the later of the last event and the run's end; milliseconds are
    /// truncated only at the end.
    fn to_json(&self, end: Option<i128>) -> Value {
        let close = end.into_iter().chain(self.last).max().unwrap_or(0);
        let mut model = self.model_spans.clone();
        model.extend(self.turn_open.map(|start| (start, close.max(start))));
        let mut tools = self.tool_spans.clone();
        tools.extend(self.tools_open.values().map(|&start| (start, close.max(start))));
        let max_parallel = peak(&tools);
        let (model, tools) = (merge(model), merge(tools));
        let ms = |nanos: i128| (nanos / 1_000_000) as u64;
        let mut stats = json!({
            "event_span_ms": ms(self.last.zip(self.first).map_or(0, |(l, f)| l - f)),
            "model_ms": ms(length(&model)),
            "tool_busy_ms": ms(length(&tools)),
            "tool_model_overlap_ms": ms(overlap(&model, &tools)),
            "turns": self.turns,
            "user_messages": self.user_messages,
            "model_responses": self.model_responses,
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_tool_calls,
            "max_parallel_tools": max_parallel,
            "tools_by_name": self.tools_by_name,
            "tokens": self.tokens,
            "final_answer": self.final_answer,
        });
        if !self.stop_reasons.is_empty() {
            stats["stop_reasons"] = json!(self.stop_reasons);
        }
        stats
    }
}

/// Sorted, with touching or overlapping spans merged.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable();
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

fn length(spans: &[Span]) -> i128 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// The length of the intersection of two merged span lists.
fn overlap(a: &[Span], b: &[Span]) -> i128 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (start, end) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        total += (end - start).max(0);
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// The peak number of spans open at once; an end and a start at the same
/// instant are not parallel.
fn peak(spans: &[Span]) -> u64 {
    let mut edges: Vec<(i128, i32)> = spans.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]).collect();
    // Ends sort before starts at the same instant.
    edges.sort_unstable();
    let (mut open, mut peak) = (0i64, 0i64);
    for (_, delta) in edges {
        open += i64::from(delta);
        peak = peak.max(open);
    }
    peak as u64
}

/// Translates uagent `--stream` events into calls. One translator per
/// stream: events after `run_started` belong to its `session_id`.
#[derive(Debug, Default)]
pub struct UagentTranslator {
    session: Option<String>,
    stats: Stats,
    /// Text already streamed by `text_delta` / `reasoning_delta` that the
    /// next `assistant_message` / `reasoning` repeats.
    streamed_text: String,
    streamed_reasoning: String,
    /// A reasoning line was given in the current round: the next one is
    /// joined with a line break.
    reasoning_in_round: bool,
    user_messages: Vec<Value>,
    other_events: Meta,
}

impl UagentTranslator {
    /// A translator with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The clock reading of an event: its `at`, in unix milliseconds.
    pub fn event_time_ms(event: &Value) -> Option<u64> {
        let nanos = event.get("at").and_then(Value::as_str).and_then(parse_rfc3339)?;
        u64::try_from(nanos / 1_000_000).ok()
    }

    /// Translates one event, handing every call to `emit` with its session.
    pub fn translate(&mut self, event: &Value, emit: &mut Emit<'_>) {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let at = event.get("at").and_then(Value::as_str).and_then(parse_rfc3339);
        if kind == "run_started" {
            self.session = event.get("session_id").and_then(Value::as_str).map(str::to_owned);
            *self = UagentTranslator { session: self.session.take(), ..UagentTranslator::default() };
            emit(self.session.as_deref(), Call::Start);
            let run = pick(event, &["model", "provider", "effort", "run_id", "workspace"]);
            let meta = one("uagent_run", Value::Object(run));
            emit(self.session.as_deref(), Call::RunMeta { meta: &meta });
        }
        self.stats.saw(at);
        let session = self.session.clone();
        let session = session.as_deref();
        let text = |field: &str| event.get(field).and_then(Value::as_str).unwrap_or_default();
        match kind {
            "run_started" => {}
            "user_message" => {
                self.stats.user_messages += 1;
                self.user_messages.push(event.get("text").cloned().unwrap_or(Value::Null));
                let meta = one("uagent_user_messages", Value::Array(self.user_messages.clone()));
                emit(session, Call::RunMeta { meta: &meta });
            }
            "turn_started" => {
                self.stats.turns += 1;
                self.stats.turn_open = at.or(self.stats.turn_open);
            }
            "model_responded" => {
                self.stats.model_responses += 1;
                if let (Some(start), Some(end)) = (self.stats.turn_open.take(), at) {
                    self.stats.model_spans.push((start, end.max(start)));
                }
                if let Some(stop) = event.get("stop").and_then(Value::as_str).filter(|s| *s != "complete") {
                    *self.stats.stop_reasons.entry(stop.to_owned()).or_default() += 1;
                }
                if let Some(usage) = event.get("usage").and_then(Value::as_object) {
                    for (name, value) in usage {
                        *self.stats.tokens.entry(name.clone()).or_default() += value.as_u64().unwrap_or(0);
                    }
                    if let Some(input) = usage.get("input").and_then(Value::as_u64) {
                        emit(session, Call::TokenUsage { total: input });
                    }
                }
            }
            "tool_called" => {
                let (id, name) = (text("call_id"), text("name"));
                self.stats.tool_calls += 1;
                *self.stats.tools_by_name.entry(name.to_owned()).or_default() += 1;
                self.reasoning_in_round = false;
                emit(session, Call::ToolCall { id, title: name });
                match event.get("arguments") {
                    Some(Value::String(args)) => emit(session, Call::ArgsSnapshot { id, args }),
                    Some(other) => emit(session, Call::ArgsSnapshot { id, args: &other.to_string() }),
                    None => {}
                }
                let meta = pick(event, &["label"]);
                if !meta.is_empty() {
                    emit(session, Call::ToolMeta { id, meta: &meta });
                }
            }
            "tool_started" => {
                if let (Some(op), Some(at)) = (event.get("op_id").and_then(Value::as_str), at) {
                    self.stats.tools_open.insert(op.to_owned(), at);
                }
                let meta = pick(event, &["op_id", "op_type"]);
                emit(session, Call::ToolMeta { id: text("call_id"), meta: &meta });
            }
            "tool_finished" => {
                let id = text("call_id");
                let ok = event.get("ok").and_then(Value::as_bool) == Some(true);
                if let Some(op) = event.get("op_id").and_then(Value::as_str) {
                    if let (Some(start), Some(end)) = (self.stats.tools_open.remove(op), at) {
                        self.stats.tool_spans.push((start, end.max(start)));
                    }
                }
                if !ok {
                    self.stats.failed_tool_calls += 1;
                }
                let meta = pick(event, &["label", "op_id", "op_type", "out_path", "err_path", "duration_ms"]);
                if !meta.is_empty() {
                    emit(session, Call::ToolMeta { id, meta: &meta });
                }
                let status = if ok { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
                emit(session, Call::ToolUpdate { id, content: text("detail"), status });
            }
            "text_delta" => {
                self.streamed_text.push_str(text("text"));
                emit(session, Call::Message { text: text("text") });
            }
            "reasoning_delta" => {
                self.streamed_reasoning.push_str(text("text"));
                emit(session, Call::Thought { text: text("text") });
            }
            "assistant_message" => {
                if event.get("final").and_then(Value::as_bool) == Some(true) {
                    self.stats.final_answer = true;
                }
                let streamed = std::mem::take(&mut self.streamed_text);
                self.unstreamed(session, text("text"), &streamed, false, emit);
            }
            "reasoning" => {
                let line =
                    event.get("text").or_else(|| event.get("summary")).and_then(Value::as_str).unwrap_or_default();
                let streamed = std::mem::take(&mut self.streamed_reasoning);
                if streamed.is_empty() && self.reasoning_in_round && !line.is_empty() {
                    emit(session, Call::Thought { text: "\n" });
                }
                self.unstreamed(session, line, &streamed, true, emit);
                self.reasoning_in_round = true;
            }
            "runner_error" => {
                let detail = format!("uagent: runner_error: {event}");
                emit(session, Call::Anomaly { kind: AnomalyKind::ProtocolError, id: None, detail: &detail });
            }
            "run_finished" => {
                let summary = event.get("summary").unwrap_or(&Value::Null);
                let mut meta = one("uagent_stats", self.stats.to_json(at));
                meta.insert("uagent_run_summary".to_owned(), summary.clone());
                emit(session, Call::RunMeta { meta: &meta });
                let status = summary.get("status").and_then(Value::as_str).unwrap_or_default();
                let reason = match status {
                    "interrupted" | "timeout" => FinishReason::Canceled,
                    _ => FinishReason::Interrupted,
                };
                emit(session, Call::Finish { reason });
            }
            "control_input" => {
                let count = self.other_events.get(kind).and_then(Value::as_u64).unwrap_or(0);
                self.other_events.insert(kind.to_owned(), (count + 1).into());
                let meta = one("uagent_other_events", Value::Object(self.other_events.clone()));
                emit(session, Call::RunMeta { meta: &meta });
            }
            _ => {
                let detail = format!("uagent: event type `{kind}`: {event}");
                emit(session, Call::Anomaly { kind: AnomalyKind::UnknownEvent, id: None, detail: &detail });
            }
        }
    }

    /// The part of a whole message (or reasoning line) that its deltas did
    /// not already stream: never counted twice.
    fn unstreamed(&self, session: Option<&str>, whole: &str, streamed: &str, thought: bool, emit: &mut Emit<'_>) {
        let call = |text| if thought { Call::Thought { text } } else { Call::Message { text } };
        match whole.strip_prefix(streamed) {
            Some(rest) => emit(session, call(rest)),
            None => {
                let detail = format!("uagent: a whole message differs from its streamed deltas; kept: {whole:?}");
                emit(session, Call::Anomaly { kind: AnomalyKind::ProtocolError, id: None, detail: &detail });
            }
        }
    }
}

/// Parses an RFC 3339 timestamp (`2026-09-23T12:32:07.496787Z`, or with a
/// `±HH:MM` offset) into nanoseconds since the unix epoch.
pub fn parse_rfc3339(text: &str) -> Option<i128> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(range)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    let mut nanos: i128 = 0;
    if b.get(at) == Some(&b'.') {
        let digits = b[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let fraction = text.get(at + 1..at + 1 + digits.min(9))?;
        nanos = i128::from(fraction.parse::<i64>().ok()?) * 10i128.pow(9 - digits.min(9) as u32);
        at += 1 + digits;
    }
    let offset = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let minutes = num(at + 1..at + 3)? * 60 + num(at + 4..at + 6)?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60;
    Some(i128::from(seconds) * 1_000_000_000 + nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_to_nanoseconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-09-23T12:32:07.496787Z"), Some(1_790_166_727_496_787_000));
        assert_eq!(parse_rfc3339("2026-09-23T14:32:07.5+02:00"), Some(1_790_166_727_500_000_000));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400_000_000_000));
        for bad in ["<now>", "2026-09-23", "2026-13-01T00:00:00Z", "2026-09-23T12:32:07.Z", "2026-09-23T12:32:07"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn spans_merge_overlap_and_peak() {
        assert_eq!(merge(vec![(5, 9), (0, 2), (2, 4), (8, 12)]), [(0, 4), (5, 12)]);
        assert_eq!(overlap(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(peak(&[(0, 5), (5, 9)]), 1, "an end and a start at one instant are not parallel");
        assert_eq!(peak(&[(0, 5), (1, 9), (2, 3)]), 3);
    }
}
