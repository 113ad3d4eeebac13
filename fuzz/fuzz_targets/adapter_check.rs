//! What the adapter fuzz targets check: a protocol adapter on arbitrary
//! bytes, through the whole replay, never panics, every output line is
//! JSON, every tool call has exactly one result, UI events are well formed.
//! Included by path by `acp.rs`, `uagent.rs` and `deepwork.rs`.

use roundup::{Emit, Format};
use serde_json::Value;

#[allow(dead_code)]
#[path = "../../tests/common/invariants.rs"]
mod invariants;

#[allow(dead_code)]
#[path = "../../tests/common/capture.rs"]
mod capture;

fn replay(input: &[u8], from: Format, emit: Emit) -> Vec<Value> {
    capture::replay_lines(input, from, emit).0
}

pub fn check(input: &[u8], from: Format) {
    let lines = replay(input, from, Emit::Records);
    invariants::check_rounds(&lines).unwrap();
    let events = replay(input, from, Emit::Ui);
    invariants::check_ui_per_session(&events).unwrap();
    let deepwork = replay(input, from, Emit::Deepwork { sse: true });
    assert!(deepwork.iter().all(|e| e["meta"]["seq"].is_u64()));
}
