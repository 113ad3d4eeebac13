//! The output lines of SPEC §4: one JSON object per line, `type` first.

use serde::{Deserialize, Serialize};

use crate::model::{Anomaly, MetaPatch, Round, Stitch, Summary};
use crate::sink::SinkRecord;
use crate::ui::UiEvent;

pub(crate) use crate::json_write::write_json;

/// One output line, owned: what a consumer reads back from roundup's
/// output (or its own persisted records).
///
/// ```
/// use roundup::OutputLine;
/// let line: OutputLine = serde_json::from_str(
///     r#"{"type":"stitch","run":0,"round":0,"id":"a","result":{"status":"completed","content":"late"},"finished_at_ms":7}"#,
/// ).unwrap();
/// let OutputLine::Stitch(stitch) = line else { panic!() };
/// assert_eq!(stitch.result.content(), Some("late"));
/// ```
// Lines are read one at a time and most are rounds: boxing the round would
// add an allocation per line to save stack space nobody is short of.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutputLine {
    /// A closed round.
    Round(Round),
    /// A late result for an earlier round.
    Stitch(Stitch),
    /// Something that could not be applied.
    Anomaly(Anomaly),
    /// Metadata for a tool call of an earlier round.
    Meta(MetaPatch),
    /// A run's counts, after all other output.
    Summary(Summary),
}

/// A record, owned: for a consumer that keeps it past the sink call (an
/// async channel, a queue).
impl From<SinkRecord<'_>> for OutputLine {
    fn from(record: SinkRecord<'_>) -> Self {
        match record {
            SinkRecord::Round(round) => OutputLine::Round(round.clone()),
            SinkRecord::Stitch(stitch) => OutputLine::Stitch(stitch.clone()),
            SinkRecord::Anomaly(anomaly) => OutputLine::Anomaly(anomaly.clone()),
            SinkRecord::Meta(patch) => OutputLine::Meta(patch.clone()),
            SinkRecord::Summary(summary) => OutputLine::Summary(summary.clone()),
        }
    }
}

impl OutputLine {
    /// The record, borrowed: to write an owned record
    /// ([`write_record`]) or hand it to a sink.
    ///
    /// ```
    /// use roundup::OutputLine;
    /// let line = r#"{"type":"anomaly","run":0,"kind":"bad_line","detail":"line 1: not JSON"}"#;
    /// let record: OutputLine = serde_json::from_str(line).unwrap();
    /// let mut out = Vec::new();
    /// roundup::write_record(&mut out, record.as_record());
    /// assert_eq!(out, line.as_bytes());
    /// ```
    pub fn as_record(&self) -> SinkRecord<'_> {
        match self {
            OutputLine::Round(round) => SinkRecord::Round(round),
            OutputLine::Stitch(stitch) => SinkRecord::Stitch(stitch),
            OutputLine::Anomaly(anomaly) => SinkRecord::Anomaly(anomaly),
            OutputLine::Meta(patch) => SinkRecord::Meta(patch),
            OutputLine::Summary(summary) => SinkRecord::Summary(summary),
        }
    }
}

/// Writes one record as its output line (no newline), borrowing it.
///
/// ```
/// use roundup::{RoundBuilder, SinkRecord, StreamHandler};
/// let builder = RoundBuilder::new();
/// builder.message("Hi");
/// builder.finish(roundup::FinishReason::Interrupted);
/// let mut line = Vec::new();
/// roundup::write_record(&mut line, SinkRecord::Round(&builder.rounds()[0]));
/// assert!(line.starts_with(br#"{"type":"round","#));
/// ```
pub fn write_record(out: &mut Vec<u8>, record: SinkRecord<'_>) {
    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Line<'a> {
        Stitch(&'a Stitch),
        Anomaly(&'a Anomaly),
        Meta(&'a MetaPatch),
        Summary(&'a Summary),
    }
    let line = match record {
        SinkRecord::Round(round) => return write_round(out, round),
        SinkRecord::Stitch(stitch) => Line::Stitch(stitch),
        SinkRecord::Anomaly(anomaly) => Line::Anomaly(anomaly),
        SinkRecord::Meta(patch) => Line::Meta(patch),
        SinkRecord::Summary(summary) => Line::Summary(summary),
    };
    write_json(out, &line);
}

/// Writes a summary as its output line (no newline).
///
/// ```
/// let mut line = Vec::new();
/// roundup::write_summary(&mut line, &roundup::Summary::default());
/// assert!(line.starts_with(br#"{"type":"summary","run":0,"#));
/// ```
pub fn write_summary(out: &mut Vec<u8>, summary: &Summary) {
    write_record(out, SinkRecord::Summary(summary));
}

/// Writes a UI event as the line `replay --emit ui` prints: the event's
/// fields, plus `session` when there is one.
///
/// ```
/// let mut line = Vec::new();
/// roundup::write_ui_event(&mut line, Some("s1"), &roundup::UiEvent::MessageEnd);
/// assert_eq!(line, br#"{"event":"message_end","session":"s1"}"#);
/// ```
pub fn write_ui_event(out: &mut Vec<u8>, session: Option<&str>, event: &UiEvent<'_>) {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(flatten)]
        event: &'a UiEvent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session: Option<&'a str>,
    }
    write_json(out, &Line { event, session });
}

/// Writes a round as its output line, the bytes serde's derive writes for
/// it (`write_json` of the tagged line): most lines are rounds, and the
/// derive reaches each field through a layer of tagging and a key escaped
/// byte by byte, where the keys here are written as they are, and strings
/// and metadata go through [`crate::json_write`].
fn write_round(out: &mut Vec<u8>, round: &Round) {
    out.extend_from_slice(br#"{"type":"round""#);
    if let Some(session) = &round.session {
        out.extend_from_slice(br#","session":"#);
        text(out, session);
    }
    out.extend_from_slice(br#","run":"#);
    number(out, round.run);
    out.extend_from_slice(br#","index":"#);
    number(out, round.index);
    out.extend_from_slice(br#","closed_by":"#);
    text(out, round.closed_by.as_str());
    out.extend_from_slice(br#","message":"#);
    text(out, &round.message);
    out.extend_from_slice(br#","thought":"#);
    text(out, &round.thought);
    out.extend_from_slice(br#","tool_calls":["#);
    for (at, call) in round.tool_calls.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write_tool_call(out, call);
    }
    out.push(b']');
    write_span_and_meta(out, round.started_at_ms, round.finished_at_ms, &round.meta);
}

fn write_tool_call(out: &mut Vec<u8>, call: &crate::model::ToolCall) {
    out.extend_from_slice(br#"{"id":"#);
    text(out, &call.id);
    out.extend_from_slice(br#","title":"#);
    text(out, &call.title);
    if !call.name.is_empty() {
        out.extend_from_slice(br#","name":"#);
        text(out, &call.name);
    }
    out.extend_from_slice(br#","arguments":"#);
    text(out, &call.arguments);
    out.extend_from_slice(br#","result":{"status":"#);
    match &call.result {
        crate::model::ToolResult::Completed { content } => {
            out.extend_from_slice(br#""completed","content":"#);
            text(out, content);
        }
        crate::model::ToolResult::Failed { content } => {
            out.extend_from_slice(br#""failed","content":"#);
            text(out, content);
        }
        crate::model::ToolResult::Placeholder { reason, output } => {
            out.extend_from_slice(br#""placeholder","reason":"#);
            text(out, reason.as_str());
            if let Some(output) = output {
                out.extend_from_slice(br#","output":"#);
                text(out, output);
            }
        }
    }
    out.push(b'}');
    write_span_and_meta(out, call.started_at_ms, call.finished_at_ms, &call.meta);
}

/// The last fields of a round and of a tool call, and the brace that
/// closes it: when it started and finished, and its metadata if it has
/// any.
fn write_span_and_meta(out: &mut Vec<u8>, started_at_ms: u64, finished_at_ms: u64, meta: &crate::Meta) {
    out.extend_from_slice(br#","started_at_ms":"#);
    number(out, started_at_ms);
    out.extend_from_slice(br#","finished_at_ms":"#);
    number(out, finished_at_ms);
    if !meta.is_empty() {
        out.extend_from_slice(br#","meta":"#);
        crate::json_write::write_object(out, meta);
    }
    out.push(b'}');
}

/// A string as JSON.
fn text(out: &mut Vec<u8>, text: &str) {
    crate::json_write::write_str(out, text);
}

fn number(out: &mut Vec<u8>, number: u64) {
    write_json(out, &number);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClosedBy, PlaceholderReason, ToolCall, ToolResult};
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[a-z ]{0,8}",
            any::<String>(),
            Just("\"quoted\" \\ \n\t\u{1}\u{7f} é 😀".to_owned()),
        ]
    }

    fn meta() -> impl Strategy<Value = crate::Meta> {
        prop::collection::vec(("[a-z_]{1,6}", text()), 0..3)
            .prop_map(|members| members.into_iter().map(|(key, value)| (key, serde_json::Value::from(value))).collect())
    }

    fn result() -> impl Strategy<Value = ToolResult> {
        let reasons = [
            PlaceholderReason::Superseded,
            PlaceholderReason::Completed,
            PlaceholderReason::Failed,
            PlaceholderReason::Canceled,
            PlaceholderReason::Interrupted,
        ];
        prop_oneof![
            text().prop_map(|content| ToolResult::Completed { content }),
            text().prop_map(|content| ToolResult::Failed { content }),
            (prop::sample::select(reasons.to_vec()), prop::option::of(text()))
                .prop_map(|(reason, output)| ToolResult::Placeholder { reason, output }),
        ]
    }

    fn tool_call() -> impl Strategy<Value = ToolCall> {
        (text(), text(), text(), text(), result(), any::<u64>(), any::<u64>(), meta()).prop_map(
            |(id, title, name, arguments, result, started_at_ms, finished_at_ms, meta)| ToolCall {
                id,
                title,
                name,
                arguments,
                result,
                started_at_ms,
                finished_at_ms,
                meta,
            },
        )
    }

    fn round() -> impl Strategy<Value = Round> {
        let closed = prop::sample::select(vec![ClosedBy::NextChunk, ClosedBy::ToolsDone, ClosedBy::Finish]);
        (
            prop::option::of(text()),
            (any::<u64>(), any::<u64>(), closed),
            (text(), text()),
            prop::collection::vec(tool_call(), 0..3),
            (any::<u64>(), any::<u64>(), meta()),
        )
            .prop_map(
                |(session, (run, index, closed_by), (message, thought), tool_calls, (started, finished, meta))| Round {
                    session,
                    run,
                    index,
                    closed_by,
                    message,
                    thought,
                    tool_calls,
                    started_at_ms: started,
                    finished_at_ms: finished,
                    meta,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// A round written field by field is the line serde's derive
        /// writes for it, and reads back as the same round.
        #[test]
        fn a_round_is_written_as_serde_writes_it(round in round()) {
            let mut written = Vec::new();
            write_record(&mut written, SinkRecord::Round(&round));
            let by_serde = serde_json::to_vec(&OutputLine::Round(round.clone())).unwrap();
            prop_assert_eq!(&written, &by_serde);
            let read: OutputLine = serde_json::from_slice(&written).unwrap();
            prop_assert_eq!(read, OutputLine::Round(round));
        }
    }
}
