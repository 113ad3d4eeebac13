//! Evicted sessions' checkpoints in one SQLite file (the `sqlite`
//! feature): a [`CheckpointStore`] for a replay of more sessions than
//! memory holds.
//!
//! A directory of files pays a file's creation, rename and removal for
//! every session that goes out and comes back; one table of a database
//! pays a row, and the changes of thousands of sessions share one
//! transaction. The file is scratch space for one replay, which starts
//! over if it stops: what the process had not committed when it is killed
//! goes with it.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use super::{CheckpointStore, StoreError};

/// Evicted sessions' checkpoints, one row each, in a SQLite file.
///
/// ```
/// use roundup::router::CheckpointStore;
/// use roundup::router::SqliteStore;
///
/// let dir = std::env::temp_dir().join(format!("roundup-doc-checkpoints-{}", std::process::id()));
/// let mut store = SqliteStore::new(&dir).unwrap();
/// store.save("s1", b"{}").unwrap();
/// assert_eq!(store.load("s1").unwrap().as_deref(), Some(&b"{}"[..]));
/// store.remove("s1").unwrap();
/// assert_eq!(store.load("s1").unwrap(), None);
/// drop(store);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct SqliteStore {
    connection: Connection,
    path: PathBuf,
    /// Changes made in the open transaction (none open at 0).
    uncommitted: u32,
}

/// Changes gathered in one transaction: a transaction a change would pay
/// SQLite's log and locks for every session that goes out or comes back.
const CHANGES_A_COMMIT: u32 = 4096;

/// Stores made by this process so far: each has a file of its own, so
/// that replays sharing a directory never meet.
static STORES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl SqliteStore {
    /// A store in a new file of `dir` (made if it does not exist),
    /// `checkpoints-PID-N.db`: each store its own, so that two replays
    /// evicting into one directory never meet.
    ///
    /// # Errors
    ///
    /// What making the directory or opening the database returns.
    pub fn new(dir: &Path) -> std::io::Result<SqliteStore> {
        std::fs::create_dir_all(dir)?;
        let n = STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("checkpoints-{}-{n}.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            // A file of a process that had this id before: not ours.
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let open = || -> rusqlite::Result<Connection> {
            let connection = Connection::open(&path)?;
            connection.pragma_update(None, "journal_mode", "WAL")?;
            // Scratch space: a commit need not reach the disk, only the
            // operating system (it then survives the process).
            connection.pragma_update(None, "synchronous", "OFF")?;
            connection.execute_batch(
                "CREATE TABLE checkpoints (session TEXT PRIMARY KEY, checkpoint BLOB NOT NULL) WITHOUT ROWID;",
            )?;
            Ok(connection)
        };
        let connection = open().map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        Ok(SqliteStore { connection, path, uncommitted: 0 })
    }

    fn error(&self, session: &str, action: &'static str, error: rusqlite::Error) -> StoreError {
        StoreError::new(session, action, Some(self.path.clone()), std::io::Error::other(error))
    }

    /// Runs one change inside the open transaction (opening one first),
    /// committing every [`CHANGES_A_COMMIT`] changes.
    fn change(&mut self, sql: &str, values: &[&dyn rusqlite::ToSql]) -> rusqlite::Result<()> {
        if self.uncommitted == 0 {
            self.connection.execute_batch("BEGIN")?;
        }
        self.uncommitted += 1;
        self.connection.prepare_cached(sql)?.execute(values)?;
        if self.uncommitted >= CHANGES_A_COMMIT {
            self.uncommitted = 0;
            self.connection.execute_batch("COMMIT")?;
        }
        Ok(())
    }
}

/// The file goes with the store when it holds nothing (a replay that took
/// every session back leaves its directory as it found it).
impl Drop for SqliteStore {
    fn drop(&mut self) {
        if self.uncommitted > 0 {
            let _ = self.connection.execute_batch("COMMIT");
        }
        let empty = self
            .connection
            .query_row("SELECT NOT EXISTS (SELECT 1 FROM checkpoints)", [], |row| row.get::<_, bool>(0))
            .unwrap_or(false);
        if empty {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.path.display()));
            }
        }
    }
}

impl CheckpointStore for SqliteStore {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError> {
        self.change(
            "INSERT OR REPLACE INTO checkpoints (session, checkpoint) VALUES (?1, ?2)",
            params![session, checkpoint],
        )
        .map_err(|e| self.error(session, "write", e))
    }

    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.connection
            .prepare_cached("SELECT checkpoint FROM checkpoints WHERE session = ?1")
            .and_then(|mut statement| statement.query_row(params![session], |row| row.get(0)).optional())
            .map_err(|e| self.error(session, "read", e))
    }

    fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        self.change("DELETE FROM checkpoints WHERE session = ?1", params![session])
            .map_err(|e| self.error(session, "remove", e))
    }
}
