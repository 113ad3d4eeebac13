//! The small enums of the contract: the status a `tool_update` carries, why
//! a run finished, and what a closed round's results and close mean.

use serde::{Deserialize, Serialize};

/// The status carried by a `tool_update` (SPEC §1).
///
/// The status decides what the update's content *is*: an argument delta
/// while the call is `pending` or `in_progress`, the call's result once it is
/// `completed` or `failed`.
///
/// ```
/// use roundup::ToolCallStatus;
/// assert_eq!(ToolCallStatus::parse("in_progress"), Some(ToolCallStatus::InProgress));
/// assert_eq!(ToolCallStatus::Completed.as_str(), "completed");
/// assert!(ToolCallStatus::parse("done").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Declared, not started: content is an argument delta.
    Pending,
    /// Running: content is an argument delta.
    InProgress,
    /// Terminal: content is the successful result.
    Completed,
    /// Terminal: content is the error result.
    Failed,
}

impl ToolCallStatus {
    /// `true` for `completed` and `failed`, the statuses whose content is a
    /// result rather than an argument delta.
    ///
    /// ```
    /// use roundup::ToolCallStatus;
    /// assert!(ToolCallStatus::Failed.is_terminal());
    /// assert!(!ToolCallStatus::InProgress.is_terminal());
    /// ```
    pub fn is_terminal(self) -> bool {
        matches!(self, ToolCallStatus::Completed | ToolCallStatus::Failed)
    }

    /// The wire name (`"in_progress"`, ...), as in ops JSONL.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Pending => "pending",
            ToolCallStatus::InProgress => "in_progress",
            ToolCallStatus::Completed => "completed",
            ToolCallStatus::Failed => "failed",
        }
    }

    /// Parses a wire name; `None` for anything outside the enum.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "pending" => ToolCallStatus::Pending,
            "in_progress" => ToolCallStatus::InProgress,
            "completed" => ToolCallStatus::Completed,
            "failed" => ToolCallStatus::Failed,
            _ => return None,
        })
    }
}

/// How a run ended (SPEC §1, `finish`): the summary's `finish_reason`, and
/// the reason of the placeholder results of tool calls still waiting.
///
/// ```
/// use roundup::FinishReason;
/// assert_eq!(FinishReason::parse("canceled"), Some(FinishReason::Canceled));
/// assert_eq!(FinishReason::Interrupted.as_str(), "interrupted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The agent ended its turn normally (ACP `end_turn`, a provider's
    /// `stop`, a CLI's successful result).
    Completed,
    /// The run ended on an error: a provider error event, a failed turn.
    Failed,
    /// The user or the client stopped the run.
    Canceled,
    /// The stream stopped without saying why (end of input, a process
    /// gone, a new run starting over an unfinished one).
    Interrupted,
}

impl FinishReason {
    /// The wire name (`"completed"`, `"failed"`, `"canceled"` or
    /// `"interrupted"`).
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Completed => "completed",
            FinishReason::Failed => "failed",
            FinishReason::Canceled => "canceled",
            FinishReason::Interrupted => "interrupted",
        }
    }

    /// Parses a wire name; `None` for anything outside the enum.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "completed" => Some(FinishReason::Completed),
            "failed" => Some(FinishReason::Failed),
            "canceled" => Some(FinishReason::Canceled),
            "interrupted" => Some(FinishReason::Interrupted),
            _ => None,
        }
    }

    /// The wire names, as an error message lists them.
    pub const NAMES: &'static str = "completed, failed, canceled, interrupted";
}

/// The two terminal statuses, the ones that carry a result.
///
/// ```
/// use roundup::{Call, TerminalStatus, ToolCallStatus};
/// let call = Call::ToolUpdate { id: "t1", content: "boom", status: ToolCallStatus::Failed };
/// assert_eq!(call.terminal_status(), Some(TerminalStatus::Failed));
/// assert_eq!(TerminalStatus::Failed.as_str(), "failed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalStatus {
    /// The tool succeeded.
    Completed,
    /// The tool failed.
    Failed,
}

impl TerminalStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalStatus::Completed => "completed",
            TerminalStatus::Failed => "failed",
        }
    }
}

/// Why a tool call has a placeholder instead of a result.
///
/// ```
/// use roundup::{FinishReason, PlaceholderReason};
/// assert_eq!(PlaceholderReason::from(FinishReason::Canceled), PlaceholderReason::Canceled);
/// assert_eq!(PlaceholderReason::Superseded.as_str(), "superseded");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PlaceholderReason {
    /// New text or reasoning closed the round first; a late result may
    /// still stitch it.
    Superseded,
    /// The run completed without the call's result.
    Completed,
    /// The run failed.
    Failed,
    /// The run was canceled.
    Canceled,
    /// The stream stopped without saying why.
    Interrupted,
}

impl PlaceholderReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlaceholderReason::Superseded => "superseded",
            PlaceholderReason::Completed => "completed",
            PlaceholderReason::Failed => "failed",
            PlaceholderReason::Canceled => "canceled",
            PlaceholderReason::Interrupted => "interrupted",
        }
    }
}

impl From<FinishReason> for PlaceholderReason {
    fn from(reason: FinishReason) -> Self {
        match reason {
            FinishReason::Completed => PlaceholderReason::Completed,
            FinishReason::Failed => PlaceholderReason::Failed,
            FinishReason::Canceled => PlaceholderReason::Canceled,
            FinishReason::Interrupted => PlaceholderReason::Interrupted,
        }
    }
}

/// What closed a round (SPEC §2, rules 2 to 4).
///
/// ```
/// use roundup::{ClosedBy, RoundBuilder, StreamHandler, ToolCallStatus};
/// let builder = RoundBuilder::new();
/// builder.tool_call("t1", "ls");
/// builder.tool_update("t1", "a.txt", ToolCallStatus::Completed);
/// assert_eq!(builder.rounds()[0].closed_by, ClosedBy::ToolsDone);
/// assert_eq!(ClosedBy::NextChunk.as_str(), "next_chunk");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ClosedBy {
    /// New text or reasoning arrived while the round had tool calls.
    NextChunk,
    /// The last pending tool call got its result.
    ToolsDone,
    /// The run finished.
    Finish,
}

impl ClosedBy {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClosedBy::NextChunk => "next_chunk",
            ClosedBy::ToolsDone => "tools_done",
            ClosedBy::Finish => "finish",
        }
    }
}
