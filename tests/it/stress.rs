//! Concurrency stress: many threads on one builder and on many builders,
//! with callbacks that call back into the builder and callbacks that panic.
//! A watchdog turns a deadlock into a failure; afterwards nothing may be
//! lost and the output invariants must hold.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;

use roundup::{FinishReason, RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus, UiEvent, UiFlow};
use roundup_testkit::capture::{record_json, with_watchdog};
use roundup_testkit::invariants::{check_rounds, check_ui};
use serde_json::Value;

/// A builder whose callbacks log everything, call back into the builder,
/// and panic now and then.
struct Hostile {
    builder: Arc<RoundBuilder>,
    log: Arc<Mutex<Vec<Value>>>,
    panics: Arc<AtomicUsize>,
}

fn hostile_builder(panic_every: usize) -> Hostile {
    let me: Arc<OnceLock<Weak<RoundBuilder>>> = Arc::default();
    let log = Arc::new(Mutex::new(Vec::new()));
    let panics = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let (sink_me, ui_me) = (Arc::clone(&me), Arc::clone(&me));
    let (sink_log, ui_log) = (Arc::clone(&log), Arc::clone(&log));
    let sink_panics = Arc::clone(&panics);
    let builder = RoundBuilder::new()
        .with_sink(move |record: SinkRecord<'_>| {
            sink_log.lock().unwrap().push(record_json(record));
            let builder = sink_me.get().and_then(Weak::upgrade);
            if let (Some(builder), SinkRecord::Round(_)) = (builder, record) {
                // Re-entrant: read, and write something that changes no round.
                let _ = builder.summary();
                builder.token_usage(7);
                if seen.fetch_add(1, Ordering::SeqCst) % panic_every == panic_every - 1 {
                    sink_panics.fetch_add(1, Ordering::SeqCst);
                    panic!("sink failure");
                }
            }
        })
        .with_ui(move |event: &UiEvent<'_>| {
            ui_log.lock().unwrap().push(serde_json::to_value(event).unwrap());
            if let Some(builder) = ui_me.get().and_then(Weak::upgrade) {
                let _ = builder.is_finished();
            }
            UiFlow::Continue
        });
    let builder = Arc::new(builder);
    me.set(Arc::downgrade(&builder)).unwrap();
    Hostile { builder, log, panics }
}

/// One worker's calls: unique text and ids, results sometimes late (after
/// the next message), so rounds close by every path.
fn work(builder: &RoundBuilder, worker: usize, iterations: usize) {
    for i in 0..iterations {
        let id = format!("w{worker}-{i}");
        // Each call may resume a panic from a callback delivering on this
        // thread; the builder must stay usable.
        let call = |f: &dyn Fn()| {
            let _ = catch_unwind(AssertUnwindSafe(f));
        };
        call(&|| builder.message(&format!("<{worker}:{i}>")));
        call(&|| builder.tool_call(&id, "bash"));
        call(&|| builder.tool_update(&id, "{}", ToolCallStatus::InProgress));
        call(&|| builder.tool_update(&id, &format!("result {id}"), ToolCallStatus::Completed));
    }
}

fn check(hostile: &Hostile, workers: usize, iterations: usize) {
    let log = hostile.log.lock().unwrap().clone();
    let (ui, records): (Vec<Value>, Vec<Value>) = log.into_iter().partition(|v| v.get("event").is_some());
    check_ui(&ui).unwrap();
    assert_eq!(records.iter().filter(|r| r["type"] == "summary").count(), 1, "the finish wrote its summary");
    check_rounds(&records).unwrap();
    // Every fragment is in exactly one round.
    let text: String =
        records.iter().filter(|r| r["type"] == "round").map(|r| r["message"].as_str().unwrap().to_owned()).collect();
    for worker in 0..workers {
        for i in 0..iterations {
            assert_eq!(text.matches(&format!("<{worker}:{i}>")).count(), 1, "fragment <{worker}:{i}>");
        }
    }
    // Every result is in exactly one place: a round, a stitch or an anomaly.
    let mut places: HashMap<String, usize> = HashMap::new();
    for record in &records {
        let contents: Vec<&Value> = match record["type"].as_str().unwrap() {
            "round" => record["tool_calls"].as_array().unwrap().iter().map(|c| &c["result"]["content"]).collect(),
            "stitch" => vec![&record["result"]["content"]],
            "anomaly" => vec![&record["detail"]],
            _ => vec![],
        };
        for content in contents.into_iter().filter_map(Value::as_str) {
            *places.entry(content.to_owned()).or_default() += 1;
        }
    }
    for worker in 0..workers {
        for i in 0..iterations {
            assert_eq!(places.get(&format!("result w{worker}-{i}")), Some(&1), "result w{worker}-{i}");
        }
    }
    // The retained rounds are the delivered ones, panics or not.
    let delivered = records.iter().filter(|r| r["type"] == "round").count();
    assert_eq!(hostile.builder.rounds().len(), delivered);
}

#[test]
fn many_threads_on_one_builder_with_reentrant_and_panicking_callbacks() {
    const WORKERS: usize = 8;
    const ITERATIONS: usize = 250;
    let hostile = hostile_builder(7);
    let builder = Arc::clone(&hostile.builder);
    with_watchdog(120, move || {
        let threads: Vec<_> = (0..WORKERS)
            .map(|w| {
                let builder = Arc::clone(&builder);
                thread::spawn(move || work(&builder, w, ITERATIONS))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let _ = catch_unwind(AssertUnwindSafe(|| builder.finish(FinishReason::Interrupted)));
    });
    assert!(hostile.panics.load(Ordering::SeqCst) > 10, "the sink did panic");
    check(&hostile, WORKERS, ITERATIONS);
}

#[test]
fn many_threads_on_many_builders() {
    const BUILDERS: usize = 16;
    const WORKERS: usize = 8;
    const ITERATIONS: usize = 100;
    let builders: Arc<Vec<Hostile>> = Arc::new((0..BUILDERS).map(|b| hostile_builder(5 + b)).collect());
    let shared = Arc::clone(&builders);
    with_watchdog(120, move || {
        let threads: Vec<_> = (0..WORKERS)
            .map(|w| {
                let builders = Arc::clone(&shared);
                // Every worker feeds every builder, in a different order.
                thread::spawn(move || {
                    for step in 0..BUILDERS {
                        let b = (step * 3 + w) % BUILDERS;
                        work(&builders[b].builder, w, ITERATIONS);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for hostile in shared.iter() {
            let _ = catch_unwind(AssertUnwindSafe(|| hostile.builder.finish(FinishReason::Interrupted)));
        }
    });
    for hostile in builders.iter() {
        assert!(hostile.panics.load(Ordering::SeqCst) > 0);
        check(hostile, WORKERS, ITERATIONS);
    }
}
