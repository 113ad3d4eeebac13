//! The conformance vectors and the "expected fields are a subset of actual
//! fields" comparison of SPEC §5.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One conformance vector (SPEC §5).
pub struct Vector {
    pub path: PathBuf,
    pub name: String,
    pub ops: Vec<Value>,
    pub expect: Vec<Value>,
}

impl Vector {
    /// The ops as JSONL, one line per op.
    pub fn ops_jsonl(&self) -> String {
        self.ops.iter().map(|op| format!("{op}\n")).collect()
    }
}

/// `tests/vectors/` of the roundup crate.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

/// Every vector in tests/vectors/, sorted by file name.
pub fn vectors() -> Vec<Vector> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable vector");
            let value: Value = serde_json::from_str(&text).expect("vector is JSON");
            Vector {
                name: value["name"].as_str().expect("vector has a name").to_owned(),
                ops: value["ops"].as_array().expect("vector has ops").clone(),
                expect: value["expect"].as_array().expect("vector has expect").clone(),
                path,
            }
        })
        .collect()
}

/// `Ok` when every field of `expected` is in `actual` with an equal value,
/// recursively (arrays must have the same length); else the path of the
/// first difference.
pub fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let here = format!("{path}.{key}");
                match a.get(key) {
                    Some(actual) => subset(value, actual, &here)?,
                    None => return Err(format!("{here}: missing, expected {value}")),
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!("{path}: expected {} elements, got {}: {actual}", e.len(), a.len()));
            }
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                subset(e, a, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// Checks replay output (JSON lines) against a vector's expectations:
/// round, stitch and anomaly lines one to one and in order; summary lines
/// only where the vector holds some.
pub fn check_output(vector: &Vector, output: &str) -> Result<(), String> {
    let lines: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("output line is not JSON ({e}): {line}")))
        .collect::<Result<_, _>>()?;
    // SPEC §5 compares round, stitch and anomaly lines; other line types
    // (roundup's `meta` patches) are not part of the vectors.
    let split = |values: &[Value]| -> (Vec<Value>, Vec<Value>) {
        let of = |kinds: &[&str]| values.iter().filter(|v| kinds.iter().any(|k| v["type"] == *k)).cloned().collect();
        (of(&["round", "stitch", "anomaly"]), of(&["summary"]))
    };
    let (records, summaries) = split(&lines);
    let (expected_records, expected_summaries) = split(&vector.expect);
    compare(&expected_records, &records, "record")?;
    if !expected_summaries.is_empty() {
        compare(&expected_summaries, &summaries, "summary")?;
    }
    Ok(())
}

fn compare(expected: &[Value], actual: &[Value], what: &str) -> Result<(), String> {
    if expected.len() != actual.len() {
        return Err(format!(
            "expected {} {what} lines, got {}:\n{}",
            expected.len(),
            actual.len(),
            actual.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\n")
        ));
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        subset(e, a, &format!("{what}[{i}]"))?;
    }
    Ok(())
}

/// The vectors of ../shared/conformance at the time of writing; a lower
/// count means vectors went missing.
pub const KNOWN_VECTORS: usize = 32;

/// Vectors the implementation does not pass yet, as `tests/pending-vectors.txt`
/// lists them (the Python suite reads the same file). Each listed must
/// still fail, so that the list can only shrink: a vector that starts
/// passing is an error until it is taken off.
pub fn pending() -> Vec<String> {
    let path = vectors_dir().join("../pending-vectors.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
}

impl Vector {
    /// The file name without `.json`, as [`pending`] names vectors.
    pub fn file_stem(&self) -> String {
        self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// Checks every vector's output as `run` gives it: the [`pending`] ones
/// must fail, all others pass. The error lists every vector that did not
/// do as it should.
pub fn check_all(run: impl Fn(&Vector) -> String) -> Result<(), String> {
    let vectors = vectors();
    if vectors.len() < KNOWN_VECTORS {
        return Err(format!("only {} vectors in tests/vectors, {KNOWN_VECTORS} expected", vectors.len()));
    }
    let mut failures = Vec::new();
    let pending = pending();
    for pending in &pending {
        if !vectors.iter().any(|v| v.file_stem() == *pending) {
            failures.push(format!("pending vector {pending} is not in tests/vectors"));
        }
    }
    for vector in &vectors {
        match (check_output(vector, &run(vector)), pending.contains(&vector.file_stem())) {
            (Err(e), false) => failures.push(format!("{}: {e}", vector.name)),
            (Ok(()), true) => failures.push(format!("{}: passes, but is listed as pending: take it off", vector.name)),
            _ => {}
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{} vector(s) did not do as expected:\n{}", failures.len(), failures.join("\n\n")))
    }
}
