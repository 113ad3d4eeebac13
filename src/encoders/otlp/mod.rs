//! Each run as OpenTelemetry traces: one OTLP/JSON
//! `ExportTraceServiceRequest` a line, written when the run finishes, as
//! the OpenTelemetry Collector's file exporter writes them. A tracing
//! backend (Jaeger, Grafana Tempo, Arize Phoenix, Langfuse) then shows an
//! agent's runs, rebuilt from the chunks of its stream.
//!
//! The shape (docs/otlp.md has the whole mapping):
//!
//! - a run is an `invoke_agent` span, the root of its own trace;
//! - each round is a `chat {model}` span under it, from its first chunk to
//!   its close;
//! - each tool call is an `execute_tool {name}` span under its round, from
//!   its declaration to its result.
//!
//! Every span carries both vocabularies (see [`semconv`]): the GenAI
//! semantic conventions (`gen_ai.*`) and OpenInference
//! (`openinference.span.kind`, `llm.*`, `tool.*`).
//!
//! What went wrong is on the spans: a placeholder result is a tool span
//! with an error status that says why no result came; a late result that
//! was stitched ends its tool span when it came, with a `roundup.stitch`
//! event; each anomaly is a `roundup.anomaly.{kind}` event on the span of
//! the tool call it names (the run's span otherwise).
//!
//! **Content** (the assistant's text and reasoning, the prompts, tool
//! arguments, results and output, and anomaly details that hold the
//! input's own text) may be sensitive, and is left out unless asked for:
//! `otlp-content` is the same format with it
//! (`roundup replay --emit otlp --otlp-content`).
//!
//! **Ids** are a digest of the session, the run's index and the run's
//! records, the same in every build: exporting the same input again gives
//! the same trace and span ids (a backend keeps each span once), and runs
//! of different inputs that share a session name do not merge.
//!
//! **Times** are the replay's clock (the input's `at_ms`), in nanoseconds.
//! An input without a clock reads 0 throughout: its spans are at the Unix
//! epoch, nested and ordered as ever but without durations.
//!
//! **Memory**: a run's spans are held until its finish, and no longer (the
//! records of the open runs, without their content unless content is
//! asked for).
//!
//! ```
//! use roundup::encoders::OutputFormat;
//! use roundup::{ReplayOptions, replay};
//!
//! let ops = br#"{"op":"message","text":"Let me look.","at_ms":1000}
//! {"op":"tool_call","id":"t1","title":"ls","name":"Bash","at_ms":1100}
//! {"op":"tool_update","id":"t1","content":"a.txt","status":"completed","at_ms":1400}
//! {"op":"finish","reason":"completed","at_ms":1500}
//! "#;
//! let options = ReplayOptions::new().to(OutputFormat::named("otlp").unwrap());
//! let mut out = Vec::new();
//! replay(&ops[..], &mut out, &options, &mut ()).unwrap();
//! let request: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! let spans = &request["resourceSpans"][0]["scopeSpans"][0]["spans"];
//! let names: Vec<&str> = spans.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
//! assert_eq!(names, ["invoke_agent", "chat", "execute_tool Bash"]);
//! assert_eq!(spans[2]["parentSpanId"], spans[1]["spanId"]);
//! assert_eq!(spans[2]["startTimeUnixNano"], "1100000000");
//! // No content unless asked for: the result is not there.
//! assert!(!String::from_utf8(out).unwrap().contains("a.txt"));
//! ```

pub mod protobuf;
pub mod semconv;

mod ids;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use self::ids::Digest;
use self::semconv as sc;
use super::{Encoder, Frames, OutputFormat, Reads};
use crate::hash::HashMap;
use crate::model::{Anomaly, AnomalyKind, PlaceholderReason, Round, Summary, ToolCall, ToolResult};
use crate::sink::SinkRecord;
use crate::usage::{ModelFacts, Usage};
use crate::wire;

/// The registry row of the traces without content.
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("otlp").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "otlp",
    about: "each run as OpenTelemetry traces (OTLP/JSON, one
ExportTraceServiceRequest a line): a run an
invoke_agent span, a round a chat span, a tool call
an execute_tool span; GenAI and OpenInference
attributes, without content (--otlp-content adds it)",
    encoder: || Box::new(OtlpEncoder::new(false)),
};

/// The resource's `service.name`: the spans are roundup's rebuilding of
/// the agent's stream.
const SERVICE: &str = "roundup";

/// OTLP span kinds (the enum's numbers, as OTLP/JSON writes them).
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;

/// OTLP status codes.
const STATUS_ERROR: u8 = 2;

/// Writes each run as one OTLP/JSON `ExportTraceServiceRequest`.
///
/// ```
/// use roundup::encoders::otlp::OtlpEncoder;
/// use roundup::encoders::{Encoder, Framing, Frames};
/// use roundup::{FinishReason, RoundBuilder, SinkRecord, StreamHandler};
///
/// let builder = RoundBuilder::new();
/// builder.message("Hi");
/// builder.finish(FinishReason::Completed);
/// let mut encoder = OtlpEncoder::new(true);
/// let mut out = Frames::new(Framing::Lines);
/// encoder.record(SinkRecord::Round(&builder.rounds()[0]), &mut out);
/// assert!(out.bytes().is_empty(), "written when the run finishes");
/// encoder.record(SinkRecord::Summary(&builder.summary()), &mut out);
/// let line: serde_json::Value = serde_json::from_slice(out.bytes()).unwrap();
/// let chat = &line["resourceSpans"][0]["scopeSpans"][0]["spans"][1];
/// let output = chat["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "output.value").unwrap();
/// assert_eq!(output["value"]["stringValue"], "Hi");
/// ```
#[derive(Debug)]
pub struct OtlpEncoder {
    /// Whether content goes into the spans.
    content: bool,
    /// Each session's current run.
    runs: HashMap<Option<String>, HeldRun>,
}

impl OtlpEncoder {
    /// An encoder; `content`: whether the spans carry the content (texts,
    /// arguments, results), which may be sensitive.
    pub fn new(content: bool) -> Self {
        OtlpEncoder { content, runs: HashMap::default() }
    }
}

/// A session's current run: what its trace will hold.
#[derive(Debug, Default, Serialize, Deserialize)]
struct HeldRun {
    run: u64,
    /// The run's trace was written: what still comes for it (anomalies
    /// after its finish) is in the records, not in the trace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    written: bool,
    digest: Digest,
    /// The earliest and latest clock readings seen (0: none).
    first_ms: u64,
    last_ms: u64,
    rounds: Vec<HeldRound>,
    /// Events of the run's own span.
    events: Vec<Value>,
}

#[derive(Debug, Serialize, Deserialize)]
struct HeldRound {
    round: Round,
    /// One entry per tool call: its events, and whether it was stitched.
    calls: Vec<HeldCall>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct HeldCall {
    stitched: bool,
    events: Vec<Value>,
}

impl HeldRun {
    fn new(session: Option<&str>, run: u64) -> Self {
        let mut digest = Digest::default();
        digest.text("roundup.otlp");
        match session {
            Some(name) => {
                digest.number(1);
                digest.text(name);
            }
            None => digest.number(0),
        }
        digest.number(run);
        HeldRun { run, digest, ..HeldRun::default() }
    }

    fn saw_clock(&mut self, at_ms: u64) {
        if at_ms == 0 {
            return;
        }
        self.first_ms = if self.first_ms == 0 { at_ms } else { self.first_ms.min(at_ms) };
        self.last_ms = self.last_ms.max(at_ms);
    }

    /// The call of the run that an anomaly naming `id` concerns: the last
    /// one declared with that id.
    fn call_named(&mut self, id: &str) -> Option<&mut HeldCall> {
        self.rounds.iter_mut().rev().find_map(|held| {
            let at = held.round.tool_calls.iter().rposition(|call| call.id == id)?;
            held.calls.get_mut(at)
        })
    }
}

impl Encoder for OtlpEncoder {
    fn reads(&self) -> Reads {
        Reads::Records
    }

    /// Each session's current run, as `[session, run]` pairs.
    fn save(&self) -> Option<Value> {
        crate::pairs::to_value(&self.runs)
    }

    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        self.runs = crate::pairs::from_value(state)?;
        Ok(())
    }

    /// A record without a clock reading: as [`record_at`](Encoder::record_at)
    /// at 0 (no time known).
    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        self.record_at(record, 0, out);
    }

    fn record_at(&mut self, record: SinkRecord<'_>, at_ms: u64, out: &mut Frames) {
        let (session, run) = match record {
            SinkRecord::Round(round) => (&round.session, round.run),
            SinkRecord::Stitch(stitch) => (&stitch.session, stitch.run),
            SinkRecord::Anomaly(anomaly) => (&anomaly.session, anomaly.run),
            SinkRecord::Meta(patch) => (&patch.session, patch.run),
            SinkRecord::Summary(summary) => (&summary.session, summary.run),
        };
        let held = match self.runs.get_mut(session) {
            Some(held) if held.run == run => held,
            _ => {
                self.runs.insert(session.clone(), HeldRun::new(session.as_deref(), run));
                match self.runs.get_mut(session) {
                    Some(held) => held,
                    None => return,
                }
            }
        };
        if held.written {
            return;
        }
        digest_record(&mut held.digest, record, at_ms);
        held.saw_clock(at_ms);
        match record {
            SinkRecord::Round(round) => {
                held.saw_clock(round.started_at_ms);
                held.saw_clock(round.finished_at_ms);
                let mut round = round.clone();
                if !self.content {
                    strip_content(&mut round);
                }
                let calls = round.tool_calls.iter().map(|_| HeldCall::default()).collect();
                held.rounds.push(HeldRound { round, calls });
            }
            SinkRecord::Stitch(stitch) => {
                held.saw_clock(stitch.finished_at_ms);
                let Some(target) = held.rounds.iter_mut().find(|held| held.round.index == stitch.round) else {
                    return;
                };
                let superseded = |call: &ToolCall| {
                    call.id == stitch.id && call.result.placeholder_reason() == Some(PlaceholderReason::Superseded)
                };
                let Some(at) = target.round.tool_calls.iter().position(superseded) else { return };
                let (Some(call), Some(state)) = (target.round.tool_calls.get_mut(at), target.calls.get_mut(at)) else {
                    return;
                };
                call.result = stitch.result.clone();
                if !self.content {
                    strip_result(&mut call.result);
                }
                call.finished_at_ms = stitch.finished_at_ms;
                state.stitched = true;
                let mut attributes = Attributes::default();
                attributes.str(sc::ROUNDUP_PLACEHOLDER_REASON, PlaceholderReason::Superseded.as_str());
                attributes.str(sc::ROUNDUP_TOOL_RESULT_STATUS, result_status(&stitch.result));
                state.events.push(event(sc::EVENT_STITCH, stitch.finished_at_ms, attributes));
            }
            SinkRecord::Anomaly(anomaly) => {
                let value = anomaly_event(anomaly, at_ms, self.content);
                match anomaly.id.as_deref().and_then(|id| held.call_named(id)) {
                    Some(call) => call.events.push(value),
                    None => held.events.push(value),
                }
            }
            SinkRecord::Meta(patch) => {
                let Some(target) = held.rounds.iter_mut().find(|held| held.round.index == patch.round) else {
                    return;
                };
                if let Some(call) = target.round.tool_calls.iter_mut().rev().find(|call| call.id == patch.id) {
                    call.meta.extend(patch.meta.iter().map(|(key, value)| (key.clone(), value.clone())));
                }
            }
            SinkRecord::Summary(summary) => {
                let run = std::mem::take(held);
                held.run = run.run;
                held.written = true;
                // A run that held nothing at all (an empty input) has no
                // trace.
                if run.rounds.is_empty() && super::held_nothing(summary) {
                    return;
                }
                let request = run.request(summary, at_ms, self.content);
                out.frame(|buf| wire::write_json(buf, &request));
            }
        }
    }
}

/// Adds a record to the run's digest, as its JSON (the same bytes in
/// every build: `serde_json` writes the fields in their declared order,
/// metadata in the order it came).
fn digest_record(digest: &mut Digest, record: SinkRecord<'_>, at_ms: u64) {
    digest.number(at_ms);
    let written = match record {
        SinkRecord::Round(round) => serde_json::to_writer(&mut *digest, round),
        SinkRecord::Stitch(stitch) => serde_json::to_writer(&mut *digest, stitch),
        SinkRecord::Anomaly(anomaly) => serde_json::to_writer(&mut *digest, anomaly),
        SinkRecord::Meta(patch) => serde_json::to_writer(&mut *digest, patch),
        SinkRecord::Summary(summary) => serde_json::to_writer(&mut *digest, summary),
    };
    // Writing into a digest cannot fail; serialising these types neither.
    debug_assert!(written.is_ok());
}

/// A round as held without content: its texts, arguments and results
/// emptied (what a span without content shows is their absence).
fn strip_content(round: &mut Round) {
    round.message = String::new();
    round.thought = String::new();
    for call in &mut round.tool_calls {
        call.arguments = String::new();
        strip_result(&mut call.result);
    }
}

fn strip_result(result: &mut ToolResult) {
    match result {
        ToolResult::Completed { content } | ToolResult::Failed { content } => *content = String::new(),
        ToolResult::Placeholder { reason, .. } => *result = ToolResult::placeholder(*reason),
    }
}

fn result_status(result: &ToolResult) -> &'static str {
    match result {
        ToolResult::Completed { .. } => "completed",
        ToolResult::Failed { .. } => "failed",
        ToolResult::Placeholder { .. } => "placeholder",
    }
}

/// Whether an anomaly's detail is the input's own text (a dropped result,
/// arguments, an event kept whole), which is content; the other kinds'
/// detail says what happened (an op's name, a line number and why it did
/// not read).
fn detail_is_content(kind: AnomalyKind) -> bool {
    matches!(
        kind,
        AnomalyKind::UndeclaredTerminal
            | AnomalyKind::DuplicateTerminal
            | AnomalyKind::UnknownToolCall
            | AnomalyKind::UnknownEvent
            | AnomalyKind::UnknownContent
            | AnomalyKind::ProtocolError
            | AnomalyKind::BadMeta
    )
}

fn anomaly_event(anomaly: &Anomaly, at_ms: u64, content: bool) -> Value {
    let mut attributes = Attributes::default();
    attributes.str(sc::ROUNDUP_ANOMALY_KIND, anomaly.kind.as_str());
    if let Some(id) = &anomaly.id {
        attributes.str(sc::ROUNDUP_ANOMALY_ID, id);
    }
    if let Some(status) = anomaly.status {
        attributes.str(sc::ROUNDUP_ANOMALY_STATUS, status.as_str());
    }
    if content || !detail_is_content(anomaly.kind) {
        attributes.str(sc::ROUNDUP_ANOMALY_DETAIL, &anomaly.detail);
    }
    if let (true, Some(payload)) = (content, &anomaly.content) {
        attributes.str(sc::ROUNDUP_ANOMALY_CONTENT, payload);
    }
    event(&format!("{}.{}", sc::EVENT_ANOMALY, anomaly.kind.as_str()), at_ms, attributes)
}

/// A span event.
fn event(name: &str, at_ms: u64, attributes: Attributes) -> Value {
    json!({"timeUnixNano": nanos(at_ms), "name": name, "attributes": attributes.0})
}

/// Milliseconds as OTLP/JSON's nanoseconds: a decimal string (a 64-bit
/// integer, which JSON numbers do not hold exactly).
fn nanos(ms: u64) -> String {
    ms.saturating_mul(1_000_000).to_string()
}

/// A span's attributes, in OTLP/JSON's `{key, value: {stringValue}}` form,
/// in the order they are set.
#[derive(Debug, Default)]
struct Attributes(Vec<Value>);

impl Attributes {
    fn str(&mut self, key: &str, value: &str) {
        self.0.push(json!({"key": key, "value": {"stringValue": value}}));
    }

    /// An integer: `intValue` is an int64, written as a decimal string.
    fn int(&mut self, key: &str, value: u64) {
        let value = value.min(i64::MAX as u64);
        self.0.push(json!({"key": key, "value": {"intValue": value.to_string()}}));
    }

    fn bool(&mut self, key: &str, value: bool) {
        self.0.push(json!({"key": key, "value": {"boolValue": value}}));
    }

    fn strs(&mut self, key: &str, values: &[String]) {
        let values: Vec<Value> = values.iter().map(|value| json!({"stringValue": value})).collect();
        self.0.push(json!({"key": key, "value": {"arrayValue": {"values": values}}}));
    }

    /// The session under both vocabularies' names.
    fn session(&mut self, session: Option<&str>) {
        if let Some(session) = session {
            self.str(sc::GEN_AI_CONVERSATION_ID, session);
            self.str(sc::SESSION_ID, session);
        }
    }

    /// A model's facts: provider, model, response, usage.
    fn model(&mut self, facts: &ModelFacts) {
        if let Some(provider) = facts.provider {
            self.str(sc::GEN_AI_PROVIDER_NAME, provider.gen_ai);
            if let Some(name) = provider.openinference {
                self.str(sc::LLM_PROVIDER, name);
            }
        }
        if let Some(model) = &facts.model {
            self.str(sc::GEN_AI_REQUEST_MODEL, model);
            self.str(sc::GEN_AI_RESPONSE_MODEL, model);
            self.str(sc::LLM_MODEL_NAME, model);
        }
        if let Some(id) = &facts.response_id {
            self.str(sc::GEN_AI_RESPONSE_ID, id);
        }
        if !facts.finish_reasons.is_empty() {
            self.strs(sc::GEN_AI_RESPONSE_FINISH_REASONS, &facts.finish_reasons);
        }
        self.usage(facts.usage);
    }

    fn usage(&mut self, usage: Usage) {
        let pairs = [
            (usage.input, sc::GEN_AI_USAGE_INPUT_TOKENS, sc::LLM_TOKEN_COUNT_PROMPT),
            (usage.output, sc::GEN_AI_USAGE_OUTPUT_TOKENS, sc::LLM_TOKEN_COUNT_COMPLETION),
            (usage.cache_read, sc::GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, sc::LLM_TOKEN_COUNT_PROMPT_CACHE_READ),
            (usage.reasoning, sc::GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, sc::LLM_TOKEN_COUNT_COMPLETION_REASONING),
        ];
        for (count, gen_ai, openinference) in pairs {
            if let Some(count) = count {
                self.int(gen_ai, count);
                self.int(openinference, count);
            }
        }
        if let Some(total) = usage.total {
            self.int(sc::LLM_TOKEN_COUNT_TOTAL, total);
        }
    }
}

/// One span, as OTLP/JSON writes it.
struct Span {
    span_id: u64,
    parent: Option<u64>,
    name: String,
    kind: u8,
    start_ms: u64,
    end_ms: u64,
    attributes: Attributes,
    events: Vec<Value>,
    /// An error status and its message.
    error: Option<String>,
}

impl Span {
    fn json(self, trace_id: &str) -> Value {
        let mut span = Map::new();
        span.insert("traceId".into(), trace_id.into());
        span.insert("spanId".into(), format!("{:016x}", self.span_id).into());
        if let Some(parent) = self.parent {
            span.insert("parentSpanId".into(), format!("{parent:016x}").into());
        }
        span.insert("name".into(), self.name.into());
        span.insert("kind".into(), self.kind.into());
        span.insert("startTimeUnixNano".into(), nanos(self.start_ms).into());
        // A span never ends before it starts (OTLP asks end >= start).
        span.insert("endTimeUnixNano".into(), nanos(self.end_ms.max(self.start_ms)).into());
        span.insert("attributes".into(), Value::Array(self.attributes.0));
        if !self.events.is_empty() {
            span.insert("events".into(), Value::Array(self.events));
        }
        if let Some(message) = self.error {
            span.insert("status".into(), json!({"message": message, "code": STATUS_ERROR}));
        }
        Value::Object(span)
    }
}

impl HeldRun {
    /// The run's `ExportTraceServiceRequest`: the run's span, then each
    /// round's span followed by its calls' spans.
    fn request(self, summary: &Summary, at_ms: u64, content: bool) -> Value {
        let trace_id = format!("{:032x}", self.digest.trace_id());
        let run_id = self.digest.span_id(&[0]);
        let session = summary.session.as_deref();
        let mut spans = Vec::with_capacity(1 + self.rounds.iter().map(|r| 1 + r.calls.len()).sum::<usize>());
        let mut run_usage = Usage::default();
        let mut run_facts = ModelFacts::of(&summary.meta);
        let mut end_ms = self.last_ms.max(at_ms);
        let mut last_message = None;
        for held in self.rounds {
            let round = held.round;
            let facts = ModelFacts::of(&round.meta);
            run_usage = run_usage.plus(facts.usage);
            if run_facts.model.is_none() {
                run_facts.model.clone_from(&facts.model);
            }
            if run_facts.provider.is_none() {
                run_facts.provider = facts.provider;
            }
            let round_id = self.digest.span_id(&[1, round.index]);
            let mut attributes = Attributes::default();
            attributes.str(sc::GEN_AI_OPERATION_NAME, sc::OP_CHAT);
            attributes.str(sc::OPENINFERENCE_SPAN_KIND, sc::KIND_LLM);
            attributes.session(session);
            attributes.model(&facts);
            attributes.int(sc::ROUNDUP_RUN, round.run);
            attributes.int(sc::ROUNDUP_ROUND_INDEX, round.index);
            attributes.str(sc::ROUNDUP_ROUND_CLOSED_BY, round.closed_by.as_str());
            if content {
                round_content(&mut attributes, &round, &facts);
                if !round.message.is_empty() {
                    last_message = Some(round.message.clone());
                }
            }
            end_ms = end_ms.max(round.finished_at_ms);
            spans.push(Span {
                span_id: round_id,
                parent: Some(run_id),
                name: facts.model.as_ref().map_or_else(|| sc::OP_CHAT.to_owned(), |model| format!("chat {model}")),
                kind: KIND_CLIENT,
                start_ms: round.started_at_ms,
                end_ms: round.finished_at_ms,
                attributes,
                events: Vec::new(),
                error: None,
            });
            for (position, (call, state)) in round.tool_calls.iter().zip(held.calls).enumerate() {
                end_ms = end_ms.max(call.finished_at_ms);
                let span_id = self.digest.span_id(&[2, round.index, position as u64]);
                spans.push(call_span(call, state, span_id, round_id, session, content));
            }
        }
        // The run's usage: what its summary says, else its rounds' sum.
        if run_facts.usage == Usage::default() {
            run_facts.usage = run_usage;
        }
        let finish_reason = summary.finish_reason.map(|reason| reason.as_str());
        let mut attributes = Attributes::default();
        attributes.str(sc::GEN_AI_OPERATION_NAME, sc::OP_INVOKE_AGENT);
        attributes.str(sc::OPENINFERENCE_SPAN_KIND, sc::KIND_AGENT);
        attributes.session(session);
        attributes.model(&ModelFacts { response_id: None, finish_reasons: Vec::new(), ..run_facts });
        attributes.int(sc::ROUNDUP_RUN, summary.run);
        if let Some(reason) = finish_reason {
            attributes.str(sc::ROUNDUP_FINISH_REASON, reason);
        }
        attributes.int(sc::ROUNDUP_ROUNDS, summary.rounds);
        attributes.int(sc::ROUNDUP_TOOL_CALLS, summary.tool_calls);
        attributes.int(sc::ROUNDUP_STITCHES, summary.stitches);
        attributes.int(sc::ROUNDUP_ANOMALIES, summary.anomalies);
        if let Some(total) = summary.last_token_usage {
            attributes.int(sc::ROUNDUP_TOKEN_USAGE_LAST, total);
        }
        if content {
            let prompts = super::history::prompts(summary);
            if !prompts.is_empty() {
                attributes.str(sc::INPUT_VALUE, &prompts.join("\n\n"));
                let messages: Vec<Value> = prompts
                    .iter()
                    .map(|text| json!({"role": "user", "parts": [{"type": "text", "content": text}]}))
                    .collect();
                attributes.str(sc::GEN_AI_INPUT_MESSAGES, &Value::Array(messages).to_string());
            }
            if let Some(message) = &last_message {
                attributes.str(sc::OUTPUT_VALUE, message);
            }
        }
        let failed = finish_reason == Some("failed");
        if failed {
            attributes.str(sc::ERROR_TYPE, "failed");
        }
        let run_span = Span {
            span_id: run_id,
            parent: None,
            name: sc::OP_INVOKE_AGENT.to_owned(),
            kind: KIND_INTERNAL,
            start_ms: self.first_ms,
            end_ms,
            attributes,
            events: self.events,
            error: failed.then(|| "the run failed".to_owned()),
        };
        let spans: Vec<Value> = std::iter::once(run_span).chain(spans).map(|span| span.json(&trace_id)).collect();
        json!({"resourceSpans": [{
            "resource": {"attributes": [{"key": sc::SERVICE_NAME, "value": {"stringValue": SERVICE}}]},
            "scopeSpans": [{
                "scope": {"name": "roundup", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }]})
    }
}

/// A round's content: its output as one assistant message, in both
/// vocabularies' forms.
fn round_content(attributes: &mut Attributes, round: &Round, facts: &ModelFacts) {
    let mut parts = Vec::new();
    if !round.thought.is_empty() {
        parts.push(json!({"type": "reasoning", "content": round.thought}));
    }
    if !round.message.is_empty() {
        parts.push(json!({"type": "text", "content": round.message}));
    }
    for call in &round.tool_calls {
        let arguments = call.arguments_value().unwrap_or_else(|| Value::String(call.arguments.clone()));
        parts.push(json!({"type": "tool_call", "id": call.id, "name": tool_name(call), "arguments": arguments}));
    }
    // The conventions' finish reason of an output message: the provider's
    // where it said one, else what the round's end means.
    let finish = facts
        .finish_reasons
        .first()
        .cloned()
        .unwrap_or_else(|| if round.tool_calls.is_empty() { "stop" } else { "tool_call" }.to_owned());
    let message = json!([{"role": "assistant", "parts": parts, "finish_reason": finish}]);
    attributes.str(sc::GEN_AI_OUTPUT_MESSAGES, &message.to_string());
    if !round.message.is_empty() {
        attributes.str(sc::OUTPUT_VALUE, &round.message);
    }
    let prefix = format!("{}.0.", sc::LLM_OUTPUT_MESSAGES);
    attributes.str(&format!("{prefix}{}", sc::MESSAGE_ROLE), "assistant");
    if !round.message.is_empty() {
        attributes.str(&format!("{prefix}{}", sc::MESSAGE_CONTENT), &round.message);
    }
    for (at, call) in round.tool_calls.iter().enumerate() {
        let call_prefix = format!("{prefix}{}.{at}.", sc::MESSAGE_TOOL_CALLS);
        attributes.str(&format!("{call_prefix}{}", sc::TOOL_CALL_ID), &call.id);
        attributes.str(&format!("{call_prefix}{}", sc::TOOL_CALL_FUNCTION_NAME), &tool_name(call));
        attributes.str(&format!("{call_prefix}{}", sc::TOOL_CALL_FUNCTION_ARGUMENTS), &call.arguments);
    }
}

/// The tool's name as the model called it, else the call's title.
fn tool_name(call: &ToolCall) -> String {
    if call.name.is_empty() { &call.title } else { &call.name }.clone()
}

fn call_span(
    call: &ToolCall,
    state: HeldCall,
    span_id: u64,
    parent: u64,
    session: Option<&str>,
    content: bool,
) -> Span {
    let name = tool_name(call);
    let mut attributes = Attributes::default();
    attributes.str(sc::GEN_AI_OPERATION_NAME, sc::OP_EXECUTE_TOOL);
    attributes.str(sc::OPENINFERENCE_SPAN_KIND, sc::KIND_TOOL);
    if !name.is_empty() {
        attributes.str(sc::GEN_AI_TOOL_NAME, &name);
        attributes.str(sc::TOOL_NAME, &name);
    }
    attributes.str(sc::GEN_AI_TOOL_CALL_ID, &call.id);
    if !call.title.is_empty() {
        attributes.str(sc::ROUNDUP_TOOL_TITLE, &call.title);
    }
    attributes.session(session);
    attributes.str(sc::ROUNDUP_TOOL_RESULT_STATUS, result_status(&call.result));
    if state.stitched {
        attributes.bool(sc::ROUNDUP_TOOL_STITCHED, true);
    }
    let reason = call.result.placeholder_reason();
    if let Some(reason) = reason {
        attributes.str(sc::ROUNDUP_PLACEHOLDER_REASON, reason.as_str());
        attributes.str(sc::ERROR_TYPE, reason.as_str());
    }
    if content {
        attributes.str(sc::GEN_AI_TOOL_CALL_ARGUMENTS, &call.arguments);
        attributes.str(sc::TOOL_PARAMETERS, &call.arguments);
        attributes.str(sc::INPUT_VALUE, &call.arguments);
        if serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_ok() {
            attributes.str(sc::INPUT_MIME_TYPE, "application/json");
        }
        if let Some(result) = call.result.content() {
            attributes.str(sc::GEN_AI_TOOL_CALL_RESULT, result);
            attributes.str(sc::OUTPUT_VALUE, result);
        }
        if let Some(output) = call.result.placeholder_output() {
            attributes.str(sc::ROUNDUP_TOOL_OUTPUT, output);
        }
    }
    Span {
        span_id,
        parent: Some(parent),
        name: if name.is_empty() { sc::OP_EXECUTE_TOOL.to_owned() } else { format!("execute_tool {name}") },
        kind: KIND_INTERNAL,
        start_ms: call.started_at_ms,
        end_ms: call.finished_at_ms,
        attributes,
        events: state.events,
        error: reason.map(|reason| format!("no result: {}", reason.as_str())),
    }
}
