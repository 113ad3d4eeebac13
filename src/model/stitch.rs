//! A stitch: a late result that replaces a `superseded` placeholder.

use serde::{Deserialize, Serialize};

use super::{Meta, ToolResult};

/// A late terminal result for a tool call whose round was closed by the next
/// chunk (SPEC §2 rule 9).
///
/// The round was already persisted with a `superseded` placeholder; the
/// stitch tells the consumer which call of which round to patch. The
/// builder's retained rounds are patched already.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use roundup::{RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus};
///
/// let stitches = Arc::new(Mutex::new(Vec::new()));
/// let store = Arc::clone(&stitches);
/// let builder = RoundBuilder::new().with_sink(move |record: SinkRecord<'_>| {
///     if let SinkRecord::Stitch(stitch) = record {
///         store.lock().unwrap().push(stitch.clone());
///     }
/// });
/// builder.tool_call("t1", "bash");
/// builder.message("Meanwhile..."); // closes round 0, t1 superseded
/// builder.tool_update("t1", "done", ToolCallStatus::Completed);
/// let stitch = &stitches.lock().unwrap()[0];
/// assert_eq!((stitch.round, stitch.id.as_str(), stitch.result.content()), (0, "t1", Some("done")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stitch {
    /// The session; absent when the input named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run of the patched round.
    pub run: u64,
    /// The index of the patched round in its run.
    pub round: u64,
    /// The tool call's id.
    pub id: String,
    /// The real result that replaces the placeholder.
    pub result: ToolResult,
    /// Clock reading at the late terminal; the stitched call takes it.
    pub finished_at_ms: u64,
}

/// Metadata for a tool call of a round already closed (SPEC extension:
/// protocols such as ACP refine a call after its result, a diff or
/// locations). The retained round is patched already; a consumer merges
/// `meta` into the call's `meta`.
///
/// ```
/// let line = r#"{"type":"meta","run":0,"round":2,"id":"t1","meta":{"acp_kind":"edit"}}"#;
/// let roundup::OutputLine::Meta(patch) = serde_json::from_str(line).unwrap() else { panic!() };
/// assert_eq!((patch.round, patch.meta["acp_kind"].as_str()), (2, Some("edit")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaPatch {
    /// The session; absent when the input named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run of the patched round.
    pub run: u64,
    /// The index of the patched round in its run.
    pub round: u64,
    /// The tool call's id.
    pub id: String,
    /// The keys to set.
    pub meta: Meta,
}
