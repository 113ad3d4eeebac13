//! The same input gives the same bytes in every build: the binary of this
//! build and one built with other features (`ROUNDUP_OTHER_BIN`, which CI
//! builds with `--all-features`) print the same output for every fixture
//! and vector in every output format.
//!
//! `ROUNDUP_OTHER_BIN=... cargo test --test it -- --ignored builds::`

use std::io::Write;
use std::process::{Command, Stdio};

use roundup_testkit::inputs;

/// What `binary` prints for `input` with `args`.
fn output_of(binary: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{binary}: {e}"));
    let mut stdin = child.stdin.take().expect("a piped stdin");
    let bytes = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let output = child.wait_with_output().expect("the binary runs");
    writer.join().expect("the writer thread").expect("the input is written");
    output.stdout
}

#[test]
#[ignore = "needs ROUNDUP_OTHER_BIN, a roundup built with other features"]
fn another_build_prints_the_same_bytes() {
    let other = std::env::var("ROUNDUP_OTHER_BIN").expect("ROUNDUP_OTHER_BIN names the other build's binary");
    let this = env!("CARGO_BIN_EXE_roundup");
    let mut compared = 0;
    for (name, input) in inputs() {
        for format in roundup::encoders::REGISTRY {
            let args = ["replay", "--emit", format.name(), "-"];
            let (ours, theirs) = (output_of(this, &args, &input), output_of(&other, &args, &input));
            // Every input has a summary; other formats may say nothing of a
            // run that held nothing.
            if format.name() == "records" {
                assert!(!ours.is_empty(), "{name} --emit records: no output");
            }
            assert!(
                ours == theirs,
                "{name} --emit {}: the builds differ\n this: {}\nother: {}",
                format.name(),
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
            compared += 1;
        }
    }
    eprintln!("{compared} outputs are the same bytes from both builds");
}
