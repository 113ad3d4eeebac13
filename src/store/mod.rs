//! Rounds into a SQLite database, exactly once and resumable (the
//! `sqlite` feature; `roundup ingest` and `roundup stats` on the command
//! line).
//!
//! Each source (a file of recorded traffic or a transcript) is read into
//! rows of one documented schema (docs/store.md): `rounds`, `tool_calls`,
//! `stitches`, `meta_patches`, `anomalies` and `runs`, with the views
//! `sessions` and `tool_results` over them, and `sources` saying how far
//! each was read. The rows of a source give back its records exactly as
//! `roundup replay` writes them ([`Database::records`]).
//!
//! What was read of a source and the replay's state there are committed
//! in the same transaction as the rows they produced, so an ingest killed
//! at any moment and run again ends with the database an uninterrupted one
//! gives: no record lost, none doubled. Ingesting a file again reads only
//! what was added to it (a live log), nothing when it is unchanged, and
//! all of it again, its old rows replaced, when what was read before
//! changed.
//!
//! ```
//! use roundup::store::Database;
//! use roundup::ReplayOptions;
//!
//! let dir = std::env::temp_dir().join(format!("roundup-doc-store-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let mut db = Database::open(&dir.join("runs.db")).unwrap();
//! let log = br#"{"op":"message","text":"Looking."}
//! {"op":"tool_call","id":"t1","title":"ls"}
//! {"op":"tool_update","id":"t1","content":"a.txt","status":"completed"}
//! {"op":"finish","reason":"completed"}
//! "#;
//! let ingested = db.ingest_bytes("session-1.jsonl", log, &ReplayOptions::new()).unwrap();
//! assert_eq!(ingested.records, 2); // a round and the run's summary
//!
//! // Again: nothing was added to it, so nothing is read.
//! let again = db.ingest_bytes("session-1.jsonl", log, &ReplayOptions::new()).unwrap();
//! assert_eq!(again.records, 0);
//!
//! let stats = db.stats().unwrap();
//! assert_eq!((stats.runs, stats.rounds, stats.tool_calls), (1, 1, 1));
//! assert_eq!(stats.tools[0].name, "ls");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod live;
mod rows;
mod schema;
mod source;
mod stats;

use std::io;
use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

pub use live::{Live, LiveSink, Resume, LIVE_FORMAT};
/// The SQLite binding the store is built on, for queries of one's own
/// through [`Database::connection`].
pub use rusqlite;
pub use schema::SCHEMA_VERSION;
pub use source::{read_source, Batch, Outcome, SourceState};
pub use stats::{AnomalyCount, SessionTokens, Stats, ToolStats};

use crate::replay::ReplayOptions;
use crate::wire::OutputLine;

/// How long a writer waits for another to finish its transaction before
/// it gives up: two ingests into one database take turns.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an open waits between two tries at the log mode.
const WAL_RETRY: Duration = Duration::from_millis(5);

/// Puts the database in write-ahead-log mode. Two processes opening a new
/// database at once both read it, then both want it alone to change its
/// mode: SQLite tells one of them "busy" at once rather than wait (waiting
/// could be forever), so that one tries again, until the busy timeout.
fn set_wal(connection: &Connection) -> Result<(), rusqlite::Error> {
    let start = std::time::Instant::now();
    loop {
        match connection.pragma_update(None, "journal_mode", "WAL") {
            Err(error)
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(WAL_RETRY);
            }
            done => return done,
        }
    }
}

/// The size of a new database's pages.
const PAGE_SIZE: i64 = 16 << 10;

/// Pages of write-ahead log after which it is copied into the database
/// (64 MiB of it).
const WAL_CHECKPOINT_PAGES: i64 = (64 << 20) / PAGE_SIZE;

/// Input read between two commits of a source, by default.
pub const DEFAULT_BATCH_BYTES: u64 = 8 << 20;

/// What the database could not do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatabaseError {
    /// SQLite refused (the file is not a database, the disk is full, a
    /// lock was held past the busy timeout, ...).
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Reading a source failed.
    #[error("{0}")]
    Read(#[from] io::Error),
    /// The database was made by another version of roundup's schema.
    #[error("the database has schema version {found}; this roundup reads version {SCHEMA_VERSION}")]
    Version {
        /// The version the database says it has.
        found: i64,
    },
    /// A row does not hold what the schema says.
    #[error("the database holds what this roundup did not write: {0}")]
    Corrupt(String),
    /// Another ingest of the same source committed while this one read it.
    #[error("{0}: another ingest of this source wrote to the database meanwhile; run the ingest again")]
    Concurrent(String),
    /// No source has this path.
    #[error("no source {0:?} in the database")]
    NoSource(String),
}

/// What one source's ingest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingested {
    /// Read on, read from its start, or left as it was.
    pub outcome: Outcome,
    /// Records written (those of the end of input, replaced when the
    /// source grows, included).
    pub records: u64,
    /// Bytes of input read.
    pub bytes: u64,
}

/// A roundup database: one SQLite file.
#[derive(Debug)]
pub struct Database {
    connection: Connection,
}

impl Database {
    /// Opens the database at `path`, making it (and its tables) when it
    /// does not exist. It is in write-ahead-log mode, so that readers
    /// query it while an ingest writes.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Sqlite`] when the file cannot be opened or is not
    /// a database; [`DatabaseError::Version`] when another schema version
    /// made it.
    pub fn open(path: &Path) -> Result<Database, DatabaseError> {
        let mut connection = Connection::open(path)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        // Rounds are kilobytes of text: pages of 16 KiB (SQLite's default is
        // 4 KiB) hold one whole where four were chained, and write the log
        // in a quarter of the calls. Only a new database takes it.
        connection.pragma_update(None, "page_size", PAGE_SIZE)?;
        set_wal(&connection)?;
        // WAL with NORMAL: a commit survives the process being killed (the
        // log is written before the commit returns); only a power loss may
        // take the last commits back, never tear the database.
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        // The log is copied into the database (and both synced) every
        // 64 MiB of it rather than every 4 MiB: fewer syncs.
        connection.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)?;
        connection.pragma_update(None, "foreign_keys", true)?;
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        match version {
            0 => {
                tx.execute_batch(schema::SCHEMA)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            }
            SCHEMA_VERSION => {}
            found => return Err(DatabaseError::Version { found }),
        }
        tx.commit()?;
        Ok(Database { connection })
    }

    /// The sources at `paths` as the database knows them, in that order;
    /// those it does not know yet are added, numbered in the order given
    /// (so that the ingests of the same paths number them alike).
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Sqlite`] when the database refuses.
    pub fn sources(&mut self, paths: &[&str]) -> Result<Vec<SourceState>, DatabaseError> {
        let tx = self.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut states = Vec::with_capacity(paths.len());
        for path in paths {
            let id = match rows::source_id(&tx, path)? {
                Some(id) => id,
                None => {
                    tx.execute("INSERT INTO sources (path) VALUES (?1)", params![path])?;
                    tx.last_insert_rowid()
                }
            };
            let state = tx.query_row(
                "SELECT read_bytes, read_crc32, settled, records, checkpoint FROM sources WHERE id = ?1",
                params![id],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, i64>(1)?,
                        row.get::<_, i64>(2)?,
                        row.get::<_, i64>(3)?,
                        row.get(4)?,
                    ))
                },
            )?;
            let count = |value: i64, column: &str| {
                u64::try_from(value).map_err(|_| DatabaseError::Corrupt(format!("sources {path:?}: {column} {value}")))
            };
            states.push(SourceState {
                id,
                read_bytes: count(state.0, "read_bytes")?,
                read_crc32: u32::try_from(state.1)
                    .map_err(|_| DatabaseError::Corrupt(format!("sources {path:?}: read_crc32 {}", state.1)))?,
                settled: count(state.2, "settled")?,
                records: count(state.3, "records")?,
                checkpoint: state.4,
            });
        }
        tx.commit()?;
        Ok(states)
    }

    /// Commits one batch of a source: its rows and the state they bring
    /// the source to, in one transaction.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Concurrent`] when the source does not hold the
    /// records the batch's reader saw (another ingest of it committed
    /// meanwhile); [`DatabaseError::Sqlite`] when the database refuses.
    pub fn commit(&mut self, batch: &Batch) -> Result<(), DatabaseError> {
        let tx = self.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (path, held): (String, i64) = tx
            .query_row("SELECT path, records FROM sources WHERE id = ?1", params![batch.source], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?
            .ok_or_else(|| DatabaseError::NoSource(format!("#{}", batch.source)))?;
        if u64::try_from(held).ok() != Some(batch.expected_records) {
            return Err(DatabaseError::Concurrent(path));
        }
        if let Some(from) = batch.drop_from {
            rows::delete_from(&tx, batch.source, from)?;
        }
        for (seq, record) in (batch.first_seq..).zip(&batch.records) {
            rows::insert(&tx, batch.source, seq, record)?;
        }
        let state = &batch.state;
        let int = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        tx.prepare_cached(
            "UPDATE sources SET format = COALESCE(?2, format), read_bytes = ?3, read_crc32 = ?4, lines = ?5,
             bad_lines = ?6, settled = ?7, records = ?8, checkpoint = ?9 WHERE id = ?1",
        )?
        .execute(params![
            batch.source,
            batch.format,
            int(state.read_bytes),
            i64::from(state.read_crc32),
            int(batch.lines),
            int(batch.bad_lines),
            int(state.settled),
            int(state.records),
            state.checkpoint
        ])?;
        tx.commit()?;
        Ok(())
    }

    /// Ingests the source at `path` (its rows named by `path`), opened by
    /// `open` from its first byte (twice when it changed since it was
    /// last read), committing every `batch_bytes` of input.
    ///
    /// # Errors
    ///
    /// What opening or reading the source returns, and what
    /// [`commit`](Database::commit) returns.
    pub fn ingest<R: io::Read>(
        &mut self,
        path: &str,
        open: &mut dyn FnMut() -> io::Result<R>,
        options: &ReplayOptions,
        batch_bytes: u64,
    ) -> Result<Ingested, DatabaseError> {
        let known = self.sources(&[path])?.remove(0);
        let mut records = 0;
        let mut bytes = 0;
        let outcome = read_source(
            &known,
            open,
            options,
            batch_bytes,
            &mut |batch: Batch| {
                records += batch.records.len() as u64;
                self.commit(&batch)
            },
            &mut |read| bytes = read,
        )?;
        Ok(Ingested { outcome, records, bytes })
    }

    /// [`ingest`](Database::ingest) of a source held in memory.
    ///
    /// # Errors
    ///
    /// What [`commit`](Database::commit) returns.
    pub fn ingest_bytes(
        &mut self,
        path: &str,
        bytes: &[u8],
        options: &ReplayOptions,
    ) -> Result<Ingested, DatabaseError> {
        self.ingest(path, &mut || Ok(bytes), options, DEFAULT_BATCH_BYTES)
    }

    /// The records of the source at `path`, rebuilt from its rows: what
    /// `roundup replay` writes for it.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::NoSource`] when no source has this path;
    /// [`DatabaseError::Corrupt`] when a row does not hold what the schema
    /// says.
    pub fn records(&mut self, path: &str) -> Result<Vec<OutputLine>, DatabaseError> {
        let tx = self.connection.transaction()?;
        let id = rows::source_id(&tx, path)?.ok_or_else(|| DatabaseError::NoSource(path.to_owned()))?;
        rows::records(&tx, id)
    }

    /// What the database holds, summed up: see [`Stats`].
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Sqlite`] when the database refuses.
    pub fn stats(&mut self) -> Result<Stats, DatabaseError> {
        let tx = self.connection.transaction()?;
        stats::query(&tx)
    }

    /// The SQLite connection, for queries of one's own.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }
}
