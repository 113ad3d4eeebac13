//! The round sink: where persistence plugs in.

use crate::model::{Anomaly, MetaPatch, Round, Stitch, Summary};

/// One record for persistence, borrowed for the duration of the call.
///
/// `#[non_exhaustive]`: persistence may be told more in later versions, so a
/// sink keeps a fallback arm.
///
/// ```
/// use roundup::{RoundBuilder, SinkRecord, StreamHandler};
/// let builder = RoundBuilder::new().with_sink(|record: SinkRecord<'_>| match record {
///     SinkRecord::Round(round) => println!("persist round {}", round.index),
///     SinkRecord::Stitch(stitch) => println!("patch round {} call {}", stitch.round, stitch.id),
///     other => println!("log {other:?}"),
/// });
/// builder.message("Hi");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SinkRecord<'a> {
    /// A round closed: persist it.
    Round(&'a Round),
    /// A late result for an already persisted round: patch it.
    Stitch(&'a Stitch),
    /// Something the upstream did that could not be applied.
    Anomaly(&'a Anomaly),
    /// Metadata for a tool call of an already persisted round: merge it.
    Meta(&'a MetaPatch),
    /// A run finished: its counts and metadata, as they are at its finish
    /// (SPEC §6 "Summary"). Nothing more is counted into it.
    Summary(&'a Summary),
}

/// Receives closed rounds, stitches and anomalies, in state order, never
/// while the builder's lock is held (a sink may call back into the builder).
///
/// A sink may fail (a database that refused a write, a full disk): the
/// record it could not take is handed back with its error as a
/// [`SinkFailure`](crate::SinkFailure), never dropped. [`RoundBuilder::try_call`] returns the
/// failures of the records it delivered; the calls of
/// [`StreamHandler`](crate::StreamHandler), which return nothing, keep them
/// for [`RoundBuilder::take_sink_failures`]. The builder's state goes on
/// either way: the record stands, only its persistence is to be retried.
///
/// [`RoundBuilder::try_call`]: crate::RoundBuilder::try_call
/// [`RoundBuilder::take_sink_failures`]: crate::RoundBuilder::take_sink_failures
///
/// Any `Fn(SinkRecord<'_>)` closure is a sink, returning `()` or a
/// `Result<(), E>` (see [`SinkOutcome`]):
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use roundup::{RoundBuilder, SinkRecord, StreamHandler, FinishReason};
///
/// let saved = Arc::new(Mutex::new(Vec::new()));
/// let store = saved.clone();
/// let builder = RoundBuilder::new().with_sink(move |record: SinkRecord<'_>| {
///     if let SinkRecord::Round(round) = record {
///         store.lock().unwrap().push(round.message.clone());
///     }
/// });
/// builder.message("Hello");
/// builder.finish(FinishReason::Interrupted);
/// assert_eq!(*saved.lock().unwrap(), ["Hello"]);
/// ```
///
/// A sink type of its own, whose failure reaches the caller:
///
/// ```
/// use roundup::{BoxError, Call, FinishReason, OutputLine, RoundBuilder, RoundSink, SinkRecord};
///
/// /// A store that is full.
/// struct Full;
///
/// impl RoundSink for Full {
///     fn record(&self, _record: SinkRecord<'_>) -> Result<(), BoxError> {
///         Err("no space left on the device".into())
///     }
/// }
///
/// let builder = RoundBuilder::new().with_round_sink(Full);
/// builder.try_call(Call::Message { text: "Hi" }).unwrap();
/// let error = builder.try_call(Call::Finish { reason: FinishReason::Completed }).unwrap_err();
/// // The round and the run's summary, each kept with the sink's error.
/// assert_eq!(error.failures.len(), 2);
/// assert!(matches!(&error.failures[0].record, OutputLine::Round(round) if round.message == "Hi"));
/// assert_eq!(error.to_string(), "the round sink refused 2 records; the first, a round: no space left on the device");
/// ```
pub trait RoundSink: Send + Sync {
    /// Handles one record; an error hands the record back (as a
    /// [`SinkFailure`](crate::SinkFailure)) to the caller that delivered it.
    fn record(&self, record: SinkRecord<'_>) -> Result<(), BoxError>;
}

/// The error a sink (or anything roundup hands a value to) may return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a closure sink returns: `()` (it cannot fail) or a `Result` whose
/// error converts into a [`BoxError`] (`io::Error`, a `String`, any
/// error type).
pub trait SinkOutcome {
    /// The outcome as a result.
    fn into_result(self) -> Result<(), BoxError>;
}

impl SinkOutcome for () {
    fn into_result(self) -> Result<(), BoxError> {
        Ok(())
    }
}

impl<E: Into<BoxError>> SinkOutcome for Result<(), E> {
    fn into_result(self) -> Result<(), BoxError> {
        self.map_err(Into::into)
    }
}

impl<F, R> RoundSink for F
where
    F: Fn(SinkRecord<'_>) -> R + Send + Sync,
    R: SinkOutcome,
{
    fn record(&self, record: SinkRecord<'_>) -> Result<(), BoxError> {
        self(record).into_result()
    }
}
