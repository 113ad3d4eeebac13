//! The command line as a user meets it: several inputs in one call, the
//! output filters, the hint for a wrong `--from`, progress into a log,
//! completions and the man page.

use std::process::{Command, Output};

use roundup_testkit::repo_root;
use serde_json::Value;

/// Runs the `roundup` binary with `args` from the repository's root: what
/// every test of the command line runs.
pub(crate) fn roundup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roundup")).current_dir(repo_root()).args(args).output().expect("roundup runs")
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

const CODEX: &str = "tests/fixtures/codex-exec-json/takopi-codex_exec_json_all_formats.jsonl";
const ACP: &str = "tests/fixtures/acp/bash-error.jsonl";

#[test]
fn several_inputs_are_replayed_one_after_another_each_its_own_source() {
    let both = roundup(&["replay", ACP, CODEX]);
    assert!(both.status.success(), "{}", String::from_utf8_lossy(&both.stderr));
    let (acp, codex) = (roundup(&["replay", ACP]), roundup(&["replay", CODEX]));
    let mut expected = acp.stdout.clone();
    expected.extend_from_slice(&codex.stdout);
    assert_eq!(both.stdout, expected, "each file read in its own format, in order");
    let summaries = lines(&both).into_iter().filter(|l| l["type"] == "summary").count();
    assert!(summaries >= 2, "a summary for each input's runs");
}

#[test]
fn session_and_type_filters_keep_what_they_name() {
    let all = lines(&roundup(&["replay", ACP]));
    let rounds = roundup(&["replay", "--type", "round", ACP]);
    assert!(rounds.status.success());
    let rounds = lines(&rounds);
    assert_eq!(rounds, all.iter().filter(|l| l["type"] == "round").cloned().collect::<Vec<_>>());
    assert!(!rounds.is_empty());
    let session = all[0]["session"].as_str().expect("ACP names its sessions").to_owned();
    let named = lines(&roundup(&["replay", "--session", &session, ACP]));
    assert_eq!(named, all.iter().filter(|l| l["session"] == session.as_str()).cloned().collect::<Vec<_>>());
    let nobody = roundup(&["replay", "--session", "no-such-session", ACP]);
    assert!(nobody.status.success() && nobody.stdout.is_empty());
    let refused = roundup(&["replay", "--emit", "ui", "--type", "round", ACP]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--type filters records"));
}

#[test]
fn pretty_prints_the_same_values_indented() {
    let plain = lines(&roundup(&["replay", ACP]));
    let pretty = roundup(&["replay", "--pretty", ACP]);
    let text = String::from_utf8(pretty.stdout).unwrap();
    assert!(text.starts_with("{\n  \"type\": \"round\""), "{text}");
    let values: Vec<Value> = serde_json::Deserializer::from_str(&text).into_iter().map(Result::unwrap).collect();
    assert_eq!(values, plain);
}

#[test]
fn a_wrong_from_names_the_format_the_input_looks_like() {
    let wrong = roundup(&["replay", "--from", "claude-code", CODEX]);
    assert!(wrong.status.success(), "the events are kept: not an error");
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(stderr.contains("events are unknown to claude-code") && stderr.contains("try --from codex"), "{stderr}");
    let right = roundup(&["replay", "--from", "codex", CODEX]);
    assert!(right.stderr.is_empty(), "{}", String::from_utf8_lossy(&right.stderr));
}

#[test]
fn progress_into_a_log_is_one_line_per_update() {
    let out = roundup(&["replay", "--progress", ACP]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains('\r'), "no carriage returns in a redirected stderr: {stderr:?}");
    assert!(stderr.lines().last().is_some_and(|line| line.starts_with("roundup: done, ")), "{stderr:?}");
}

#[test]
fn completions_and_the_man_page_cover_every_command() {
    let bash = roundup(&["completions", "bash"]);
    assert!(bash.status.success());
    let bash = String::from_utf8(bash.stdout).unwrap();
    for word in ["replay", "export", "formats", "--from", "--emit", "--max-sessions"] {
        assert!(bash.contains(word), "{word}");
    }
    let man = roundup(&["man"]);
    assert!(man.status.success());
    let man = String::from_utf8(man.stdout).unwrap();
    assert!(man.starts_with(".ie") || man.contains(".TH roundup"), "{}", &man[..man.len().min(200)]);
    assert!(man.contains("replay") && man.contains("export"));
    let fish = roundup(&["completions", "fish"]);
    assert!(String::from_utf8_lossy(&fish.stdout).contains("complete -c roundup"));
}

#[test]
fn no_command_shows_the_help_and_a_usage_error() {
    let bare = roundup(&[]);
    assert_eq!(bare.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bare.stderr);
    assert!(stderr.contains("Usage: roundup <COMMAND>") && stderr.contains("replay"), "{stderr}");
    let unknown = roundup(&["repaly"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("similar subcommand exists: 'replay'"));
}

/// A zstd frame holding `data` in one raw (stored) block: the smallest
/// frame the format allows, made by hand so the test needs no encoder.
fn zstd_frame(data: &[u8]) -> Vec<u8> {
    assert!(data.len() < 1 << 10, "one block within the smallest window");
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00];
    let header = (data.len() as u32) << 3 | 1; // the last block, raw, its size
    frame.extend_from_slice(&header.to_le_bytes()[..3]);
    frame.extend_from_slice(data);
    frame
}

#[test]
fn compressed_inputs_are_told_by_their_magic_bytes() {
    let plain = std::fs::read(repo_root().join("examples/session.ops.jsonl")).unwrap();
    let expected = roundup(&["replay", "examples/session.ops.jsonl"]).stdout;
    let dir = std::env::temp_dir().join(format!("roundup-compressed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // zstd: the input cut in two frames, one after another.
    let (first, second) = plain.split_at(plain.len() / 2);
    let mut zst = Vec::new();
    for part in [first, second] {
        for chunk in part.chunks(1000) {
            zst.extend(zstd_frame(chunk));
        }
    }
    let zst_file = dir.join("session.bin");
    std::fs::write(&zst_file, &zst).unwrap();
    let out = roundup(&["replay", "-q", zst_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, expected, "zstd frames decoded whatever the file is called");
    // gzip, two members (as `cat a.gz b.gz` makes), through the system's gzip.
    let gzip = |data: &[u8]| {
        use std::io::Write;
        let mut child = Command::new("gzip")
            .arg("-c")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("gzip is installed");
        child.stdin.take().unwrap().write_all(data).unwrap();
        child.wait_with_output().unwrap().stdout
    };
    let mut gz = gzip(first);
    gz.extend(gzip(second));
    let gz_file = dir.join("session.jsonl.gz");
    std::fs::write(&gz_file, &gz).unwrap();
    let out = roundup(&["replay", "-q", gz_file.to_str().unwrap()]);
    assert_eq!(out.stdout, expected, "every gzip member read");
    // A zstd stream cut short is a read error naming the file, exit 1.
    let cut = dir.join("cut.zst");
    std::fs::write(&cut, &zst[..zst.len() - 10]).unwrap();
    let out = roundup(&["replay", "-q", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut.zst (zstd data): "), "the file is named");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn garbage_under_auto_is_named_no_known_format_not_ops() {
    let path = std::env::temp_dir().join(format!("roundup-garbage-{}.txt", std::process::id()));
    std::fs::write(&path, "hello world\nthis is no event\n").unwrap();
    let file = path.to_str().unwrap();
    let auto = roundup(&["replay", file]);
    let ops = roundup(&["replay", "--from", "ops", file]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(auto.status.code(), Some(1), "no line of it reads");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert!(stderr.contains("no line of the input could be read as any input format (formats: ops, acp"), "{stderr}");
    assert!(!stderr.contains("as ops"), "{stderr}");
    let stderr = String::from_utf8_lossy(&ops.stderr);
    assert!(stderr.contains("no line of the input could be read as ops"), "an explicit --from is named: {stderr}");
}

#[test]
fn pretty_is_coloured_when_asked_and_plain_in_a_pipe() {
    let plain = roundup(&["replay", "--pretty", ACP]);
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(!text.contains('\x1b'), "a pipe gets no colour by default");
    let never = roundup(&["replay", "--pretty", "--color", "never", ACP]);
    assert_eq!(String::from_utf8(never.stdout).unwrap(), text);
    let always = roundup(&["replay", "--pretty", "--color", "always", ACP]);
    let coloured = String::from_utf8(always.stdout).unwrap();
    assert!(coloured.contains("\x1b[34;1m\"type\"\x1b[0m: \x1b[32m\"round\"\x1b[0m"), "{coloured}");
    let mut stripped = coloured;
    for escape in ["\x1b[34;1m", "\x1b[32m", "\x1b[36m", "\x1b[35m", "\x1b[0m"] {
        stripped = stripped.replace(escape, "");
    }
    assert_eq!(stripped, text, "the colour adds escapes and nothing else");
    let wrong = roundup(&["replay", "--pretty", "--color", "sometimes", ACP]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("[possible values: auto, always, never]"));
}

#[test]
fn a_folder_is_the_recordings_under_it_in_order() {
    let dir = std::env::temp_dir().join(format!("roundup-folder-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b/deeper")).unwrap();
    let root = repo_root();
    std::fs::copy(root.join(ACP), dir.join("b/deeper/1.jsonl")).unwrap();
    std::fs::copy(root.join(CODEX), dir.join("a.jsonl")).unwrap();
    std::fs::write(dir.join("SOURCES.md"), "notes, not a recording").unwrap();
    let folder = roundup(&["replay", dir.to_str().unwrap()]);
    let files =
        roundup(&["replay", dir.join("a.jsonl").to_str().unwrap(), dir.join("b/deeper/1.jsonl").to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(folder.status.success(), "{}", String::from_utf8_lossy(&folder.stderr));
    assert_eq!(lines(&folder), lines(&files), "the files in path order, each its own source");
    assert!(lines(&folder).len() > 4);
}
