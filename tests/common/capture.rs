//! Capturing what a builder delivers, as JSON values, for the tests and the
//! fuzz targets (which include this file by path). Only std, serde_json and
//! roundup are used here.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use roundup::{Emit, Format, Output, ReplayStats, RoundBuilder, SinkRecord, UiEvent, UiFlow};
use serde_json::Value;

/// A sink record as its output line.
pub fn record_json(record: SinkRecord<'_>) -> Value {
    let mut line = Vec::new();
    roundup::write_record(&mut line, record);
    serde_json::from_slice(&line).expect("an output line is JSON")
}

/// A summary as its output line.
pub fn summary_json(summary: &roundup::Summary) -> Value {
    let mut line = Vec::new();
    roundup::write_summary(&mut line, summary);
    serde_json::from_slice(&line).expect("a summary line is JSON")
}

/// A machine output as JSON: its output line, or its UI event.
pub fn output_json(output: Output<'_>) -> Value {
    match output {
        Output::Record(record) => record_json(record),
        Output::Ui(event) => serde_json::to_value(event).expect("a UI event serialises"),
    }
}

/// Everything a builder delivered, sink records and UI events in one
/// sequence, in delivery order.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Value>>>);

impl Log {
    /// `builder` with a sink and a UI handler that log here.
    pub fn attach(&self, builder: RoundBuilder) -> RoundBuilder {
        let (sink, ui) = (self.clone(), self.clone());
        builder.with_sink(move |record: SinkRecord<'_>| sink.push(record_json(record))).with_ui(
            move |event: &UiEvent<'_>| {
                ui.push(serde_json::to_value(event).expect("a UI event serialises"));
                UiFlow::Continue
            },
        )
    }

    pub fn push(&self, value: Value) {
        self.0.lock().expect("log lock").push(value);
    }

    pub fn values(&self) -> Vec<Value> {
        self.0.lock().expect("log lock").clone()
    }
}

/// Runs `f` on a thread and fails if it takes longer than `seconds`: a
/// deadlock becomes a failure instead of a hung test.
pub fn with_watchdog<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(seconds)).expect("deadlock: the watchdog fired")
}

/// Replays `input` in memory: the output bytes and the counts.
pub fn replay_raw(input: &[u8], from: Format, emit: Emit) -> (Vec<u8>, ReplayStats) {
    let mut out = Vec::new();
    let stats = roundup::replay(input, &mut out, from, emit, &mut ()).expect("an in-memory replay cannot fail");
    (out, stats)
}

/// Output lines as JSON values: UTF-8, every line one JSON object.
pub fn parse_output(out: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(out).expect("output is UTF-8");
    text.lines().map(|l| serde_json::from_str(l).expect("an output line is JSON")).collect()
}

/// SSE output (`--emit deepwork --sse`) as JSON values: every event one
/// `data: ` line with a JSON object, then a blank line.
pub fn parse_sse(out: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(out).expect("output is UTF-8");
    text.split_terminator("\n\n")
        .map(|event| {
            let data = event.strip_prefix("data: ").expect("an SSE event is one data line");
            serde_json::from_str(data).expect("an SSE event's data is JSON")
        })
        .collect()
}

/// Replays `input` and parses its output lines (or SSE events).
pub fn replay_lines(input: &[u8], from: Format, emit: Emit) -> (Vec<Value>, ReplayStats) {
    let (out, stats) = replay_raw(input, from, emit);
    let lines = if emit == (Emit::Deepwork { sse: true }) { parse_sse(&out) } else { parse_output(&out) };
    (lines, stats)
}

/// [`replay_lines`] of an input expected to have no bad line.
pub fn clean_replay(input: &[u8], from: Format, emit: Emit) -> Vec<Value> {
    let (lines, stats) = replay_lines(input, from, emit);
    assert_eq!(stats.bad_lines, 0, "bad lines in {lines:?}");
    lines
}

/// The output lines of one `type`.
pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}
