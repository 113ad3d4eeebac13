//! The per-run summary line.

use serde::{Deserialize, Serialize};

use super::{FinishReason, Meta, PlaceholderReason, Round, ToolResult};

/// Counts describing one run's final rounds, after stitches (SPEC §6).
///
/// The builder keeps it up to date incrementally, so it is exact even when
/// rounds are not retained.
///
/// ```
/// use roundup::{FinishReason, RoundBuilder, StreamHandler};
/// let builder = RoundBuilder::new();
/// builder.message("Hi");
/// builder.tool_call("t1", "ls");
/// builder.token_usage(1_200);
/// builder.finish(FinishReason::Canceled);
/// let summary = builder.summary();
/// assert_eq!((summary.rounds, summary.tool_calls, summary.placeholders.canceled), (1, 1, 1));
/// assert_eq!((summary.message_bytes, summary.last_token_usage), (2, Some(1_200)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The session; absent when the input named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run, counted from 0 within the session.
    pub run: u64,
    /// How the run ended: the reason of its `finish` (`interrupted` for a
    /// run ended by a `start` or by the end of input); `None` while it
    /// runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// Rounds emitted.
    pub rounds: u64,
    /// Tool calls in those rounds.
    pub tool_calls: u64,
    /// Tool calls whose (final) result is `failed`.
    pub failed_tool_calls: u64,
    /// Placeholders left, by reason (only non-zero reasons are written).
    pub placeholders: PlaceholderCounts,
    /// Late results stitched into earlier rounds.
    pub stitches: u64,
    /// Anomaly lines of the run.
    pub anomalies: u64,
    /// UTF-8 bytes of assistant text.
    pub message_bytes: u64,
    /// UTF-8 bytes of reasoning.
    pub thought_bytes: u64,
    /// The last token-usage gauge reading, `null` when none was seen.
    pub last_token_usage: Option<u64>,
    /// What the protocol said about the run
    /// ([`StreamHandler::run_meta`](crate::StreamHandler::run_meta)),
    /// written as further fields of the summary line.
    #[serde(flatten)]
    pub meta: Meta,
}

impl Summary {
    /// The field names of a summary line (with its `type`), which
    /// `run_meta` may not overwrite.
    ///
    /// ```
    /// assert!(roundup::Summary::FIELDS.contains(&"rounds"));
    /// ```
    pub const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "run",
        "finish_reason",
        "rounds",
        "tool_calls",
        "failed_tool_calls",
        "placeholders",
        "stitches",
        "anomalies",
        "message_bytes",
        "thought_bytes",
        "last_token_usage",
    ];

    /// Counts a round as it closes.
    pub(crate) fn add_round(&mut self, round: &Round) {
        self.rounds += 1;
        self.message_bytes += round.message.len() as u64;
        self.thought_bytes += round.thought.len() as u64;
        for call in &round.tool_calls {
            self.tool_calls += 1;
            self.add_result(&call.result);
        }
    }

    /// Moves the counts of a stitched call from its placeholder to its
    /// real result.
    pub(crate) fn stitch(&mut self, reason: PlaceholderReason, result: &ToolResult) {
        self.placeholders.remove(reason);
        self.add_result(result);
        self.stitches += 1;
    }

    fn add_result(&mut self, result: &ToolResult) {
        match result {
            ToolResult::Failed { .. } => self.failed_tool_calls += 1,
            ToolResult::Placeholder { reason, .. } => self.placeholders.add(*reason),
            ToolResult::Completed { .. } => {}
        }
    }
}

/// Placeholder counts keyed by reason; serialises as an object holding the
/// non-zero reasons only.
///
/// ```
/// use roundup::{PlaceholderCounts, PlaceholderReason};
/// let counts: PlaceholderCounts = serde_json::from_str(r#"{"superseded":2}"#).unwrap();
/// assert_eq!((counts.get(PlaceholderReason::Superseded), counts.total()), (2, 2));
/// assert_eq!(serde_json::to_string(&PlaceholderCounts::default()).unwrap(), "{}");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceholderCounts {
    /// Closed by the next chunk, never stitched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub superseded: u64,
    /// Left by a run that completed without their results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub completed: u64,
    /// Left by a failed run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// Left by a canceled run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub canceled: u64,
    /// Left by an interrupted run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupted: u64,
}

impl PlaceholderCounts {
    /// The count for one reason.
    pub fn get(&self, reason: PlaceholderReason) -> u64 {
        match reason {
            PlaceholderReason::Superseded => self.superseded,
            PlaceholderReason::Completed => self.completed,
            PlaceholderReason::Failed => self.failed,
            PlaceholderReason::Canceled => self.canceled,
            PlaceholderReason::Interrupted => self.interrupted,
        }
    }

    /// All placeholders, whatever the reason.
    pub fn total(&self) -> u64 {
        self.superseded + self.completed + self.failed + self.canceled + self.interrupted
    }

    fn slot(&mut self, reason: PlaceholderReason) -> &mut u64 {
        match reason {
            PlaceholderReason::Superseded => &mut self.superseded,
            PlaceholderReason::Completed => &mut self.completed,
            PlaceholderReason::Failed => &mut self.failed,
            PlaceholderReason::Canceled => &mut self.canceled,
            PlaceholderReason::Interrupted => &mut self.interrupted,
        }
    }

    fn add(&mut self, reason: PlaceholderReason) {
        *self.slot(reason) += 1;
    }

    fn remove(&mut self, reason: PlaceholderReason) {
        let slot = self.slot(reason);
        *slot = slot.saturating_sub(1);
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
