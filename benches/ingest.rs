//! `roundup ingest` against `roundup replay` on the same recordings: the
//! cost of the database. Mixed real recordings (the fixtures of eight
//! formats, each repeated into a file of its own) are replayed to
//! /dev/null, ingested with one reader thread, and with two; runs
//! alternate (replay, ingest ×1, ingest ×2, and again), each ingest into a
//! new database, so that the machine's noise falls on all alike.
//!
//! `cargo bench --bench ingest` (`ROUNDUP_BENCH_MB` changes the size, 64 by
//! default; `ROUNDUP_BENCH_ROUNDS` the number of alternations, 3).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Recordings of about `megabytes` in all, in `dir`.
fn recordings(dir: &Path, megabytes: usize) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut fixtures = Vec::new();
    for folder in [
        "acp",
        "claude-transcript",
        "codex-rollout",
        "openai-chat",
        "anthropic-messages",
        "uagent",
        "gemini",
        "codex-exec-json",
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(folder))
            .expect("a fixture folder")
            .map(|entry| entry.expect("an entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        fixtures.extend(files);
    }
    std::fs::create_dir_all(dir).expect("the bench's folder");
    let per_file = megabytes * 1_000_000 / fixtures.len();
    let mut written = Vec::new();
    for (i, path) in fixtures.iter().enumerate() {
        let content = std::fs::read(path).expect("a fixture");
        let mut bytes = Vec::with_capacity(per_file + content.len());
        while bytes.len() < per_file {
            bytes.extend_from_slice(&content);
            if !content.ends_with(b"\n") {
                bytes.push(b'\n');
            }
        }
        let file = dir.join(format!("{i:03}.jsonl"));
        std::fs::write(&file, bytes).expect("a recording");
        written.push(file);
    }
    written
}

fn timed(args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("roundup runs");
    assert!(status.success(), "roundup {args:?}");
    started.elapsed()
}

fn main() {
    let megabytes = env_number("ROUNDUP_BENCH_MB", 64);
    let alternations = env_number("ROUNDUP_BENCH_ROUNDS", 3);
    let dir = std::env::temp_dir().join(format!("roundup-bench-ingest-{}", std::process::id()));
    let files = recordings(&dir.join("inputs"), megabytes);
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
    let inputs = dir.join("inputs");
    let inputs = inputs.to_str().expect("a UTF-8 path");
    let db = dir.join("bench.db");
    let db_path = db.to_str().expect("a UTF-8 path");
    let mut best = [Duration::MAX; 3];
    for _ in 0..alternations {
        best[0] = best[0].min(timed(&["replay", "--no-progress", inputs]));
        for (slot, jobs) in [(1, "1"), (2, "2")] {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{db_path}{suffix}"));
            }
            best[slot] = best[slot].min(timed(&["ingest", "--db", db_path, "--jobs", jobs, "--no-progress", inputs]));
        }
    }
    let connection_rounds = {
        let mut db = roundup::store::Database::open(&db).expect("the bench's database");
        db.stats().expect("its figures").rounds
    };
    let size = std::fs::metadata(&db).map_or(0, |m| m.len());
    let mb = bytes as f64 / 1e6;
    println!("{} files, {mb:.1} MB, {connection_rounds} rounds (best of {alternations})", files.len());
    for (name, time) in ["replay > /dev/null", "ingest --jobs 1", "ingest --jobs 2"].iter().zip(best) {
        let seconds = time.as_secs_f64();
        println!(
            "{name:20} {:8.1} ms  {:7.1} MB/s  {:9.0} rounds/s",
            seconds * 1e3,
            mb / seconds,
            connection_rounds as f64 / seconds
        );
    }
    let (replay, one, two) = (best[0].as_secs_f64(), best[1].as_secs_f64(), best[2].as_secs_f64());
    println!(
        "ingest --jobs 1 at {:.0}% of replay's throughput; --jobs 2 {:.2}x --jobs 1",
        replay / one * 100.0,
        one / two
    );
    println!(
        "database: {:.1} MB, {:.0} bytes per round",
        size as f64 / 1e6,
        size as f64 / connection_rounds.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
