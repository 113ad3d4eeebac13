//! Checkpoints (SPEC rule 14): a session's whole state as a serde value,
//! saved between any two calls and restored in another process or on
//! another machine, so that the output of restore-then-the-rest equals the
//! output of the uninterrupted stream.
//!
//! A checkpoint holds the open state: the current run (its open round, the
//! ids late results can still reach, its counts so far). The history
//! (retained rounds, summaries of finished runs) is saved only when asked,
//! since no output depends on it: its size follows the open state, not the
//! length of the session.

use serde::{Deserialize, Serialize};

use super::{RoundMachine, Run};
use crate::model::{Round, Summary};

/// The format version this build writes and reads.
/// 2: a run's closed calls and the ids with a result are one map.
const VERSION: u32 = 2;

/// A session's state between two calls, as a versioned serde value.
///
/// Serialise it with any serde format; [`to_json`](Checkpoint::to_json)
/// and [`from_json`](Checkpoint::from_json) are the usual ones.
///
/// ```
/// use roundup::{Call, Checkpoint, Outputs, RoundMachine};
///
/// let mut machine = RoundMachine::default();
/// let mut out = Outputs::new();
/// machine.handle(Call::ToolCall { id: "t1", title: "bash", name: "" }, 10, &mut out);
/// machine.handle(Call::ToolOutput { id: "t1", content: "50%", replace: false }, 20, &mut out);
///
/// // Saved, sent elsewhere, restored: the call finishes there.
/// let bytes = machine.checkpoint().to_json();
/// let mut elsewhere = RoundMachine::default();
/// elsewhere.restore(Checkpoint::from_json(&bytes).unwrap()).unwrap();
/// out.clear();
/// elsewhere.handle(Call::ToolOutput { id: "t1", content: " 100%", replace: false }, 30, &mut out);
/// elsewhere.handle(Call::ToolUpdate { id: "t1", content: "", status: roundup::ToolCallStatus::Completed }, 40, &mut out);
/// assert_eq!(elsewhere.rounds()[0].tool_calls[0].result.content(), Some("50% 100%"));
/// ```
#[derive(Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    version: u32,
    session: Option<String>,
    run: Run,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history: Option<History>,
    /// What the encoders of a replay's session keep, one value per output
    /// format; empty when none keeps anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) encoders: Vec<serde_json::Value>,
}

/// What a checkpoint keeps only when asked.
#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    rounds: Vec<Round>,
    finished_runs: Vec<Summary>,
}

/// Why a checkpoint cannot be restored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Written by a version of roundup whose format this one does not read.
    #[error("checkpoint format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// The version the checkpoint says.
        found: u64,
        /// The version this build reads.
        supported: u32,
    },
    /// Not a checkpoint, or a damaged one: the serde error says where.
    #[error("the checkpoint is corrupt")]
    Corrupt(#[source] serde_json::Error),
    /// It decodes, but its state contradicts itself, or it does not fit
    /// what it is restored into.
    #[error("the checkpoint is inconsistent: {0}")]
    Inconsistent(String),
    /// A part of the state (named: an input or output format) cannot be
    /// saved: refused, rather than saved without it.
    #[error("{0} keeps a state that cannot be saved")]
    NotSaveable(String),
    /// The store of evicted sessions failed to give a session back.
    #[error("the store of evicted sessions failed")]
    Store(#[source] crate::store_error::StoreError),
}

/// Reads a versioned JSON value: its `version` first, so that a format this
/// build does not read is named as such rather than reported as corrupt.
pub(crate) fn read_versioned<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    supported: u32,
) -> Result<T, CheckpointError> {
    #[derive(Deserialize)]
    struct Versioned {
        version: u64,
    }
    let versioned: Versioned = serde_json::from_slice(bytes).map_err(CheckpointError::Corrupt)?;
    if versioned.version != u64::from(supported) {
        return Err(CheckpointError::Version { found: versioned.version, supported });
    }
    serde_json::from_slice(bytes).map_err(CheckpointError::Corrupt)
}

impl Checkpoint {
    /// The checkpoint as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        // A checkpoint holds strings, integers, maps and JSON values, all of
        // which serialise into memory without failing.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a checkpoint written by [`to_json`](Self::to_json). The version
    /// is checked first, so that a newer format is named as such rather
    /// than reported as corrupt.
    ///
    /// ```
    /// use roundup::{Checkpoint, CheckpointError};
    /// assert!(matches!(Checkpoint::from_json(br#"{"version":99}"#), Err(CheckpointError::Version { found: 99, .. })));
    /// assert!(matches!(Checkpoint::from_json(b"\x00garbage"), Err(CheckpointError::Corrupt(_))));
    /// ```
    pub fn from_json(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
        read_versioned(bytes, VERSION)
    }

    /// The session the checkpoint is of.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }
}

impl RoundMachine {
    /// The session's open state, to restore later ([`restore`](Self::restore)).
    pub fn checkpoint(&self) -> Checkpoint {
        self.checkpoint_of(None)
    }

    /// [`checkpoint`](Self::checkpoint) with the history: the retained
    /// rounds and the summaries of finished runs, for a restored machine
    /// that must answer [`rounds`](Self::rounds) and
    /// [`summaries`](Self::summaries) as this one does.
    pub fn checkpoint_with_history(&self) -> Checkpoint {
        self.checkpoint_of(Some(History { rounds: self.retained.clone(), finished_runs: self.finished_runs.clone() }))
    }

    fn checkpoint_of(&self, history: Option<History>) -> Checkpoint {
        Checkpoint {
            version: VERSION,
            session: self.options.session.clone(),
            run: self.run.clone(),
            history,
            encoders: Vec::new(),
        }
    }

    /// Replaces this machine's state with a checkpoint's; its options stay,
    /// but for the session's name, which is the checkpoint's. On error the
    /// machine is unchanged.
    pub fn restore(&mut self, checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        if !checkpoint.encoders.is_empty() {
            // A replay's session: its output state would be lost here.
            return Err(CheckpointError::Inconsistent(
                "the checkpoint of a replay's session, with its output formats' state: restore it into a replay".into(),
            ));
        }
        if checkpoint.version != VERSION {
            return Err(CheckpointError::Version { found: u64::from(checkpoint.version), supported: VERSION });
        }
        let mut run = checkpoint.run;
        run.open
            .reindex()
            .map_err(|id| CheckpointError::Inconsistent(format!("tool call id {id:?} twice in the open round")))?;
        if run.summary.run != run.number {
            let detail = format!("run {} with the summary of run {}", run.number, run.summary.run);
            return Err(CheckpointError::Inconsistent(detail));
        }
        let history = checkpoint.history.unwrap_or_default();
        self.options.session = checkpoint.session;
        self.run = run;
        self.retained = history.rounds;
        self.finished_runs = history.finished_runs;
        Ok(())
    }
}
