//! The error of a checkpoint store: its own module, so that the checkpoint
//! errors of the machine can carry it without the machine knowing routers.

use std::io;
use std::path::PathBuf;

/// A checkpoint store (`roundup::router::CheckpointStore`) could not do what
/// it was asked.
///
/// ```
/// use std::error::Error;
/// let error = roundup::router::StoreError::new("s1", "write", Some("/ckpt/s1.json".into()), std::io::Error::other("disk full"));
/// assert_eq!(error.to_string(), "cannot write the checkpoint of session \"s1\" at /ckpt/s1.json");
/// assert_eq!(error.source().unwrap().to_string(), "disk full");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} the checkpoint of session {session:?}{}", path.as_ref().map(|p| format!(" at {}", p.display())).unwrap_or_default())]
pub struct StoreError {
    /// The session whose checkpoint it was.
    pub session: String,
    /// What failed: `write`, `read` or `remove`.
    pub action: &'static str,
    /// Where, for a store of files.
    pub path: Option<PathBuf>,
    /// Why.
    #[source]
    pub source: io::Error,
}

impl StoreError {
    /// An error of `action` on the checkpoint of `session`, at `path`.
    pub fn new(session: &str, action: &'static str, path: Option<PathBuf>, source: io::Error) -> StoreError {
        StoreError { session: session.to_owned(), action, path, source }
    }
}
