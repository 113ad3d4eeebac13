//! Test helpers shared by roundup's integration tests, property tests and
//! fuzz targets, so that each check is written once and the fuzz targets
//! check exactly what the tests check. Only std, serde_json, proptest and
//! roundup are used.
//!
//! Not published: a test-only crate of the workspace.
#![allow(missing_docs)]

pub mod capture;
pub mod generate;
pub mod invariants;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod load;
pub mod native;
pub mod reference;
pub mod vectors;

pub use vectors::{check_all, check_output, pending, subset, vectors, vectors_dir, Vector, KNOWN_VECTORS};

/// The repository's root (the roundup crate's manifest directory).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The peak resident set size of a running process, in KiB (`VmHWM` of
/// `/proc/PID/status`); `None` once it is gone.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// What [`pipe_through`] saw of a child process.
#[derive(Debug)]
pub struct Piped {
    /// The peak resident set (KiB), read until the process ended.
    pub peak_kib: u64,
    pub status: std::process::ExitStatus,
    pub stderr: String,
}

/// Runs `program` with `args`, writes its stdin with `feed` while a thread
/// hands every stdout line (without its newline) to `on_line`, and reads
/// its peak RSS until it ends: the harness of the tests that stream large
/// inputs through the command line in bounded memory.
pub fn pipe_through(
    program: &str,
    args: &[&str],
    feed: impl FnOnce(&mut dyn std::io::Write),
    mut on_line: impl FnMut(&[u8]) + Send + 'static,
) -> Piped {
    use std::io::{BufRead, Read};
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program runs");
    let pid = child.id();
    let stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut lines = std::io::BufReader::with_capacity(1 << 16, stdout);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).expect("stdout reads") > 0 {
            on_line(line.strip_suffix(b"\n").unwrap_or(&line));
            line.clear();
        }
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).ok();
        text
    });
    let mut stdin = child.stdin.take().expect("piped stdin");
    feed(&mut stdin);
    drop(stdin);
    // VmHWM only grows: the last reading before the process is gone.
    let mut peak_kib = 0;
    while let Some(kib) = peak_rss_kib(pid) {
        peak_kib = kib;
        if reader.is_finished() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    reader.join().expect("the reader thread");
    let status = child.wait().expect("the program ends");
    Piped { peak_kib, status, stderr: errors.join().expect("the stderr thread") }
}

/// The recordings of one folder of tests/fixtures/ (every file but its
/// `.md` notes), sorted by name.
pub fn fixture_files(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = repo_root().join("tests/fixtures").join(folder);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    files
}

/// Every fixture of tests/fixtures/ (`.jsonl`, `.ndjson` and `.sse` files,
/// sorted by path) and every vector's ops as JSONL, named by path or
/// vector: the inputs a test that must hold for all of them reads.
pub fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut inputs = Vec::new();
    let mut dirs = vec![repo_root().join("tests/fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("tests/fixtures is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "ndjson" | "sse")) {
                let bytes = std::fs::read(&path).expect("a fixture is readable");
                inputs.push((path.display().to_string(), bytes));
            }
        }
    }
    inputs.sort();
    for vector in vectors() {
        inputs.push((vector.name.clone(), vector.ops_jsonl().into_bytes()));
    }
    assert!(inputs.len() > 80, "the fixtures and vectors are found: {}", inputs.len());
    inputs
}
