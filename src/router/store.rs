//! Where a [`Router`](super::Router) keeps the sessions it evicts: one
//! checkpoint (JSON bytes) per session name.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;

/// Keeps evicted sessions' checkpoints by session name.
///
/// `take` hands a checkpoint back and forgets it: a session is in the store
/// or open, never both.
pub trait CheckpointStore: Send {
    /// Keeps `checkpoint` for `session`, replacing what was kept.
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> io::Result<()>;

    /// The checkpoint kept for `session`, removed from the store; `None`
    /// when there is none.
    fn take(&mut self, session: &str) -> io::Result<Option<Vec<u8>>>;
}

/// Checkpoints in memory: a session evicted costs its checkpoint's bytes
/// instead of a builder (for a one-message session, about 0.6 KB instead
/// of about 2 KB).
///
/// ```
/// use roundup::router::{CheckpointStore, MemoryStore};
/// let mut store = MemoryStore::default();
/// store.save("s1", b"{}").unwrap();
/// assert_eq!(store.take("s1").unwrap().as_deref(), Some(&b"{}"[..]));
/// assert_eq!(store.take("s1").unwrap(), None);
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
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> io::Result<()> {
        self.checkpoints.insert(session.to_owned(), checkpoint.to_vec());
        Ok(())
    }

    fn take(&mut self, session: &str) -> io::Result<Option<Vec<u8>>> {
        Ok(self.checkpoints.remove(session))
    }
}

/// Checkpoints as files of a directory, one per session (the name
/// hex-encoded, so that any session name is a safe file name), spread over
/// 256 subdirectories by a hash of the name so that no directory grows
/// huge: memory stays bounded however many sessions are evicted, and a
/// restarted process can pick them up.
///
/// ```
/// use roundup::router::{CheckpointStore, DirectoryStore};
/// let dir = std::env::temp_dir().join(format!("roundup-doc-store-{}", std::process::id()));
/// let mut store = DirectoryStore::new(&dir).unwrap();
/// store.save("../../etc/passwd", b"{}").unwrap(); // a file in `dir`, whatever the name
/// assert_eq!(store.take("../../etc/passwd").unwrap().as_deref(), Some(&b"{}"[..]));
/// assert_eq!(store.take("../../etc/passwd").unwrap(), None);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct DirectoryStore {
    dir: PathBuf,
}

impl DirectoryStore {
    /// A store in `dir`, made if it does not exist.
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<DirectoryStore> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(DirectoryStore { dir })
    }

    fn path(&self, session: &str) -> PathBuf {
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
}

impl CheckpointStore for DirectoryStore {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> io::Result<()> {
        let path = self.path(session);
        match std::fs::write(&path, checkpoint) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // The subdirectory, on its first use.
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, checkpoint)
            }
            done => done,
        }
    }

    fn take(&mut self, session: &str) -> io::Result<Option<Vec<u8>>> {
        let path = self.path(session);
        match std::fs::read(&path) {
            Ok(bytes) => {
                std::fs::remove_file(&path)?;
                Ok(Some(bytes))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }
}
