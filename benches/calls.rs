//! Cost per call of the pure machine and of the self-locking builder (no-op
//! sink and UI handler, one thread), for each kind of call.
//!
//! `cargo bench --bench calls`

use divan::{black_box, Bencher};
use roundup::{
    Call, Clock, MachineOptions, ManualClock, Outputs, RoundBuilder, RoundMachine, SinkRecord, StreamHandler,
    SystemClock, ToolCallStatus, UiEvent, UiFlow,
};

fn main() {
    divan::main();
}

const CHUNK: &str = "0123456789 the quick";
const ARGS: &str = r#"{"path":"src/main.rs","line":12}"#;

fn new_machine() -> (RoundMachine, Outputs) {
    let options = MachineOptions::default().retain_rounds(false);
    (RoundMachine::new(options), Outputs::new())
}

/// A builder with a no-op sink, and a no-op UI handler when `ui`.
fn builder(clock: impl Clock + 'static, ui: bool) -> RoundBuilder {
    let builder = RoundBuilder::new().with_clock(clock).retain_rounds(false).with_sink(|record: SinkRecord<'_>| {
        black_box(record);
    });
    if !ui {
        return builder;
    }
    builder.with_ui(|event: &UiEvent<'_>| {
        black_box(event);
        UiFlow::Continue
    })
}

/// The call sequences measured: each closure makes one call (or, for
/// `terminal`, the declaration and result that close a round).
fn run_machine(b: Bencher, kind: &str) {
    let (mut m, mut out) = new_machine();
    m.handle(Call::ToolCall { id: "t1", title: "edit", name: "" }, 0, &mut out);
    out.clear();
    match kind {
        "message" => b.bench_local(|| {
            m.handle(Call::Message { text: black_box(CHUNK) }, 0, &mut out);
            out.clear();
        }),
        "thought" => b.bench_local(|| {
            m.handle(Call::Thought { text: black_box(CHUNK) }, 0, &mut out);
            out.clear();
        }),
        "args_delta" => b.bench_local(|| {
            m.handle(
                Call::ToolUpdate { id: "t1", content: black_box(CHUNK), status: ToolCallStatus::InProgress },
                0,
                &mut out,
            );
            out.clear();
        }),
        "args_snapshot" => b.bench_local(|| {
            m.handle(Call::ArgsSnapshot { id: "t1", args: black_box(ARGS) }, 0, &mut out);
            out.clear();
        }),
        _ => b.bench_local(|| {
            m.handle(Call::ToolCall { id: "t2", title: "bash", name: "" }, 0, &mut out);
            m.handle(
                Call::ToolUpdate { id: "t2", content: black_box("ok"), status: ToolCallStatus::Completed },
                0,
                &mut out,
            );
            out.clear();
        }),
    }
}

fn run_builder(b: Bencher, builder: RoundBuilder, kind: &str) {
    builder.tool_call("t1", "edit");
    match kind {
        "message" => b.bench_local(|| builder.message(black_box(CHUNK))),
        "thought" => b.bench_local(|| builder.thought(black_box(CHUNK))),
        "args_delta" => b.bench_local(|| builder.tool_update("t1", black_box(CHUNK), ToolCallStatus::InProgress)),
        "args_snapshot" => b.bench_local(|| builder.args_snapshot("t1", black_box(ARGS))),
        _ => b.bench_local(|| {
            builder.tool_call("t2", "bash");
            builder.tool_update("t2", black_box("ok"), ToolCallStatus::Completed);
        }),
    }
}

const KINDS: [&str; 5] = ["message", "thought", "args_delta", "args_snapshot", "terminal"];

/// The pure state machine, producing UI events.
#[divan::bench(args = KINDS, sample_size = 1000, sample_count = 200)]
fn machine(b: Bencher, kind: &str) {
    run_machine(b, kind)
}

/// The builder with the system clock, a no-op sink and no UI handler (so
/// no UI events are produced).
#[divan::bench(args = KINDS, sample_size = 1000, sample_count = 200)]
fn builder_sink_only(b: Bencher, kind: &str) {
    run_builder(b, builder(SystemClock, false), kind)
}

/// The builder with the system clock, a no-op sink and a no-op UI handler:
/// every chunk is delivered as a UI event.
#[divan::bench(args = KINDS, sample_size = 1000, sample_count = 200)]
fn builder_sink_and_ui(b: Bencher, kind: &str) {
    run_builder(b, builder(SystemClock, true), kind)
}

/// As `builder_sink_and_ui` with a manual clock: the difference is the cost
/// of reading the system clock where a call needs it.
#[divan::bench(args = KINDS, sample_size = 1000, sample_count = 200)]
fn builder_sink_and_ui_manual_clock(b: Bencher, kind: &str) {
    run_builder(b, builder(ManualClock::new(0), true), kind)
}

/// As `builder_sink_and_ui`, with the no-op UI handler on a
/// [`roundup::UiThread`]: what a caller pays per UI event when the handler
/// runs on a thread of its own (a copy into the thread's buffer), which is
/// also all a caller ever spends on another thread's UI event.
#[divan::bench(args = KINDS, sample_size = 1000, sample_count = 200)]
fn builder_sink_and_ui_thread(b: Bencher, kind: &str) {
    let noop = |event: &UiEvent<'_>| {
        black_box(event);
        UiFlow::Continue
    };
    let (ui, delivery) = roundup::UiThread::spawn(noop, 1 << 20).expect("a thread");
    let builder = RoundBuilder::new().retain_rounds(false).with_ui_handler(ui).with_sink(|record: SinkRecord<'_>| {
        black_box(record);
    });
    run_builder(b, builder, kind);
    let _ = delivery;
}
