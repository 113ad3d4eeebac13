//! Anomalies: what the upstream did that could not be applied.
//!
//! roundup never drops input silently. A call it cannot apply becomes an
//! anomaly that keeps what was dropped, is delivered to the sink in order,
//! and is counted in the run's summary.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::TerminalStatus;

/// What kind of misbehaviour an [`Anomaly`] reports (SPEC §4).
///
/// ```
/// use roundup::AnomalyKind;
/// assert_eq!(AnomalyKind::parse("bad_line"), Some(AnomalyKind::BadLine));
/// assert_eq!(AnomalyKind::UndeclaredTerminal.to_string(), "undeclared_terminal");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnomalyKind {
    /// A terminal for an id never declared in this run; `detail` keeps its
    /// content.
    UndeclaredTerminal,
    /// A second terminal for an id that already has a real result; the
    /// first wins, `detail` keeps the dropped content.
    DuplicateTerminal,
    /// An argument delta or snapshot for an id with no tool call in the open
    /// round; `detail` keeps the dropped arguments.
    UnknownToolCall,
    /// A call after `finish` and before the next `start`; `detail` names
    /// the op.
    AfterFinish,
    /// An input line that could not be read; `detail` starts with
    /// `line N: ` (`frame N: ` for a frame of an AWS event stream).
    BadLine,
    /// A `run_meta` key that names a summary field; `detail` names it and
    /// keeps its value.
    BadMeta,
    /// A protocol adapter met an event type it does not know; `detail`
    /// names the adapter and keeps the event.
    UnknownEvent,
    /// A protocol adapter met a content type it cannot turn into text
    /// (an image, say); `detail` keeps the content.
    UnknownContent,
    /// A protocol adapter met a status value it does not know.
    UnknownStatus,
    /// The protocol reported an error of its own (uagent `runner_error`,
    /// deepwork `error`); the stream goes on.
    ProtocolError,
    /// An evicted session's checkpoint could not be read back; the session
    /// goes on from a new state, and `detail` says why.
    RestoreFailed,
}

impl AnomalyKind {
    /// The wire name (`"undeclared_terminal"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            AnomalyKind::UndeclaredTerminal => "undeclared_terminal",
            AnomalyKind::DuplicateTerminal => "duplicate_terminal",
            AnomalyKind::UnknownToolCall => "unknown_tool_call",
            AnomalyKind::AfterFinish => "after_finish",
            AnomalyKind::BadLine => "bad_line",
            AnomalyKind::BadMeta => "bad_meta",
            AnomalyKind::UnknownEvent => "unknown_event",
            AnomalyKind::UnknownContent => "unknown_content",
            AnomalyKind::UnknownStatus => "unknown_status",
            AnomalyKind::ProtocolError => "protocol_error",
            AnomalyKind::RestoreFailed => "restore_failed",
        }
    }

    /// Parses a wire name; `None` for an unknown kind.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "undeclared_terminal" => AnomalyKind::UndeclaredTerminal,
            "duplicate_terminal" => AnomalyKind::DuplicateTerminal,
            "unknown_tool_call" => AnomalyKind::UnknownToolCall,
            "after_finish" => AnomalyKind::AfterFinish,
            "bad_line" => AnomalyKind::BadLine,
            "bad_meta" => AnomalyKind::BadMeta,
            "unknown_event" => AnomalyKind::UnknownEvent,
            "unknown_content" => AnomalyKind::UnknownContent,
            "unknown_status" => AnomalyKind::UnknownStatus,
            "protocol_error" => AnomalyKind::ProtocolError,
            "restore_failed" => AnomalyKind::RestoreFailed,
            _ => return None,
        })
    }
}

impl fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call that could not be applied, with what it carried.
///
/// ```
/// use roundup::{AnomalyKind, RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus};
/// use std::sync::{Arc, Mutex};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let store = Arc::clone(&seen);
/// let builder = RoundBuilder::new().with_sink(move |record: SinkRecord<'_>| {
///     if let SinkRecord::Anomaly(anomaly) = record {
///         store.lock().unwrap().push(anomaly.clone());
///     }
/// });
/// builder.tool_update("t9", "late output", ToolCallStatus::Completed);
/// let anomaly = &seen.lock().unwrap()[0];
/// assert_eq!((anomaly.kind, anomaly.id.as_deref(), anomaly.detail.as_str()), (AnomalyKind::UndeclaredTerminal, Some("t9"), "late output"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    /// The session; absent when the input named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run the call arrived in.
    pub run: u64,
    /// What went wrong.
    pub kind: AnomalyKind,
    /// The tool call id the call named, if it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The terminal status of a dropped result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TerminalStatus>,
    /// The dropped content (terminals, arguments), the op name
    /// (`after_finish`) or the reason (`bad_line`).
    pub detail: String,
    /// For `after_finish`: the dropped payload (text, arguments, content or
    /// token total) when the call carried one, so that nothing is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}
