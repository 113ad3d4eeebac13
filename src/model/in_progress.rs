//! The round still open, as a value: what a view that connects (or
//! reconnects) mid-round draws before the live events take over.

use serde::Serialize;
use serde_json::Value;

use super::{partial_json, Meta, ToolResult};

/// The open round of a session's current run.
///
/// ```
/// use roundup::{RoundBuilder, StreamHandler, ToolCallStatus};
/// use serde_json::json;
///
/// let builder = RoundBuilder::new();
/// builder.message("Writing the file.");
/// builder.tool_call("t1", "write");
/// builder.tool_update("t1", r#"{"path":"src/main.rs","content":"fn ma"#, ToolCallStatus::InProgress);
/// let open = builder.open_round().expect("a round is open");
/// assert_eq!(open.message, "Writing the file.");
/// let call = &open.tool_calls[0];
/// assert_eq!(call.arguments_value(), Some(json!({"path": "src/main.rs", "content": "fn ma"})));
/// assert_eq!(call.result, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RoundInProgress {
    /// The session; absent when the input named none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run, counted from 0 within the session.
    pub run: u64,
    /// The index the round will have in its run.
    pub index: u64,
    /// The assistant text so far.
    pub message: String,
    /// The reasoning so far.
    pub thought: String,
    /// The tool calls so far, in declaration order.
    pub tool_calls: Vec<CallInProgress>,
    /// Clock reading at the round's first content.
    pub started_at_ms: Option<u64>,
    /// What the protocol said about the round so far; absent when empty.
    #[serde(skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

/// A tool call of the open round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CallInProgress {
    /// The call's id.
    pub id: String,
    /// Its title so far.
    pub title: String,
    /// Its machine name so far (empty when none was given).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its arguments so far (possibly an unfinished JSON document; see
    /// [`arguments_value`](Self::arguments_value)).
    pub arguments: String,
    /// Its live output so far (SPEC rule 13).
    pub output: String,
    /// Its result, if it has one already.
    pub result: Option<ToolResult>,
    /// Clock reading at its declaration.
    pub started_at_ms: u64,
    /// What the protocol said about it so far.
    #[serde(skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

impl CallInProgress {
    /// The arguments as the JSON value they are becoming ([`partial_json`]).
    pub fn arguments_value(&self) -> Option<Value> {
        partial_json(&self.arguments)
    }
}
