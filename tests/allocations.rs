//! The uncontended hot path allocates nothing per message chunk beyond the
//! text buffers' own amortised growth, counted by a global allocator (a
//! count, not a timing: it is exact and repeatable).
//!
//! A binary of its own: the counting allocator is global to the binary.

use roundup::{RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus, UiEvent, UiFlow};

/// Allocations (reallocations included) made by this thread while `f`
/// runs. `allocation-counter` installs a counting global allocator in this
/// test binary only, and counts per thread: the tests of this file run in
/// parallel, and each counts only its own.
fn allocations_during(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

#[test]
fn message_chunks_allocate_only_for_buffer_growth() {
    let builder = RoundBuilder::new().with_sink(|_: SinkRecord<'_>| {}).with_ui(|event: &UiEvent<'_>| {
        std::hint::black_box(event);
        UiFlow::Continue
    });
    // Warm up: the output buffers reach their steady size.
    for _ in 0..100 {
        builder.message("warm ");
    }
    const CHUNKS: usize = 100_000;
    let count = allocations_during(|| {
        for _ in 0..CHUNKS {
            builder.message("0123456789");
        }
    });
    // 1 MB of text grows the round's message buffer by doubling: about 20
    // reallocations for 100,000 calls. One allocation per call would be
    // 100,000.
    assert!(count <= 32, "{count} allocations for {CHUNKS} message chunks");
    assert_eq!(builder.summary().message_bytes, 0, "still one open round");
}

#[test]
fn argument_deltas_allocate_only_for_buffer_growth() {
    let builder = RoundBuilder::new().with_ui(|_: &UiEvent<'_>| UiFlow::Continue);
    builder.tool_call("t1", "write");
    for _ in 0..100 {
        builder.tool_update("t1", "warm", ToolCallStatus::InProgress);
    }
    let count = allocations_during(|| {
        for _ in 0..100_000 {
            builder.tool_update("t1", "{\"k\":\"0123456789\"}", ToolCallStatus::InProgress);
        }
    });
    assert!(count <= 32, "{count} allocations for 100000 argument deltas");
}
