//! Timing and trace generation shared by the custom benchmarks.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Median wall time of `runs` runs of `f` (after one warm-up run).
pub fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A deterministic pseudo-random generator (xorshift), so every run
/// measures the same trace.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const WORDS: [&str; 12] = [
    "the ",
    "file ",
    "build ",
    "error ",
    "in ",
    "src/main.rs ",
    "line ",
    "12 ",
    "fix ",
    "`cfg` ",
    "é ",
    "\\\"quoted\\\" ",
];

/// Appends one realistic round of ops JSONL to `out`: streamed reasoning,
/// streamed text, one to three tool calls with streamed arguments, a
/// snapshot now and then, results, a token gauge; `at_ms` on every line.
pub fn push_round(out: &mut String, rng: &mut Rng, session: &str, round: u64, clock: &mut u64) {
    use std::fmt::Write;
    let mut line = |out: &mut String, rng: &mut Rng, body: &str| {
        *clock += 1 + rng.below(20);
        let _ = writeln!(out, "{{{body},\"session\":\"{session}\",\"at_ms\":{clock}}}");
    };
    let word = |rng: &mut Rng| WORDS[rng.below(WORDS.len() as u64) as usize];
    for _ in 0..10 + rng.below(20) {
        let text = word(rng);
        line(out, rng, &format!("\"op\":\"thought\",\"text\":\"{text}\""));
    }
    for _ in 0..10 + rng.below(30) {
        let text = word(rng);
        line(out, rng, &format!("\"op\":\"message\",\"text\":\"{text}\""));
    }
    let calls = 1 + rng.below(3);
    for c in 0..calls {
        let id = format!("toolu_{round}_{c}");
        line(out, rng, &format!("\"op\":\"tool_call\",\"id\":\"{id}\",\"title\":\"bash\""));
        for _ in 0..5 + rng.below(20) {
            let delta = r#"{\"cmd\":\"ls"#;
            line(
                out,
                rng,
                &format!("\"op\":\"tool_update\",\"id\":\"{id}\",\"content\":\"{delta}\",\"status\":\"in_progress\""),
            );
        }
        if rng.below(4) == 0 {
            let args = r#"{\"cmd\":\"ls -la\"}"#;
            line(out, rng, &format!("\"op\":\"args_snapshot\",\"id\":\"{id}\",\"args\":\"{args}\""));
        }
    }
    for c in 0..calls {
        let result = r"a.txt\nb.txt\nsrc/main.rs:12: error\n".repeat(1 + rng.below(8) as usize);
        let body = format!(
            "\"op\":\"tool_update\",\"id\":\"toolu_{round}_{c}\",\"content\":\"{result}\",\"status\":\"completed\""
        );
        line(out, rng, &body);
    }
    line(out, rng, &format!("\"op\":\"token_usage\",\"total\":{}", 1000 + round * 10));
}

/// About `bytes` of ops JSONL: rounds of `sessions` sessions, interleaved
/// round by round, each session starting a new run every 500 rounds.
pub fn trace(bytes: usize, sessions: usize) -> String {
    let mut out = String::with_capacity(bytes + (1 << 16));
    let mut rng = Rng::new(42);
    let mut clock = 1_700_000_000_000;
    let mut round = 0;
    while out.len() < bytes {
        let session = format!("s{}", round % sessions as u64);
        push_round(&mut out, &mut rng, &session, round, &mut clock);
        round += 1;
        if round % (500 * sessions as u64) < sessions as u64 {
            out.push_str(&format!("{{\"op\":\"start\",\"session\":\"{session}\"}}\n"));
        }
    }
    out
}

/// Replay options for ops JSONL in, records out (`--from ops`).
#[allow(dead_code)]
pub fn ops() -> roundup::ReplayOptions {
    roundup::ReplayOptions::new().from(&roundup::adapters::ops::FORMAT)
}
