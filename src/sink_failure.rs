//! What a failing sink hands back: the records it did not take, owned, each
//! with its error, so that persistence can be retried and nothing is lost.

use std::fmt;

use crate::sink::BoxError;
use crate::wire::OutputLine;

/// A record the sink did not take, with its error: the record, owned, to
/// persist again once the cause is fixed.
#[derive(Debug)]
pub struct SinkFailure {
    /// The record, as its output line.
    pub record: OutputLine,
    /// What the sink said.
    pub error: BoxError,
}

/// The records a call's delivery could not persist, in delivery order.
///
/// ```
/// use roundup::{OutputLine, SinkError, SinkFailure};
/// let error = SinkError {
///     failures: vec![SinkFailure {
///         record: serde_json::from_str::<OutputLine>(r#"{"type":"anomaly","run":0,"kind":"bad_line","detail":"x"}"#).unwrap(),
///         error: "database is locked".into(),
///     }],
/// };
/// assert_eq!(error.to_string(), "the round sink refused 1 record; the first, an anomaly: database is locked");
/// ```
#[derive(Debug)]
pub struct SinkError {
    /// Each record not persisted, with the sink's error.
    pub failures: Vec<SinkFailure>,
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.failures.len();
        write!(f, "the round sink refused {count} record{}", if count == 1 { "" } else { "s" })?;
        match self.failures.first() {
            Some(first) => write!(f, "; the first, {}: {}", describe(&first.record), first.error),
            None => Ok(()),
        }
    }
}

impl std::error::Error for SinkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.failures.first().map(|failure| &*failure.error as &(dyn std::error::Error + 'static))
    }
}

fn describe(line: &OutputLine) -> &'static str {
    match line {
        OutputLine::Round(_) => "a round",
        OutputLine::Stitch(_) => "a stitch",
        OutputLine::Anomaly(_) => "an anomaly",
        OutputLine::Meta(_) => "a meta patch",
        OutputLine::Summary(_) => "a summary",
    }
}
