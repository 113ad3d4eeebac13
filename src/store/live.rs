//! A live session into the database: what a running application attaches
//! to its [`RoundBuilder`](crate::RoundBuilder), so that each round is in
//! the database once it closes, and a restart goes on from what was
//! committed.
//!
//! The builder hands its records to a [`LiveSink`], which holds them;
//! [`Live::commit`] writes them, the builder's checkpoint and the
//! application's own input position in one transaction. Committed after
//! every call, each closed round is its own transaction; committed every
//! so often, a batch is. After a crash, [`Live::resume`] gives the last
//! committed checkpoint and position: the application restores its builder
//! from the one and reads its input again from the other, and the records
//! of what it reads again replace nothing and double nothing.

use std::sync::Arc;

use parking_lot::Mutex;
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{rows, Database, DatabaseError};
use crate::machine::Checkpoint;
use crate::sink::{BoxError, RoundSink, SinkRecord};
use crate::wire::OutputLine;

/// The `format` of a live source in `sources`: its checkpoint is a
/// session's, not a replay's.
pub const LIVE_FORMAT: &str = "live";

/// Records a builder delivered, not committed yet.
#[derive(Debug, Default)]
struct Pending {
    records: Vec<OutputLine>,
}

/// The sink to attach to a builder
/// ([`RoundBuilder::with_round_sink`](crate::RoundBuilder::with_round_sink)):
/// it holds each record until [`Live::commit`].
#[derive(Debug, Clone)]
pub struct LiveSink {
    pending: Arc<Mutex<Pending>>,
}

impl RoundSink for LiveSink {
    fn record(&self, record: SinkRecord<'_>) -> Result<(), BoxError> {
        self.pending.lock().records.push(OutputLine::from(record));
        Ok(())
    }
}

/// What was committed of a live session: where to go on from.
#[derive(Debug)]
pub struct Resume {
    /// The builder's checkpoint at the last commit (`None`: nothing was
    /// committed yet, start afresh).
    pub checkpoint: Option<Checkpoint>,
    /// The application's input position given at that commit.
    pub position: u64,
    /// Records committed so far.
    pub records: u64,
}

/// A live source's row: format, position, records, checkpoint.
type LiveRow = (Option<String>, i64, i64, Option<Vec<u8>>);

/// A live session of the database, named like a source.
///
/// ```
/// use roundup::store::Database;
/// use roundup::{FinishReason, RoundBuilder, StreamHandler};
///
/// let dir = std::env::temp_dir().join(format!("roundup-doc-live-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let mut db = Database::open(&dir.join("live.db")).unwrap();
/// let mut live = db.live("agent-7").unwrap();
/// let builder = RoundBuilder::new().with_round_sink(live.sink());
///
/// builder.message("Looking.");
/// builder.finish(FinishReason::Completed);
/// // The round and the run's summary, with the builder's state and the
/// // input's position (here: two calls read), in one transaction.
/// assert_eq!(live.commit(&mut db, &builder.checkpoint(), 2).unwrap(), 2);
///
/// // After a restart: where to go on from.
/// let resume = db.live("agent-7").unwrap().resume(&mut db).unwrap();
/// assert_eq!((resume.position, resume.records), (2, 2));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct Live {
    source: i64,
    pending: Arc<Mutex<Pending>>,
}

impl Database {
    /// The live session `name` (a source of its own, made when new).
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Sqlite`] when the database refuses.
    pub fn live(&mut self, name: &str) -> Result<Live, DatabaseError> {
        let source = self.sources(&[name])?.remove(0).id;
        Ok(Live { source, pending: Arc::default() })
    }
}

impl Live {
    /// The sink to attach to the session's builder.
    pub fn sink(&self) -> LiveSink {
        LiveSink { pending: Arc::clone(&self.pending) }
    }

    /// Records delivered and not committed yet.
    pub fn pending(&self) -> usize {
        self.pending.lock().records.len()
    }

    /// Writes the records delivered since the last commit, the builder's
    /// `checkpoint` (taken after the calls that delivered them) and the
    /// input `position` the application reads on from, in one transaction;
    /// the number of records written. With no record pending, only the
    /// checkpoint and position are written.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Sqlite`] when the database refuses; the records stay
    /// pending, for the next commit.
    pub fn commit(&mut self, db: &mut Database, checkpoint: &Checkpoint, position: u64) -> Result<u64, DatabaseError> {
        let mut pending = self.pending.lock();
        let tx = db.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (format, held): (Option<String>, i64) =
            tx.query_row("SELECT format, records FROM sources WHERE id = ?1", params![self.source], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        if format.as_deref().is_some_and(|format| format != LIVE_FORMAT) {
            let detail =
                format!("source #{} was ingested as {}, not a live session", self.source, format.unwrap_or_default());
            return Err(DatabaseError::Corrupt(detail));
        }
        let first = u64::try_from(held)
            .map_err(|_| DatabaseError::Corrupt(format!("sources #{}: records {held}", self.source)))?;
        for (seq, record) in (first..).zip(&pending.records) {
            rows::insert(&tx, self.source, seq, record)?;
        }
        let written = pending.records.len() as u64;
        let int = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        tx.execute(
            "UPDATE sources SET format = ?2, read_bytes = ?3, settled = ?4, records = ?4, checkpoint = ?5 WHERE id = ?1",
            params![self.source, LIVE_FORMAT, int(position), int(first + written), checkpoint.to_json()],
        )?;
        tx.commit()?;
        pending.records.clear();
        Ok(written)
    }

    /// What was committed: the checkpoint to restore the builder from, and
    /// the input position to read on from. Records delivered and not
    /// committed are dropped (the calls that made them are read again).
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Corrupt`] when the source is not a live one or its
    /// checkpoint does not read.
    pub fn resume(&mut self, db: &mut Database) -> Result<Resume, DatabaseError> {
        self.pending.lock().records.clear();
        let row: Option<LiveRow> = db
            .connection
            .query_row(
                "SELECT format, read_bytes, records, checkpoint FROM sources WHERE id = ?1",
                params![self.source],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .optional()?;
        let (format, position, records, checkpoint) =
            row.ok_or_else(|| DatabaseError::NoSource(format!("#{}", self.source)))?;
        let corrupt = |what: String| DatabaseError::Corrupt(format!("live source #{}: {what}", self.source));
        match (format.as_deref(), checkpoint) {
            (None, None) => Ok(Resume { checkpoint: None, position: 0, records: 0 }),
            (Some(LIVE_FORMAT), Some(bytes)) => Ok(Resume {
                checkpoint: Some(Checkpoint::from_json(&bytes).map_err(|e| corrupt(e.to_string()))?),
                position: u64::try_from(position).map_err(|_| corrupt(format!("position {position}")))?,
                records: u64::try_from(records).map_err(|_| corrupt(format!("records {records}")))?,
            }),
            (format, _) => {
                Err(corrupt(format!("a source read as {}, not a live session", format.unwrap_or("nothing"))))
            }
        }
    }
}
