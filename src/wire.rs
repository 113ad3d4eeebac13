//! The output lines of SPEC §4: one JSON object per line, `type` first.

use serde::{Deserialize, Serialize};

use crate::model::{Anomaly, MetaPatch, Round, Stitch, Summary};
use crate::sink::SinkRecord;
use crate::ui::UiEvent;

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
        Round(&'a Round),
        Stitch(&'a Stitch),
        Anomaly(&'a Anomaly),
        Meta(&'a MetaPatch),
        Summary(&'a Summary),
    }
    let line = match record {
        SinkRecord::Round(round) => Line::Round(round),
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

pub(crate) fn write_json(out: &mut Vec<u8>, value: &impl Serialize) {
    // Serialising these types into memory cannot fail: they hold strings,
    // integers and enums only, and writing to a Vec never errors. Should it
    // ever fail, the partial line is removed rather than left corrupt.
    let len = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(len);
    }
}
