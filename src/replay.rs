//! Replaying a recorded stream: one builder per session, output as SPEC §4
//! lines.
//!
//! This is what `roundup replay` runs, and what the conformance tests run
//! through the library. Lines are framed (raw JSON lines, or SSE `data:`
//! events), decoded by the input format's reader (ops JSONL, or a protocol
//! adapter that translates native events into calls), and applied to the
//! builder of their session.

use std::io::{self, BufRead, Write};

use serde_json::Value;

use crate::acp::AcpTranslator;
use crate::anomaly::AnomalyKind;
use crate::deepwork::DeepworkTranslator;
use crate::format::{frame, Format, Framed};
use crate::handler::StreamHandler;
use crate::ops::{BadLine, OpsLine};
use crate::sessions::Sessions;
use crate::uagent::UagentTranslator;

/// What a replay writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Emit {
    /// Rounds, stitches and anomalies as they happen, then one summary per
    /// run (SPEC §4).
    #[default]
    Records,
    /// The live UI events, one JSON object per line.
    Ui,
    /// The live UI events as deepwork Events (with `meta.seq` and
    /// `meta.ts`, and `source` naming the session), as JSON lines or, with
    /// `sse`, as SSE `data:` frames.
    Deepwork {
        /// Frame each Event as an SSE event.
        sse: bool,
    },
}

/// Counts of a finished replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Physical lines read, blank ones included.
    pub lines: u64,
    /// Lines (or SSE events) reported as `bad_line`.
    pub bad_lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Sessions seen (the session-less one included).
    pub sessions: usize,
}

/// Why a replay stopped early. Bad input never does: it is reported as
/// `bad_line` and skipped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The input could not be read.
    #[error("cannot read the input: {0}")]
    Read(#[source] io::Error),
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Write(#[source] io::Error),
}

/// Hooks for a caller that wants to show what a replay is doing.
pub trait ReplayObserver {
    /// A line was skipped; it is also in the output as a `bad_line` anomaly.
    fn bad_line(&mut self, _line: u64, _error: &BadLine) {}
    /// Called about every 16 MiB of input.
    fn progress(&mut self, _bytes: u64, _lines: u64) {}
}

/// Observes nothing.
impl ReplayObserver for () {}

const PROGRESS_EVERY: u64 = 16 << 20;
const FLUSH_AT: usize = 64 << 10;
/// A line buffer grown past this by one huge line is released afterwards.
const KEEP_LINE_CAPACITY: usize = 1 << 20;

/// Replays ops JSONL from `input`, writing output lines to `output`
/// ([`replay`] with [`Format::Ops`]).
///
/// ```
/// let ops = br#"{"op":"message","text":"Hi"}
/// {"op":"finish","reason":"canceled"}
/// "#;
/// let mut out = Vec::new();
/// let stats = roundup::replay_ops(&ops[..], &mut out, roundup::Emit::Records, &mut ()).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// let lines: Vec<&str> = text.lines().collect();
/// assert!(lines[0].starts_with(r#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hi""#));
/// assert!(lines[1].starts_with(r#"{"type":"summary""#));
/// assert_eq!(stats.lines, 2);
/// ```
pub fn replay_ops(
    input: impl BufRead,
    output: impl Write,
    emit: Emit,
    observer: &mut dyn ReplayObserver,
) -> Result<ReplayStats, ReplayError> {
    replay(input, output, Format::Ops, emit, observer)
}

/// Replays a recorded stream of format `from` (detected from its first
/// event with [`Format::Auto`]) from `input`, writing output lines to
/// `output`.
pub fn replay(
    mut input: impl BufRead,
    mut output: impl Write,
    from: Format,
    emit: Emit,
    observer: &mut dyn ReplayObserver,
) -> Result<ReplayStats, ReplayError> {
    let mut replay = Replay::new(from, emit);
    let mut line = Vec::new();
    let mut next_progress = PROGRESS_EVERY;
    loop {
        line.clear();
        let read = input.read_until(b'\n', &mut line).map_err(ReplayError::Read)?;
        if read == 0 {
            break;
        }
        replay.stats.bytes += read as u64;
        replay.line(&line, observer);
        if line.capacity() > KEEP_LINE_CAPACITY {
            line = Vec::new();
        }
        if replay.stats.bytes >= next_progress {
            next_progress = replay.stats.bytes + PROGRESS_EVERY;
            observer.progress(replay.stats.bytes, replay.stats.lines);
        }
        replay.flush(&mut output, FLUSH_AT)?;
    }
    replay.end(observer);
    replay.flush(&mut output, 0)?;
    output.flush().map_err(ReplayError::Write)?;
    Ok(replay.stats)
}

/// How the lines of the input are turned into calls.
#[derive(Debug)]
enum Decoder {
    /// `--from auto` before the first event.
    Undecided,
    Ops,
    Acp(AcpTranslator),
    Uagent(Box<UagentTranslator>),
    Deepwork(DeepworkTranslator),
}

impl Decoder {
    fn of(format: Format) -> Decoder {
        match format {
            Format::Auto => Decoder::Undecided,
            Format::Ops => Decoder::Ops,
            Format::Acp => Decoder::Acp(AcpTranslator::new()),
            Format::Uagent => Decoder::Uagent(Box::default()),
            Format::Deepwork => Decoder::Deepwork(DeepworkTranslator::new()),
        }
    }
}

/// Hands one native event to its protocol adapter, which makes its calls on
/// the builders of their sessions; the event's own clock reading, if the
/// protocol has one, moves the replay's clock first.
fn translate(adapter: &mut Decoder, sessions: &mut Sessions, event: &Value) {
    match adapter {
        Decoder::Acp(acp) => acp.translate(event, &mut |session, call| call.apply(sessions.get(session))),
        Decoder::Uagent(uagent) => {
            if let Some(at_ms) = UagentTranslator::event_time_ms(event) {
                sessions.clock.set(at_ms);
            }
            uagent.translate(event, &mut |session, call| call.apply(sessions.get(session)))
        }
        Decoder::Deepwork(deepwork) => {
            if let Some(at_ms) = DeepworkTranslator::event_time_ms(event) {
                sessions.clock.set(at_ms);
            }
            deepwork.translate(event, &mut |session, call| call.apply(sessions.get(session)))
        }
        Decoder::Undecided | Decoder::Ops => {}
    }
}

/// A replay in progress: the decoder, the sessions, the SSE event being
/// gathered.
#[derive(Debug)]
struct Replay {
    decoder: Decoder,
    sessions: Sessions,
    /// The payload of an SSE event not yet complete, and its first line.
    event: Vec<u8>,
    event_line: u64,
    stats: ReplayStats,
}

impl Replay {
    fn new(from: Format, emit: Emit) -> Self {
        Replay {
            decoder: Decoder::of(from),
            sessions: Sessions::new(emit),
            event: Vec::new(),
            event_line: 0,
            stats: ReplayStats::default(),
        }
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
                if self.event.is_empty() {
                    self.event_line = self.stats.lines;
                } else {
                    self.event.push(b'\n');
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
        if self.event.is_empty() {
            return;
        }
        let event = std::mem::take(&mut self.event);
        self.payload(&event, self.event_line, observer);
        self.event = event;
        self.event.clear();
    }

    /// Decodes one payload (a JSON value) found at line `number`.
    fn payload(&mut self, payload: &[u8], number: u64, observer: &mut dyn ReplayObserver) {
        if let Decoder::Undecided = self.decoder {
            self.decoder = Decoder::of(Format::detect(payload));
        }
        let error = match &mut self.decoder {
            Decoder::Undecided | Decoder::Ops => self.ops(payload),
            adapter => match serde_json::from_slice::<Value>(payload) {
                Ok(event) => {
                    translate(adapter, &mut self.sessions, &event);
                    None
                }
                Err(error) => {
                    Some(BadLine { reason: crate::ops::describe_json_error(&error), session: None, at_ms: None })
                }
            },
        };
        if let Some(error) = error {
            self.stats.bad_lines += 1;
            if let Some(at_ms) = error.at_ms {
                self.sessions.clock.set(at_ms);
            }
            let detail = format!("line {number}: {}", error.reason);
            self.sessions.get(error.session.as_deref()).anomaly(AnomalyKind::BadLine, None, &detail);
            observer.bad_line(number, &error);
        }
    }

    /// Applies one ops JSONL line; the error of a bad one.
    fn ops(&mut self, payload: &[u8]) -> Option<BadLine> {
        let parsed = OpsLine::parse(payload);
        let line = match &parsed {
            Ok(line) => line,
            Err(error) => return Some(error.clone()),
        };
        if let Some(at_ms) = line.at_ms() {
            self.sessions.clock.set(at_ms);
        }
        match line.call() {
            Ok(Some(call)) => call.apply(self.sessions.get(line.session())),
            Ok(None) => {}
            Err(error) => return Some(error),
        }
        None
    }

    /// End of input: the last SSE event, then the sessions' ends.
    fn end(&mut self, observer: &mut dyn ReplayObserver) {
        self.end_event(observer);
        self.stats.sessions = self.sessions.end();
    }

    /// Writes the pending output once it reaches `at_least` bytes.
    fn flush(&self, output: &mut impl Write, at_least: usize) -> Result<(), ReplayError> {
        self.sessions.flush(output, at_least).map_err(ReplayError::Write)
    }
}
