//! A replay's state between two pieces of input, to continue elsewhere.
//!
//! A stream being read is more than its builders: the adapter keeps what
//! translating needs across events (which tool id an index names, which
//! request a response answers), the framing keeps a line cut in two, and
//! bad lines are numbered from the start. A [`ReplayCheckpoint`] keeps all
//! of it, so that a replay stopped anywhere and restored in another process
//! writes the rest of the output exactly as the uninterrupted one would:
//! what a worker that takes over a partition needs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::eventstream::EventStream;
use super::json_array::JsonArray;
use crate::adapters::InputFormat;
use crate::machine::{Checkpoint, CheckpointError};

/// The version of the format this build writes and reads.
/// 2: what the output formats keep is in each session's checkpoint.
const VERSION: u32 = 2;

/// The state of a [`Replayer`](crate::Replayer) between two pieces of
/// input ([`Replayer::checkpoint`](crate::Replayer::checkpoint)).
///
/// ```
/// use roundup::{ReplayCheckpoint, ReplayOptions, Replayer};
///
/// let options = ReplayOptions::new();
/// let mut first = Replayer::new(&options).unwrap();
/// first.feed(b"{\"op\":\"message\",\"text\":\"Hel\"}\n{\"op\":\"message\",\"te", &mut ());
/// let saved = first.checkpoint().unwrap().to_json();
///
/// // Elsewhere, later: the rest of the input.
/// let mut second = Replayer::new(&options).unwrap();
/// second.restore(ReplayCheckpoint::from_json(&saved).unwrap()).unwrap();
/// second.feed(b"xt\":\"lo\"}\n", &mut ());
/// second.finish(&mut ());
/// let mut out = Vec::new();
/// second.take_output(&mut out);
/// assert!(out.starts_with(br#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hello""#));
/// ```
#[derive(Debug, Serialize, Deserialize)]
pub struct ReplayCheckpoint {
    version: u32,
    /// The input format, once decided.
    pub(crate) format: Option<String>,
    /// The adapter's state ([`Adapter::save`](crate::adapters::Adapter::save)).
    pub(crate) adapter: Value,
    /// Payloads waiting for the format to be decided, with their lines.
    pub(crate) undecided: Vec<(Vec<u8>, u64)>,
    pub(crate) partial: Vec<u8>,
    pub(crate) skipping: Option<u64>,
    pub(crate) event: Vec<u8>,
    pub(crate) event_line: u64,
    pub(crate) event_oversized: Option<u64>,
    /// The binary framing's state, once the input was found to be an AWS
    /// event stream (absent from checkpoints of text inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) eventstream: Option<EventStream>,
    /// The JSON array framing's state, once the input was found to be one
    /// (absent from checkpoints of other inputs, and of older builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) json_array: Option<JsonArray>,
    pub(crate) lines: u64,
    pub(crate) bad_lines: u64,
    pub(crate) bytes: u64,
    pub(crate) payloads: u64,
    pub(crate) bad_lines_look_like: Option<String>,
    /// The replay's clock.
    pub(crate) clock: u64,
    /// The sessions not closed, in order of first appearance, each with
    /// what its output formats keep
    /// ([`Encoder::save`](crate::encoders::Encoder::save)).
    pub(crate) sessions: Vec<Checkpoint>,
}

impl ReplayCheckpoint {
    pub(crate) fn new() -> Self {
        ReplayCheckpoint {
            version: VERSION,
            format: None,
            adapter: Value::Null,
            undecided: Vec::new(),
            partial: Vec::new(),
            skipping: None,
            event: Vec::new(),
            event_line: 0,
            event_oversized: None,
            eventstream: None,
            json_array: None,
            lines: 0,
            bad_lines: 0,
            bytes: 0,
            payloads: 0,
            bad_lines_look_like: None,
            clock: 0,
            sessions: Vec::new(),
        }
    }

    /// The checkpoint as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        // Strings, numbers, byte lists and JSON values: always serialise.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a checkpoint written by [`to_json`](Self::to_json); the version
    /// is checked first, so that a newer format is named as such.
    ///
    /// ```
    /// use roundup::{CheckpointError, ReplayCheckpoint};
    /// assert!(matches!(ReplayCheckpoint::from_json(br#"{"version":7}"#), Err(CheckpointError::Version { found: 7, .. })));
    /// assert!(matches!(ReplayCheckpoint::from_json(b"{}"), Err(CheckpointError::Corrupt(_))));
    /// ```
    pub fn from_json(bytes: &[u8]) -> Result<ReplayCheckpoint, CheckpointError> {
        crate::machine::read_versioned(bytes, VERSION)
    }

    /// A checkpoint of this build's format, or the error that says whose
    /// it is (one read as part of a larger value skips `from_json`).
    pub(crate) fn check_version(&self) -> Result<(), CheckpointError> {
        if self.version == VERSION {
            Ok(())
        } else {
            Err(CheckpointError::Version { found: u64::from(self.version), supported: VERSION })
        }
    }

    /// The registered input format a name of the checkpoint names.
    pub(crate) fn format_named(name: Option<&str>) -> Result<Option<&'static InputFormat>, CheckpointError> {
        name.map(|name| {
            InputFormat::named(name)
                .ok_or_else(|| CheckpointError::Inconsistent(format!("input format {name:?} is not known here")))
        })
        .transpose()
    }
}
