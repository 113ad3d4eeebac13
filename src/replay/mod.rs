//! Replaying a recorded stream: one builder per session, output encoded as
//! one of the registered output formats.
//!
//! This is what `roundup replay` runs, and what the conformance tests run
//! through the library. Lines are framed (raw JSON lines, or SSE `data:`
//! events), translated by the input format's [`Adapter`], applied to the
//! builder of their session, and what the builders deliver is written by
//! the output format's [`Encoder`](crate::encoders::Encoder).

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use crate::adapters::{Adapter, InputFormat};
use crate::bad_line::BadLine;
use crate::encoders::{Framing, OutputFormat};
use crate::handler::StreamHandler;
use crate::model::AnomalyKind;
use crate::router::{CheckpointStore, DirectoryStore, MemoryStore};

mod framing;
mod sessions;

use framing::{frame, Framed};
use sessions::Sessions;

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
    /// How output values are separated: JSON lines, or SSE events.
    pub framing: Framing,
    /// Keep at most this many sessions in memory, the others evicted as
    /// checkpoints (see [`Router`](crate::Router)); `None`: keep all.
    pub max_open_sessions: Option<usize>,
    /// Where evicted sessions go: files of this directory; in memory when
    /// `None`.
    pub evict_dir: Option<PathBuf>,
    /// A line (or SSE event) longer than this is not read into memory: it
    /// is read past in constant memory and reported as a `bad_line`.
    pub max_line_bytes: usize,
}

/// The default [`ReplayOptions::max_line_bytes`]: 256 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            from: None,
            to: OutputFormat::default_format(),
            framing: Framing::Lines,
            max_open_sessions: None,
            evict_dir: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
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
    /// Physical lines read, blank ones included.
    pub lines: u64,
    /// Lines (or SSE events) reported as `bad_line`.
    pub bad_lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Sessions seen (the session-less one included).
    pub sessions: usize,
    /// Payloads read: non-blank lines, or SSE events.
    pub payloads: u64,
    /// The input format read: the one asked for, or the one detected.
    pub format: Option<&'static InputFormat>,
    /// The input format the first bad payload looks like, when it looks
    /// like one: what to suggest when every payload was bad.
    pub bad_lines_look_like: Option<&'static InputFormat>,
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
}

/// Observes nothing.
impl ReplayObserver for () {}

const PROGRESS_EVERY: u64 = 16 << 20;
/// At the end of input, output is written out once it holds this much.
const FLUSH_AT: usize = 1 << 16;

/// How many leading payloads that no format recognises `--from auto` reads
/// past before it gives up looking and reads the input as the first
/// format of the registry.
const UNDECIDED_AT_MOST: usize = 64;
/// A partial line grown past this by one huge line is released afterwards.
const KEEP_LINE_CAPACITY: usize = 1 << 20;

/// Replays a recorded stream from `input`, writing the output of `options`
/// to `output`.
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
    let mut replay = Replay::new(options)?;
    let limit = options.max_line_bytes;
    // A line that straddles two reads of the input.
    let mut partial = Vec::new();
    // The length so far of a line longer than the limit, being read past.
    let mut skipping: Option<u64> = None;
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
        let mut rest = chunk;
        // Lines within the chunk are read where they lie, not copied.
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end + 1);
            if let Some(skipped) = skipping.take() {
                replay.oversized(skipped + line.len() as u64, observer);
            } else if partial.len() + line.len() > limit.saturating_add(1) {
                replay.oversized((partial.len() + line.len()) as u64, observer);
                partial = Vec::new();
            } else if partial.is_empty() {
                replay.line(line, observer);
            } else {
                partial.extend_from_slice(line);
                replay.line(&partial, observer);
                partial.clear();
                if partial.capacity() > KEEP_LINE_CAPACITY {
                    partial = Vec::new();
                }
            }
            rest = after;
        }
        match skipping.as_mut() {
            Some(skipped) => *skipped += rest.len() as u64,
            None if partial.len() + rest.len() > limit => {
                // Read past from here on: the line is never held whole.
                skipping = Some((partial.len() + rest.len()) as u64);
                partial = Vec::new();
            }
            None => partial.extend_from_slice(rest),
        }
        input.consume(read);
        replay.stats.bytes += read as u64;
        if replay.stats.bytes >= next_progress {
            next_progress = replay.stats.bytes + PROGRESS_EVERY;
            observer.progress(replay.stats.bytes, replay.stats.lines);
        }
        // The buffer ran dry: the next read may wait for more input.
        replay.flush(&mut output)?;
    }
    if let Some(skipped) = skipping {
        replay.oversized(skipped, observer);
    } else if !partial.is_empty() {
        replay.line(&partial, observer);
    }
    replay.end(observer, &mut output)?;
    replay.flush(&mut output)?;
    Ok(replay.stats)
}

/// A replay in progress: the adapter, the sessions, the SSE event being
/// gathered.
#[derive(Debug)]
struct Replay {
    /// `None` until a payload decides it, for a detected format.
    adapter: Option<Box<dyn Adapter>>,
    /// Payloads (and their line numbers) read before the format was
    /// decided, that no format recognises: a leading banner or log line
    /// does not decide the format of a whole capture. They go through the
    /// adapter once it is chosen, so each is still reported.
    undecided: Vec<(Vec<u8>, u64)>,
    sessions: Sessions,
    /// The payload of an SSE event not yet complete, and its first line.
    event: Vec<u8>,
    event_line: u64,
    /// The SSE event being gathered grew past the line limit: its length.
    event_oversized: Option<u64>,
    max_line_bytes: usize,
    stats: ReplayStats,
}

impl Replay {
    fn new(options: &ReplayOptions) -> Result<Self, ReplayError> {
        let eviction = match (options.max_open_sessions, &options.evict_dir) {
            (None, _) => None,
            (Some(keep), None) => Some((keep, Box::new(MemoryStore::default()) as Box<dyn CheckpointStore>)),
            (Some(keep), Some(dir)) => {
                let store = DirectoryStore::new(dir).map_err(ReplayError::EvictDir)?;
                Some((keep, Box::new(store) as Box<dyn CheckpointStore>))
            }
        };
        Ok(Replay {
            adapter: options.from.map(InputFormat::adapter),
            undecided: Vec::new(),
            sessions: Sessions::new(options.to.encoder(), options.framing, eviction),
            event: Vec::new(),
            event_line: 0,
            event_oversized: None,
            max_line_bytes: options.max_line_bytes,
            stats: ReplayStats { format: options.from, ..ReplayStats::default() },
        })
    }

    /// Takes one physical line (with or without its `\n`): raw lines are
    /// payloads of their own, SSE `data:` lines are gathered until the blank
    /// line that ends their event.
    fn line(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        self.stats.lines += 1;
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match frame(line) {
            Framed::Data(data) => {
                if let Some(oversized) = self.event_oversized.as_mut() {
                    *oversized += data.len() as u64 + 1;
                    return;
                }
                if self.event.is_empty() {
                    self.event_line = self.stats.lines;
                } else {
                    self.event.push(b'\n');
                }
                if self.event.len() + data.len() > self.max_line_bytes {
                    self.event_oversized = Some((self.event.len() + data.len()) as u64);
                    self.event = Vec::new();
                    return;
                }
                self.event.extend_from_slice(data);
            }
            Framed::Blank | Framed::Field => self.end_event(observer),
            Framed::Line(payload) => {
                self.end_event(observer);
                self.payload(payload, self.stats.lines, observer);
            }
        }
    }

    /// Decodes the SSE event gathered so far, if any.
    fn end_event(&mut self, observer: &mut dyn ReplayObserver) {
        if let Some(bytes) = self.event_oversized.take() {
            return self.too_long("event", self.event_line, bytes, observer);
        }
        if self.event.is_empty() {
            return;
        }
        let event = std::mem::take(&mut self.event);
        self.payload(&event, self.event_line, observer);
        self.event = event;
        self.event.clear();
    }

    /// A line longer than the limit, read past: counted, reported.
    fn oversized(&mut self, bytes: u64, observer: &mut dyn ReplayObserver) {
        self.end_event(observer);
        self.stats.lines += 1;
        self.too_long("line", self.stats.lines, bytes, observer);
    }

    fn too_long(&mut self, what: &str, number: u64, bytes: u64, observer: &mut dyn ReplayObserver) {
        self.stats.payloads += 1;
        let error = BadLine::new(format!(
            "longer than {} bytes ({bytes} bytes): read past, not held (--max-line-bytes raises the limit)",
            self.max_line_bytes
        ));
        self.bad(what, number, &error, observer);
    }

    /// Translates one payload (a JSON value) found at line `number`; a bad
    /// one becomes a `bad_line` anomaly of its session.
    fn payload(&mut self, payload: &[u8], number: u64, observer: &mut dyn ReplayObserver) {
        self.stats.payloads += 1;
        if self.adapter.is_none() {
            match InputFormat::recognise(payload) {
                Some(format) => self.decide(format, observer),
                None if self.undecided.len() < UNDECIDED_AT_MOST => {
                    return self.undecided.push((payload.to_vec(), number));
                }
                None => self.decide(InputFormat::detect(payload), observer),
            }
        }
        self.translate(payload, number, observer);
    }

    /// Chooses the input format, and reads the payloads that waited for it.
    fn decide(&mut self, format: &'static InputFormat, observer: &mut dyn ReplayObserver) {
        self.stats.format = Some(format);
        self.adapter = Some(format.adapter());
        for (payload, number) in std::mem::take(&mut self.undecided) {
            self.translate(&payload, number, observer);
        }
    }

    fn translate(&mut self, payload: &[u8], number: u64, observer: &mut dyn ReplayObserver) {
        let Some(adapter) = self.adapter.as_mut() else { return };
        let Err(error) = adapter.translate(payload, &mut self.sessions) else {
            return;
        };
        if self.stats.bad_lines_look_like.is_none() {
            self.stats.bad_lines_look_like = InputFormat::recognise(payload);
        }
        self.bad("line", number, &error, observer);
    }

    /// A payload (`what` at line `number`) that cannot be read: counted,
    /// an anomaly `bad_line` of its session that says where and why, and
    /// the observer told.
    fn bad(&mut self, what: &str, number: u64, error: &BadLine, observer: &mut dyn ReplayObserver) {
        self.stats.bad_lines += 1;
        if let Some(at_ms) = error.at_ms {
            self.sessions.set_clock(at_ms);
        }
        let detail = format!("{what} {number}: {}", error.reason);
        self.sessions.get(error.session.as_deref()).anomaly(AnomalyKind::BadLine, None, &detail);
        observer.bad_line(number, error);
    }

    /// End of input: the last SSE event, then every session's open run
    /// finishes, in order of first appearance, the output written out as
    /// it grows (a million sessions' final rounds are never held at once).
    fn end(&mut self, observer: &mut dyn ReplayObserver, output: &mut impl Write) -> Result<(), ReplayError> {
        self.end_event(observer);
        if self.adapter.is_none() && !self.undecided.is_empty() {
            self.decide(InputFormat::detect(b""), observer);
        }
        if let Some(adapter) = self.adapter.as_mut() {
            adapter.end(&mut self.sessions);
        }
        self.stats.sessions = self.sessions.count();
        while self.sessions.finish_first() {
            if self.sessions.pending_output() > FLUSH_AT {
                self.flush(output)?;
            }
        }
        Ok(())
    }

    /// Writes and flushes the pending output.
    fn flush(&self, output: &mut impl Write) -> Result<(), ReplayError> {
        self.sessions.flush(output).and_then(|()| output.flush()).map_err(ReplayError::Write)
    }
}
