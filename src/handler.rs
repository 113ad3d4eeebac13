//! The input contract: what a protocol adapter calls while a run streams.
//!
//! Every protocol (ACP, OpenAI and Anthropic streams, uagent JSONL, deepwork
//! events) is translated into these few calls, so the aggregation logic is
//! written once. A call is a value ([`Call`]); the named methods of
//! [`StreamHandler`] are the same calls spelled as methods, provided over
//! the one method a handler implements, so the two can never disagree.

use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The calls a protocol adapter makes while an agent run streams (SPEC §1).
///
/// A handler implements one method, [`call`](StreamHandler::call), which
/// takes every call as a [`Call`] value; the named methods (`message`,
/// `thought`, `tool_call`, `args_snapshot`, `tool_update`, `token_usage`,
/// ...) are provided and build that value. Adapters may use either spelling.
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
/// Driving a builder:
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
///
/// A handler of one's own, here one that counts text bytes:
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use roundup::{Call, StreamHandler};
///
/// #[derive(Default)]
/// struct TextBytes(AtomicUsize);
///
/// impl StreamHandler for TextBytes {
///     fn call(&self, call: Call<'_>) {
///         if let Call::Message { text } = call {
///             self.0.fetch_add(text.len(), Ordering::Relaxed);
///         }
///     }
/// }
///
/// let counter = TextBytes::default();
/// counter.message("Hello, ");
/// counter.thought("not counted");
/// counter.message("world");
/// assert_eq!(counter.0.load(Ordering::Relaxed), 12);
/// ```
pub trait StreamHandler: Send + Sync {
    /// Handles one call. Every other method comes here.
    fn call(&self, call: Call<'_>);

    /// Appends an assistant text fragment.
    fn message(&self, text: &str) {
        self.call(Call::Message { text })
    }

    /// Appends a reasoning fragment.
    fn thought(&self, text: &str) {
        self.call(Call::Thought { text })
    }

    /// Declares a tool call; a second declaration of an id in the open round
    /// updates its title (when non-empty) instead of adding a call.
    fn tool_call(&self, id: &str, title: &str) {
        self.call(Call::ToolCall { id, title, name: "" })
    }

    /// [`tool_call`](Self::tool_call) with the tool's machine name (`Read`,
    /// `get_weather`) beside the title a person is shown (`Read a.ts`): a
    /// non-empty name replaces the old one too.
    fn named_tool_call(&self, id: &str, title: &str, name: &str) {
        self.call(Call::ToolCall { id, title, name })
    }

    /// An update of a tool call: an argument delta while `status` is not
    /// terminal, the call's result once it is.
    fn tool_update(&self, id: &str, content: &str, status: ToolCallStatus) {
        self.call(Call::ToolUpdate { id, content, status })
    }

    /// A fragment of a tool call's arguments, appended to what came before:
    /// [`tool_update`](Self::tool_update) with status `in_progress`.
    ///
    /// ```
    /// use roundup::{RoundBuilder, StreamHandler};
    /// let builder = RoundBuilder::new();
    /// builder.tool_call("t1", "read");
    /// builder.args_delta("t1", r#"{"path":"#);
    /// builder.args_delta("t1", r#""a.txt"}"#);
    /// builder.tool_result("t1", "hello");
    /// let call = &builder.rounds()[0].tool_calls[0];
    /// assert_eq!((call.arguments.as_str(), call.result.content()), (r#"{"path":"a.txt"}"#, Some("hello")));
    /// ```
    fn args_delta(&self, id: &str, fragment: &str) {
        self.call(Call::ToolUpdate { id, content: fragment, status: ToolCallStatus::InProgress })
    }

    /// A tool call succeeded with `content` as its result:
    /// [`tool_update`](Self::tool_update) with status `completed`.
    fn tool_result(&self, id: &str, content: &str) {
        self.call(Call::ToolUpdate { id, content, status: ToolCallStatus::Completed })
    }

    /// A tool call failed, `content` saying how:
    /// [`tool_update`](Self::tool_update) with status `failed`.
    ///
    /// ```
    /// use roundup::{FinishReason, RoundBuilder, StreamHandler};
    /// let builder = RoundBuilder::new();
    /// builder.tool_call("t1", "bash");
    /// builder.tool_failed("t1", "exit code 1");
    /// builder.finish(FinishReason::Completed);
    /// let call = &builder.rounds()[0].tool_calls[0];
    /// assert!(call.result.is_failed() && call.result.content() == Some("exit code 1"));
    /// assert_eq!(builder.summary().finish_reason, Some(FinishReason::Completed));
    /// ```
    fn tool_failed(&self, id: &str, content: &str) {
        self.call(Call::ToolUpdate { id, content, status: ToolCallStatus::Failed })
    }

    /// Replaces the arguments accumulated so far for `id` with a whole value.
    fn args_snapshot(&self, id: &str, args: &str) {
        self.call(Call::ArgsSnapshot { id, args })
    }

    /// Live output of a running tool call (a terminal's bytes, a progress
    /// text): appended, or with `replace` replacing what came before. It
    /// never closes a round; a terminal `tool_update` with empty content
    /// takes it as the result (SPEC rule 13).
    fn tool_output(&self, id: &str, content: &str, replace: bool) {
        self.call(Call::ToolOutput { id, content, replace })
    }

    /// The context-window occupancy: a gauge that may go down, not a sum.
    fn token_usage(&self, total: u64) {
        self.call(Call::TokenUsage { total })
    }

    /// Begins a new run in the same session (a new prompt turn). An
    /// unfinished run is first finished as `interrupted`.
    fn start(&self) {
        self.call(Call::Start)
    }

    /// The run ended; tool calls still without a result get a placeholder
    /// carrying `reason`.
    fn finish(&self, reason: FinishReason) {
        self.call(Call::Finish { reason })
    }

    /// Merges what a protocol says about a tool call beyond its title,
    /// arguments and result into the call's `meta` object, so that nothing
    /// the protocol carried is lost. For a call of a closed round of this
    /// run, the retained round is patched and a [`MetaPatch`](crate::MetaPatch)
    /// is delivered.
    fn tool_meta(&self, id: &str, meta: &Meta) {
        self.call(Call::ToolMeta { id, meta })
    }

    /// Merges what a protocol says about the run as a whole into its summary.
    /// Keys that name a summary field are refused (anomaly `bad_meta`).
    fn run_meta(&self, meta: &Meta) {
        self.call(Call::RunMeta { meta })
    }

    /// Merges what a protocol says about the round being built into its
    /// `meta` (arrays accumulate, other values replace).
    fn round_meta(&self, meta: &Meta) {
        self.call(Call::RoundMeta { meta })
    }

    /// Reports a problem found upstream of the handler (a line that does not
    /// parse, an event type an adapter does not know), so that it is
    /// delivered and counted with the run's own anomalies instead of being
    /// lost.
    fn anomaly(&self, kind: AnomalyKind, id: Option<&str>, detail: &str) {
        self.call(Call::Anomaly { kind, id, detail })
    }
}

macro_rules! forward_handler {
    ($($ty:ty),*) => {$(
        impl<T: StreamHandler + ?Sized> StreamHandler for $ty {
            fn call(&self, call: Call<'_>) {
                (**self).call(call)
            }
        }
    )*};
}

forward_handler!(&T, std::sync::Arc<T>, Box<T>);
