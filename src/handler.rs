//! The input contract: what a protocol adapter calls while a run streams.
//!
//! Every protocol (ACP, OpenAI and Anthropic streams, uagent JSONL, deepwork
//! events) is translated into these few calls, so the aggregation logic is
//! written once. Adapters are written against the trait, not against
//! [`RoundBuilder`](crate::RoundBuilder), which lets them drive a
//! [`Recorder`](crate::Recorder), a test double, or a fan-out of several
//! handlers just as well.

use serde::{Deserialize, Serialize};

use crate::anomaly::AnomalyKind;
use crate::round::Meta;

/// The status carried by a `tool_update` (SPEC §1).
///
/// The status decides what the update's content *is*: an argument delta
/// while the call is `pending` or `in_progress`, the call's result once it is
/// `completed` or `failed`.
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

/// Why a run ended with tool calls still waiting for a result (SPEC §1,
/// `finish`). It becomes the reason of their placeholder results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The user or the client stopped the run.
    Canceled,
    /// The run ended for any other reason (stream cut, process gone, end of
    /// input, a new run starting over an unfinished one).
    Interrupted,
}

impl FinishReason {
    /// The wire name (`"canceled"` or `"interrupted"`).
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Canceled => "canceled",
            FinishReason::Interrupted => "interrupted",
        }
    }

    /// Parses a wire name; `None` for anything outside the enum.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "canceled" => Some(FinishReason::Canceled),
            "interrupted" => Some(FinishReason::Interrupted),
            _ => None,
        }
    }
}

/// The calls a protocol adapter makes while an agent run streams (SPEC §1).
///
/// Methods take `&self` and the trait requires `Send + Sync`, so one handler
/// can be shared by every thread of a client (an `Arc<RoundBuilder>` is the
/// usual shape). The trait is object-safe: adapters may hold a
/// `&dyn StreamHandler`.
///
/// No method returns an error: what cannot be applied (an update for an
/// unknown tool call, a second result, a call after `finish`) is not a
/// failure of the caller but a fact about the upstream, and the
/// implementation reports it as an [`Anomaly`](crate::Anomaly).
///
/// # Example
///
/// ```
/// use roundup::{RoundBuilder, StreamHandler, ToolCallStatus, FinishReason};
///
/// let builder = RoundBuilder::new();
/// let handler: &dyn StreamHandler = &builder;
/// handler.message("Let me look.");
/// handler.tool_call("t1", "bash");
/// handler.args_snapshot("t1", r#"{"cmd":"ls"}"#);
/// handler.tool_update("t1", "a.txt", ToolCallStatus::Completed);
/// handler.finish(FinishReason::Interrupted);
///
/// let rounds = builder.rounds();
/// assert_eq!(rounds.len(), 1);
/// assert_eq!(rounds[0].tool_calls[0].arguments, r#"{"cmd":"ls"}"#);
/// ```
pub trait StreamHandler: Send + Sync {
    /// Appends an assistant text fragment.
    fn message(&self, text: &str);

    /// Appends a reasoning fragment.
    fn thought(&self, text: &str);

    /// Declares a tool call; a second declaration of an id in the open round
    /// updates its title (when non-empty) instead of adding a call.
    fn tool_call(&self, id: &str, title: &str);

    /// An update of a tool call: an argument delta while `status` is not
    /// terminal, the call's result once it is.
    fn tool_update(&self, id: &str, content: &str, status: ToolCallStatus);

    /// Replaces the arguments accumulated so far for `id` with a whole value.
    fn args_snapshot(&self, id: &str, args: &str);

    /// The context-window occupancy: a gauge that may go down, not a sum.
    fn token_usage(&self, total: u64);

    /// Begins a new run in the same session (a new prompt turn). An
    /// unfinished run is first finished as `interrupted`.
    fn start(&self);

    /// The run ended; tool calls still without a result get a placeholder
    /// carrying `reason`.
    fn finish(&self, reason: FinishReason);

    /// Merges what a protocol says about a tool call beyond its title,
    /// arguments and result into the call's `meta` object, so that nothing
    /// the protocol carried is lost. For a call of a closed round of this
    /// run, the retained round is patched and a [`MetaPatch`](crate::MetaPatch)
    /// is delivered.
    fn tool_meta(&self, id: &str, meta: &Meta);

    /// Merges what a protocol says about the run as a whole into its summary.
    /// Keys that name a summary field are refused (anomaly `bad_meta`).
    fn run_meta(&self, meta: &Meta);

    /// Reports a problem found upstream of the handler (a line that does not
    /// parse, an event type an adapter does not know), so that it is
    /// delivered and counted with the run's own anomalies instead of being
    /// lost.
    fn anomaly(&self, kind: AnomalyKind, id: Option<&str>, detail: &str);
}

macro_rules! forward_handler {
    ($($ty:ty),*) => {$(
        impl<T: StreamHandler + ?Sized> StreamHandler for $ty {
            fn message(&self, text: &str) { (**self).message(text) }
            fn thought(&self, text: &str) { (**self).thought(text) }
            fn tool_call(&self, id: &str, title: &str) { (**self).tool_call(id, title) }
            fn tool_update(&self, id: &str, content: &str, status: ToolCallStatus) {
                (**self).tool_update(id, content, status)
            }
            fn args_snapshot(&self, id: &str, args: &str) { (**self).args_snapshot(id, args) }
            fn token_usage(&self, total: u64) { (**self).token_usage(total) }
            fn start(&self) { (**self).start() }
            fn finish(&self, reason: FinishReason) { (**self).finish(reason) }
            fn tool_meta(&self, id: &str, meta: &Meta) { (**self).tool_meta(id, meta) }
            fn run_meta(&self, meta: &Meta) { (**self).run_meta(meta) }
            fn anomaly(&self, kind: AnomalyKind, id: Option<&str>, detail: &str) {
                (**self).anomaly(kind, id, detail)
            }
        }
    )*};
}

forward_handler!(&T, std::sync::Arc<T>, Box<T>);

/// Implements [`StreamHandler`] for a type whose every call is handled by
/// one method taking a [`Call`](crate::Call), so the mapping from trait
/// methods to call values is written once.
macro_rules! handler_via_calls {
    (impl[$($generics:tt)*] $ty:ty => $method:ident) => {
        impl<$($generics)*> $crate::handler::StreamHandler for $ty {
            fn message(&self, text: &str) {
                self.$method($crate::call::Call::Message { text })
            }
            fn thought(&self, text: &str) {
                self.$method($crate::call::Call::Thought { text })
            }
            fn tool_call(&self, id: &str, title: &str) {
                self.$method($crate::call::Call::ToolCall { id, title })
            }
            fn tool_update(&self, id: &str, content: &str, status: $crate::handler::ToolCallStatus) {
                self.$method($crate::call::Call::ToolUpdate { id, content, status })
            }
            fn args_snapshot(&self, id: &str, args: &str) {
                self.$method($crate::call::Call::ArgsSnapshot { id, args })
            }
            fn token_usage(&self, total: u64) {
                self.$method($crate::call::Call::TokenUsage { total })
            }
            fn start(&self) {
                self.$method($crate::call::Call::Start)
            }
            fn finish(&self, reason: $crate::handler::FinishReason) {
                self.$method($crate::call::Call::Finish { reason })
            }
            fn tool_meta(&self, id: &str, meta: &$crate::round::Meta) {
                self.$method($crate::call::Call::ToolMeta { id, meta })
            }
            fn run_meta(&self, meta: &$crate::round::Meta) {
                self.$method($crate::call::Call::RunMeta { meta })
            }
            fn anomaly(&self, kind: $crate::anomaly::AnomalyKind, id: Option<&str>, detail: &str) {
                self.$method($crate::call::Call::Anomaly { kind, id, detail })
            }
        }
    };
}
pub(crate) use handler_via_calls;
