//! The bundled example trace (the README's first command) keeps producing
//! the output checked in beside it, and that output says what the trace
//! holds.

use std::process::Command;

use roundup::OutputLine;

fn example_output() -> String {
    let run = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(["replay", "-q", concat!(env!("CARGO_MANIFEST_DIR"), "/examples/session.ops.jsonl")])
        .output()
        .unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout).unwrap()
}

#[test]
fn the_example_output_is_unchanged() {
    let expected = include_str!("../../examples/session.expected.jsonl");
    assert_eq!(example_output(), expected, "regenerate examples/session.expected.jsonl if the change is intended");
}

#[test]
fn the_example_output_reads_back_as_typed_lines() {
    let lines: Vec<OutputLine> = example_output().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summaries: Vec<_> =
        lines.iter().filter_map(|l| if let OutputLine::Summary(s) = l { Some(s) } else { None }).collect();
    let shape: Vec<(Option<&str>, u64, u64, u64)> =
        summaries.iter().map(|s| (s.session.as_deref(), s.run, s.rounds, s.anomalies)).collect();
    // Run 0's after_finish anomaly follows its summary and is not counted
    // in it (SPEC §6).
    assert_eq!(shape, [(Some("build-fix"), 0, 3, 1), (Some("build-fix"), 1, 2, 1), (Some("chat"), 0, 1, 1)]);
    assert_eq!(summaries[0].stitches, 1);
    assert_eq!(summaries[0].placeholders.canceled, 1);
    let stitch = lines.iter().find_map(|l| if let OutputLine::Stitch(s) = l { Some(s) } else { None }).unwrap();
    assert_eq!((stitch.round, stitch.id.as_str()), (1, "call_3"));
}
