//! Pipe latency of the live command line: the time from a line written into
//! roundup's stdin to the output line it causes appearing on its stdout.
//!
//! `cargo bench --bench live` (`ROUNDUP_BENCH_ROUNDS` changes the count).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let rounds: usize = std::env::var("ROUNDUP_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    let mut child = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(["replay", "--from", "ops", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut latencies = Vec::with_capacity(rounds);
    let mut line = String::new();
    for n in 0..rounds {
        writeln!(stdin, r#"{{"op":"tool_call","id":"t{n}","title":"ls"}}"#).unwrap();
        stdin.flush().unwrap();
        // The result closes the round: timed from its write to the round's line.
        let start = Instant::now();
        writeln!(stdin, r#"{{"op":"tool_update","id":"t{n}","content":"ok","status":"completed"}}"#).unwrap();
        stdin.flush().unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        latencies.push(start.elapsed());
        assert!(line.starts_with(r#"{"type":"round""#), "{line}");
    }
    drop(stdin);
    child.wait().unwrap();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "pipe latency over {rounds} rounds: median {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        us(at(0.5)),
        us(at(0.9)),
        us(at(0.99)),
        us(at(1.0))
    );
}
