//! One million message chunks through a `RoundBuilder` (no-op sink, system
//! clock), for counting instructions per call with a tool that counts them
//! exactly, whatever the machine is doing:
//!
//! ```sh
//! cargo build --release --example hot_path
//! valgrind --tool=callgrind target/release/examples/hot_path 0        # baseline: setup only
//! valgrind --tool=callgrind target/release/examples/hot_path 1000000  # (total - baseline) / 1e6 per call
//! ```
//!
//! A second argument `ui` adds a no-op UI handler, so that every chunk is
//! also delivered as a UI event.

use roundup::{RoundBuilder, SinkRecord, StreamHandler, UiEvent, UiFlow};

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let ui = args.next().as_deref() == Some("ui");
    let mut builder = RoundBuilder::new().retain_rounds(false).with_sink(|r: SinkRecord<'_>| {
        std::hint::black_box(r);
    });
    if ui {
        builder = builder.with_ui(|e: &UiEvent<'_>| {
            std::hint::black_box(e);
            UiFlow::Continue
        });
    }
    builder.message("warm up");
    for _ in 0..calls {
        builder.message(std::hint::black_box("0123456789 the quick"));
    }
    println!("{}", builder.summary().rounds);
}
