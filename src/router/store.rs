//! Where a [`Router`](super::Router) keeps the sessions it evicts: one
//! checkpoint (JSON bytes) per session name.
//!
//! A checkpoint is never lost on the way: the router saves a session before
//! it lets it go, and removes a checkpoint from the store only once the
//! session it restored is open again. A store that cannot do what it is
//! asked says so with a [`StoreError`] naming the session and the path.

use std::fmt::Write as _;

pub use crate::store_error::StoreError;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::hash::HashMap;

/// Keeps evicted sessions' checkpoints by session name.
///
/// `load` reads without removing, so that a session is never only in
/// memory of a process that may stop: the router removes a checkpoint once
/// the session is open again.
pub trait CheckpointStore: Send {
    /// Keeps `checkpoint` for `session`, replacing what was kept: when it
    /// returns `Ok`, the new checkpoint is kept; when it fails, the old one
    /// (if any) still is.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the checkpoint cannot be kept.
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError>;

    /// The checkpoint kept for `session`, left in the store; `None` when
    /// there is none.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when it cannot be read.
    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Forgets the checkpoint of `session` (nothing when there is none).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when it cannot be removed.
    fn remove(&mut self, session: &str) -> Result<(), StoreError>;
}

/// A store chosen at run time is a store.
impl<T: CheckpointStore + ?Sized> CheckpointStore for Box<T> {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError> {
        (**self).save(session, checkpoint)
    }

    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).load(session)
    }

    fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        (**self).remove(session)
    }
}

/// Checkpoints in memory: a session evicted costs its checkpoint's bytes
/// instead of a builder (for a one-message session, about 0.6 KB instead
/// of about 2 KB).
///
/// ```
/// use roundup::router::{CheckpointStore, MemoryStore};
/// let mut store = MemoryStore::default();
/// store.save("s1", b"{}").unwrap();
/// assert_eq!(store.load("s1").unwrap().as_deref(), Some(&b"{}"[..]));
/// store.remove("s1").unwrap();
/// assert_eq!(store.load("s1").unwrap(), None);
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    checkpoints: HashMap<String, Vec<u8>>,
}

impl MemoryStore {
    /// Sessions kept.
    pub fn len(&self) -> usize {
        self.checkpoints.len()
    }

    /// `true` when no session is kept.
    pub fn is_empty(&self) -> bool {
        self.checkpoints.is_empty()
    }
}

impl CheckpointStore for MemoryStore {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError> {
        match self.checkpoints.get_mut(session) {
            Some(kept) => {
                kept.clear();
                kept.extend_from_slice(checkpoint);
            }
            None => {
                self.checkpoints.insert(session.to_owned(), checkpoint.to_vec());
            }
        }
        Ok(())
    }

    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.checkpoints.get(session).cloned())
    }

    fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        self.checkpoints.remove(session);
        Ok(())
    }
}

/// Checkpoints as files of a directory, one per session (the name
/// hex-encoded, so that any session name is a safe file name), spread over
/// 256 subdirectories by a hash of the name so that no directory grows
/// huge: memory stays bounded however many sessions are evicted, and a
/// restarted process can pick them up.
///
/// A checkpoint is written whole or not at all: to a temporary file of the
/// same directory, synced, then renamed over the old one, so that a process
/// killed mid-write leaves the old checkpoint or the new one, never a torn
/// file.
///
/// ```
/// use roundup::router::{CheckpointStore, DirectoryStore};
/// let dir = std::env::temp_dir().join(format!("roundup-doc-store-{}", std::process::id()));
/// let mut store = DirectoryStore::new(&dir).unwrap();
/// store.save("../../etc/passwd", b"{}").unwrap(); // a file in `dir`, whatever the name
/// assert_eq!(store.load("../../etc/passwd").unwrap().as_deref(), Some(&b"{}"[..]));
/// store.remove("../../etc/passwd").unwrap();
/// assert_eq!(store.load("../../etc/passwd").unwrap(), None);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct DirectoryStore {
    dir: PathBuf,
    /// Sync each checkpoint to disk before it replaces the old one.
    sync: bool,
}

impl DirectoryStore {
    /// A store in `dir`, made if it does not exist, that syncs every
    /// checkpoint to disk before it takes the old one's place (what a
    /// checkpoint that must outlive a power loss needs).
    ///
    /// # Errors
    ///
    /// What making the directory returns.
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<DirectoryStore> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(DirectoryStore { dir, sync: true })
    }

    /// Whether each checkpoint is synced to disk before the rename (on by
    /// default). Off, a checkpoint survives the process being killed but
    /// perhaps not the machine losing power, at a fraction of the cost: what
    /// a replay whose evicted sessions are scratch space wants.
    pub fn sync(mut self, sync: bool) -> DirectoryStore {
        self.sync = sync;
        self
    }

    /// The file of a session's checkpoint.
    pub fn path(&self, session: &str) -> PathBuf {
        // FNV-1a: stable across runs and builds, unlike the std hasher.
        let hash =
            session.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let mut name = String::with_capacity(session.len() * 2 + 8);
        let _ = write!(name, "{:02x}/", hash >> 56);
        for byte in session.bytes() {
            let _ = write!(name, "{byte:02x}");
        }
        name.push_str(".json");
        self.dir.join(name)
    }

    /// Writes `bytes` to a temporary file beside `path`, syncs it, and
    /// renames it over `path`.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let temporary = path.with_extension("json.tmp");
        let written = File::create(&temporary).and_then(|mut file| {
            file.write_all(bytes)?;
            if self.sync {
                file.sync_all()?;
            }
            Ok(())
        });
        match written.and_then(|()| std::fs::rename(&temporary, path)) {
            Ok(()) => Ok(()),
            Err(error) => {
                let _ = std::fs::remove_file(&temporary);
                Err(error)
            }
        }
    }
}

/// The store's shard folders that it leaves empty are removed when it goes
/// (a replay that took every session back leaves its directory as it found
/// it, not 256 empty folders); a folder that still holds a checkpoint, or
/// anything else, stays.
impl Drop for DirectoryStore {
    fn drop(&mut self) {
        for shard in 0..=u8::MAX {
            // Fails, as it should, on a folder that is not empty or absent.
            let _ = std::fs::remove_dir(self.dir.join(format!("{shard:02x}")));
        }
    }
}

impl CheckpointStore for DirectoryStore {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError> {
        let path = self.path(session);
        let result = match self.write_atomically(&path, checkpoint) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // The subdirectory, on its first use.
                match path.parent().map(std::fs::create_dir_all) {
                    Some(Err(error)) => Err(error),
                    _ => self.write_atomically(&path, checkpoint),
                }
            }
            done => done,
        };
        result.map_err(|error| StoreError::new(session, "write", Some(path), error))
    }

    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(session);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(StoreError::new(session, "read", Some(path), error)),
        }
    }

    fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        let path = self.path(session);
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::new(session, "remove", Some(path), error))
            }
            _ => Ok(()),
        }
    }
}
