//! `replay --from ops` end to end on a generated 100 MB trace, side by side
//! with the floor: serde_json parsing the same lines into `IgnoredAny`.
//!
//! `cargo bench --bench replay` (`ROUNDUP_BENCH_MB` changes the size).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{ms, trace};
use serde::de::IgnoredAny;

fn main() {
    let mb: usize = std::env::var("ROUNDUP_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let input = trace(mb * 1_000_000, 4);
    let bytes = input.len() as f64;
    let lines = input.lines().count() as f64;
    println!("trace: {:.1} MB, {} lines, 4 sessions", bytes / 1e6, lines);

    let file = std::env::temp_dir().join(format!("roundup-bench-{}.ops.jsonl", std::process::id()));
    std::fs::File::create(&file).unwrap().write_all(input.as_bytes()).unwrap();

    // Reads the lines as the replay does (64 KiB buffer, one line at a time).
    let for_each_line = |f: &mut dyn FnMut(&[u8])| {
        let mut reader = BufReader::with_capacity(1 << 16, input.as_bytes());
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            f(&line);
        }
    };
    // The floor: each line parsed into IgnoredAny, so it pays for line
    // splitting and JSON parsing only.
    let floor = || {
        for_each_line(&mut |line| {
            let _: IgnoredAny = serde_json::from_slice(line).unwrap();
        })
    };
    // What decoding the lines into calls costs, without applying them.
    let decode = || {
        for_each_line(&mut |line| {
            let parsed = roundup::OpsLine::parse(line).unwrap();
            std::hint::black_box(parsed.call().unwrap());
        })
    };
    let library = || {
        let stats = roundup::replay(input.as_bytes(), std::io::sink(), &common::ops(), &mut ()).unwrap();
        assert_eq!(stats.bad_lines, 0);
    };
    let run_cli = |binary: &std::ffi::OsStr| {
        let status = Command::new(binary).arg("replay").arg(&file).stdout(Stdio::null()).status().unwrap();
        assert!(status.success());
    };
    let cli = || run_cli(env!("CARGO_BIN_EXE_roundup").as_ref());
    // ROUNDUP_BENCH_BASELINE=path/to/an/older/roundup adds that binary as a
    // candidate, measured in the same rounds: a before/after comparison
    // that the machine's noise hits alike.
    let baseline = std::env::var_os("ROUNDUP_BENCH_BASELINE");
    let baseline_cli = || run_cli(baseline.as_deref().unwrap_or_default());
    // Rounds of all candidates, one after the other, so that a slow stretch
    // of the machine hits every candidate alike; each ratio is taken within
    // its round, then the medians are reported.
    let mut candidates: Vec<(&str, &dyn Fn())> = vec![
        ("floor: serde_json lines into IgnoredAny", &floor),
        ("decode only: OpsLine::parse + call", &decode),
        ("replay (library, output discarded)", &library),
        ("roundup replay FILE > /dev/null (CLI)", &cli),
    ];
    if baseline.is_some() {
        candidates.push(("the same, ROUNDUP_BENCH_BASELINE binary", &baseline_cli));
    }
    const ROUNDS: usize = 9;
    let mut times = vec![Vec::new(); candidates.len()];
    let mut ratios = vec![Vec::new(); candidates.len()];
    let mut versus_baseline = Vec::new();
    for round in 0..=ROUNDS {
        let measured: Vec<Duration> = candidates
            .iter()
            .map(|(_, f)| {
                let start = std::time::Instant::now();
                f();
                start.elapsed()
            })
            .collect();
        if round == 0 {
            continue; // warm-up
        }
        for (i, t) in measured.iter().enumerate() {
            times[i].push(*t);
            ratios[i].push(t.as_secs_f64() / measured[0].as_secs_f64());
        }
        if baseline.is_some() {
            versus_baseline.push(measured[3].as_secs_f64() / measured[4].as_secs_f64());
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("median of {ROUNDS} rounds (ratio: median of the per-round ratios):");
    for (i, (name, _)) in candidates.iter().enumerate() {
        times[i].sort();
        let t = times[i][ROUNDS / 2];
        println!(
            "{name:<44} {:>9.1} ms {:>8.1} MB/s {:>12.0} lines/s {:>6.2}x floor",
            ms(t),
            bytes / 1e6 / t.as_secs_f64(),
            lines / t.as_secs_f64(),
            median(&mut ratios[i])
        );
    }
    if baseline.is_some() {
        println!("CLI / baseline binary: {:.3}x (median of the per-round ratios)", median(&mut versus_baseline));
    }
    // ROUNDUP_BENCH_KEEP=1 keeps the trace, for profiling the CLI on it.
    if std::env::var_os("ROUNDUP_BENCH_KEEP").is_some() {
        println!("trace kept at {}", file.display());
    } else {
        std::fs::remove_file(&file).ok();
    }
}
