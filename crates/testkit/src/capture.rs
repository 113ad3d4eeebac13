//! Capturing what a builder or a replay delivers, as JSON values.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use roundup::adapters::InputFormat;
use roundup::encoders::{Framing, OutputFormat};
use roundup::{
    Output, ReplayCheckpoint, ReplayOptions, ReplayStats, Replayer, RoundBuilder, SinkRecord, UiEvent, UiFlow,
};
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

/// Replay options from format names: `from` may be `auto`.
///
/// # Panics
///
/// On a name no registry knows: a test names its formats.
pub fn options(from: &str, to: &str) -> ReplayOptions {
    let options = ReplayOptions::new().to(OutputFormat::named(to).unwrap_or_else(|| panic!("no output format {to}")));
    match from {
        "auto" => options,
        name => options.from(InputFormat::named(name).unwrap_or_else(|| panic!("no input format {name}"))),
    }
}

/// Replays `input` in memory: the output bytes and the counts.
pub fn replay_raw(input: &[u8], options: &ReplayOptions) -> (Vec<u8>, ReplayStats) {
    let mut out = Vec::new();
    let stats = roundup::replay(input, &mut out, options, &mut ()).expect("an in-memory replay cannot fail");
    (out, stats)
}

/// Replays `input` fed cut after each of `cuts` (offsets, in any order,
/// taken modulo the input's length + 1), the output taken between pieces:
/// what a reader whose reads end anywhere gets.
pub fn replay_in_pieces(input: &[u8], cuts: &[usize], options: &ReplayOptions) -> Vec<u8> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut replayer = Replayer::new(options).expect("a replay in memory");
    let mut out = Vec::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain([input.len()]) {
        replayer.feed(&input[from..cut], &mut ());
        replayer.take_output(&mut out);
        from = cut;
    }
    replayer.end_input(&mut ());
    while replayer.finish_next() {
        replayer.take_output(&mut out);
    }
    replayer.take_output(&mut out);
    out
}

/// Replays `input` up to `cut`, saves the replay's checkpoint as JSON, and
/// goes on with the rest in another replay restored from it: what a worker
/// moved to another process at that byte writes.
pub fn replay_restored_at(input: &[u8], cut: usize, options: &ReplayOptions) -> Vec<u8> {
    let mut first = Replayer::new(options).expect("a replay in memory");
    first.feed(&input[..cut], &mut ());
    let mut out = Vec::new();
    first.take_output(&mut out);
    let saved = first.checkpoint().expect("a replay's checkpoint").to_json();
    let mut second = Replayer::new(options).expect("a replay in memory");
    second.restore(ReplayCheckpoint::from_json(&saved).expect("its own checkpoint reads")).expect("and restores");
    second.feed(&input[cut..], &mut ());
    second.finish(&mut ());
    second.take_output(&mut out);
    out
}

/// Replays ops JSONL into records, as `roundup replay --from ops` prints them.
pub fn replay_ops(input: &[u8]) -> String {
    let (out, _) = replay_raw(input, &options("ops", "records"));
    String::from_utf8(out).expect("output is UTF-8")
}

/// Output lines as JSON values: UTF-8, every line one JSON object.
pub fn parse_output(out: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(out).expect("output is UTF-8");
    text.lines().map(|l| serde_json::from_str(l).expect("an output line is JSON")).collect()
}

/// SSE output (`--sse`) as JSON values: every event one `data: ` line with
/// a JSON object, then a blank line.
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
pub fn replay_lines(input: &[u8], options: &ReplayOptions) -> (Vec<Value>, ReplayStats) {
    let (out, stats) = replay_raw(input, options);
    let lines = if options.framing == Framing::Sse { parse_sse(&out) } else { parse_output(&out) };
    (lines, stats)
}

/// [`replay_lines`] from format names, of an input expected to have no bad
/// line.
pub fn clean_replay(input: &[u8], from: &str, to: &str) -> Vec<Value> {
    let (lines, stats) = replay_lines(input, &options(from, to));
    assert_eq!(stats.bad_lines, 0, "bad lines in {lines:?}");
    lines
}

/// The output lines of one `type`.
pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}
