//! The round: what a consumer persists once an assistant turn is over.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::handler::FinishReason;

/// Metadata a protocol carries beyond what the rounds model: a JSON object.
pub type Meta = serde_json::Map<String, serde_json::Value>;

/// The tool calls of one round. Most rounds have one or two, so they live
/// inline and a round costs no extra allocation for its list.
pub type ToolCalls = SmallVec<[ToolCall; 2]>;

/// One assistant turn: its text, its reasoning, its tool calls with their
/// final arguments and exactly one result each.
///
/// Serialises to the `round` output line of SPEC §4 (without the `type`
/// tag, which [`OutputLine`](crate::OutputLine) adds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// The session the round belongs to; absent when the input named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run of the session, counted from 0.
    pub run: u64,
    /// The round's place in its run, counted from 0.
    pub index: u64,
    /// What closed the round.
    pub closed_by: ClosedBy,
    /// The assistant text, fragments joined in arrival order.
    pub message: String,
    /// The reasoning, fragments joined in arrival order.
    pub thought: String,
    /// The tool calls in declaration order, each with its result.
    pub tool_calls: ToolCalls,
    /// Clock reading at the round's first content.
    pub started_at_ms: u64,
    /// Clock reading when the round closed.
    pub finished_at_ms: u64,
}

/// A tool call of a closed round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the upstream gave the call (`""` is a valid id).
    pub id: String,
    /// The last non-empty title the call was declared with.
    pub title: String,
    /// The final arguments: the deltas appended since the last snapshot.
    pub arguments: String,
    /// The one result: real, or a placeholder saying why none came.
    pub result: ToolResult,
    /// Clock reading at the call's declaration.
    pub started_at_ms: u64,
    /// Clock reading at its result (for a placeholder, at the round's close;
    /// for a stitched result, at the late terminal).
    pub finished_at_ms: u64,
    /// What the protocol said about the call beyond the above
    /// ([`StreamHandler::tool_meta`](crate::StreamHandler::tool_meta));
    /// omitted when empty.
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolResult {
    /// The tool succeeded with this output.
    Completed {
        /// The tool's output.
        content: String,
    },
    /// The tool failed with this output.
    Failed {
        /// The tool's error output.
        content: String,
    },
    /// No result arrived before the round closed.
    Placeholder {
        /// Why no result arrived.
        reason: PlaceholderReason,
    },
}

impl ToolResult {
    /// A real result from a terminal status: `completed` or `failed`.
    pub fn real(status: TerminalStatus, content: String) -> Self {
        match status {
            TerminalStatus::Completed => ToolResult::Completed { content },
            TerminalStatus::Failed => ToolResult::Failed { content },
        }
    }

    /// `true` for a placeholder.
    pub fn is_placeholder(&self) -> bool {
        matches!(self, ToolResult::Placeholder { .. })
    }

    /// `true` for a failed result.
    pub fn is_failed(&self) -> bool {
        matches!(self, ToolResult::Failed { .. })
    }

    /// The content of a real result; `None` for a placeholder.
    pub fn content(&self) -> Option<&str> {
        match self {
            ToolResult::Completed { content } | ToolResult::Failed { content } => Some(content),
            ToolResult::Placeholder { .. } => None,
        }
    }
}

/// The two terminal statuses, the ones that carry a result.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceholderReason {
    /// New text or reasoning closed the round first; a late result may
    /// still stitch it.
    Superseded,
    /// The run was canceled.
    Canceled,
    /// The run ended otherwise.
    Interrupted,
}

impl PlaceholderReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlaceholderReason::Superseded => "superseded",
            PlaceholderReason::Canceled => "canceled",
            PlaceholderReason::Interrupted => "interrupted",
        }
    }
}

impl From<FinishReason> for PlaceholderReason {
    fn from(reason: FinishReason) -> Self {
        match reason {
            FinishReason::Canceled => PlaceholderReason::Canceled,
            FinishReason::Interrupted => PlaceholderReason::Interrupted,
        }
    }
}

/// What closed a round (SPEC §2, rules 2 to 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
