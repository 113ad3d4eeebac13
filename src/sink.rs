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
/// Any `Fn(SinkRecord<'_>) + Send + Sync` closure is a sink:
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
pub trait RoundSink: Send + Sync {
    /// Handles one record.
    fn record(&self, record: SinkRecord<'_>);
}

impl<F> RoundSink for F
where
    F: Fn(SinkRecord<'_>) + Send + Sync,
{
    fn record(&self, record: SinkRecord<'_>) {
        self(record)
    }
}
