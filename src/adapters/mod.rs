//! Input formats: one adapter per protocol, one registry of them all.
//!
//! An adapter only translates: it reads one payload of its protocol (the
//! bytes of one JSON value, a line or an SSE event's data) and makes the
//! [`Call`]s it means, each addressed to a session, on a [`CallSink`]. The
//! rules stay in the state machine, so an adapter is a table of "this native
//! event is these calls" and nothing more.
//!
//! Every format is one file of this module and one row of [`REGISTRY`]:
//! `--from` parsing, `--from auto` detection, the replay's decoder, the
//! command line's `--help` and usage line are all derived from the rows, so
//! adding a format cannot leave a list behind.
//!
//! ```
//! use roundup::adapters::{Adapter, InputFormat};
//! use roundup::Call;
//!
//! let acp = InputFormat::named("acp").unwrap();
//! let mut adapter = acp.adapter();
//! let mut calls = Vec::new();
//! let line = br#"{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}"#;
//! adapter
//!     .translate(line, &mut |session: Option<&str>, call: Call<'_>| {
//!         calls.push(format!("{session:?} {}", serde_json::to_string(&call).unwrap()))
//!     })
//!     .unwrap();
//! assert_eq!(calls, [r#"Some("s1") {"op":"message","text":"Hi"}"#]);
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::bad_line::BadLine;
use crate::call::Call;

/// The `save` and `restore` of an adapter whose whole state is itself
/// (serde-derived), for the `impl Adapter` of each stateful format.
macro_rules! state_is_self {
    () => {
        fn save(&self) -> Option<serde_json::Value> {
            crate::adapters::support::save_state(self)
        }

        fn restore(&mut self, state: serde_json::Value) -> Result<(), crate::CheckpointError> {
            crate::adapters::support::restore_state(self, state)
        }
    };
}

#[macro_use]
mod borrowed;
#[cfg(test)]
mod scan_tests;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub use borrowed::by_serde_alone;
mod printed;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use printed::check_printed;
mod run_lists;
mod support;

pub mod acp;
pub mod ai_sdk;
pub mod anthropic;
pub mod bedrock;
pub mod claude_code;
pub mod claude_transcript;
pub mod codex;
pub mod codex_rollout;
pub mod deepwork;
pub mod gemini;
pub mod gemini_cli;
pub mod gemini_cli_chat;
pub mod mistral;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
pub mod opencode;
pub mod ops;
pub mod uagent;

/// The input formats, in the order `--from auto` tries them on the
/// first event; the first row is also what an undecidable input is
/// read as (ops JSONL, whose reader then says what is wrong with
/// each line).
///
/// ```
/// let names: Vec<&str> = roundup::adapters::REGISTRY.iter().map(|f| f.name()).collect();
/// assert!(names.contains(&"acp") && names.contains(&"uagent"));
/// ```
pub static REGISTRY: &[&InputFormat] = &[
    &ops::FORMAT,
    &acp::FORMAT,
    // Before uagent, which would take OpenCode's `reasoning` lines (their
    // `sessionID` and numeric `timestamp` are no uagent event's).
    &opencode::FORMAT,
    &uagent::FORMAT,
    // Before deepwork, which would take a saved chat's `kind`.
    &gemini_cli_chat::FORMAT,
    &deepwork::FORMAT,
    // Before openai-chat: Mistral's chunks are OpenAI's shape, told apart
    // by their ids and models.
    &mistral::FORMAT,
    &openai_chat::FORMAT,
    &openai_responses::FORMAT,
    &anthropic::FORMAT,
    &claude_transcript::FORMAT,
    &claude_code::FORMAT,
    &codex::FORMAT,
    &codex_rollout::FORMAT,
    &ollama::FORMAT,
    &gemini::FORMAT,
    &gemini_cli::FORMAT,
    &ai_sdk::FORMAT,
    &bedrock::FORMAT,
];

/// Translates the payloads of one stream of a protocol into calls.
///
/// One adapter reads one stream (a connection, a recorded file): it keeps
/// whatever the translation needs across events (which request a response
/// answers, which text a whole message repeats), and nothing else.
///
/// ```
/// use roundup::adapters::{Adapter, CallSink};
/// use roundup::{BadLine, Call};
///
/// /// A format of one's own: each line is a bare JSON string of assistant text.
/// #[derive(Debug)]
/// struct PlainText;
///
/// impl Adapter for PlainText {
///     fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
///         let text: String = serde_json::from_slice(payload).map_err(|e| BadLine::new(e.to_string()))?;
///         calls.call(None, Call::Message { text: &text });
///         Ok(())
///     }
/// }
///
/// let mut texts = Vec::new();
/// let mut sink = |_: Option<&str>, call: Call<'_>| texts.push(call.payload());
/// PlainText.translate(br#""Hello""#, &mut sink).unwrap();
/// assert!(PlainText.translate(b"Hello", &mut sink).is_err());
/// assert_eq!(texts, ["Hello"]);
/// // It did not say what it keeps: its state is refused, never dropped.
/// assert_eq!(PlainText.save(), None);
/// assert!(PlainText.restore(serde_json::Value::Null).is_err());
/// ```
pub trait Adapter: Send + fmt::Debug {
    /// Translates one payload (the bytes of one JSON value), making its
    /// calls on `calls`. A payload that cannot be read at all is a
    /// [`BadLine`]; an event that reads but means nothing the adapter knows
    /// is reported through `calls` as an anomaly that keeps it, so nothing
    /// is dropped silently.
    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine>;

    /// The stream ended: makes the calls for what the adapter still holds
    /// (text it was gathering, events waiting for a run to attach to), so
    /// that nothing it read is lost. Called once, after the last payload and
    /// before the sessions' open runs are finished.
    fn end(&mut self, _calls: &mut dyn CallSink) {}

    /// What the adapter keeps between payloads, as a value that
    /// [`restore`](Adapter::restore) takes back: with the sessions'
    /// checkpoints, the state of a stream being read (a
    /// [`Replayer`](crate::Replayer) checkpoints both). `Some(null)` for an
    /// adapter that keeps nothing; `None` (the default) for one whose state
    /// cannot be saved, which makes a replay's checkpoint an error rather
    /// than a silent loss (the contract of an output format's `save` too).
    fn save(&self) -> Option<Value> {
        None
    }

    /// Continues from a state [`save`](Adapter::save) gave, on a new
    /// adapter of the same format. On error the adapter does not change.
    /// The default takes back the `null` of an adapter that keeps nothing,
    /// and refuses anything else.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::Corrupt`](crate::CheckpointError::Corrupt) when
    /// the value is not a state of this format.
    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        match (self.save(), state) {
            (Some(Value::Null), Value::Null) => Ok(()),
            _ => Err(crate::CheckpointError::NotSaveable("this input format".into())),
        }
    }
}

/// Receives the calls an adapter makes, each addressed to a session (`None`
/// for an event that names none), and the clock readings the protocol
/// carries.
///
/// Any `FnMut(Option<&str>, Call<'_>)` closure is a call sink that ignores
/// clock readings.
///
/// ```
/// use roundup::adapters::{CallSink, InputFormat};
/// use roundup::Call;
///
/// /// Keeps the protocol's clock readings beside the op names.
/// #[derive(Default)]
/// struct Timeline(Vec<(u64, &'static str)>, u64);
///
/// impl CallSink for Timeline {
///     fn call(&mut self, _session: Option<&str>, call: Call<'_>) {
///         self.0.push((self.1, call.op_name()));
///     }
///     fn clock(&mut self, at_ms: u64) {
///         self.1 = at_ms;
///     }
/// }
///
/// let mut timeline = Timeline::default();
/// let mut uagent = InputFormat::named("uagent").unwrap().adapter();
/// let line = br#"{"type":"text_delta","text":"Hi","at":"1970-01-01T00:00:02Z","v":1}"#;
/// uagent.translate(line, &mut timeline).unwrap();
/// assert_eq!(timeline.0, [(2_000, "message")]);
/// ```
pub trait CallSink {
    /// One call for `session`.
    fn call(&mut self, session: Option<&str>, call: Call<'_>);

    /// The protocol's own clock reading (unix milliseconds) for the calls
    /// that follow, for protocols that stamp their events.
    fn clock(&mut self, _at_ms: u64) {}
}

impl<F: FnMut(Option<&str>, Call<'_>)> CallSink for F {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        self(session, call)
    }
}

/// One input format: a row of [`REGISTRY`].
///
/// ```
/// use roundup::adapters::InputFormat;
/// let uagent = InputFormat::named("uagent").unwrap();
/// assert!(uagent.about().contains("uagent_stats"));
/// let _adapter = uagent.adapter();
/// ```
pub struct InputFormat {
    name: &'static str,
    about: &'static str,
    detect: fn(&Map<String, Value>) -> bool,
    adapter: fn() -> Box<dyn Adapter>,
}

impl fmt::Debug for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("InputFormat").field(&self.name).finish()
    }
}

impl PartialEq for InputFormat {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for InputFormat {}

impl InputFormat {
    /// The name `--from` takes.
    ///
    /// ```
    /// let names: Vec<&str> = roundup::adapters::REGISTRY.iter().map(|f| f.name()).collect();
    /// assert_eq!(names[0], "ops");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the format is and how it maps onto sessions and runs: the text
    /// `roundup --help` shows under its name.
    pub fn about(&self) -> &'static str {
        self.about
    }

    /// A new adapter for one stream of this format.
    pub fn adapter(&self) -> Box<dyn Adapter> {
        (self.adapter)()
    }

    /// The format of this name.
    ///
    /// ```
    /// use roundup::adapters::InputFormat;
    /// assert_eq!(InputFormat::named("uagent").map(InputFormat::name), Some("uagent"));
    /// assert!(InputFormat::named("xml").is_none());
    /// ```
    pub fn named(name: &str) -> Option<&'static InputFormat> {
        REGISTRY.iter().copied().find(|format| format.name == name)
    }

    /// The format of an input whose first event is `payload`: the first row
    /// whose detection accepts it, else the first row.
    ///
    /// ```
    /// use roundup::adapters::InputFormat;
    /// assert_eq!(InputFormat::detect(br#"{"op":"message","text":"Hi"}"#).name(), "ops");
    /// assert_eq!(InputFormat::detect(br#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#).name(), "acp");
    /// assert_eq!(InputFormat::detect(b"not json").name(), "ops");
    /// ```
    pub fn detect(payload: &[u8]) -> &'static InputFormat {
        Self::recognise(payload).unwrap_or(REGISTRY[0])
    }

    /// The format whose detection accepts `payload`, if any: what a bad
    /// line of another format looks like.
    ///
    /// ```
    /// use roundup::adapters::InputFormat;
    /// assert_eq!(InputFormat::recognise(br#"{"type":"run_started","v":1}"#).map(InputFormat::name), Some("uagent"));
    /// assert_eq!(InputFormat::recognise(br#"{"hello":"world"}"#), None);
    /// ```
    pub fn recognise(payload: &[u8]) -> Option<&'static InputFormat> {
        let Ok(Value::Object(event)) = serde_json::from_slice::<Value>(payload) else {
            return None;
        };
        REGISTRY.iter().copied().find(|format| (format.detect)(&event))
    }
}
