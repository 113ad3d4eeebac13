//! Live UI events: what a view shows while a round streams.
//!
//! Rounds are for persistence and arrive once a turn is over; a UI wants
//! every fragment as it comes. The events are paired so that a view can keep
//! one open element per stream: every `*_start` gets exactly one matching
//! end (`*_end`, or `tool_call_interrupted` for a tool call that never got a
//! result), including when a round is cut short by `finish` or by the next
//! chunk, and deltas only arrive between a start and its end.

use serde::Serialize;

use crate::model::{ClosedBy, FinishReason, PlaceholderReason};

/// One live UI event, with its strings borrowed from the builder's output
/// buffer (reused, so a streaming chunk costs no allocation).
///
/// ```
/// use roundup::UiEvent;
/// let event = UiEvent::ToolCallArgs { id: "t1", args: r#"{"cmd":"#, replace: false };
/// assert_eq!(serde_json::to_string(&event).unwrap(), r#"{"event":"tool_call_args","id":"t1","args":"{\"cmd\":","replace":false}"#);
/// ```
pub type UiEvent<'a> = UiEventOf<&'a str>;

/// A live UI event, generic over how its strings are held: [`UiEvent`]
/// borrows them; the output buffer stores offsets into its text arena.
///
/// Serialises as one JSON object tagged by `event` (the shape
/// `roundup replay --emit ui` prints):
///
/// ```
/// use roundup::UiEvent;
/// let line = serde_json::to_string(&UiEvent::MessageDelta { text: "Hi" }).unwrap();
/// assert_eq!(line, r#"{"event":"message_delta","text":"Hi"}"#);
/// ```
///
/// `#[non_exhaustive]`: live views may be told more in later versions, so a
/// handler keeps a fallback arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "event", rename_all = "snake_case", bound(serialize = "S: Serialize + AsRef<str>"))]
#[non_exhaustive]
pub enum UiEventOf<S> {
    /// A run begins: the session's first call, or a `start`.
    RunStart {
        /// The run, counted from 0 in the session.
        run: u64,
    },
    /// A run finished (after the end of everything it held); its summary
    /// reached the sink just before.
    RunEnd {
        /// The run.
        run: u64,
        /// Why it finished.
        reason: FinishReason,
    },
    /// Assistant text begins.
    MessageStart,
    /// A fragment of assistant text.
    MessageDelta {
        /// The fragment.
        text: S,
    },
    /// Assistant text ends (reasoning or a tool call follows, or the round
    /// closed).
    MessageEnd,
    /// Reasoning begins.
    ThoughtStart,
    /// A fragment of reasoning.
    ThoughtDelta {
        /// The fragment.
        text: S,
    },
    /// Reasoning ends.
    ThoughtEnd,
    /// A tool call was declared.
    ToolCallStart {
        /// The call's id.
        id: S,
        /// Its title (may be empty until an upsert names it).
        title: S,
        /// The tool's machine name (empty when the source gives none;
        /// then not written).
        #[serde(skip_serializing_if = "is_empty")]
        name: S,
    },
    /// A redeclaration gave the call a new title or name: both as they
    /// are now.
    ToolCallTitle {
        /// The call's id.
        id: S,
        /// Its title.
        title: S,
        /// Its machine name (empty when none was given; then not written).
        #[serde(skip_serializing_if = "is_empty")]
        name: S,
    },
    /// The call's arguments changed.
    ToolCallArgs {
        /// The call's id.
        id: S,
        /// A delta to append, or the whole arguments when `replace`.
        args: S,
        /// `true` for a snapshot that replaces what was shown.
        replace: bool,
    },
    /// Live output of the running call (SPEC rule 13).
    ToolCallOutput {
        /// The call's id.
        id: S,
        /// Output to append, or the whole output so far when `replace`.
        content: S,
        /// `true` when `content` replaces what was shown.
        replace: bool,
    },
    /// The call's result arrived; `tool_call_end` follows.
    ToolCallResult {
        /// The call's id.
        id: S,
        /// The result content.
        content: S,
        /// `false` for a `failed` result.
        success: bool,
    },
    /// The call is over (it has its result).
    ToolCallEnd {
        /// The call's id.
        id: S,
    },
    /// The round closed before the call got a result; this ends the call.
    ToolCallInterrupted {
        /// The call's id.
        id: S,
        /// Why no result came.
        reason: PlaceholderReason,
    },
    /// A late result replaced the placeholder of a call of an earlier round.
    ToolCallStitched {
        /// The call's id.
        id: S,
        /// The run of the patched round.
        run: u64,
        /// The index of the patched round in its run.
        round: u64,
        /// The late result content.
        content: S,
        /// `false` for a `failed` result.
        success: bool,
    },
    /// The context-window occupancy gauge.
    TokenUsage {
        /// Tokens in the context window.
        total: u64,
    },
    /// A round closed (after the ends of everything it held).
    RoundEnd {
        /// The run.
        run: u64,
        /// The round's index in the run.
        index: u64,
        /// What closed it.
        closed_by: ClosedBy,
    },
}

impl<S> UiEventOf<S> {
    /// Converts every string of the event with `f`, keeping the rest.
    pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> UiEventOf<T> {
        use UiEventOf::*;
        match self {
            RunStart { run } => RunStart { run },
            RunEnd { run, reason } => RunEnd { run, reason },
            MessageStart => MessageStart,
            MessageDelta { text } => MessageDelta { text: f(text) },
            MessageEnd => MessageEnd,
            ThoughtStart => ThoughtStart,
            ThoughtDelta { text } => ThoughtDelta { text: f(text) },
            ThoughtEnd => ThoughtEnd,
            ToolCallStart { id, title, name } => ToolCallStart { id: f(id), title: f(title), name: f(name) },
            ToolCallTitle { id, title, name } => ToolCallTitle { id: f(id), title: f(title), name: f(name) },
            ToolCallArgs { id, args, replace } => ToolCallArgs { id: f(id), args: f(args), replace },
            ToolCallOutput { id, content, replace } => ToolCallOutput { id: f(id), content: f(content), replace },
            ToolCallResult { id, content, success } => ToolCallResult { id: f(id), content: f(content), success },
            ToolCallEnd { id } => ToolCallEnd { id: f(id) },
            ToolCallInterrupted { id, reason } => ToolCallInterrupted { id: f(id), reason },
            ToolCallStitched { id, run, round, content, success } => {
                ToolCallStitched { id: f(id), run, round, content: f(content), success }
            }
            TokenUsage { total } => TokenUsage { total },
            RoundEnd { run, index, closed_by } => RoundEnd { run, index, closed_by },
        }
    }
}

/// What a [`UiHandler`] tells the builder after an event: go on, or stop
/// sending (the client went away). Rounds keep reaching the sink either way.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use roundup::{RoundBuilder, StreamHandler, UiEvent, UiFlow};
///
/// // A client that goes away after three events: the builder stops sending.
/// let sent = Arc::new(AtomicUsize::new(0));
/// let counter = Arc::clone(&sent);
/// let builder = RoundBuilder::new().with_ui(move |_: &UiEvent<'_>| {
///     if counter.fetch_add(1, Ordering::Relaxed) + 1 == 3 { UiFlow::Stop } else { UiFlow::Continue }
/// });
/// for _ in 0..10 {
///     builder.message("chunk");
/// }
/// assert_eq!(sent.load(Ordering::Relaxed), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UiFlow {
    /// Keep sending UI events.
    Continue,
    /// Send no more UI events to this handler (backpressure: the client is
    /// gone). The builder stops producing them, which also saves the work.
    Stop,
}

/// Receives live UI events, in order, never while the builder's lock is
/// held (a handler may call back into the builder).
///
/// Any `Fn(&UiEvent<'_>) -> UiFlow + Send + Sync` closure is a handler.
///
/// ```
/// use std::sync::Mutex;
/// use roundup::{RoundBuilder, StreamHandler, UiEvent, UiFlow, UiHandler};
///
/// /// Shows the text as it streams, for a terminal.
/// #[derive(Default)]
/// struct Typewriter(Mutex<String>);
/// impl UiHandler for Typewriter {
///     fn event(&self, event: &UiEvent<'_>) -> UiFlow {
///         if let UiEvent::MessageDelta { text } = event {
///             self.0.lock().unwrap().push_str(text);
///         }
///         UiFlow::Continue
///     }
/// }
///
/// let builder = RoundBuilder::new().with_ui_handler(Typewriter::default());
/// builder.message("Hel");
/// builder.message("lo");
/// ```
pub trait UiHandler: Send + Sync {
    /// Handles one event.
    fn event(&self, event: &UiEvent<'_>) -> UiFlow;

    /// The handler fell so far behind that `dropped` events would have had
    /// to wait for it (more than the builder's
    /// [`ui_queue_capacity`](crate::RoundBuilder::ui_queue_capacity)): it is
    /// cut off, and gets no event after this call. A view can then reconnect
    /// from [`open_round`](crate::RoundBuilder::open_round) and the sink.
    fn overflowed(&self, _dropped: usize) {}
}

impl<F> UiHandler for F
where
    F: Fn(&UiEvent<'_>) -> UiFlow + Send + Sync,
{
    fn event(&self, event: &UiEvent<'_>) -> UiFlow {
        self(event)
    }
}

/// Whether a string of an event is empty, for `skip_serializing_if`.
fn is_empty<S: AsRef<str>>(s: &S) -> bool {
    s.as_ref().is_empty()
}
