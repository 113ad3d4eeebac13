//! Replaying ops JSONL: one builder per session, output as SPEC §4 lines.
//!
//! This is what `roundup replay --from ops` runs, and what the conformance
//! tests run through the library.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::anomaly::AnomalyKind;
use crate::builder::RoundBuilder;
use crate::clock::ManualClock;
use crate::handler::{FinishReason, StreamHandler};
use crate::ops::{BadLine, OpsLine};
use crate::sink::SinkRecord;
use crate::ui::{UiEvent, UiFlow};
use crate::wire;

/// What a replay writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Emit {
    /// Rounds, stitches and anomalies as they happen, then one summary per
    /// run (SPEC §4).
    #[default]
    Records,
    /// The live UI events, one JSON object per line.
    Ui,
}

/// Counts of a finished replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Physical lines read, blank ones included.
    pub lines: u64,
    /// Lines reported as `bad_line`.
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

/// Replays ops JSONL from `input`, writing output lines to `output`.
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
    mut input: impl BufRead,
    mut output: impl Write,
    emit: Emit,
    observer: &mut dyn ReplayObserver,
) -> Result<ReplayStats, ReplayError> {
    let mut replay = Replay::new(emit);
    let mut line = Vec::new();
    let mut next_progress = PROGRESS_EVERY;
    loop {
        line.clear();
        let read = input.read_until(b'\n', &mut line).map_err(ReplayError::Read)?;
        if read == 0 {
            break;
        }
        replay.stats.bytes += read as u64;
        if let Some(error) = replay.line(&line) {
            observer.bad_line(replay.stats.lines, &error);
        }
        if line.capacity() > KEEP_LINE_CAPACITY {
            line = Vec::new();
        }
        if replay.stats.bytes >= next_progress {
            next_progress = replay.stats.bytes + PROGRESS_EVERY;
            observer.progress(replay.stats.bytes, replay.stats.lines);
        }
        replay.flush(&mut output, FLUSH_AT)?;
    }
    replay.end();
    replay.flush(&mut output, 0)?;
    output.flush().map_err(ReplayError::Write)?;
    Ok(replay.stats)
}

/// A replay in progress: the sessions' builders, the shared clock and the
/// output not yet written.
struct Replay {
    emit: Emit,
    clock: ManualClock,
    /// Builders in order of first appearance, and their names.
    sessions: Vec<RoundBuilder>,
    names: Vec<Option<String>>,
    by_name: HashMap<String, usize>,
    unnamed: Option<usize>,
    /// The session of the previous line: lines of one session usually come
    /// in runs, and comparing a name is cheaper than hashing it.
    last: Option<usize>,
    out: Arc<Mutex<Vec<u8>>>,
    stats: ReplayStats,
}

impl Replay {
    fn new(emit: Emit) -> Self {
        Replay {
            emit,
            clock: ManualClock::new(0),
            sessions: Vec::new(),
            names: Vec::new(),
            by_name: HashMap::new(),
            unnamed: None,
            last: None,
            out: Arc::new(Mutex::new(Vec::with_capacity(FLUSH_AT * 2))),
            stats: ReplayStats::default(),
        }
    }

    /// Applies one physical line (with or without its `\n`); a bad line is
    /// reported into the output and returned.
    fn line(&mut self, bytes: &[u8]) -> Option<BadLine> {
        self.stats.lines += 1;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let parsed = OpsLine::parse(bytes);
        let outcome = match &parsed {
            Ok(line) => {
                if let Some(at_ms) = line.at_ms() {
                    self.clock.set(at_ms);
                }
                line.call().map(|call| {
                    if let Some(call) = call {
                        call.apply(self.session(line.session()));
                    }
                })
            }
            Err(error) => Err(error.clone()),
        };
        let error = outcome.err()?;
        if let Some(at_ms) = error.at_ms {
            self.clock.set(at_ms);
        }
        self.stats.bad_lines += 1;
        let detail = format!("line {}: {}", self.stats.lines, error.reason);
        self.session(error.session.as_deref()).anomaly(AnomalyKind::BadLine, None, &detail);
        Some(error)
    }

    /// The builder of a session, made on first sight.
    fn session(&mut self, name: Option<&str>) -> &RoundBuilder {
        if let Some(last) = self.last.filter(|&at| self.names[at].as_deref() == name) {
            return &self.sessions[last];
        }
        let found = match name {
            Some(name) => self.by_name.get(name).copied(),
            None => self.unnamed,
        };
        let at = match found {
            Some(at) => at,
            None => {
                let at = self.sessions.len();
                let builder = self.new_builder(name);
                self.sessions.push(builder);
                self.names.push(name.map(str::to_owned));
                match name {
                    Some(name) => {
                        self.by_name.insert(name.to_owned(), at);
                    }
                    None => self.unnamed = Some(at),
                }
                at
            }
        };
        self.last = Some(at);
        &self.sessions[at]
    }

    fn new_builder(&self, name: Option<&str>) -> RoundBuilder {
        let mut builder = RoundBuilder::new().with_clock(self.clock.clone()).retain_rounds(false);
        if let Some(name) = name {
            builder = builder.with_session(name);
        }
        let out = Arc::clone(&self.out);
        match self.emit {
            Emit::Records => builder.with_sink(move |record: SinkRecord<'_>| {
                let mut out = out.lock();
                wire::write_record(&mut out, record);
                out.push(b'\n');
            }),
            Emit::Ui => {
                let session = name.map(str::to_owned);
                builder.with_ui(move |event: &UiEvent<'_>| {
                    let mut out = out.lock();
                    wire::write_ui_event(&mut out, session.as_deref(), event);
                    out.push(b'\n');
                    UiFlow::Continue
                })
            }
        }
    }

    /// End of input: open runs finish in order of first appearance, then
    /// one summary per run.
    fn end(&mut self) {
        if self.sessions.is_empty() {
            self.session(None);
        }
        for builder in &self.sessions {
            builder.finish_if_running(FinishReason::Interrupted);
        }
        self.stats.sessions = self.sessions.len();
        if self.emit == Emit::Records {
            let mut out = self.out.lock();
            for summary in self.sessions.iter().flat_map(RoundBuilder::summaries) {
                wire::write_summary(&mut out, &summary);
                out.push(b'\n');
            }
        }
    }

    /// Writes the pending output once it reaches `at_least` bytes.
    fn flush(&self, output: &mut impl Write, at_least: usize) -> Result<(), ReplayError> {
        let mut out = self.out.lock();
        if out.len() > at_least || (at_least == 0 && !out.is_empty()) {
            output.write_all(&out).map_err(ReplayError::Write)?;
            out.clear();
        }
        Ok(())
    }
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("emit", &self.emit).field("stats", &self.stats).finish_non_exhaustive()
    }
}
