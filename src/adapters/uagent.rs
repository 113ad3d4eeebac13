//! The uagent `--stream` JSONL (schema v1) adapter, with the `uah`
//! superset's `text_delta` and `reasoning_delta`.
//!
//! Besides translating events into calls, it recomputes uagent's own run
//! statistics from the events (the algorithm of uagent's `core/stats.go`,
//! summarised in tests/fixtures/README.md) and puts them into the run's
//! summary line as `uagent_stats`, with uagent's field names.
//!
//! ```
//! use roundup::adapters::{uagent::UagentAdapter, Adapter};
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut uagent = UagentAdapter::new();
//! for line in [
//!     r#"{"type":"run_started","session_id":"s","at":"2026-01-01T00:00:00Z","v":1}"#,
//!     r#"{"type":"assistant_message","text":"hello","final":true,"at":"2026-01-01T00:00:01Z","v":1}"#,
//! ] {
//!     uagent.translate(line.as_bytes(), &mut |_: Option<&str>, call: Call<'_>| builder.call(call)).unwrap();
//! }
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "hello");
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::borrowed::{json_value, raw_string, raw_text, raw_value, string_body, utf8, Fields};
use super::support::{one, parse_event, parts_ms, parts_ns, report, Rfc3339Memo};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::{HashMap, HashSet};
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of uagent `--stream` JSONL.
///
/// ```
/// let uagent = &roundup::adapters::uagent::FORMAT;
/// assert_eq!(roundup::adapters::InputFormat::detect(br#"{"type":"run_started","v":1}"#), uagent);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "uagent",
    about: "uagent --stream JSONL and the uah superset
(session events around runs, text deltas);
uagent's run statistics are recomputed into
the summary as uagent_stats",
    detect: |event: &Map<String, Value>| {
        event.get("type").and_then(Value::as_str).is_some_and(|t| EVENTS.contains(&t) || SESSION_EVENTS.contains(&t))
    },
    adapter: || Box::<UagentAdapter>::default(),
};

/// The event types of uagent `--stream` JSONL, by which it is detected.
const EVENTS: [&str; 16] = [
    "run_started",
    "run_finished",
    "preflight_warning",
    "user_message",
    "developer_message",
    "control_input",
    "turn_started",
    "model_responded",
    "tool_called",
    "tool_started",
    "tool_finished",
    "assistant_message",
    "reasoning",
    "text_delta",
    "reasoning_delta",
    "runner_error",
];

/// The session-level events of the `uah` superset, around and between
/// runs: kept as run metadata (`uah_session_events`), never statistics.
const SESSION_EVENTS: [&str; 7] = [
    "session_opened",
    "session_closed",
    "instructions_loaded",
    "input_queued",
    "input_sent",
    "input_delivered",
    "idle",
];

/// The events uagent's statistics observe: the span of the run is from the
/// first of these to the latest.
const OBSERVED: [&str; 9] = [
    "turn_started",
    "model_responded",
    "tool_called",
    "tool_started",
    "tool_finished",
    "assistant_message",
    "user_message",
    "developer_message",
    "control_input",
];

/// uagent's token counters, always all present in its statistics.
const TOKENS: [&str; 5] = ["input", "cached_input", "cache_write_input", "output", "reasoning"];

/// A span of time, in nanoseconds since the epoch.
type Span = (i128, i128);

/// One tool operation's span: its start, and its end once finished.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct OpSpan {
    start: i128,
    end: Option<i128>,
}

/// What uagent's statistics need, gathered over one run by uagent's own
/// algorithm (`core/stats.go`, summarised in tests/fixtures/README.md).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Stats {
    /// The first observed event, and the latest.
    first: Option<i128>,
    last: Option<i128>,
    /// The open turn's start; the finished turns' spans.
    turn_open: Option<i128>,
    model_spans: Vec<Span>,
    /// Tool operations by op id.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    ops: HashMap<String, OpSpan>,
    turns: u64,
    user_messages: u64,
    model_responses: u64,
    /// Calls in order of first mention, with their names, and the failed.
    calls: Vec<(String, String)>,
    #[serde(serialize_with = "crate::pairs::sorted_set")]
    call_ids: HashSet<String>,
    #[serde(serialize_with = "crate::pairs::sorted_set")]
    failed_calls: HashSet<String>,
    tokens: BTreeMap<Cow<'static, str>, u64>,
    stop_reasons: BTreeMap<String, u64>,
    failures: Vec<String>,
    errors: Vec<String>,
    warnings: Vec<String>,
    final_answer: bool,
}

impl Stats {
    fn observe(&mut self, at: Option<i128>) {
        if let Some(at) = at {
            self.first.get_or_insert(at);
            self.last = Some(self.last.map_or(at, |l| l.max(at)));
        }
    }

    /// A call counts once, at the first event that names it.
    fn track_call(&mut self, id: &str, name: &str) {
        if self.call_ids.insert(id.to_owned()) {
            let name = if name.is_empty() { "?" } else { name };
            self.calls.push((id.to_owned(), name.to_owned()));
        }
    }

    /// The statistics, with uagent's field names. Unfinished spans end at
    /// the later of the last observed event and the run's end; milliseconds
    /// are truncated only at the end.
    fn to_json(&self, end: Option<i128>) -> Value {
        let open_end = end.into_iter().chain(self.last).max().unwrap_or(0);
        let mut model = self.model_spans.clone();
        model.extend(self.turn_open.map(|start| (start, open_end)));
        let tools: Vec<Span> = self.ops.values().map(|op| (op.start, op.end.unwrap_or(open_end))).collect();
        let max_parallel = peak(&tools);
        let (model, tools) = (merge(model), merge(tools));
        let ms = |nanos: i128| (nanos / 1_000_000) as i64;
        let mut tools_by_name: BTreeMap<&str, u64> = BTreeMap::new();
        for (_, name) in &self.calls {
            *tools_by_name.entry(name).or_default() += 1;
        }
        let failed = self.calls.iter().filter(|(id, _)| self.failed_calls.contains(id)).count();
        let tokens: BTreeMap<&str, u64> =
            TOKENS.iter().map(|&k| (k, self.tokens.get(k).copied().unwrap_or(0))).collect();
        let mut stats = json!({
            "event_span_ms": ms(self.last.zip(self.first).map_or(0, |(l, f)| l - f)),
            "model_ms": ms(length(&model)),
            "tool_busy_ms": ms(length(&tools)),
            "tool_model_overlap_ms": ms(overlap(&model, &tools)),
            "turns": self.turns,
            "user_messages": self.user_messages,
            "model_responses": self.model_responses,
            "tool_calls": self.calls.len(),
            "failed_tool_calls": failed,
            "max_parallel_tools": max_parallel,
            "tools_by_name": tools_by_name,
            "tokens": tokens,
            "final_answer": self.final_answer,
        });
        if !self.stop_reasons.is_empty() {
            stats["stop_reasons"] = json!(self.stop_reasons);
        }
        for (key, list) in [("failures", &self.failures), ("errors", &self.errors), ("warnings", &self.warnings)] {
            if !list.is_empty() {
                stats[key] = json!(list);
            }
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

/// Translates uagent `--stream` events into calls. One adapter per stream:
/// events after `run_started` (or the `uah` superset's `session_opened`)
/// belong to its `session_id`.
///
/// ```
/// use roundup::adapters::uagent::UagentAdapter;
/// use roundup::Call;
///
/// let mut uagent = UagentAdapter::new();
/// let mut seen = Vec::new();
/// let mut sink = |session: Option<&str>, call: Call<'_>| seen.push(format!("{session:?} {}", call.op_name()));
/// uagent.event(&serde_json::json!({"type": "run_started", "session_id": "s9"}), &mut sink);
/// uagent.event(&serde_json::json!({"type": "tool_called", "call_id": "c1", "name": "ls"}), &mut sink);
/// assert_eq!(seen, [r#"Some("s9") start"#, r#"Some("s9") run_meta"#, r#"Some("s9") tool_call"#]);
/// ```
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct UagentAdapter {
    session: Option<String>,
    /// A run started and has not finished.
    in_run: bool,
    stats: Stats,
    /// Text already streamed by `text_delta` / `reasoning_delta` that the
    /// next `assistant_message` / `reasoning` repeats.
    streamed_text: String,
    streamed_reasoning: String,
    /// A reasoning line was given in the current round: the next one is
    /// joined with a line break.
    reasoning_in_round: bool,
    /// The run's user messages and control inputs, sent as run metadata
    /// once, when the run ends (one call per message carrying all so far
    /// would be quadratic).
    user_messages: Vec<Value>,
    developer_messages: Vec<Value>,
    control_inputs: Vec<Value>,
    /// `uah` session events of the current run, and those seen since the
    /// last run ended, for the next run's metadata.
    session_events: Vec<Value>,
    /// The last time read, to read the next quicker (not state: a restored
    /// adapter reads the same times from scratch).
    #[serde(skip)]
    times: Rfc3339Memo,
}

/// One event, read once into its fields as they lie in the line (values
/// as raw JSON, strings borrowed unless escaped): every event type takes
/// this one path, and a whole `Value` is built only for what keeps an event
/// whole (an anomaly's detail, a session event, a control input).
/// [`Fields::get`] takes the last of a repeated key, as a map would.
struct Event<'a> {
    line: &'a str,
    fields: Fields<'a>,
    /// `at`, read once: seconds and nanoseconds since the epoch.
    at: Option<(i64, u32)>,
}

impl<'a> Event<'a> {
    /// An event of `line`, whose fields are yet to be read.
    fn empty(line: &'a str) -> Event<'a> {
        Event { line, fields: Fields::default(), at: None }
    }

    /// Reads the event's fields, in place; `None` when the line is not
    /// an object.
    fn read(&mut self, times: &mut Rfc3339Memo) -> Option<()> {
        Fields::read_into(self.line, &mut self.fields).ok()?;
        // A time is read where it lies; only one that does not read so is
        // unescaped first (a time has no escapes but by perversity).
        let at = self.raw("at").and_then(|raw| string_body(raw.get()));
        self.at = at.and_then(|at| times.parts(at)).or_else(|| {
            let at = self.str("at").filter(|_| at.is_some_and(|at| at.contains('\\')))?;
            times.parts(&at)
        });
        Some(())
    }

    fn raw(&self, key: &str) -> Option<Raw<'a>> {
        self.fields.get(key)
    }

    /// A string field's text; `None` when absent or not a string.
    fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.raw(key).and_then(raw_string)
    }

    /// A text field: its string, empty when absent or `null`, `Err` when it
    /// is something else (rich content, reported with the event).
    fn text(&self, key: &str) -> Result<Cow<'a, str>, ()> {
        match self.raw(key) {
            None => Ok(Cow::Borrowed("")),
            Some(raw) if raw.get() == "null" => Ok(Cow::Borrowed("")),
            Some(raw) if raw.get().starts_with('"') => Ok(raw_text(raw)),
            Some(_) => Err(()),
        }
    }

    /// An identifier: a string as it is, a number or a boolean as its JSON
    /// text, anything else none (empty).
    fn id(&self, key: &str) -> Cow<'a, str> {
        match self.raw(key).map(|raw| (raw, raw.get().as_bytes().first().copied())) {
            Some((raw, Some(b'"'))) => raw_text(raw),
            Some((raw, Some(b't' | b'f'))) => Cow::Borrowed(raw.get()),
            Some((raw, Some(b'-' | b'0'..=b'9'))) => Cow::Owned(raw_value(raw).to_string()),
            _ => Cow::Borrowed(""),
        }
    }

    fn bool(&self, key: &str) -> Option<bool> {
        match self.raw(key)?.get() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).map(raw_value)
    }

    /// The fields of the event that it has, as metadata under their own
    /// names, in the order asked.
    fn pick(&self, keys: &[&str]) -> Meta {
        keys.iter().filter_map(|key| Some(((*key).to_owned(), self.value(key)?))).collect()
    }

    /// The whole event as a value.
    fn whole(&self) -> Value {
        json_value(self.line)
    }

    /// The whole event as compact JSON, as anomalies quote it.
    fn quoted(&self) -> String {
        self.whole().to_string()
    }
}

/// A value the protocol puts where text goes (arguments, output): a string
/// is its own text, anything else its compact JSON.
fn text_of(raw: Raw<'_>) -> Cow<'_, str> {
    if raw.get().starts_with('"') {
        raw_text(raw)
    } else {
        match raw_value(raw) {
            Value::String(_) => Cow::Borrowed(raw.get()),
            value => Cow::Owned(value.to_string()),
        }
    }
}

impl Adapter for UagentAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let line = utf8(payload)?;
        let mut event = Event::empty(line);
        if event.read(&mut self.times).is_none() {
            // Not an object: what is wrong with it, in the words every
            // adapter uses.
            parse_event(payload)?;
            return Err(BadLine::new("not a uagent event: no string `type`"));
        }
        let Some(kind) = event.str("type") else {
            return Err(BadLine::new("not a uagent event: no string `type`"));
        };
        if let Some(at_ms) = event.at.and_then(parts_ms) {
            calls.clock(at_ms);
        }
        self.apply(&kind, &event, calls);
        Ok(())
    }

    /// Session events after the last run have no run to belong to: they are
    /// reported (anomaly `after_finish`, with the events) rather than lost.
    fn end(&mut self, calls: &mut dyn CallSink) {
        self.wrap_up(calls);
        if !self.in_run && !self.stats.warnings.is_empty() {
            let warnings = std::mem::take(&mut self.stats.warnings);
            self.session_events.push(json!({"type": "preflight_warning", "messages": warnings}));
        }
        if !self.in_run && !self.session_events.is_empty() {
            let events = Value::Array(std::mem::take(&mut self.session_events));
            let detail = format!("uagent: session events after the last run: {events}");
            let session = self.session.clone();
            calls.call(session.as_deref(), Call::Anomaly { kind: AnomalyKind::AfterFinish, id: None, detail: &detail });
        }
    }
}

impl UagentAdapter {
    /// An adapter with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Translates one event already parsed (its `at` is not read as a
    /// clock reading here: [`Adapter::translate`] does that). An event
    /// that is not an object, or has no string `type`, is ignored.
    pub fn event(&mut self, event: &Value, calls: &mut dyn CallSink) {
        let line = event.to_string();
        let mut event = Event::empty(&line);
        if event.read(&mut self.times).is_some() {
            if let Some(kind) = event.str("type") {
                self.apply(&kind, &event, calls);
            }
        }
    }

    fn apply(&mut self, kind: &str, event: &Event<'_>, calls: &mut dyn CallSink) {
        let at = || event.at.map(parts_ns);
        if OBSERVED.contains(&kind) {
            self.stats.observe(at());
        }
        // The text of a message or reasoning event; rich content that is
        // not a string is reported with the event, not dropped.
        let content = match kind {
            "text_delta" | "reasoning_delta" | "assistant_message" => event.text("text"),
            "reasoning" => event.text(if event.raw("text").is_some() { "text" } else { "summary" }),
            _ => Ok(Cow::Borrowed("")),
        };
        let Ok(content) = content else {
            let detail = format!("uagent: {kind} whose text is not a string: {}", event.quoted());
            return report(calls, self.session.clone().as_deref(), AnomalyKind::UnknownContent, &detail);
        };
        let content = content.as_ref();
        match kind {
            "text_delta" => {
                self.streamed_text.push_str(content);
                return calls.call(self.session.as_deref(), Call::Message { text: content });
            }
            "reasoning_delta" => {
                self.streamed_reasoning.push_str(content);
                return calls.call(self.session.as_deref(), Call::Thought { text: content });
            }
            "run_started" => {
                self.wrap_up(calls);
                let session = event.str("session_id").map(Cow::into_owned).or(self.session.take());
                let session_events = std::mem::take(&mut self.session_events);
                // Warnings of the preflight, before the run, are the run's.
                let warnings = if self.in_run { Vec::new() } else { std::mem::take(&mut self.stats.warnings) };
                *self = UagentAdapter { session, in_run: true, ..UagentAdapter::default() };
                self.stats.warnings = warnings;
                let session = self.session.as_deref();
                calls.call(session, Call::Start);
                let run = event.pick(&["model", "provider", "effort", "run_id", "workspace"]);
                let meta = one("uagent_run", Value::Object(run));
                // The session events held for this run are its own: sent
                // with those of the run, once, at its end.
                self.session_events = session_events;
                calls.call(session, Call::RunMeta { meta: &meta });
                return;
            }
            kind if SESSION_EVENTS.contains(&kind) => return self.session_event(kind, event),
            _ => {}
        }
        let id = event.id("call_id");
        let name = event.id("name");
        let (id, name) = (id.as_ref(), name.as_ref());
        let message = || event.str("message").map(Cow::into_owned).unwrap_or_default();
        let session = self.session.clone();
        let session = session.as_deref();
        match kind {
            "user_message" => {
                self.stats.user_messages = self.stats.user_messages.saturating_add(1);
                self.user_messages.push(event.value("text").unwrap_or(Value::Null));
            }
            "developer_message" => {
                self.developer_messages.push(event.value("text").unwrap_or(Value::Null));
            }
            "preflight_warning" => {
                self.stats.warnings.push(message());
            }
            "turn_started" => {
                self.stats.turns = self.stats.turns.saturating_add(1);
                self.stats.turn_open = at().or(self.stats.turn_open);
            }
            "model_responded" => {
                self.stats.model_responses = self.stats.model_responses.saturating_add(1);
                if let (Some(start), Some(end)) = (self.stats.turn_open.take(), at()) {
                    self.stats.model_spans.push((start, end));
                }
                if let Some(stop) = event.str("stop").filter(|s| !s.is_empty() && *s != "complete") {
                    let count = self.stats.stop_reasons.entry(stop.into_owned()).or_default();
                    *count = count.saturating_add(1);
                }
                if let Some(failure) = event.str("failure").filter(|f| !f.is_empty()) {
                    self.stats.failures.push(failure.into_owned());
                }
                if let Some(Value::Object(usage)) = event.value("usage") {
                    for name in TOKENS {
                        let count = self.stats.tokens.entry(Cow::Borrowed(name)).or_default();
                        *count = count.saturating_add(usage.get(name).and_then(Value::as_u64).unwrap_or(0));
                    }
                    if let Some(input) = usage.get("input").and_then(Value::as_u64) {
                        calls.call(session, Call::TokenUsage { total: input });
                    }
                }
            }
            "tool_called" => {
                self.stats.track_call(id, name);
                self.reasoning_in_round = false;
                calls.call(session, Call::ToolCall { id, title: name, name });
                if let Some(args) = event.raw("arguments") {
                    calls.call(session, Call::ArgsSnapshot { id, args: &text_of(args) });
                }
                let meta = event.pick(&["label"]);
                if !meta.is_empty() {
                    calls.call(session, Call::ToolMeta { id, meta: &meta });
                }
            }
            "tool_started" => {
                self.stats.track_call(id, name);
                if let (Some(op), Some(at)) = (event.str("op_id"), at()) {
                    self.stats.ops.entry(op.into_owned()).or_insert(OpSpan { start: at, end: None });
                }
                let meta = event.pick(&["op_id", "op_type", "out_path", "err_path"]);
                calls.call(session, Call::ToolMeta { id, meta: &meta });
            }
            "tool_finished" => {
                self.stats.track_call(id, name);
                let ok = event.bool("ok") == Some(true);
                if !ok {
                    self.stats.failed_calls.insert(id.to_owned());
                }
                if let (Some(op), Some(at)) = (event.str("op_id"), at()) {
                    if let Some(span) = self.stats.ops.get_mut(op.as_ref()).filter(|span| span.end.is_none()) {
                        span.end = Some(at);
                    }
                }
                let meta = event.pick(&["label", "op_id", "op_type", "out_path", "err_path", "duration_ms"]);
                if !meta.is_empty() {
                    calls.call(session, Call::ToolMeta { id, meta: &meta });
                }
                let status = if ok { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
                let detail = match event.raw("detail") {
                    Some(raw) if raw.get() != "null" => text_of(raw),
                    _ => Cow::Borrowed(""),
                };
                calls.call(session, Call::ToolUpdate { id, content: &detail, status });
            }
            "assistant_message" => {
                if event.bool("final") == Some(true) && !content.is_empty() {
                    self.stats.final_answer = true;
                }
                let streamed = std::mem::take(&mut self.streamed_text);
                self.unstreamed(session, content, &streamed, false, calls);
            }
            "reasoning" => {
                let line = content;
                let streamed = std::mem::take(&mut self.streamed_reasoning);
                if streamed.is_empty() && self.reasoning_in_round && !line.is_empty() {
                    calls.call(session, Call::Thought { text: "\n" });
                }
                self.unstreamed(session, line, &streamed, true, calls);
                self.reasoning_in_round = true;
            }
            "runner_error" => {
                self.stats.errors.push(message());
                let detail = format!("uagent: runner_error: {}", event.quoted());
                report(calls, session, AnomalyKind::ProtocolError, &detail);
            }
            "run_finished" => {
                let summary = event.value("summary").unwrap_or(Value::Null);
                let mut meta = one("uagent_stats", self.stats.to_json(at()));
                let status = summary.get("status").and_then(Value::as_str).unwrap_or_default();
                let reason = match status {
                    "interrupted" | "timeout" => FinishReason::Canceled,
                    "ok" | "completed" | "success" | "done" => FinishReason::Completed,
                    "error" | "failed" | "failure" => FinishReason::Failed,
                    _ => FinishReason::Interrupted,
                };
                meta.insert("uagent_run_summary".to_owned(), summary);
                calls.call(session, Call::RunMeta { meta: &meta });
                // The run's session events (or, for a run that never said it
                // started, those held for it) are its own.
                self.flush_session_events(calls);
                self.in_run = false;
                self.flush_run_lists(calls);
                calls.call(session, Call::Finish { reason });
            }
            "control_input" => {
                let mut input = event.whole();
                if let Some(input) = input.as_object_mut() {
                    input.remove("type");
                    input.remove("v");
                }
                self.control_inputs.push(input);
            }
            _ => {
                let detail = format!("uagent: event type `{kind}`: {}", event.quoted());
                report(calls, session, AnomalyKind::UnknownEvent, &detail)
            }
        }
    }

    /// A `uah` session event: in a run, the run's metadata; between runs,
    /// held for the next run's. A `session_opened` names the session.
    fn session_event(&mut self, kind: &str, event: &Event<'_>) {
        if kind == "session_opened" {
            if let Some(session) = event.str("session_id") {
                self.session = Some(session.into_owned());
            }
        }
        let mut kept = event.whole();
        if let Some(kept) = kept.as_object_mut() {
            kept.remove("v");
        }
        // Sent once, with the run's others, when it ends.
        self.session_events.push(kept);
    }

    /// Sends the session events gathered for the current run as its
    /// metadata, once (sending the list as it grows would cost the square
    /// of its length).
    fn flush_session_events(&mut self, calls: &mut dyn CallSink) {
        if !self.session_events.is_empty() {
            let events = Value::Array(std::mem::take(&mut self.session_events));
            calls.call(self.session.as_deref(), Call::RunMeta { meta: &one("uah_session_events", events) });
        }
    }

    /// Before something else begins (another run, the end of the stream):
    /// the run's lists, and, for a run still open (cut short, never
    /// finished), its statistics as far as it went.
    fn wrap_up(&mut self, calls: &mut dyn CallSink) {
        self.flush_run_lists(calls);
        if self.in_run {
            self.flush_session_events(calls);
            let meta = one("uagent_stats", self.stats.to_json(None));
            calls.call(self.session.as_deref(), Call::RunMeta { meta: &meta });
        }
    }

    /// Sends the run's user messages and control inputs, once.
    fn flush_run_lists(&mut self, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        for (key, list) in [
            ("uagent_user_messages", &mut self.user_messages),
            ("uagent_developer_messages", &mut self.developer_messages),
            ("uagent_control_inputs", &mut self.control_inputs),
        ] {
            if !list.is_empty() {
                meta.insert(key.to_owned(), Value::Array(std::mem::take(list)));
            }
        }
        if !meta.is_empty() {
            calls.call(self.session.as_deref(), Call::RunMeta { meta: &meta });
        }
    }

    /// The part of a whole message (or reasoning line) that its deltas did
    /// not already stream: never counted twice.
    fn unstreamed(&self, session: Option<&str>, whole: &str, streamed: &str, thought: bool, calls: &mut dyn CallSink) {
        let call = |text| if thought { Call::Thought { text } } else { Call::Message { text } };
        match whole.strip_prefix(streamed) {
            Some(rest) => calls.call(session, call(rest)),
            None => {
                let detail = format!("uagent: a whole message differs from its streamed deltas; kept: {whole:?}");
                report(calls, session, AnomalyKind::ProtocolError, &detail);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_overlap_and_peak() {
        assert_eq!(merge(vec![(5, 9), (0, 2), (2, 4), (8, 12)]), [(0, 4), (5, 12)]);
        assert_eq!(overlap(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(peak(&[(0, 5), (5, 9)]), 1, "an end and a start at one instant are not parallel");
        assert_eq!(peak(&[(0, 5), (1, 9), (2, 3)]), 3);
    }
}
