//! The replay as a state machine: bytes in, output bytes out, no I/O.
//!
//! [`replay`](crate::replay) is the loop that reads a file or a pipe into a
//! [`Replayer`] and writes what it produces; anything else that has input in
//! its own hands (a message broker's records, a Python iterator, an HTTP
//! body) drives the same [`Replayer`] and gets the same output, byte for
//! byte, the way `quinn` drives `quinn-proto`.

use std::io::{self, Write};

use smallvec::SmallVec;

use crate::adapters::CallSink;
use crate::adapters::{bedrock, Adapter, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::AnomalyKind;
use crate::router::{CheckpointStore, MemoryStore};
use crate::wire::OutputLine;

use super::checkpoint::ReplayCheckpoint;
use super::eventstream::{self, EventStream, Frame, Sniffed};
use super::framing::BOM;
use super::json_array::{Detect, Detected, JsonArray, Piece};
use super::line_framer::{LineFramer, Payload};
use super::sessions::Sessions;
use super::{ReplayError, ReplayObserver, ReplayOptions, ReplayStats};
use crate::machine::CheckpointError;

/// How many leading payloads that no format recognises `--from auto` reads
/// past before it gives up looking and reads the input as the first
/// format of the registry.
const UNDECIDED_AT_MOST: usize = 64;
/// A partial line grown past this by one huge line is released afterwards.
const KEEP_LINE_CAPACITY: usize = 1 << 20;

/// A replay in progress, driven by its caller: input goes in as bytes
/// ([`feed`](Replayer::feed)) or as whole payloads
/// ([`feed_payload`](Replayer::feed_payload)), and the output of the
/// [`ReplayOptions`]' format accumulates until it is taken.
///
/// The output is exactly what [`replay`](crate::replay) writes for the same
/// input, however the input is cut into pieces.
///
/// ```
/// use roundup::{ReplayOptions, Replayer};
///
/// let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
/// // Input arrives in pieces that cut lines anywhere.
/// replayer.feed(br#"{"op":"message","te"#, &mut ());
/// replayer.feed(b"xt\":\"Hi\"}\n{\"op\":\"finish\",\"reason\":\"canceled\"}\n", &mut ());
/// let mut out = Vec::new();
/// replayer.take_output(&mut out);
/// assert!(out.starts_with(br#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hi""#));
///
/// // End of input: what is still open finishes as `interrupted`.
/// replayer.finish(&mut ());
/// assert_eq!(replayer.stats().lines, 2);
/// ```
#[derive(Debug)]
pub struct Replayer {
    /// `None` until a payload decides it, for a detected format.
    adapter: Option<Box<dyn Adapter>>,
    /// Payloads (and their line numbers) read before the format was
    /// decided, that no format recognises: a leading banner or log line
    /// does not decide the format of a whole capture. They go through the
    /// adapter once it is chosen, so each is still reported.
    undecided: Vec<(Vec<u8>, u64)>,
    sessions: Sessions,
    /// A line that straddles two pieces of input.
    partial: Vec<u8>,
    /// The length so far of a line longer than the limit, being read past.
    skipping: Option<u64>,
    /// The SSE event not yet complete.
    framer: LineFramer,
    max_line_bytes: usize,
    /// The first bytes have yet to decide the framing (they are held in
    /// `partial` meanwhile): an AWS event stream, a JSON array body, or
    /// lines.
    sniffing: bool,
    /// The input may be an AWS event stream: for a detected format, and
    /// for the one format that event streams carry.
    event_streams: bool,
    /// How far the first bytes were read for a JSON array body (not in a
    /// checkpoint: a restored replay reads the held head again).
    detect: Detect,
    /// The input is an AWS event stream: its frames' decoder.
    frames: Option<EventStream>,
    /// The input is a JSON array body: its splitter.
    array: Option<JsonArray>,
    stats: ReplayStats,
}

/// The store of the sessions a replay evicts into `dir`: scratch space (a
/// replay that stops starts over). One SQLite file where the store is
/// built in (a row a session, where files cost a creation, a rename and a
/// removal each: 5× faster over a million sessions), else a file a
/// session.
fn evict_store(dir: &std::path::Path) -> Result<Box<dyn CheckpointStore>, ReplayError> {
    let named = |e: io::Error| ReplayError::EvictDir(io::Error::new(e.kind(), format!("{}: {e}", dir.display())));
    #[cfg(feature = "sqlite")]
    let store = crate::router::SqliteStore::new(dir).map_err(named)?;
    #[cfg(not(feature = "sqlite"))]
    let store = crate::router::DirectoryStore::new(dir).map_err(named)?.sync(false);
    Ok(Box::new(store))
}

impl Replayer {
    /// A replay of `options`, before any input.
    ///
    /// # Errors
    ///
    /// [`ReplayError::EvictDir`] when the directory for evicted sessions
    /// cannot be made.
    pub fn new(options: &ReplayOptions) -> Result<Self, ReplayError> {
        let formats = std::iter::once(options.to).chain(options.also_to.iter().copied()).collect();
        Self::with_formats(options, formats)
    }

    /// A replay that keeps its records as values only
    /// ([`take_records`](Replayer::take_records)) and writes no output
    /// format: what a reader of typed records (the records iterator, the
    /// database) needs, without the cost of bytes it would throw away.
    pub(crate) fn values_only(options: &ReplayOptions) -> Result<Self, ReplayError> {
        Self::with_formats(&options.clone().record_values(true), super::sessions::Formats::new())
    }

    fn with_formats(options: &ReplayOptions, formats: super::sessions::Formats) -> Result<Self, ReplayError> {
        let eviction = match (options.max_open_sessions, &options.evict_dir) {
            (None, _) => None,
            (Some(keep), None) => Some((keep, Box::new(MemoryStore::default()) as Box<dyn CheckpointStore>)),
            (Some(keep), Some(dir)) => Some((keep, evict_store(dir)?)),
        };
        Ok(Replayer {
            adapter: options.from.map(InputFormat::adapter),
            undecided: Vec::new(),
            sessions: Sessions::new(formats, options.framing, eviction, options.record_values),
            partial: Vec::new(),
            skipping: None,
            framer: LineFramer::new().max_bytes(options.max_line_bytes),
            max_line_bytes: options.max_line_bytes,
            sniffing: true,
            event_streams: options.from.is_none_or(|from| from == &bedrock::FORMAT),
            detect: Detect::default(),
            frames: None,
            array: None,
            stats: ReplayStats { format: options.from, ..ReplayStats::default() },
        })
    }

    /// Reads a piece of input: whole lines are read at once, where they
    /// lie; a line cut at the end of the piece waits for the next. An input
    /// that begins with an AWS event-stream prelude is read as frames, one
    /// that begins with `[` as a JSON array body, element by element.
    pub fn feed(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        self.stats.bytes += bytes.len() as u64;
        if self.sniffing && !self.sniff(bytes, false, observer) {
            return;
        }
        if self.array.is_some() {
            return self.read_array(bytes, observer);
        }
        if self.frames.is_some() {
            return self.read_frames(bytes, observer);
        }
        self.lines(bytes, observer);
    }

    /// Decides the framing from the first bytes, `bytes` the piece just
    /// read (`ended`: the input ended). Once decided, what was held is read
    /// in that framing; `true` when `bytes` are left for the caller to
    /// read, `false` when they were held or read here.
    ///
    /// Run once per input in the common case (a first byte that decides
    /// at once, read where it lies), never per line.
    fn sniff(&mut self, bytes: &[u8], ended: bool, observer: &mut dyn ReplayObserver) -> bool {
        if self.event_streams {
            let head: SmallVec<[u8; eventstream::PRELUDE]> =
                self.partial.iter().chain(bytes).take(eventstream::PRELUDE).copied().collect();
            match eventstream::sniff(&head) {
                Sniffed::Undecided if !ended => {
                    self.partial.extend_from_slice(bytes);
                    return false;
                }
                Sniffed::EventStream => {
                    self.sniffing = false;
                    self.frames = Some(EventStream::default());
                    if self.adapter.is_none() {
                        // The one format whose bodies are event streams.
                        self.decide(&bedrock::FORMAT, observer);
                    }
                    let head = std::mem::take(&mut self.partial);
                    self.read_frames(&head, observer);
                    return true;
                }
                _ => {}
            }
        }
        // The head read where it lies when nothing is held before it.
        let held = !self.partial.is_empty();
        if held {
            self.partial.extend_from_slice(bytes);
        }
        let head = if held { &self.partial[..] } else { bytes };
        let detected = self.detect.read(head, ended, self.max_line_bytes);
        if detected == Detected::Undecided {
            if !held {
                self.partial.extend_from_slice(bytes);
            }
            return false;
        }
        self.sniffing = false;
        let head = std::mem::take(&mut self.partial);
        if detected == Detected::Array || detected == Detected::Document {
            self.array =
                Some(if detected == Detected::Document { JsonArray::documents() } else { JsonArray::default() });
            self.read_array(&head, observer);
        } else {
            self.lines(&head, observer);
        }
        !held
    }

    /// Reads a piece of a JSON array body: each element it completes is
    /// one payload, numbered by the line it begins on.
    fn read_array(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        // Moved out while it hands elements to the replay, as the frames'
        // decoder is.
        let Some(array) = self.array.as_mut() else { return };
        let mut array = std::mem::take(array);
        array.feed(bytes, self.max_line_bytes, &mut |piece| self.on_piece(piece, observer));
        self.stats.lines = array.lines();
        self.array = Some(array);
    }

    fn on_piece(&mut self, piece: Piece<'_>, observer: &mut dyn ReplayObserver) {
        match piece {
            Piece::Element { line, json } => self.payload(json, line, observer),
            Piece::Bad { line, reason } => {
                self.stats.payloads += 1;
                self.bad("line", line, &BadLine::new(reason), observer);
            }
            Piece::TooLong { line, bytes } => self.too_long("line", line, bytes, observer),
        }
    }

    /// Reads a piece of an event stream: each frame it completes is one
    /// payload, numbered as the lines of a text input are.
    fn read_frames(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        // The decoder is moved out while it hands frames to the replay; an
        // empty one (no allocation) stands in, so that the replay still
        // knows it reads frames.
        let Some(frames) = self.frames.as_mut() else { return };
        let mut frames = std::mem::take(frames);
        frames.feed(bytes, self.max_line_bytes, &mut |frame| self.on_frame(frame, observer));
        self.frames = Some(frames);
    }

    fn on_frame(&mut self, frame: Frame<'_>, observer: &mut dyn ReplayObserver) {
        self.stats.lines += 1;
        match frame {
            Frame::Event { number, json } => self.payload(json, number, observer),
            Frame::Bad { number, reason } => {
                self.stats.payloads += 1;
                self.bad("frame", number, &BadLine::new(reason), observer);
            }
            Frame::TooLong { number, bytes } => self.too_long("frame", number, bytes, observer),
        }
    }

    /// Reads a piece of a text input, line by line.
    fn lines(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        let limit = self.max_line_bytes;
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end + 1);
            if let Some(skipped) = self.skipping.take() {
                self.oversized(skipped + line.len() as u64, observer);
            } else if self.partial.len() + line.len() > limit.saturating_add(1) {
                self.oversized((self.partial.len() + line.len()) as u64, observer);
                self.partial = Vec::new();
            } else if self.partial.is_empty() {
                self.line(line, observer);
            } else {
                let mut partial = std::mem::take(&mut self.partial);
                partial.extend_from_slice(line);
                self.line(&partial, observer);
                partial.clear();
                if partial.capacity() <= KEEP_LINE_CAPACITY {
                    self.partial = partial;
                }
            }
            rest = after;
        }
        match self.skipping.as_mut() {
            Some(skipped) => *skipped += rest.len() as u64,
            None if self.partial.len() + rest.len() > limit => {
                // Read past from here on: the line is never held whole.
                self.skipping = Some((self.partial.len() + rest.len()) as u64);
                self.partial = Vec::new();
            }
            None => self.partial.extend_from_slice(rest),
        }
    }

    /// Reads one whole payload (the bytes of one JSON value: a broker's
    /// record, an event already parsed by the caller), counted as the next
    /// line, with no framing.
    ///
    /// ```
    /// use roundup::{ReplayOptions, Replayer};
    ///
    /// let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
    /// replayer.feed_payload(br#"{"op":"message","text":"a\nb"}"#, &mut ());
    /// replayer.feed_payload(b"not json", &mut ());
    /// replayer.finish(&mut ());
    /// let mut out = Vec::new();
    /// replayer.take_output(&mut out);
    /// assert!(String::from_utf8(out).unwrap().contains(r#""detail":"line 2: not valid JSON: expected ident (column 2)""#));
    /// ```
    pub fn feed_payload(&mut self, payload: &[u8], observer: &mut dyn ReplayObserver) {
        self.end_partial(observer);
        self.end_event(observer);
        self.stats.bytes += payload.len() as u64;
        if payload.len() > self.max_line_bytes {
            return self.oversized(payload.len() as u64, observer);
        }
        self.stats.lines += 1;
        let payload = if self.stats.lines == 1 { payload.strip_prefix(BOM).unwrap_or(payload) } else { payload };
        self.payload(payload, self.stats.lines, observer);
    }

    /// The input ended: the line cut at its end, the last SSE event, then
    /// what the adapter still holds. Open runs stay open until
    /// [`finish_next`](Replayer::finish_next).
    pub fn end_input(&mut self, observer: &mut dyn ReplayObserver) {
        if self.sniffing {
            self.sniff(b"", true, observer);
        }
        if let Some(array) = self.array.as_mut() {
            let mut array = std::mem::take(array);
            array.end(self.max_line_bytes, &mut |piece| self.on_piece(piece, observer));
            self.stats.lines = array.lines();
            self.array = Some(array);
        }
        if let Some(frames) = self.frames.as_mut() {
            let mut frames = std::mem::take(frames);
            frames.end(&mut |frame| self.on_frame(frame, observer));
            self.frames = Some(frames);
        }
        self.end_partial(observer);
        self.end_event(observer);
        if self.adapter.is_none() && !self.undecided.is_empty() {
            self.decide(InputFormat::detect(b""), observer);
        }
        if let Some(adapter) = self.adapter.as_mut() {
            adapter.end(&mut Streamed { sessions: &mut self.sessions, observer });
        }
        self.stats.sessions = self.sessions.count();
    }

    /// Finishes the open run of the session seen first that has one (as
    /// `interrupted`, writing its summary); `false` when none is left. One
    /// session at a time, so that output can be taken in between.
    pub fn finish_next(&mut self) -> bool {
        self.sessions.finish_first()
    }

    /// [`end_input`](Replayer::end_input), then every open run finished
    /// at once, for a caller that takes the output afterwards rather than
    /// session by session with [`finish_next`](Replayer::finish_next).
    pub fn finish(&mut self, observer: &mut dyn ReplayObserver) {
        self.end_input(observer);
        while self.finish_next() {}
    }

    /// Moves the records kept as values so far (with
    /// [`ReplayOptions::record_values`]) to the end of `out`, in the order
    /// the output has them; none without that option.
    ///
    /// ```
    /// use roundup::{OutputLine, ReplayOptions, Replayer};
    ///
    /// let mut replayer = Replayer::new(&ReplayOptions::new().record_values(true)).unwrap();
    /// replayer.feed(b"{\"op\":\"message\",\"text\":\"Hi\"}\n", &mut ());
    /// replayer.finish(&mut ());
    /// let mut records = Vec::new();
    /// replayer.take_records(&mut records);
    /// assert!(matches!(&records[0], OutputLine::Round(round) if round.message == "Hi"));
    /// assert!(matches!(&records[1], OutputLine::Summary(_)));
    /// ```
    pub fn take_records(&mut self, out: &mut Vec<OutputLine>) {
        self.sessions.take_values(out);
    }

    /// Forgets the output of every format (a reader of the records as
    /// values has no use for their bytes).
    pub(crate) fn discard_output(&mut self) {
        self.sessions.clear_all_output();
    }

    /// Bytes of output not taken yet (of the first output format).
    pub fn pending_output(&self) -> usize {
        self.sessions.output(0).len()
    }

    /// Moves the output produced so far to the end of `out`.
    pub fn take_output(&mut self, out: &mut Vec<u8>) {
        self.take_output_of(0, out);
    }

    /// Moves the output of format `index` produced so far to the end of
    /// `out`: 0 is [`ReplayOptions::to`], 1 and on those of
    /// [`ReplayOptions::also_to`] in order (nothing for another index).
    pub fn take_output_of(&mut self, index: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.sessions.output(index));
        self.sessions.clear_output(index);
    }

    /// Writes the output produced so far to `out`; it is gone from here
    /// once written.
    ///
    /// # Errors
    ///
    /// What writing to `out` returns; the output is then kept.
    pub fn write_output(&mut self, out: &mut impl Write) -> io::Result<()> {
        let pending = self.sessions.output(0);
        if !pending.is_empty() {
            out.write_all(pending)?;
            self.sessions.clear_output(0);
        }
        Ok(())
    }

    /// The replay's state between two pieces of input: the adapter's, the
    /// framing's, every open session's, the counts, the clock and the
    /// output format's. Output not taken yet is not in it: take it first.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::NotSaveable`] when the input or an output format
    /// keeps a state that cannot be saved, [`CheckpointError::Store`] when
    /// an evicted session's checkpoint cannot be read back.
    pub fn checkpoint(&mut self) -> Result<ReplayCheckpoint, CheckpointError> {
        let sessions = self.sessions.checkpoint()?;
        let mut checkpoint = ReplayCheckpoint::new();
        checkpoint.format = self.stats.format.map(|f| f.name().to_owned());
        checkpoint.adapter = match (&self.adapter, self.stats.format) {
            (Some(adapter), Some(format)) => {
                adapter.save().ok_or_else(|| CheckpointError::NotSaveable(format!("input format {}", format.name())))?
            }
            _ => serde_json::Value::Null,
        };
        checkpoint.undecided.clone_from(&self.undecided);
        checkpoint.partial.clone_from(&self.partial);
        checkpoint.skipping = self.skipping;
        checkpoint.event.clone_from(&self.framer.event);
        checkpoint.event_line = self.framer.event_line;
        checkpoint.event_oversized = self.framer.event_oversized;
        checkpoint.eventstream.clone_from(&self.frames);
        checkpoint.json_array.clone_from(&self.array);
        checkpoint.lines = self.stats.lines;
        checkpoint.bad_lines = self.stats.bad_lines;
        checkpoint.bytes = self.stats.bytes;
        checkpoint.payloads = self.stats.payloads;
        checkpoint.bad_lines_look_like = self.stats.bad_lines_look_like.map(|f| f.name().to_owned());
        checkpoint.clock = self.sessions.now_ms();
        checkpoint.sessions = sessions;
        Ok(checkpoint)
    }

    /// Continues from a checkpoint, on a replay that has read nothing yet
    /// (made with the same options as the one checkpointed).
    ///
    /// # Errors
    ///
    /// [`CheckpointError`] when the checkpoint does not fit this replay
    /// (another input format than its options say, an unknown format, a
    /// replay that read input already) or a part of it is corrupt. After
    /// an error, discard this replay and start another.
    pub fn restore(&mut self, checkpoint: ReplayCheckpoint) -> Result<(), CheckpointError> {
        if self.stats.lines > 0 || self.stats.bytes > 0 {
            return Err(CheckpointError::Inconsistent("a checkpoint restored into a replay that read input".into()));
        }
        checkpoint.check_version()?;
        let format = ReplayCheckpoint::format_named(checkpoint.format.as_deref())?;
        if let (Some(asked), Some(saved)) = (self.stats.format, format) {
            if !std::ptr::eq(asked, saved) {
                let detail = format!("a replay of {} restored from one of {}", asked.name(), saved.name());
                return Err(CheckpointError::Inconsistent(detail));
            }
        }
        let mut adapter = format.or(self.stats.format).map(InputFormat::adapter);
        if let Some(adapter) = adapter.as_mut() {
            adapter.restore(checkpoint.adapter)?;
        }
        let look_like = ReplayCheckpoint::format_named(checkpoint.bad_lines_look_like.as_deref())?;
        self.sessions.restore(checkpoint.sessions)?;
        self.adapter = adapter;
        self.undecided = checkpoint.undecided;
        self.partial = checkpoint.partial;
        self.skipping = checkpoint.skipping;
        self.framer.event = checkpoint.event;
        self.framer.event_line = checkpoint.event_line;
        self.framer.event_oversized = checkpoint.event_oversized;
        // The framing was decided, unless every byte read is still held
        // for the first bytes to decide it.
        self.sniffing = checkpoint.eventstream.is_none()
            && checkpoint.json_array.is_none()
            && checkpoint.lines == 0
            && self.partial.len() as u64 == checkpoint.bytes;
        self.frames = checkpoint.eventstream;
        self.array = checkpoint.json_array;
        self.sessions.set_clock(checkpoint.clock);
        self.stats = ReplayStats {
            lines: checkpoint.lines,
            bad_lines: checkpoint.bad_lines,
            bytes: checkpoint.bytes,
            payloads: checkpoint.payloads,
            format: format.or(self.stats.format),
            bad_lines_look_like: look_like,
            ..ReplayStats::default()
        };
        Ok(())
    }

    /// What was read so far.
    pub fn stats(&self) -> &ReplayStats {
        &self.stats
    }

    /// What was read, once the replay is over.
    pub fn into_stats(self) -> ReplayStats {
        self.stats
    }

    /// The line cut at the end of the input so far, read as a whole one.
    fn end_partial(&mut self, observer: &mut dyn ReplayObserver) {
        if let Some(skipped) = self.skipping.take() {
            self.oversized(skipped, observer);
        } else if !self.partial.is_empty() {
            let partial = std::mem::take(&mut self.partial);
            self.line(&partial, observer);
        }
    }

    /// Takes one physical line (with or without its `\n`): raw lines are
    /// payloads of their own, SSE `data:` lines are gathered until the blank
    /// line that ends their event.
    fn line(&mut self, bytes: &[u8], observer: &mut dyn ReplayObserver) {
        self.stats.lines += 1;
        let number = self.stats.lines;
        self.framed(observer, |framer, each| framer.numbered(number, bytes, each));
    }

    /// Decodes the SSE event gathered so far, if any.
    fn end_event(&mut self, observer: &mut dyn ReplayObserver) {
        self.framed(observer, |framer, each| framer.finish(each));
    }

    /// Runs the framer, each payload it completes translated. The framer is
    /// moved out meanwhile (an empty one, no allocation, stands in), so that
    /// the replay can take its payloads.
    fn framed(
        &mut self,
        observer: &mut dyn ReplayObserver,
        run: impl FnOnce(&mut LineFramer, &mut dyn FnMut(Payload<'_>)),
    ) {
        let mut framer = std::mem::take(&mut self.framer);
        run(&mut framer, &mut |payload| match payload {
            Payload::Data { line, bytes } => self.payload(bytes, line, observer),
            Payload::TooLong { line, bytes } => self.too_long("event", line, bytes, observer),
        });
        self.framer = framer;
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
        let unknown_before = self.sessions.unknown_events;
        let translated = adapter.translate(payload, &mut Streamed { sessions: &mut self.sessions, observer });
        if self.sessions.unknown_events != unknown_before {
            self.stats.unknown_events += 1;
            if self.stats.unknown_events_look_like.is_none() {
                self.stats.unknown_events_look_like =
                    InputFormat::recognise(payload).filter(|format| Some(*format) != self.stats.format);
            }
        }
        let Err(error) = translated else {
            return;
        };
        if self.stats.bad_lines_look_like.is_none() {
            self.stats.bad_lines_look_like = InputFormat::recognise(payload);
        }
        let what = if self.frames.is_some() { "frame" } else { "line" };
        self.bad(what, number, &error, observer);
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
        let anomaly = Call::Anomaly { kind: AnomalyKind::BadLine, id: None, detail: &detail };
        self.sessions.call(error.session.as_deref(), anomaly);
        observer.bad_line(number, error);
    }
}

/// The calls of one adapter call into the sessions, with the output of the
/// first format handed to the observer once it holds
/// [`FLUSH_AT`](super::FLUSH_AT) bytes ([`ReplayObserver::output`]).
struct Streamed<'s> {
    sessions: &'s mut Sessions,
    observer: &'s mut dyn ReplayObserver,
}

impl CallSink for Streamed<'_> {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        self.sessions.call(session, call);
        let output = self.sessions.output(0);
        if output.len() >= super::FLUSH_AT && self.observer.output(output) {
            self.sessions.clear_output(0);
        }
    }

    fn clock(&mut self, at_ms: u64) {
        self.sessions.clock(at_ms);
    }
}
