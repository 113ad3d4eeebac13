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
pub mod load;
pub mod native;
pub mod reference;
pub mod vectors;

pub use vectors::{check_all, check_output, subset, vectors, vectors_dir, Vector, KNOWN_VECTORS, PENDING};

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
