//! The command line used live: output appears as soon as its input line is
//! read, a signal finishes open runs and writes their summaries, a closed
//! output pipe ends the replay quietly.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// `roundup replay -` with piped stdin and stdout, its output lines
/// arriving on a channel.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .arg("replay")
            .args(args)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("roundup runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(serde_json::from_str(&line).expect("an output line is JSON")).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Live { child, stdin, lines }
    }

    /// Writes `lines` in one write: under the pipe's atomic size, so that
    /// roundup reads them together.
    fn write(&mut self, lines: &[&str]) {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert!(text.len() < 4096, "one atomic pipe write");
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).expect("roundup reads");
        stdin.flush().expect("roundup reads");
    }

    /// The next output line; fails after 10 s (a line held back).
    fn next(&self) -> Value {
        self.lines.recv_timeout(Duration::from_secs(10)).expect("an output line within 10 s")
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status();
        assert!(status.expect("kill runs").success());
    }

    /// The exit code and every output line still to come.
    fn finish(mut self) -> (Option<i32>, Vec<Value>) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("roundup exits");
        (status.code(), self.lines.iter().collect())
    }
}

#[test]
fn each_round_is_out_before_the_next_input_line_is_written() {
    let mut live = Live::start(&["--from", "ops"]);
    for n in 0..20 {
        let id = format!("t{n}");
        live.write(&[
            &format!(r#"{{"op":"message","text":"round {n}"}}"#),
            &format!(r#"{{"op":"tool_call","id":"{id}","title":"ls"}}"#),
            &format!(r#"{{"op":"tool_update","id":"{id}","content":"ok {n}","status":"completed"}}"#),
        ]);
        // The round must arrive while the input stays open and idle.
        let round = live.next();
        assert_eq!((round["type"].as_str(), round["index"].as_u64()), (Some("round"), Some(n)));
        assert_eq!(round["tool_calls"][0]["result"]["content"], format!("ok {n}"));
    }
    let (status, rest) = live.finish();
    assert_eq!(status, Some(0));
    assert_eq!(rest.len(), 1, "the summary at end of input: {rest:?}");
    assert_eq!(rest[0]["rounds"], 20);
}

#[test]
fn sigint_finishes_open_runs_and_writes_every_summary() {
    let mut live = Live::start(&[]);
    live.write(&[
        r#"{"op":"message","text":"done","session":"a"}"#,
        r#"{"op":"tool_call","id":"x","title":"ls","session":"a"}"#,
        r#"{"op":"tool_update","id":"x","content":"ok","status":"completed","session":"a"}"#,
        r#"{"op":"message","text":"streaming","session":"b"}"#,
        r#"{"op":"tool_call","id":"y","title":"build","session":"a"}"#,
        r#"{"op":"tool_output","id":"y","content":"50%","session":"a"}"#,
    ]);
    let first = live.next();
    assert_eq!(first["closed_by"], "tools_done", "the closed round is out before the signal");
    live.signal("INT");
    let (status, rest) = live.finish();
    assert_eq!(status, Some(130));
    let of = |kind: &str| rest.iter().filter(|l| l["type"] == kind).collect::<Vec<_>>();
    let rounds = of("round");
    assert_eq!(rounds.len(), 2, "the open rounds of both sessions closed: {rest:?}");
    let a = rounds.iter().find(|r| r["session"] == "a").expect("session a's open round");
    assert_eq!(
        a["tool_calls"][0]["result"],
        serde_json::json!({"status":"placeholder","reason":"interrupted","output":"50%"})
    );
    let summaries: Vec<&str> = of("summary").iter().filter_map(|s| s["session"].as_str()).collect();
    assert_eq!(summaries, ["a", "b"], "a summary for every run");
}

#[test]
fn sigterm_exits_143_after_the_summaries() {
    let mut live = Live::start(&[]);
    live.write(&[
        r#"{"op":"tool_call","id":"x","title":"ls"}"#,
        r#"{"op":"tool_update","id":"x","status":"completed"}"#,
    ]);
    live.next();
    live.signal("TERM");
    let (status, rest) = live.finish();
    assert_eq!(status, Some(143));
    assert_eq!(rest.iter().filter(|l| l["type"] == "summary").count(), 1);
}

#[test]
fn a_closed_output_pipe_ends_the_replay_quietly() {
    // Enough output that the pipe closes while roundup still writes.
    let big = std::env::temp_dir().join(format!("roundup-pipe-{}.jsonl", std::process::id()));
    let mut lines = String::new();
    for n in 0..20_000 {
        lines.push_str(&format!("{{\"op\":\"message\",\"text\":\"m{n}\",\"session\":\"s{n}\"}}\n"));
    }
    std::fs::write(&big, lines).unwrap();
    let script = format!(
        "{} replay {} | head -n 1 > /dev/null; echo ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_roundup"),
        big.display()
    );
    let run = Command::new("bash").arg("-c").arg(&script).output().expect("bash runs");
    std::fs::remove_file(&big).ok();
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "0", "exit status of roundup under `| head`");
    assert!(run.stderr.is_empty(), "quietly: {}", String::from_utf8_lossy(&run.stderr));
}

#[test]
fn options_take_their_value_after_an_equals_sign() {
    let file = roundup_testkit::repo_root().join("examples/session.ops.jsonl");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_roundup")).args(args).arg(&file).output().expect("roundup runs").stdout
    };
    assert_eq!(
        run(&["replay", "--from=ops", "--emit=ui", "-q"]),
        run(&["replay", "--from", "ops", "--emit", "ui", "-q"])
    );
}

#[test]
fn input_that_is_all_bad_exits_1_naming_the_format_it_looks_like() {
    let mut live = Live::start(&["--from", "ops"]);
    live.write(&[r#"{"type":"run_started","session_id":"s","v":1}"#, r#"{"type":"text_delta","text":"Hi","v":1}"#]);
    let (status, lines) = live.finish();
    assert_eq!(status, Some(1));
    assert_eq!(lines.iter().filter(|l| l["kind"] == "bad_line").count(), 2);
    let run = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(["replay", "--from", "ops", "-q"])
        .arg(roundup_testkit::repo_root().join("tests/fixtures/uagent/simple.stream.jsonl"))
        .output()
        .expect("roundup runs");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("it looks like uagent: try --from uagent"), "{stderr}");
}

#[test]
fn at_most_twenty_bad_lines_are_described() {
    let input: String =
        (0..50).map(|n| format!("{n}\n")).collect::<String>() + "{\"op\":\"message\",\"text\":\"ok\"}\n";
    let mut child = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .args(["replay", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("roundup runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let run = child.wait_with_output().unwrap();
    assert_eq!(run.status.code(), Some(0), "one good line: not all bad");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.matches("(skipped, reported as bad_line)").count(), 20, "{stderr}");
    assert!(stderr.contains("30 more bad lines not described"), "{stderr}");
}
