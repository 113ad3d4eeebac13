//! Output formats: one encoder per format, one registry of them all.
//!
//! An encoder turns what the builders deliver (records for persistence, or
//! live UI events) into the bytes of one output format. It writes each of
//! its values as one frame of [`Frames`], which frames them as JSON lines or
//! as SSE events, so any format can be served over SSE without knowing it.
//!
//! Every format is one file of this module and one row of [`REGISTRY`]:
//! `--emit` parsing, `--help` and the usage line are derived from the rows.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::UiEvent;
//!
//! let mut encoder = OutputFormat::named("ui").unwrap().encoder();
//! let mut out = Frames::new(Framing::Sse);
//! encoder.ui_event(Some("s1"), &UiEvent::MessageDelta { text: "Hi" }, 0, &mut out);
//! assert_eq!(out.bytes(), b"data: {\"event\":\"message_delta\",\"text\":\"Hi\",\"session\":\"s1\"}\n\n");
//! ```

use std::fmt;

use crate::sink::SinkRecord;
use crate::ui::UiEvent;

pub mod agui;
pub mod agui_compact;
pub mod ai_sdk;
pub mod anthropic;
pub mod deepwork;
pub mod openai_chat;
pub mod openai_responses;
pub mod otlp;
pub mod otlp_content;
pub mod records;
pub mod ui;

/// The output formats; the first is the default.
///
/// ```
/// assert_eq!(roundup::encoders::REGISTRY[0].name(), "records");
/// ```
pub static REGISTRY: &[&OutputFormat] = &[
    &records::FORMAT,
    &ui::FORMAT,
    &deepwork::FORMAT,
    &agui::FORMAT,
    &agui_compact::FORMAT,
    &ai_sdk::FORMAT,
    &openai_chat::FORMAT,
    &openai_responses::FORMAT,
    &anthropic::FORMAT,
    &otlp::FORMAT,
    &otlp_content::FORMAT,
];

mod history;

/// Whether a run held nothing at all (an empty input's run: no round, no
/// anomaly, no token reading, no metadata). Its summary is still a record
/// (SPEC: one summary a run), but the outputs made for a reader (a UI, a
/// provider's history) say nothing of it.
pub(crate) fn held_nothing(summary: &crate::model::Summary) -> bool {
    summary.rounds == 0 && summary.anomalies == 0 && summary.last_token_usage.is_none() && summary.meta.is_empty()
}

/// Turns delivered output into the bytes of one output format.
///
/// An encoder reads either the records for persistence (rounds, stitches,
/// anomalies, meta patches and run summaries, each as it happens) or the
/// live UI events, as
/// [`reads`](Encoder::reads) says; whoever drives it produces only that.
///
/// A replay gives every session an encoder of its own
/// ([`OutputFormat::encoder`]), so what an encoder keeps lives and goes with
/// its session: saved in the session's checkpoint when the session is
/// evicted, dropped when it ends. An encoder may still be handed several
/// sessions' output (each call names its session), as the examples here do.
///
/// ```
/// use roundup::encoders::{Encoder, Framing, Frames, Reads};
/// use roundup::UiEvent;
///
/// /// An output of one's own: only the assistant's text, one fragment a line.
/// #[derive(Debug)]
/// struct TextOnly;
///
/// impl Encoder for TextOnly {
///     fn reads(&self) -> Reads {
///         Reads::UiEvents
///     }
///     fn ui_event(&mut self, _session: Option<&str>, event: &UiEvent<'_>, _at_ms: u64, out: &mut Frames) {
///         if let UiEvent::MessageDelta { text } = event {
///             out.frame(|buf| buf.extend_from_slice(serde_json::to_string(text).unwrap().as_bytes()));
///         }
///     }
/// }
///
/// let mut out = Frames::new(Framing::Lines);
/// TextOnly.ui_event(None, &UiEvent::MessageStart, 0, &mut out);
/// TextOnly.ui_event(None, &UiEvent::MessageDelta { text: "Hi" }, 0, &mut out);
/// assert_eq!(out.bytes(), b"\"Hi\"\n");
/// ```
pub trait Encoder: Send + fmt::Debug {
    /// What this encoder reads.
    fn reads(&self) -> Reads;

    /// A record for persistence (a run's summary included, at its
    /// finish), for an encoder that reads [`Reads::Records`] or
    /// [`Reads::Both`].
    fn record(&mut self, _record: SinkRecord<'_>, _out: &mut Frames) {}

    /// A record with the clock reading of the call that caused it: what a
    /// replay hands an encoder. An output that places things in time (an
    /// anomaly as a trace's event) reads `at_ms`; the others take the
    /// record alone, as this default does.
    fn record_at(&mut self, record: SinkRecord<'_>, _at_ms: u64, out: &mut Frames) {
        self.record(record, out);
    }

    /// A live UI event of `session` at clock reading `at_ms`, for an encoder
    /// that reads [`Reads::UiEvents`] or [`Reads::Both`].
    fn ui_event(&mut self, _session: Option<&str>, _event: &UiEvent<'_>, _at_ms: u64, _out: &mut Frames) {}

    /// What the encoder keeps between values, for a session's checkpoint
    /// (an eviction, a [`Replayer`](crate::Replayer)'s checkpoint): `null`
    /// for an encoder that keeps nothing, `None` (the default) for one whose
    /// state cannot be saved, which keeps such a session from being evicted
    /// and makes a replay's checkpoint an error rather than a silent loss.
    fn save(&self) -> Option<serde_json::Value> {
        None
    }

    /// Continues from a state [`save`](Encoder::save) gave.
    ///
    /// # Errors
    ///
    /// [`CheckpointError`](crate::CheckpointError) when the value is not a
    /// state of this format.
    fn restore(&mut self, state: serde_json::Value) -> Result<(), crate::CheckpointError> {
        match (self.save(), state) {
            (Some(serde_json::Value::Null), serde_json::Value::Null) => Ok(()),
            _ => Err(crate::CheckpointError::NotSaveable("this output format".into())),
        }
    }
}

/// What an [`Encoder`] reads.
///
/// ```
/// use roundup::encoders::{OutputFormat, Reads};
/// assert_eq!(OutputFormat::named("records").unwrap().encoder().reads(), Reads::Records);
/// assert_eq!(OutputFormat::named("ui").unwrap().encoder().reads(), Reads::UiEvents);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reads {
    /// Records for persistence, run summaries among them.
    Records,
    /// Live UI events.
    UiEvents,
    /// Both, in the order they happen (SPEC rule 11: a closed round before
    /// the UI events of the same call): for a live protocol that also
    /// carries what only records say (anomalies, a run's summary).
    Both,
}

impl Reads {
    /// Whether an encoder that reads so gets the records.
    pub fn records(self) -> bool {
        matches!(self, Reads::Records | Reads::Both)
    }

    /// Whether an encoder that reads so gets the live UI events.
    pub fn ui_events(self) -> bool {
        matches!(self, Reads::UiEvents | Reads::Both)
    }
}

/// How the values of an output are separated.
///
/// ```
/// use roundup::encoders::{Framing, Frames};
/// let mut out = Frames::new(Framing::Sse);
/// out.frame(|buf| buf.extend_from_slice(b"{}"));
/// assert_eq!(out.bytes(), b"data: {}\n\n");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// One JSON value per line (`\n`-terminated).
    #[default]
    Lines,
    /// One SSE event per value: `data: ` and the value, then a blank line.
    Sse,
}

/// An output buffer that frames every value an encoder writes.
///
/// ```
/// use roundup::encoders::{Framing, Frames};
/// let mut out = Frames::new(Framing::Lines);
/// out.frame(|buf| buf.extend_from_slice(b"{}"));
/// out.frame(|_| {}); // nothing written: no frame
/// assert_eq!(out.bytes(), b"{}\n");
/// ```
#[derive(Debug, Default)]
pub struct Frames {
    bytes: Vec<u8>,
    framing: Framing,
}

impl Frames {
    /// An empty buffer.
    pub fn new(framing: Framing) -> Self {
        // Allocated on the first frame: a session's replay that writes
        // nothing costs nothing here.
        Frames { bytes: Vec::new(), framing }
    }

    /// Writes one value with `write`, framed; a write that adds nothing
    /// adds no frame.
    pub fn frame(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.bytes.len();
        if self.framing == Framing::Sse {
            self.bytes.extend_from_slice(b"data: ");
        }
        let value_start = self.bytes.len();
        write(&mut self.bytes);
        if self.bytes.len() == value_start {
            self.bytes.truncate(start);
            return;
        }
        self.bytes.extend_from_slice(if self.framing == Framing::Sse { b"\n\n" } else { b"\n" });
    }

    /// How the values are framed: a format whose stream has an end marker
    /// of its own outside JSON (`[DONE]` after an SSE response) writes it
    /// only where the framing carries it.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// The framed bytes not yet taken.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Forgets the bytes (once written out), keeping the capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }
}

/// One output format: a row of [`REGISTRY`].
///
/// ```
/// use roundup::encoders::OutputFormat;
/// let ui = OutputFormat::named("ui").unwrap();
/// assert!(ui.about().contains("live UI events"));
/// let _encoder = ui.encoder();
/// ```
pub struct OutputFormat {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) encoder: fn() -> Box<dyn Encoder>,
}

impl fmt::Debug for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OutputFormat").field(&self.name).finish()
    }
}

impl PartialEq for OutputFormat {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for OutputFormat {}

impl OutputFormat {
    /// The name `--emit` takes.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the format writes: the text `roundup --help` shows under its
    /// name.
    pub fn about(&self) -> &'static str {
        self.about
    }

    /// A new encoder of this format.
    pub fn encoder(&self) -> Box<dyn Encoder> {
        (self.encoder)()
    }

    /// The format of this name.
    ///
    /// ```
    /// use roundup::encoders::OutputFormat;
    /// assert_eq!(OutputFormat::named("deepwork").map(OutputFormat::name), Some("deepwork"));
    /// assert!(OutputFormat::named("html").is_none());
    /// ```
    pub fn named(name: &str) -> Option<&'static OutputFormat> {
        REGISTRY.iter().copied().find(|format| format.name == name)
    }

    /// The default: the first row (`records`).
    pub fn default_format() -> &'static OutputFormat {
        REGISTRY[0]
    }
}
