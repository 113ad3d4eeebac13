//! The self-locking builder: ordered delivery under concurrency,
//! re-entrancy, panicking callbacks, backpressure, record and replay.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::thread;

use roundup::{
    Call, FinishReason, MachineOptions, ManualClock, Outputs, Recorder, RoundBuilder, RoundMachine, SinkRecord,
    StreamHandler, ToolCallStatus, UiEvent, UiFlow,
};
use roundup_testkit::capture::{output_json, record_json, with_watchdog, Log};
use serde_json::Value;

/// Rebuilds the sequence of calls from the output that identifies each one:
/// a UI event, or the anomaly it caused.
fn calls_from_output(log: &[Value]) -> Vec<(String, String, String)> {
    log.iter()
        .filter_map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            let tag = v["event"].as_str().or(v["kind"].as_str())?;
            match tag {
                "message_delta" => Some(("message".into(), s("text"), String::new())),
                "tool_call_start" => Some(("tool_call".into(), s("id"), s("title"))),
                "tool_call_args" => Some(("args".into(), s("id"), s("args"))),
                "unknown_tool_call" => Some(("args".into(), s("id"), s("detail"))),
                "tool_call_result" | "tool_call_stitched" => Some(("result".into(), s("id"), s("content"))),
                "duplicate_terminal" | "undeclared_terminal" => Some(("result".into(), s("id"), s("detail"))),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn concurrent_callers_get_output_in_state_order() {
    const THREADS: usize = 4;
    const ITERATIONS: usize = 300;
    let log = Log::default();
    let builder = Arc::new(log.attach(RoundBuilder::new().with_clock(ManualClock::new(0))));
    with_watchdog(60, {
        let builder = Arc::clone(&builder);
        move || {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let builder = Arc::clone(&builder);
                    thread::spawn(move || {
                        for i in 0..ITERATIONS {
                            let id = format!("t{t}-{i}");
                            builder.message(&format!("m{t}-{i} "));
                            builder.tool_call(&id, "bash");
                            builder.tool_update(&id, "{}", ToolCallStatus::InProgress);
                            builder.tool_update(&id, &format!("r{t}-{i}"), ToolCallStatus::Completed);
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
        }
    });
    builder.finish(FinishReason::Interrupted);
    let delivered = log.values();

    // Every call shows in the output: by a UI event, or (a call that could
    // not be applied, so changed nothing) by its anomaly.
    let calls = calls_from_output(&delivered);
    assert_eq!(calls.len(), THREADS * ITERATIONS * 4);
    // The sink and the UI are two lanes (one never waits for the other), so
    // there is no single order across them; each sees its output in state
    // order. Replaying the calls in the order their UI events were
    // delivered (the anomalies' calls changed nothing) must give exactly
    // the delivered UI events, rounds and stitches.
    let ui_visible: Vec<_> =
        calls_from_output(&delivered.iter().filter(|v| v.get("event").is_some()).cloned().collect::<Vec<_>>());
    let mut machine = RoundMachine::new(MachineOptions::default());
    let mut out = Outputs::new();
    for (op, a, b) in &ui_visible {
        let call = match op.as_str() {
            "message" => Call::Message { text: a },
            "tool_call" => Call::ToolCall { id: a, title: b, name: "" },
            "args" => Call::ToolUpdate { id: a, content: b, status: ToolCallStatus::InProgress },
            _ => Call::ToolUpdate { id: a, content: b, status: ToolCallStatus::Completed },
        };
        machine.handle(call, 0, &mut out);
    }
    machine.handle(Call::Finish { reason: FinishReason::Interrupted }, 0, &mut out);
    let expected: Vec<Value> = out.iter().map(output_json).collect();
    let lane = |values: &[Value], wanted: &[&str]| -> Vec<Value> {
        values
            .iter()
            .filter(|v| v.get("event").is_some() == wanted.is_empty())
            .filter(|v| wanted.is_empty() || wanted.contains(&v["type"].as_str().unwrap_or_default()))
            .cloned()
            .collect()
    };
    for (name, wanted) in [("UI events", &[][..]), ("rounds and stitches", &["round", "stitch"][..])] {
        let (got, want) = (lane(&delivered, wanted), lane(&expected, wanted));
        assert_eq!(got.len(), want.len(), "{name}");
        if let Some(at) = got.iter().zip(&want).position(|(a, b)| a != b) {
            panic!("{name} differ from the state-order replay at {at}:\n{}\n{}", got[at], want[at]);
        }
    }
    // A round reaches the sink before the UI events of its close.
    for (at, round) in delivered.iter().enumerate().filter(|(_, v)| v["type"] == "round") {
        let end = delivered
            .iter()
            .position(|e| e["event"] == "round_end" && e["run"] == round["run"] && e["index"] == round["index"])
            .expect("every round has its round_end");
        assert!(at < end, "round {} delivered after its round_end", round["index"]);
    }
    // And nothing was lost: every message fragment is in some round.
    let all_text: usize = builder.rounds().iter().map(|r| r.message.len()).sum();
    let fed: usize = (0..THREADS).flat_map(|t| (0..ITERATIONS).map(move |i| format!("m{t}-{i} ").len())).sum();
    assert_eq!(all_text, fed);
}

/// A builder whose sink can reach the builder itself.
fn self_referencing(
    sink: impl Fn(&RoundBuilder, SinkRecord<'_>) + Send + Sync + 'static,
    log: &Log,
) -> Arc<RoundBuilder> {
    let me: Arc<OnceLock<Weak<RoundBuilder>>> = Arc::default();
    let handle = Arc::clone(&me);
    let ui_log = log.clone();
    let sink_log = log.clone();
    let builder = Arc::new(
        RoundBuilder::new()
            .with_clock(ManualClock::new(0))
            .with_sink(move |record: SinkRecord<'_>| {
                sink_log.push(record_json(record));
                if let Some(builder) = handle.get().and_then(Weak::upgrade) {
                    sink(&builder, record);
                }
            })
            .with_ui(move |event: &UiEvent<'_>| {
                ui_log.push(serde_json::to_value(event).unwrap());
                UiFlow::Continue
            }),
    );
    me.set(Arc::downgrade(&builder)).unwrap();
    builder
}

#[test]
fn a_callback_may_call_back_into_the_builder() {
    let log = Log::default();
    let reentered = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&reentered);
    let builder = self_referencing(
        move |builder, record| {
            if let SinkRecord::Round(round) = record {
                // Reads and writes from inside the callback.
                assert!(!builder.rounds().is_empty());
                if round.index == 0 {
                    count.fetch_add(1, Ordering::SeqCst);
                    builder.message("written from the sink");
                }
            }
        },
        &log,
    );
    let b = Arc::clone(&builder);
    with_watchdog(10, move || {
        b.tool_call("a", "x");
        b.tool_update("a", "A", ToolCallStatus::Completed);
    });
    assert_eq!(reentered.load(Ordering::SeqCst), 1);
    // The closing call's round came before its own UI events, and the
    // re-entrant call's output after everything queued before it.
    let events: Vec<String> =
        log.values().iter().map(|v| v["event"].as_str().or(v["type"].as_str()).unwrap().to_owned()).collect();
    assert_eq!(
        events,
        [
            "run_start",
            "tool_call_start",
            "round",
            "tool_call_result",
            "tool_call_end",
            "round_end",
            "message_start",
            "message_delta"
        ]
    );
    builder.finish(FinishReason::Interrupted);
    assert_eq!(builder.rounds()[1].message, "written from the sink");
}

#[test]
fn a_panicking_sink_loses_nothing_and_leaves_the_builder_usable() {
    let log = Log::default();
    let panics = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&panics);
    let builder = self_referencing(
        move |_, record| {
            if let SinkRecord::Round(round) = record {
                if round.index == 0 {
                    count.fetch_add(1, Ordering::SeqCst);
                    panic!("disk full");
                }
            }
        },
        &log,
    );
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        builder.tool_call("a", "x");
        builder.tool_update("a", "A", ToolCallStatus::Completed);
    }));
    let payload = outcome.expect_err("the sink's panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"disk full"));
    assert_eq!(panics.load(Ordering::SeqCst), 1);
    // The round stays retained, and the UI events queued after it were
    // still delivered.
    assert_eq!(builder.rounds().len(), 1);
    let ui: Vec<Value> = log.values().into_iter().filter(|v| v.get("event").is_some()).collect();
    assert_eq!(ui.last().unwrap()["event"], "round_end");
    // Usable afterwards, from this thread and from another.
    builder.message("after");
    let b = Arc::clone(&builder);
    with_watchdog(10, move || b.finish(FinishReason::Canceled));
    let rounds = builder.rounds();
    assert_eq!((rounds.len(), rounds[1].message.as_str()), (2, "after"));
    assert_eq!(log.values().iter().filter(|v| v["type"] == "round").count(), 2);
}

#[test]
fn a_ui_handler_that_stops_gets_nothing_more_while_rounds_flow() {
    let seen = Arc::new(AtomicUsize::new(0));
    let rounds = Arc::new(AtomicUsize::new(0));
    let (s, r) = (Arc::clone(&seen), Arc::clone(&rounds));
    let builder = RoundBuilder::new()
        .with_sink(move |record: SinkRecord<'_>| {
            if matches!(record, SinkRecord::Round(_)) {
                r.fetch_add(1, Ordering::SeqCst);
            }
        })
        .with_ui(
            move |_: &UiEvent<'_>| {
                if s.fetch_add(1, Ordering::SeqCst) + 1 >= 3 {
                    UiFlow::Stop
                } else {
                    UiFlow::Continue
                }
            },
        );
    for i in 0..10 {
        builder.tool_call(&i.to_string(), "x");
        builder.tool_update(&i.to_string(), "ok", ToolCallStatus::Completed);
    }
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    assert_eq!(rounds.load(Ordering::SeqCst), 10);
}

#[test]
fn recording_then_replaying_gives_the_same_output() {
    let clock = ManualClock::new(1_000);
    let log = Log::default();
    let live = log.attach(RoundBuilder::new().with_clock(clock.clone()).with_session("s1"));
    let recorder = Recorder::new(Vec::new()).with_clock(clock.clone()).with_session("s1");
    let both: [&dyn StreamHandler; 2] = [&live, &recorder];
    let script: Vec<(u64, Call<'_>)> = vec![
        (0, Call::Thought { text: "plan" }),
        (5, Call::Message { text: "Let me look." }),
        (10, Call::ToolCall { id: "t1", title: "bash", name: "" }),
        (11, Call::ToolUpdate { id: "t1", content: "{\"cmd\":", status: ToolCallStatus::InProgress }),
        (12, Call::ArgsSnapshot { id: "t1", args: "{\"cmd\":\"ls\"}" }),
        (13, Call::ToolCall { id: "t2", title: "read", name: "" }),
        (20, Call::Message { text: "Meanwhile…\n" }),
        (30, Call::ToolUpdate { id: "t1", content: "a.txt", status: ToolCallStatus::Failed }),
        (31, Call::ToolUpdate { id: "t9", content: "ghost", status: ToolCallStatus::Completed }),
        (40, Call::TokenUsage { total: 1234 }),
        (50, Call::Finish { reason: FinishReason::Canceled }),
        (60, Call::Message { text: "late" }),
    ];
    for (advance, call) in script {
        clock.set(1_000 + advance);
        for handler in both {
            handler.call(call);
        }
    }
    let ops = recorder.finish_writing().unwrap();
    let replayed: Vec<Value> =
        roundup_testkit::capture::replay_ops(&ops).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let live_records: Vec<Value> = log.values().into_iter().filter(|v| v.get("type").is_some()).collect();
    let types: Vec<&str> = replayed.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(types, ["round", "stitch", "anomaly", "round", "summary", "anomaly"]);
    assert_eq!(replayed, live_records);
}

#[test]
fn finish_if_running_finishes_once() {
    let builder = RoundBuilder::new();
    builder.message("a");
    assert!(builder.finish_if_running(FinishReason::Interrupted));
    assert!(!builder.finish_if_running(FinishReason::Interrupted));
    assert_eq!(builder.summary().anomalies, 0, "no after_finish");
    assert!(builder.is_finished());
    builder.start();
    assert_eq!((builder.run(), builder.is_finished()), (1, false));
}

#[test]
fn without_retention_rounds_still_reach_the_sink() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let builder = RoundBuilder::new().retain_rounds(false).with_sink(move |record: SinkRecord<'_>| {
        if matches!(record, SinkRecord::Round(_)) {
            c.fetch_add(1, Ordering::SeqCst);
        }
    });
    for _ in 0..100 {
        builder.tool_call("a", "x");
        builder.tool_update("a", "ok", ToolCallStatus::Completed);
    }
    assert!(builder.rounds().is_empty());
    assert_eq!(count.load(Ordering::SeqCst), 100);
    assert_eq!(builder.summary().rounds, 100);
}

#[test]
fn reset_and_take_rounds() {
    let builder = RoundBuilder::new().with_session("s");
    builder.message("a");
    builder.finish(FinishReason::Canceled);
    assert_eq!(builder.take_rounds().len(), 1);
    assert!(builder.rounds().is_empty());
    builder.reset();
    builder.message("b");
    builder.finish(FinishReason::Canceled);
    let rounds = builder.rounds();
    assert_eq!((rounds[0].run, rounds[0].index, rounds[0].session.as_deref()), (0, 0, Some("s")));
    assert_eq!(builder.summaries().len(), 1);
}

/// A checkpoint holds the open state, not the history: a thousand finished
/// runs make it no bigger than one (the run number aside), and the history
/// comes along only when asked.
#[test]
fn a_checkpoint_follows_the_open_state_not_the_history() {
    let session = |runs: usize| {
        let builder = RoundBuilder::new();
        for n in 0..runs {
            builder.start();
            builder.message("a round of text");
            builder.tool_call(&format!("t{n}"), "bash");
            builder.tool_update(&format!("t{n}"), "ok", ToolCallStatus::Completed);
        }
        builder.message("open");
        builder
    };
    let (one, many) = (session(1), session(1_000));
    let size = |b: &RoundBuilder| b.checkpoint().to_json().len();
    assert!(size(&many) <= size(&one) + 8, "{} bytes after 1,000 runs, {} after 1", size(&many), size(&one));
    assert!(many.checkpoint_with_history().to_json().len() > 100 * size(&one), "the history when asked");
    let restored = RoundBuilder::new();
    restored.restore(many.checkpoint_with_history()).unwrap();
    assert_eq!(restored.rounds(), many.rounds());
    assert_eq!(restored.summaries(), many.summaries());
}

#[test]
fn a_bad_checkpoint_is_a_clear_error_and_changes_nothing() {
    let builder = RoundBuilder::new();
    builder.message("kept");
    let mut saved: Value = serde_json::from_slice(&builder.checkpoint().to_json()).unwrap();
    saved["version"] = 3.into();
    let error = roundup::Checkpoint::from_json(saved.to_string().as_bytes()).unwrap_err();
    assert_eq!(error.to_string(), "checkpoint format version 3 is not supported (this build reads version 2)");
    saved["version"] = 2.into();
    saved["run"]["open"]["calls"] = serde_json::json!([
        {"id": "a", "title": "", "arguments": "", "output": "", "result": null, "started_at_ms": 0, "finished_at_ms": 0, "meta": {}},
        {"id": "a", "title": "", "arguments": "", "output": "", "result": null, "started_at_ms": 0, "finished_at_ms": 0, "meta": {}}
    ]);
    let twice = roundup::Checkpoint::from_json(saved.to_string().as_bytes()).unwrap();
    let error = builder.restore(twice).unwrap_err();
    assert!(error.to_string().contains("\"a\" twice"), "{error}");
    saved["run"] = "nonsense".into();
    assert!(matches!(
        roundup::Checkpoint::from_json(saved.to_string().as_bytes()),
        Err(roundup::CheckpointError::Corrupt(_))
    ));
    builder.finish(FinishReason::Interrupted);
    assert_eq!(builder.rounds()[0].message, "kept", "the failed restores changed nothing");
}

/// The open round as a value follows the stream, and is gone once the
/// round closes.
#[test]
fn the_open_round_is_what_a_reconnecting_view_draws() {
    let builder = RoundBuilder::new().with_session("s");
    assert_eq!(builder.open_round(), None, "nothing yet");
    builder.thought("plan");
    builder.tool_call("a", "bash");
    builder.tool_output("a", "50%", false);
    builder.tool_call("b", "read");
    builder.tool_update("b", "text", ToolCallStatus::Completed);
    let open = builder.open_round().expect("open");
    assert_eq!((open.session.as_deref(), open.run, open.index, open.thought.as_str()), (Some("s"), 0, 0, "plan"));
    assert_eq!(open.tool_calls[0].output, "50%");
    assert_eq!(open.tool_calls[1].result.as_ref().and_then(|r| r.content()), Some("text"));
    builder.tool_update("a", "", ToolCallStatus::Completed);
    assert_eq!(builder.open_round(), None, "closed by tools_done");
    builder.message("next");
    assert_eq!(builder.open_round().map(|r| r.index), Some(1));
}

/// Found by the checkpoint fuzz target: a float in metadata read one ulp
/// off by serde_json's default parser made save, restore, save differ
/// (2.2222222222222225e23 came back as ...222e23). roundup reads floats
/// exactly (serde_json's `float_roundtrip`).
#[test]
fn a_checkpoint_with_floats_in_metadata_saves_the_same_bytes_after_a_restore() {
    let builder = RoundBuilder::new();
    let meta: roundup::Meta = serde_json::from_str(r#"{"cost":2.2222222222222225e23,"small":336.660623331}"#).unwrap();
    builder.call(roundup::Call::RunMeta { meta: &meta });
    builder.message("open");
    let saved = builder.checkpoint().to_json();
    let restored = RoundBuilder::new();
    restored.restore(roundup::Checkpoint::from_json(&saved).unwrap()).unwrap();
    assert_eq!(String::from_utf8(restored.checkpoint().to_json()).unwrap(), String::from_utf8(saved).unwrap());
}

/// A clock that itself reads the builder (a clock derived from the
/// session's state) does not deadlock: the clock is read outside the lock.
#[test]
fn a_clock_that_reads_the_builder_does_not_deadlock() {
    struct Peeking(Arc<OnceLock<Weak<RoundBuilder>>>);
    impl roundup::Clock for Peeking {
        fn now_ms(&self) -> u64 {
            let builder = self.0.get().and_then(Weak::upgrade);
            1_000 + builder.map_or(0, |b| b.summaries().len() as u64)
        }
    }
    with_watchdog(10, || {
        let cell = Arc::new(OnceLock::new());
        let builder = Arc::new(RoundBuilder::new().with_clock(Peeking(Arc::clone(&cell))));
        cell.set(Arc::downgrade(&builder)).ok();
        builder.message("first");
        builder.finish(FinishReason::Interrupted);
        builder.start();
        builder.message("second");
        builder.finish(FinishReason::Interrupted);
        let starts: Vec<u64> = builder.rounds().iter().map(|r| r.started_at_ms).collect();
        assert_eq!(starts, [1_001, 1_002], "each reading saw the runs before it");
    });
}

/// The rule for panics with several threads: a panic in a callback resumes
/// in the thread that delivered the output. Each caller delivers its own
/// records (a caller that finds a delivery in progress waits, and the
/// delivering thread hands the lane over after its own), so B's failing
/// round panics in B, not in A which was delivering when B called; the
/// output of both reaches the sink.
#[test]
fn a_callback_panic_resumes_in_the_thread_that_delivered_it() {
    use std::sync::mpsc;
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let builder = Arc::new(RoundBuilder::new().with_sink(move |record: SinkRecord<'_>| {
        if let SinkRecord::Round(round) = record {
            log.lock().push(round.message.clone());
            match round.message.as_str() {
                // A's round: hold A's delivery while B calls.
                "from A" => release_rx.lock().recv().unwrap(),
                "from B" => panic!("the sink fails on B's round"),
                _ => {}
            }
        }
    }));
    with_watchdog(10, move || {
        let a = {
            let builder = Arc::clone(&builder);
            thread::spawn(move || {
                catch_unwind(AssertUnwindSafe(|| {
                    builder.message("from A");
                    builder.finish(FinishReason::Interrupted);
                }))
                .is_err()
            })
        };
        // Wait until A is inside its delivery (its round reached the sink).
        while seen.lock().is_empty() {
            thread::yield_now();
        }
        let releaser = thread::spawn(move || {
            thread::sleep(std::time::Duration::from_millis(100));
            release_tx.send(()).unwrap();
        });
        builder.start();
        let b_panicked = catch_unwind(AssertUnwindSafe(|| {
            builder.message("from B");
            builder.finish(FinishReason::Interrupted);
        }))
        .is_err();
        releaser.join().unwrap();
        let a_panicked = a.join().unwrap();
        assert!(b_panicked, "B's round was delivered by B, and its panic resumed there");
        assert!(!a_panicked, "A delivered only its own round");
        assert_eq!(*seen.lock(), ["from A", "from B"], "both rounds reached the sink");
        builder.start();
        builder.message("after");
        builder.finish(FinishReason::Interrupted);
        assert_eq!(seen.lock().last().map(String::as_str), Some("after"), "the builder still works");
    });
}

/// A UI handler stuck in its first event until released: it says when it
/// is stuck, counts its events and keeps what it was told of overflows.
struct Stuck {
    entered: std::sync::mpsc::SyncSender<()>,
    release: parking_lot::Mutex<std::sync::mpsc::Receiver<()>>,
    events: AtomicUsize,
    overflowed: parking_lot::Mutex<Vec<usize>>,
}

impl Stuck {
    /// The handler, the receiver that hears it is stuck, and the sender
    /// that releases it.
    fn new() -> (Arc<Stuck>, std::sync::mpsc::Receiver<()>, std::sync::mpsc::Sender<()>) {
        let (entered, entered_rx) = std::sync::mpsc::sync_channel(1);
        let (release_tx, release) = std::sync::mpsc::channel();
        let stuck = Stuck {
            entered,
            release: parking_lot::Mutex::new(release),
            events: AtomicUsize::new(0),
            overflowed: parking_lot::Mutex::new(Vec::new()),
        };
        (Arc::new(stuck), entered_rx, release_tx)
    }
}

impl roundup::UiHandler for Stuck {
    fn event(&self, _: &UiEvent<'_>) -> UiFlow {
        if self.events.fetch_add(1, Ordering::SeqCst) == 0 {
            self.entered.send(()).unwrap();
            self.release.lock().recv().unwrap();
        }
        UiFlow::Continue
    }
    fn overflowed(&self, dropped: usize) {
        self.overflowed.lock().push(dropped);
    }
}

/// A [`Stuck`] handler the test keeps a hold of.
struct SharedStuck(Arc<Stuck>);

impl roundup::UiHandler for SharedStuck {
    fn event(&self, event: &UiEvent<'_>) -> UiFlow {
        self.0.event(event)
    }
    fn overflowed(&self, dropped: usize) {
        self.0.overflowed(dropped)
    }
}

/// A UI handler that blocks does not stop persistence. While it
/// is stuck in one event, another thread's rounds reach the sink; and once
/// it has fallen a whole queue behind it is cut off, told once, and the
/// producer never waited for it.
#[test]
fn a_blocked_ui_handler_stalls_neither_the_sink_nor_the_callers() {
    let (ui, entered_rx, release_tx) = Stuck::new();
    let rounds = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&rounds);
    let builder = Arc::new(
        RoundBuilder::new()
            .retain_rounds(false)
            .ui_queue_capacity(1_000)
            .with_sink(move |record: SinkRecord<'_>| {
                if let SinkRecord::Round(_) = record {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            })
            .with_ui_handler(SharedStuck(Arc::clone(&ui))),
    );
    with_watchdog(20, move || {
        // Thread A's first UI event blocks inside the handler.
        let a = {
            let builder = Arc::clone(&builder);
            thread::spawn(move || builder.message("A's text"))
        };
        entered_rx.recv().unwrap();
        // Meanwhile this thread closes 2,000 rounds: each reaches the sink
        // at once; their UI events (five per round) overflow the queue.
        for n in 0..2_000 {
            let id = format!("t{n}");
            builder.tool_call(&id, "bash");
            builder.tool_update(&id, "ok", ToolCallStatus::Completed);
            assert_eq!(rounds.load(Ordering::SeqCst), n + 1, "round {n} reached the sink while the UI is stuck");
        }
        release_tx.send(()).unwrap();
        a.join().unwrap();
        builder.message("after the release");
        let overflowed = ui.overflowed.lock().clone();
        assert_eq!(overflowed.len(), 1, "told once");
        assert!(overflowed[0] > 1_000, "{overflowed:?}");
        let events = ui.events.load(Ordering::SeqCst);
        assert!(events <= 1_001, "{events} events: nothing after the cut-off beyond the queue");
    });
}

/// The time a caller spends delivering other threads' output is
/// bounded. With a slow sink and four threads making records as fast as
/// they can, no call delivers more than one record of each other thread
/// (one batch: each other thread has one call in flight, waiting for its
/// own records, and a caller hands the lane over once its own are out).
#[test]
fn a_call_delivers_at_most_one_call_of_each_other_thread() {
    use std::cell::Cell;
    use std::collections::HashMap;
    const THREADS: usize = 4;
    const CALLS: usize = 150;
    thread_local! {
        /// The call this thread is making: (thread number, call number).
        static CALLING: Cell<(usize, usize)> = const { Cell::new((usize::MAX, 0)) };
    }
    let deliveries = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = Arc::clone(&deliveries);
    let builder = Arc::new(RoundBuilder::new().retain_rounds(false).with_sink(move |record: SinkRecord<'_>| {
        // One record per call, naming its thread: an anomaly reported by
        // the caller. A slow sink: each record takes a while to persist.
        if let SinkRecord::Anomaly(anomaly) = record {
            thread::sleep(std::time::Duration::from_micros(200));
            let producer: usize = anomaly.detail.trim_start_matches('T').parse().unwrap();
            log.lock().push((CALLING.with(Cell::get), producer));
        }
    }));
    with_watchdog(60, move || {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let builder = Arc::clone(&builder);
                thread::spawn(move || {
                    let detail = format!("T{t}");
                    for n in 0..CALLS {
                        CALLING.with(|c| c.set((t, n)));
                        builder.anomaly(roundup::AnomalyKind::ProtocolError, None, &detail);
                    }
                })
            })
            .collect();
        workers.into_iter().for_each(|w| w.join().unwrap());
        let deliveries = deliveries.lock();
        assert_eq!(deliveries.len(), THREADS * CALLS, "every record reached the sink");
        let mut others_per_call: HashMap<(usize, usize), usize> = HashMap::new();
        for ((t, n), producer) in deliveries.iter() {
            if *producer != *t {
                *others_per_call.entry((*t, *n)).or_default() += 1;
            }
        }
        let worst = others_per_call.values().max().copied().unwrap_or(0);
        assert!(worst < THREADS, "a call delivered {worst} records of other threads");
    });
}

/// With the UI handler on a [`roundup::UiThread`], no caller runs
/// a UI callback: four threads stream text while the handler is stuck in
/// its first event, and every call returns; once released, the handler gets
/// every event, in each thread's order, on the delivery thread.
#[test]
fn with_a_ui_thread_no_caller_runs_a_ui_callback() {
    use std::sync::mpsc;
    const THREADS: usize = 4;
    const CALLS: usize = 500;
    let (entered_tx, entered_rx) = mpsc::sync_channel(1);
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let handler = move |event: &UiEvent<'_>| {
        let mut log = log.lock();
        if log.is_empty() {
            entered_tx.send(()).unwrap();
            release_rx.lock().recv().unwrap();
        }
        log.push((thread::current().name().map(str::to_owned), serde_json::to_value(event).unwrap()));
        UiFlow::Continue
    };
    let (ui, delivery) = roundup::UiThread::spawn(handler, 1 << 20).unwrap();
    let builder = Arc::new(RoundBuilder::new().retain_rounds(false).with_ui_handler(ui));
    with_watchdog(30, move || {
        builder.message("first");
        entered_rx.recv().unwrap();
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let builder = Arc::clone(&builder);
                thread::spawn(move || (0..CALLS).for_each(|n| builder.message(&format!("T{t}-{n} "))))
            })
            .collect();
        // Every call returns while the handler is stuck.
        workers.into_iter().for_each(|w| w.join().unwrap());
        release_tx.send(()).unwrap();
        drop(builder);
        delivery.join().unwrap();
        let seen = seen.lock();
        assert!(seen.iter().all(|(name, _)| name.as_deref() == Some("roundup-ui")), "a caller ran the handler");
        let deltas: Vec<&str> = seen.iter().filter_map(|(_, e)| e.get("text").and_then(Value::as_str)).collect();
        assert_eq!(deltas.len(), 1 + THREADS * CALLS, "every event delivered");
        for t in 0..THREADS {
            let mine: Vec<&str> = deltas.iter().copied().filter(|d| d.starts_with(&format!("T{t}-"))).collect();
            let expected: Vec<String> = (0..CALLS).map(|n| format!("T{t}-{n} ")).collect();
            assert_eq!(mine, expected, "thread {t}'s events in its order");
        }
    });
}

/// A handler on a [`roundup::UiThread`] that falls more than its capacity
/// behind is cut off and told once; one that panics has the panic reported
/// by `join`, and the events after it are still delivered.
#[test]
fn a_ui_thread_cuts_off_a_laggard_and_reports_a_panic() {
    let (stuck, entered_rx, release_tx) = Stuck::new();
    let (ui, delivery) = roundup::UiThread::spawn(SharedStuck(Arc::clone(&stuck)), 10).unwrap();
    let builder = RoundBuilder::new().with_ui_handler(ui);
    with_watchdog(20, move || {
        builder.message("a");
        entered_rx.recv().unwrap();
        for _ in 0..100 {
            builder.message("b");
        }
        release_tx.send(()).unwrap();
        builder.finish(FinishReason::Interrupted);
        assert_eq!(builder.rounds().len(), 1, "rounds are unaffected");
        drop(builder);
        delivery.join().unwrap();
        assert_eq!(stuck.overflowed.lock().clone(), vec![11], "told once: 10 queued and the one refused");
    });

    let delivered = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&delivered);
    let panicky = move |event: &UiEvent<'_>| {
        count.fetch_add(1, Ordering::SeqCst);
        if let UiEvent::MessageDelta { text: "boom" } = event {
            panic!("the view broke");
        }
        UiFlow::Continue
    };
    let (ui, delivery) = roundup::UiThread::spawn(panicky, 100).unwrap();
    let builder = RoundBuilder::new().with_ui_handler(ui);
    builder.message("boom");
    builder.message("after");
    drop(builder);
    let payload = delivery.join().unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the view broke"));
    // run_start, message_start, the two deltas.
    assert_eq!(delivered.load(Ordering::SeqCst), 4);
}

/// A sink that refuses every other record, four threads calling, rounds not
/// retained: every record is either persisted or handed back with its error
/// (by `try_call` or `take_sink_failures`), exactly once, and the run's
/// state goes on as if the sink had taken everything.
#[test]
fn a_failing_sink_loses_no_record() {
    let persisted = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let seen = Arc::new(AtomicUsize::new(0));
    let (store, count) = (Arc::clone(&persisted), Arc::clone(&seen));
    let builder = Arc::new(RoundBuilder::new().retain_rounds(false).with_sink(move |record: SinkRecord<'_>| {
        if count.fetch_add(1, Ordering::Relaxed) % 2 == 1 {
            return Err(format!("refused {}", record_json(record)["type"]));
        }
        store.lock().unwrap().push(record_json(record));
        Ok(())
    }));
    let handed_back = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (builder, handed_back) = (Arc::clone(&builder), Arc::clone(&handed_back));
            thread::spawn(move || {
                for i in 0..50 {
                    let id = format!("t{t}-{i}");
                    builder.message(&format!("text {id}"));
                    builder.tool_call(&id, "ls");
                    let status = ToolCallStatus::Completed;
                    if let Err(error) = builder.try_call(Call::ToolUpdate { id: &id, content: "ok", status }) {
                        assert!(error.to_string().starts_with("the round sink refused"), "{error}");
                        let lines = error.failures.iter().map(|f| serde_json::to_value(&f.record).unwrap());
                        handed_back.lock().unwrap().extend(lines);
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    builder.finish(FinishReason::Completed);
    let kept = builder.take_sink_failures();
    assert!(kept.iter().all(|f| f.error.to_string().starts_with("refused")));
    let mut all: Vec<Value> = persisted.lock().unwrap().clone();
    all.extend(handed_back.lock().unwrap().iter().cloned());
    all.extend(kept.iter().map(|f| serde_json::to_value(&f.record).unwrap()));
    assert_eq!(all.len(), seen.load(Ordering::Relaxed), "each record once, persisted or handed back");
    let rounds: Vec<&Value> = all.iter().filter(|l| l["type"] == "round").collect();
    let summary = all.iter().find(|l| l["type"] == "summary").expect("the summary, persisted or handed back");
    assert_eq!(summary["rounds"].as_u64(), Some(rounds.len() as u64));
    let mut indexes: Vec<u64> = rounds.iter().filter_map(|r| r["index"].as_u64()).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, (0..rounds.len() as u64).collect::<Vec<_>>(), "no round lost or doubled");
    let refused = handed_back.lock().unwrap().len() + kept.len();
    assert_eq!(refused, seen.load(Ordering::Relaxed) / 2, "every other record refused, each handed back");
}
