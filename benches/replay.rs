//! `replay --from ops` end to end on a generated 100 MB trace, side by side
//! with the floor: serde_json parsing the same lines into `IgnoredAny`.
//!
//! `cargo bench --bench replay` (`ROUNDUP_BENCH_MB` changes the size).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{median_time, ms, trace};
use serde::de::IgnoredAny;

fn main() {
    let mb: usize = std::env::var("ROUNDUP_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let input = trace(mb * 1_000_000, 4);
    let bytes = input.len() as f64;
    let lines = input.lines().count() as f64;
    println!("trace: {:.1} MB, {} lines, 4 sessions", bytes / 1e6, lines);

    // The floor: read the lines as the replay does and parse each into
    // IgnoredAny, so it pays for line splitting and JSON parsing only.
    let floor = median_time(9, || {
        let mut reader = BufReader::with_capacity(1 << 16, input.as_bytes());
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            let _: IgnoredAny = serde_json::from_slice(&line).unwrap();
        }
    });
    // What decoding the lines into calls costs, without applying them.
    let decode = median_time(9, || {
        let mut reader = BufReader::with_capacity(1 << 16, input.as_bytes());
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            let parsed = roundup::OpsLine::parse(&line).unwrap();
            std::hint::black_box(parsed.call().unwrap());
        }
    });
    let library = median_time(9, || {
        let stats = roundup::replay_ops(input.as_bytes(), std::io::sink(), roundup::Emit::Records, &mut ()).unwrap();
        assert_eq!(stats.bad_lines, 0);
    });
    let file = std::env::temp_dir().join(format!("roundup-bench-{}.ops.jsonl", std::process::id()));
    std::fs::File::create(&file).unwrap().write_all(input.as_bytes()).unwrap();
    let cli = median_time(9, || {
        let status = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .arg("replay")
            .arg(&file)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    });
    // ROUNDUP_BENCH_KEEP=1 keeps the trace, for profiling the CLI on it.
    if std::env::var_os("ROUNDUP_BENCH_KEEP").is_some() {
        println!("trace kept at {}", file.display());
    } else {
        std::fs::remove_file(&file).ok();
    }

    let row = |name: &str, t: Duration| {
        println!(
            "{name:<44} {:>9.1} ms {:>8.1} MB/s {:>12.0} lines/s {:>6.2}x floor",
            ms(t),
            bytes / 1e6 / t.as_secs_f64(),
            lines / t.as_secs_f64(),
            t.as_secs_f64() / floor.as_secs_f64()
        )
    };
    println!("median of 9 runs:");
    row("floor: serde_json lines into IgnoredAny", floor);
    row("decode only: OpsLine::parse + call", decode);
    row("replay_ops (library, output discarded)", library);
    row("roundup replay FILE > /dev/null (CLI)", cli);
}
