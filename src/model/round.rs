//! The round: what a consumer persists once an assistant turn is over.

use serde::{Deserialize, Serialize};

use super::{ClosedBy, Meta, PlaceholderReason, TerminalStatus};

/// One assistant turn: its text, its reasoning, its tool calls with their
/// final arguments and exactly one result each.
///
/// Serialises to the `round` output line of SPEC §4 (without the `type`
/// tag, which [`OutputLine`](crate::OutputLine) adds).
///
/// ```
/// let line = r#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hi","thought":"",
///   "tool_calls":[],"started_at_ms":5,"finished_at_ms":9}"#;
/// let roundup::OutputLine::Round(round) = serde_json::from_str(line).unwrap() else { panic!() };
/// assert_eq!((round.message.as_str(), round.finished_at_ms - round.started_at_ms), ("Hi", 4));
/// ```
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
    pub tool_calls: Vec<ToolCall>,
    /// Clock reading at the round's first content.
    pub started_at_ms: u64,
    /// Clock reading when the round closed.
    pub finished_at_ms: u64,
    /// What the protocol said about the round (`round_meta`: the ids of
    /// the ACP messages whose text it holds, ...); absent when empty.
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

/// A tool call of a closed round.
///
/// ```
/// use roundup::{RoundBuilder, StreamHandler, ToolCallStatus};
/// let builder = RoundBuilder::new();
/// builder.tool_call("t1", "grep");
/// builder.tool_update("t1", r#"{"q":"fn"}"#, ToolCallStatus::InProgress);
/// builder.tool_update("t1", "src/lib.rs", ToolCallStatus::Completed);
/// let call = &builder.rounds()[0].tool_calls[0];
/// assert_eq!((call.title.as_str(), call.arguments.as_str()), ("grep", r#"{"q":"fn"}"#));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the upstream gave the call (`""` is a valid id).
    pub id: String,
    /// The last non-empty title the call was declared with: what a person
    /// is shown (`Read a.ts`, `ls -la`).
    pub title: String,
    /// The last non-empty name the call was declared with: the tool's
    /// machine name as the model called it (`Read`, `Bash`,
    /// `get_weather`); empty (and not written) when the protocol gave none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
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

impl ToolCall {
    /// The final arguments as JSON, read as [`partial_json`](super::partial_json)
    /// reads them (a document cut short is closed at the cut).
    ///
    /// ```
    /// use roundup::{RoundBuilder, StreamHandler, ToolCallStatus};
    /// let builder = RoundBuilder::new();
    /// builder.tool_call("t1", "ls");
    /// builder.args_snapshot("t1", r#"{"path":"."}"#);
    /// builder.tool_update("t1", "a.txt", ToolCallStatus::Completed);
    /// assert_eq!(builder.rounds()[0].tool_calls[0].arguments_value(), Some(serde_json::json!({"path": "."})));
    /// ```
    pub fn arguments_value(&self) -> Option<serde_json::Value> {
        super::partial_json(&self.arguments)
    }
}

/// The result of a tool call.
///
/// ```
/// use roundup::ToolResult;
/// let result: ToolResult = serde_json::from_str(r#"{"status":"completed","content":"ok"}"#).unwrap();
/// assert_eq!(result.content(), Some("ok"));
/// assert!(!result.is_placeholder() && !result.is_failed());
/// ```
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
    /// No result arrived before the round closed. More may be said of it
    /// in later versions, so build one with [`ToolResult::placeholder`].
    #[non_exhaustive]
    Placeholder {
        /// Why no result arrived.
        reason: PlaceholderReason,
        /// The live output the call had sent when its round closed (SPEC
        /// rule 13); absent when it sent none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
}

impl ToolResult {
    /// A placeholder: no result came, for `reason`.
    ///
    /// ```
    /// use roundup::{PlaceholderReason, ToolResult};
    /// let result = ToolResult::placeholder(PlaceholderReason::Canceled);
    /// assert_eq!(result.placeholder_reason(), Some(PlaceholderReason::Canceled));
    /// assert_eq!(serde_json::to_string(&result).unwrap(), r#"{"status":"placeholder","reason":"canceled"}"#);
    /// ```
    pub fn placeholder(reason: PlaceholderReason) -> Self {
        ToolResult::Placeholder { reason, output: None }
    }

    /// A placeholder that keeps the live output received before its round
    /// closed (none when `output` is empty).
    ///
    /// ```
    /// use roundup::{PlaceholderReason, ToolResult};
    /// let result = ToolResult::placeholder_with_output(PlaceholderReason::Canceled, "50%".into());
    /// assert_eq!(result.placeholder_output(), Some("50%"));
    /// assert_eq!(
    ///     serde_json::to_string(&result).unwrap(),
    ///     r#"{"status":"placeholder","reason":"canceled","output":"50%"}"#
    /// );
    /// assert_eq!(ToolResult::placeholder_with_output(PlaceholderReason::Canceled, String::new()).placeholder_output(), None);
    /// ```
    pub fn placeholder_with_output(reason: PlaceholderReason, output: String) -> Self {
        ToolResult::Placeholder { reason, output: (!output.is_empty()).then_some(output) }
    }

    /// Why a placeholder stands in for the result; `None` for a real result.
    pub fn placeholder_reason(&self) -> Option<PlaceholderReason> {
        match self {
            ToolResult::Placeholder { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    /// The live output a placeholder keeps; `None` for a real result or a
    /// placeholder without output.
    pub fn placeholder_output(&self) -> Option<&str> {
        match self {
            ToolResult::Placeholder { output, .. } => output.as_deref(),
            _ => None,
        }
    }

    /// A real result from a terminal status: `completed` or `failed`.
    ///
    /// ```
    /// use roundup::{TerminalStatus, ToolResult};
    /// let result = ToolResult::real(TerminalStatus::Failed, "exit 1".into());
    /// assert!(result.is_failed());
    /// assert_eq!(result.content(), Some("exit 1"));
    /// ```
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
