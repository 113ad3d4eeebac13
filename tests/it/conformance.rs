//! Every conformance vector of SPEC §5, through the library and through the
//! built `roundup` binary.

use std::io::Write;
use std::process::{Command, Stdio};

use roundup_testkit::capture::replay_ops;
use roundup_testkit::{check_all, check_output, subset, vectors};
use serde_json::json;

#[test]
fn every_vector_passes_through_the_library() {
    check_all(|vector| replay_ops(vector.ops_jsonl().as_bytes())).unwrap();
}

#[test]
fn every_vector_passes_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("roundup-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let checked = check_all(|vector| {
        let file = dir.join(format!("{}.ops.jsonl", vector.name));
        std::fs::write(&file, vector.ops_jsonl()).unwrap();
        let run = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .args(["replay", "--from", "ops"])
            .arg(&file)
            .output()
            .expect("the roundup binary runs");
        assert_eq!(run.status.code(), Some(0), "{}: {}", vector.name, String::from_utf8_lossy(&run.stderr));
        String::from_utf8_lossy(&run.stdout).into_owned()
    });
    std::fs::remove_dir_all(&dir).ok();
    checked.unwrap();
}

#[test]
fn the_cli_reads_stdin_when_given_dash() {
    let vector = vectors().into_iter().find(|v| v.name.starts_with("09")).expect("vector 09");
    let mut child = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(["replay", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(vector.ops_jsonl().as_bytes()).unwrap();
    let run = child.wait_with_output().unwrap();
    assert!(run.status.success());
    check_output(&vector, &String::from_utf8_lossy(&run.stdout)).unwrap();
}

/// The comparison itself must be able to fail, or the tests above prove
/// nothing.
#[test]
fn the_subset_comparison_detects_differences() {
    let actual = json!({"type": "round", "tool_calls": [{"id": "a", "started_at_ms": 5}], "index": 0});
    assert!(subset(&json!({"type": "round", "tool_calls": [{"id": "a"}]}), &actual, "").is_ok());
    assert!(subset(&json!({"index": 1}), &actual, "").is_err());
    assert!(subset(&json!({"tool_calls": []}), &actual, "").is_err());
    assert!(subset(&json!({"tool_calls": [{"id": "b"}]}), &actual, "").is_err());
    assert!(subset(&json!({"session": "s1"}), &actual, "").is_err());
}

#[test]
fn a_wrong_expectation_fails_the_check() {
    let mut vector = vectors().into_iter().find(|v| v.name.starts_with("04")).expect("vector 04");
    let out = replay_ops(vector.ops_jsonl().as_bytes());
    check_output(&vector, &out).unwrap();
    vector.expect[0]["closed_by"] = json!("finish");
    assert!(check_output(&vector, &out).is_err());
    vector.expect.pop();
    assert!(check_output(&vector, &out).is_err());
}
