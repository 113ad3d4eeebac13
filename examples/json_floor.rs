//! The floor an adapter is measured against, for counting instructions: read
//! a file of JSON lines and parse each into `IgnoredAny`, as the adapters
//! benchmark does, so that a profile of `roundup replay` on the same file
//! compares with it.
//!
//! ```sh
//! ROUNDUP_BENCH_DUMP=/tmp/dump ROUNDUP_BENCH_MB=2 cargo bench --bench adapters
//! cargo build --release --example json_floor
//! valgrind --tool=callgrind target/release/examples/json_floor /tmp/dump/anthropic.jsonl
//! valgrind --tool=callgrind target/release/roundup replay --from anthropic /tmp/dump/anthropic.jsonl
//! ```

use std::io::{BufRead, BufReader};

use serde::de::IgnoredAny;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: json_floor FILE")?;
    let mut reader = BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
    let mut line = Vec::new();
    let mut lines = 0u64;
    while reader.read_until(b'\n', &mut line)? > 0 {
        let _: IgnoredAny = serde_json::from_slice(&line)?;
        line.clear();
        lines += 1;
    }
    println!("{lines} lines parsed");
    Ok(())
}
