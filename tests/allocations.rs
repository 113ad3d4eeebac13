//! The uncontended hot path allocates nothing per message chunk beyond the
//! text buffers' own amortised growth, counted by a global allocator (a
//! count, not a timing: it is exact and repeatable).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use roundup::{RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus, UiEvent, UiFlow};

struct Counting;

thread_local! {
    /// Allocations made by this thread: the tests of this file run in
    /// parallel, and each counts only its own.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = allocations();
    f();
    allocations() - before
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
