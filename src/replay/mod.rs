//! Replaying a recorded stream: one builder per session, output encoded as
//! one of the registered output formats.
//!
//! This is what `roundup replay` runs, and what the conformance tests run
//! through the library. Lines are framed (raw JSON lines, or SSE `data:`
//! events; or, told by their first bytes, binary AWS event-stream frames
//! or the elements of one JSON array, or the values of a pretty-printed
//! JSON document), translated by the input format's
//! [`Adapter`], applied to the
//! builder of their session, and what the builders deliver is written by
//! the output format's [`Encoder`](crate::encoders::Encoder).

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use crate::adapters::InputFormat;
use crate::bad_line::BadLine;
use crate::encoders::{Framing, OutputFormat};

mod checkpoint;
mod eventstream;
mod framing;
mod json_array;
mod line_framer;
mod records;
mod replayer;
mod sessions;

pub use checkpoint::ReplayCheckpoint;
pub use line_framer::{LineFramer, Payload};
pub use records::{records, Records};
pub use replayer::Replayer;

/// What a replay reads and writes.
///
/// ```
/// use roundup::adapters::InputFormat;
/// use roundup::encoders::{Framing, OutputFormat};
/// use roundup::ReplayOptions;
///
/// let options = ReplayOptions::new()
///     .from(InputFormat::named("acp").unwrap())
///     .to(OutputFormat::named("deepwork").unwrap())
///     .framing(Framing::Sse);
/// assert_eq!(options.from.map(InputFormat::name), Some("acp"));
/// assert_eq!(ReplayOptions::default().to.name(), "records");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// The input format; `None` decides it from the first event that some
    /// format recognises ([`InputFormat::recognise`]), holding up to 64
    /// leading events that none does.
    pub from: Option<&'static InputFormat>,
    /// The output format.
    pub to: &'static OutputFormat,
    /// More output formats written from the same pass, each to its own
    /// output ([`Replayer::take_output_of`]): records and live UI events
    /// of one read of the input, say.
    pub also_to: Vec<&'static OutputFormat>,
    /// How output values are separated: JSON lines, or SSE events.
    pub framing: Framing,
    /// Keep at most this many sessions in memory, the others evicted as
    /// checkpoints (see [`Router`](crate::Router)); `None`: keep all.
    pub max_open_sessions: Option<usize>,
    /// Where evicted sessions go: a SQLite file of this directory (with
    /// the `sqlite` feature; a file a session without it), removed when the
    /// replay ends having taken every session back; in memory when `None`.
    pub evict_dir: Option<PathBuf>,
    /// A line (or SSE event) longer than this is not read into memory: it
    /// is read past in constant memory and reported as a `bad_line`.
    pub max_line_bytes: usize,
    /// Also keeps every record as a value ([`OutputLine`](crate::OutputLine)),
    /// for [`Replayer::take_records`] and [`records`]: a program that reads
    /// the rounds gets them typed, not as JSON to parse again.
    pub record_values: bool,
}

/// The default [`ReplayOptions::max_line_bytes`]: 256 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            from: None,
            to: OutputFormat::default_format(),
            also_to: Vec::new(),
            framing: Framing::Lines,
            max_open_sessions: None,
            evict_dir: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            record_values: false,
        }
    }
}

impl ReplayOptions {
    /// Input detected, records out as JSON lines.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `format` instead of detecting it.
    pub fn from(mut self, format: &'static InputFormat) -> Self {
        self.from = Some(format);
        self
    }

    /// Writes `format`.
    pub fn to(mut self, format: &'static OutputFormat) -> Self {
        self.to = format;
        self
    }

    /// Also writes `format`, from the same pass, as output number
    /// `1 + ` the formats added before it ([`Replayer::take_output_of`]).
    ///
    /// ```
    /// use roundup::encoders::OutputFormat;
    /// use roundup::{ReplayOptions, Replayer};
    ///
    /// let options = ReplayOptions::new().also_to(OutputFormat::named("ui").unwrap());
    /// let mut replayer = Replayer::new(&options).unwrap();
    /// replayer.feed(b"{\"op\":\"message\",\"text\":\"Hi\"}\n", &mut ());
    /// replayer.finish(&mut ());
    /// let (mut records, mut ui) = (Vec::new(), Vec::new());
    /// replayer.take_output(&mut records);
    /// replayer.take_output_of(1, &mut ui);
    /// assert!(records.starts_with(br#"{"type":"round""#));
    /// assert!(ui.starts_with(br#"{"event":"run_start""#));
    /// ```
    pub fn also_to(mut self, format: &'static OutputFormat) -> Self {
        self.also_to.push(format);
        self
    }

    /// Separates output values by `framing`.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Reads past lines longer than `bytes` (reported as `bad_line`)
    /// instead of holding them.
    ///
    /// ```
    /// let input = format!("{{\"op\":\"message\",\"text\":\"{}\"}}\n{{\"op\":\"message\",\"text\":\"ok\"}}\n", "x".repeat(5_000));
    /// let options = roundup::ReplayOptions::new().max_line_bytes(1_000);
    /// let mut out = Vec::new();
    /// let stats = roundup::replay(input.as_bytes(), &mut out, &options, &mut ()).unwrap();
    /// assert_eq!((stats.lines, stats.bad_lines), (2, 1));
    /// assert!(String::from_utf8(out).unwrap().contains("line 1: longer than 1000 bytes"));
    /// ```
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// Also keeps every record as a value, taken with
    /// [`Replayer::take_records`] ([`records`] sets it).
    pub fn record_values(mut self, keep: bool) -> Self {
        self.record_values = keep;
        self
    }

    /// Keeps at most `sessions` sessions in memory; the least recently used
    /// are evicted as checkpoints, into `dir` or (with `None`) memory, and
    /// restored when they are used again. Output does not change.
    pub fn evict(mut self, sessions: usize, dir: Option<PathBuf>) -> Self {
        self.max_open_sessions = Some(sessions);
        self.evict_dir = dir;
        self
    }
}

/// Counts of a finished replay.
///
/// ```
/// let input = b"{\"op\":\"message\",\"text\":\"Hi\",\"session\":\"a\"}\n\n{\"op\":\"oops\"\n";
/// let stats = roundup::replay(&input[..], std::io::sink(), &roundup::ReplayOptions::new(), &mut ()).unwrap();
/// assert_eq!((stats.lines, stats.bad_lines, stats.sessions), (3, 1, 2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayStats {
    /// Physical lines read, blank ones included (for an AWS event stream:
    /// frames).
    pub lines: u64,
    /// Lines (or SSE events) reported as `bad_line`.
    pub bad_lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Sessions seen (the session-less one included).
    pub sessions: usize,
    /// Payloads read: non-blank lines, SSE events, or a JSON array body's
    /// elements (and its faults of structure, each reported).
    pub payloads: u64,
    /// The input format read: the one asked for, or the one detected.
    pub format: Option<&'static InputFormat>,
    /// The input format the first bad payload looks like, when it looks
    /// like one: what to suggest when every payload was bad.
    pub bad_lines_look_like: Option<&'static InputFormat>,
    /// Payloads that read but held an event the input format does not know
    /// (kept as `unknown_event` anomalies).
    pub unknown_events: u64,
    /// Another input format the first such payload looks like, when it
    /// looks like one: what to suggest when most events were unknown.
    pub unknown_events_look_like: Option<&'static InputFormat>,
}

/// Why a replay stopped early. Bad input never does: it is reported as
/// `bad_line` and skipped.
///
/// The I/O error is the [`source`](std::error::Error::source), not part of
/// the message, so that an error chain prints it once.
///
/// ```
/// use std::error::Error;
/// let error = roundup::ReplayError::Read(std::io::Error::other("disk on fire"));
/// assert_eq!(error.to_string(), "cannot read the input");
/// assert_eq!(error.source().unwrap().to_string(), "disk on fire");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The input could not be read.
    #[error("cannot read the input")]
    Read(#[source] io::Error),
    /// The output could not be written.
    #[error("cannot write the output")]
    Write(#[source] io::Error),
    /// The directory for evicted sessions could not be made.
    #[error("cannot use the directory for evicted sessions")]
    EvictDir(#[source] io::Error),
}

/// Hooks for a caller that wants to show what a replay is doing.
///
/// ```
/// use roundup::{BadLine, ReplayObserver, ReplayOptions};
///
/// #[derive(Default)]
/// struct Skipped(Vec<u64>);
/// impl ReplayObserver for Skipped {
///     fn bad_line(&mut self, line: u64, _error: &BadLine) {
///         self.0.push(line);
///     }
/// }
///
/// let mut skipped = Skipped::default();
/// let input = b"{\"op\":\"message\",\"text\":\"Hi\"}\nnot json\n";
/// roundup::replay(&input[..], std::io::sink(), &ReplayOptions::new(), &mut skipped).unwrap();
/// assert_eq!(skipped.0, [2]);
/// ```
pub trait ReplayObserver {
    /// A line was skipped; it is also in the output as a `bad_line` anomaly.
    fn bad_line(&mut self, _line: u64, _error: &BadLine) {}
    /// Called about every 16 MiB of input.
    fn progress(&mut self, _bytes: u64, _lines: u64) {}
    /// Output of the first format, 64 KiB or more, made while
    /// one input line (or the end of input) is still being translated: an
    /// event that holds many rounds (a Gemini CLI chat document holds every
    /// message of the chat) writes them in one go.
    /// `true` when the bytes were taken (written out), and they are gone
    /// from the replayer; by default they stay for
    /// [`Replayer::take_output`], whole.
    ///
    /// ```
    /// use roundup::adapters::InputFormat;
    /// use roundup::{ReplayObserver, ReplayOptions, Replayer};
    ///
    /// /// Takes the output as it comes, in pieces.
    /// #[derive(Default)]
    /// struct Pieces(Vec<Vec<u8>>);
    /// impl ReplayObserver for Pieces {
    ///     fn output(&mut self, bytes: &[u8]) -> bool {
    ///         self.0.push(bytes.to_vec());
    ///         true
    ///     }
    /// }
    ///
    /// // A Gemini CLI chat document: one event, every message of the chat.
    /// let messages: Vec<String> = (0..400)
    ///     .map(|n| format!(r#"{{"id":"g{n}","type":"gemini","content":"{}","toolCalls":[{{"id":"t{n}","status":"success","result":"done"}}]}}"#, "x".repeat(200)))
    ///     .collect();
    /// let chat = format!(
    ///     r#"{{"sessionId":"s","projectHash":"p","messages":[{{"id":"u","type":"user","content":"go"}},{}]}}"#,
    ///     messages.join(","),
    /// );
    /// let options = ReplayOptions::new().from(InputFormat::named("gemini-cli-chat").unwrap());
    /// let mut replayer = Replayer::new(&options).unwrap();
    /// let mut pieces = Pieces::default();
    /// replayer.feed(chat.as_bytes(), &mut pieces);
    /// replayer.end_input(&mut pieces);
    /// while replayer.finish_next() {}
    /// assert!(pieces.0.len() > 1, "written as the document was translated");
    /// let mut streamed = pieces.0.concat();
    /// replayer.take_output(&mut streamed);
    ///
    /// let mut whole = Vec::new();
    /// roundup::replay(chat.as_bytes(), &mut whole, &options, &mut ()).unwrap();
    /// assert_eq!(streamed, whole);
    /// ```
    fn output(&mut self, _bytes: &[u8]) -> bool {
        false
    }
}

/// Observes nothing.
impl ReplayObserver for () {}

const PROGRESS_EVERY: u64 = 16 << 20;
/// Output is written out once it holds this much: at the end of input, and
/// while one line makes much of it ([`ReplayObserver::output`]).
pub(crate) const FLUSH_AT: usize = 1 << 16;

/// Replays a recorded stream from `input`, writing the output of `options`
/// to `output`: the I/O loop around a [`Replayer`].
///
/// Output is written and flushed whenever the input's buffer runs dry,
/// before the next read (which may block, on a pipe): a live stream's
/// output appears as soon as its input line is read, while a file is still
/// written in large blocks.
///
/// ```
/// let ops = br#"{"op":"message","text":"Hi"}
/// {"op":"finish","reason":"canceled"}
/// "#;
/// let mut out = Vec::new();
/// let stats = roundup::replay(&ops[..], &mut out, &roundup::ReplayOptions::new(), &mut ()).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// let lines: Vec<&str> = text.lines().collect();
/// assert!(lines[0].starts_with(r#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hi""#));
/// assert!(lines[1].starts_with(r#"{"type":"summary""#));
/// assert_eq!(stats.lines, 2);
/// ```
pub fn replay(
    mut input: impl BufRead,
    mut output: impl Write,
    options: &ReplayOptions,
    observer: &mut dyn ReplayObserver,
) -> Result<ReplayStats, ReplayError> {
    let mut replayer = Replayer::new(options)?;
    let mut next_progress = PROGRESS_EVERY;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(ReplayError::Read(error)),
        };
        if chunk.is_empty() {
            break;
        }
        let read = chunk.len();
        let mut streaming = Streaming { observer: &mut *observer, output: &mut output, failed: None };
        replayer.feed(chunk, &mut streaming);
        streaming.check()?;
        input.consume(read);
        let stats = replayer.stats();
        if stats.bytes >= next_progress {
            next_progress = stats.bytes + PROGRESS_EVERY;
            observer.progress(stats.bytes, stats.lines);
        }
        // The buffer ran dry: the next read may wait for more input.
        write_out(&mut replayer, &mut output)?;
    }
    let mut streaming = Streaming { observer: &mut *observer, output: &mut output, failed: None };
    replayer.end_input(&mut streaming);
    streaming.check()?;
    // A million sessions' final rounds are never held at once.
    while replayer.finish_next() {
        if replayer.pending_output() > FLUSH_AT {
            write_out(&mut replayer, &mut output)?;
        }
    }
    write_out(&mut replayer, &mut output)?;
    Ok(replayer.into_stats())
}

/// The caller's observer, and the output written as soon as a line makes
/// much of it ([`ReplayObserver::output`]): a turn held and translated at
/// once is written as it is translated, not gathered whole first.
struct Streaming<'o, W: Write> {
    observer: &'o mut dyn ReplayObserver,
    output: &'o mut W,
    /// The first write that failed; the output since stays in the replayer.
    failed: Option<io::Error>,
}

impl<W: Write> Streaming<'_, W> {
    fn check(&mut self) -> Result<(), ReplayError> {
        self.failed.take().map_or(Ok(()), |error| Err(ReplayError::Write(error)))
    }
}

impl<W: Write> ReplayObserver for Streaming<'_, W> {
    fn bad_line(&mut self, line: u64, error: &BadLine) {
        self.observer.bad_line(line, error);
    }

    fn progress(&mut self, bytes: u64, lines: u64) {
        self.observer.progress(bytes, lines);
    }

    fn output(&mut self, bytes: &[u8]) -> bool {
        if self.failed.is_some() {
            return false;
        }
        match self.output.write_all(bytes) {
            Ok(()) => true,
            Err(error) => {
                self.failed = Some(error);
                false
            }
        }
    }
}

/// Writes and flushes the pending output.
fn write_out(replayer: &mut Replayer, output: &mut impl Write) -> Result<(), ReplayError> {
    replayer.write_output(output).and_then(|()| output.flush()).map_err(ReplayError::Write)
}
