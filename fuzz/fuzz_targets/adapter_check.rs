//! What the adapter fuzz targets check: a protocol adapter on arbitrary
//! bytes, through the whole replay, never panics, every output line is
//! JSON, every tool call has exactly one result, UI events are well formed,
//! the records are the same whether its views are read through the
//! scanner or by serde alone;
//! and, reading the same bytes as a script of native events
//! (`roundup_testkit::native`), nothing the events carry is lost.
//! Included by path by every adapter's target (`acp.rs`, `codex.rs`, ...).

use roundup::encoders::Framing;
use roundup_testkit::capture::{options, replay_lines};
use roundup_testkit::invariants;
use roundup_testkit::native::{check_conservation, native_stream};

pub fn check(input: &[u8], from: &str) {
    let (lines, _) = replay_lines(input, &options(from, "records"));
    invariants::check_rounds(&lines).unwrap();
    let (by_serde, _) = roundup::adapters::by_serde_alone(|| replay_lines(input, &options(from, "records")));
    assert_eq!(lines, by_serde, "the scanner and serde read the views alike");
    let (events, _) = replay_lines(input, &options(from, "ui"));
    invariants::check_ui_per_session(&events).unwrap();
    let (deepwork, _) = replay_lines(input, &options(from, "deepwork").framing(Framing::Sse));
    assert!(deepwork.iter().all(|e| e["meta"]["seq"].is_u64()));

    let stream = native_stream(from, &input[..input.len().min(120)]);
    let (lines, _) = replay_lines(&stream.input(), &options(from, "records"));
    check_conservation(&stream, &lines).unwrap();
    invariants::check_rounds(&lines).unwrap();
}
