//! Every protocol adapter (ACP, uagent, deepwork) on arbitrary bytes,
//! through the whole replay: it never panics, every output line is JSON,
//! every tool call has exactly one result, UI events are well formed. The
//! first byte picks the adapter, so one corpus serves all three.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup::{Emit, Format};
use serde_json::Value;

#[allow(dead_code)]
#[path = "../../tests/common/invariants.rs"]
mod invariants;

fn replay(input: &[u8], from: Format, emit: Emit) -> Vec<Value> {
    let mut out = Vec::new();
    roundup::replay(input, &mut out, from, emit, &mut ()).expect("in-memory replay cannot fail");
    let text = std::str::from_utf8(&out).expect("output is UTF-8");
    // SSE frames (--emit deepwork --sse): `data: ` lines, blank separators.
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l.strip_prefix("data: ").unwrap_or(l)).expect("output line is JSON"))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else { return };
    let from = [Format::Acp, Format::Uagent, Format::Deepwork, Format::Auto][usize::from(selector % 4)];
    let lines = replay(input, from, Emit::Records);
    invariants::check_rounds(&lines).unwrap();
    let events = replay(input, from, Emit::Ui);
    let mut sessions: Vec<Option<&str>> = events.iter().map(|e| e["session"].as_str()).collect();
    sessions.sort();
    sessions.dedup();
    for session in sessions {
        let mine: Vec<Value> = events.iter().filter(|e| e["session"].as_str() == session).cloned().collect();
        invariants::check_ui(&mine).unwrap();
    }
    let deepwork = replay(input, from, Emit::Deepwork { sse: true });
    assert!(deepwork.iter().all(|e| e["meta"]["seq"].is_u64()));
});
