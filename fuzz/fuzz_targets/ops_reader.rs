//! The ops JSONL reader and the whole replay on arbitrary bytes: it never
//! panics, every output line is JSON, every bad line is reported once, and
//! the output invariants hold (one result per call, nothing lost, UI
//! events well formed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup_testkit::{capture, invariants};
use serde_json::Value;

fn replay(input: &[u8], emit: &str) -> (Vec<Value>, roundup::ReplayStats) {
    let (out, stats) = capture::replay_raw(input, &capture::options("ops", emit));
    assert!(out.is_empty() || out.ends_with(b"\n"), "output ends with a newline");
    (capture::parse_output(&out), stats)
}

fuzz_target!(|input: &[u8]| {
    let (lines, stats) = replay(input, "records");
    let bad = lines.iter().filter(|l| l["kind"] == "bad_line").count() as u64;
    assert_eq!(bad, stats.bad_lines);
    assert_eq!(stats.bytes, input.len() as u64);
    assert!(lines.iter().any(|l| l["type"] == "summary"), "every replay ends with summaries");
    invariants::check_rounds(&lines).unwrap();
    if let Some(fed) = invariants::Fed::from_input(input) {
        invariants::check_nothing_lost(&fed, &lines).unwrap();
    }

    let (events, _) = replay(input, "ui");
    invariants::check_ui_per_session(&events).unwrap();
});
