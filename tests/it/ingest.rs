//! `roundup ingest` and `roundup stats` as a user runs them: folders, a
//! second run that adds nothing, a live log read on, two ingests at once,
//! and (in release mode) an ingest killed at random moments.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use roundup::store::Database;
use roundup_testkit::repo_root;
use serde_json::Value;

use crate::cli::roundup;
use crate::store::{dump, same_rows, scratch};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn integrity(db: &Database) -> String {
    db.connection().query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap()
}

#[test]
fn a_folder_is_ingested_once_and_stats_sum_it_up() {
    let dir = scratch("cli-folder");
    let db = dir.join("runs.db");
    let db = db.to_str().unwrap();
    let first = roundup(&["ingest", "--db", db, "tests/fixtures"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let files = text(&first.stderr);
    let count: usize = files.split(" files into").next().and_then(|n| n.rsplit(' ').next()).unwrap().parse().unwrap();
    assert!(count > 100, "{files}");
    assert!(files.contains(&format!("{count} read, 0 read on, 0 unchanged")), "{files}");
    let again = roundup(&["ingest", "--db", db, "tests/fixtures"]);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains(&format!("0 read, 0 read on, {count} unchanged; 0 records")),
        "{}",
        text(&again.stderr)
    );

    let stats = roundup(&["stats", "--db", db, "--json"]);
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["sources"], count);
    // The counts are those of the replays' summaries, added up.
    let replayed = roundup(&["replay", "--type", "summary", "tests/fixtures"]);
    let summaries: Vec<Value> =
        text(&replayed.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(stats["runs"], summaries.len());
    let sum = |key: &str| summaries.iter().map(|s| s[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(stats["rounds"], sum("rounds"));
    assert_eq!(stats["tool_calls"], sum("tool_calls"));
    let table = text(&roundup(&["stats", "--db", db]).stdout);
    assert!(table.starts_with(&format!("sources     {count}\n")), "{table}");
    assert!(table.contains("\ntool ") && table.contains("failure") && table.contains("\nanomaly "), "{table}");
}

#[test]
fn stats_of_no_database_says_how_to_make_one() {
    let out = roundup(&["stats", "--db", "/nonexistent/runs.db"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no database there (make one with `roundup ingest --db"),
        "{}",
        text(&out.stderr)
    );
    let out = roundup(&["ingest", "--db", "/nonexistent/dir/runs.db", "tests/fixtures/acp"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/dir/runs.db"), "{}", text(&out.stderr));
}

#[test]
fn a_live_log_read_on_between_ingests_gives_the_rows_of_one_ingest() {
    let dir = scratch("cli-live");
    let fixture = std::fs::read(repo_root().join("tests/fixtures/acp/bash-error.jsonl")).unwrap();
    let log = dir.join("live.jsonl");
    let (live, whole) = (dir.join("live.db"), dir.join("whole.db"));
    let ends = [fixture.len() / 4, fixture.len() / 2 + 3, fixture.len(), fixture.len()];
    let said = ["1 read, 0 read on, 0 unchanged", "0 read, 1 read on, 0 unchanged", "0 read, 1 read on, 0 unchanged"];
    for (end, said) in ends.into_iter().zip(said.into_iter().chain(["0 read, 0 read on, 1 unchanged; 0 records"])) {
        std::fs::write(&log, &fixture[..end]).unwrap();
        let out = roundup(&["ingest", "--db", live.to_str().unwrap(), log.to_str().unwrap()]);
        assert!(out.status.success() && text(&out.stderr).contains(said), "{}", text(&out.stderr));
    }
    let out = roundup(&["ingest", "--db", whole.to_str().unwrap(), log.to_str().unwrap()]);
    assert!(out.status.success());
    same_rows(&dump(&Database::open(&live).unwrap()), &dump(&Database::open(&whole).unwrap()), "live log");
}

#[test]
fn two_ingests_at_once_leave_the_database_whole() {
    let dir = scratch("cli-two");
    let db = dir.join("two.db");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_roundup"))
            .current_dir(repo_root())
            .args(["ingest", "--db", db.to_str().unwrap(), "--batch", "4K", "tests/fixtures", "tests/vectors"])
            .output()
    };
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(spawn);
        let b = scope.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    // Each either ingested, or was told another ingest overtook it.
    for out in [&a, &b] {
        let stderr = text(&out.stderr);
        assert!(out.status.success() || stderr.contains("another ingest of this source"), "{stderr}");
    }
    let out = roundup(&["ingest", "--db", db.to_str().unwrap(), "tests/fixtures", "tests/vectors"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let alone = dir.join("alone.db");
    let out = roundup(&["ingest", "--db", alone.to_str().unwrap(), "tests/fixtures", "tests/vectors"]);
    assert!(out.status.success());
    let (together, alone) = (Database::open(&db).unwrap(), Database::open(&alone).unwrap());
    assert_eq!(integrity(&together), "ok");
    // The sources may be numbered in another order; their rows are the same.
    let by_path = |db: &Database| -> Vec<String> {
        let mut rows = dump(db);
        let paths: Vec<(i64, String)> = db
            .connection()
            .prepare("SELECT id, path FROM sources")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for row in &mut rows {
            for (id, path) in &paths {
                let prefix = format!(": Integer({id}) | ");
                if row.contains(&prefix) {
                    *row = row.replacen(&prefix, &format!(": {path} | "), 1);
                    break;
                }
            }
        }
        rows.sort();
        rows
    };
    same_rows(&by_path(&together), &by_path(&alone), "two ingests at once");
}

/// Recordings of about `megabytes` in all: each fixture repeated into a
/// file of its own.
fn mixed_recordings(dir: &Path, megabytes: usize) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let fixtures: Vec<std::path::PathBuf> =
        ["acp", "claude-transcript", "codex-rollout", "openai-chat", "anthropic-messages", "uagent", "gemini"]
            .iter()
            .flat_map(|folder| roundup_testkit::fixture_files(folder))
            .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
            .collect();
    let per_file = megabytes * 1_000_000 / fixtures.len();
    for (i, path) in fixtures.iter().enumerate() {
        let content = std::fs::read(path).unwrap();
        let mut bytes = Vec::with_capacity(per_file + content.len());
        while bytes.len() < per_file {
            bytes.extend_from_slice(&content);
            if !content.ends_with(b"\n") {
                bytes.push(b'\n');
            }
        }
        std::fs::write(dir.join(format!("{i:03}.jsonl")), bytes).unwrap();
    }
    fixtures.len()
}

#[test]
#[ignore = "hundreds of MB: run in release mode"]
fn an_ingest_killed_at_random_moments_ends_with_the_database_of_one_never_killed() {
    let dir = scratch("killed");
    let inputs = dir.join("inputs");
    let files = mixed_recordings(&inputs, 300);
    let inputs = inputs.to_str().unwrap();
    let whole = dir.join("whole.db");
    let started = std::time::Instant::now();
    let out = roundup(&["ingest", "--db", whole.to_str().unwrap(), "--batch", "2M", inputs]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let uninterrupted = started.elapsed();
    eprintln!("{files} files, uninterrupted ingest: {uninterrupted:?}: {}", text(&out.stderr).trim());
    let expected = dump(&Database::open(&whole).unwrap());
    let killed = dir.join("killed.db");
    // Twelve kills, each at a moment from a fixed seed within the first
    // part of what is left to do, so that every one stops an ingest at
    // work (between two commits, or inside one) at another point.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let most = uninterrupted.mul_f64(0.06);
    let mut rows = Vec::new();
    for kill in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = Duration::from_millis(100) + most.mul_f64((seed % 1000) as f64 / 1000.0);
        let mut child = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .args(["ingest", "--db", killed.to_str().unwrap(), "--batch", "2M", "--quiet", inputs])
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        let _ = child.kill();
        let status = child.wait().unwrap();
        assert!(status.code().is_none(), "kill {kill} at {at:?} came after the ingest ended: {status}");
        let db = Database::open(&killed).unwrap();
        assert_eq!(integrity(&db), "ok", "after kill {kill} at {at:?}");
        rows.push(dump(&db).len());
        eprintln!("kill {kill} at {at:?}: {status}, {} rows so far", rows[kill]);
    }
    assert!(
        rows.windows(2).filter(|pair| pair[0] != pair[1]).count() >= 5,
        "the kills fell at different points: {rows:?}"
    );
    let out = roundup(&["ingest", "--db", killed.to_str().unwrap(), "--batch", "2M", inputs]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    same_rows(&dump(&Database::open(&killed).unwrap()), &expected, "killed 12 times");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stats rows of one session name: (runs, rounds, input tokens, output
/// tokens), one per source that holds it.
fn session_rows(db: &str, session: &str) -> Vec<(u64, u64, u64, u64)> {
    let out = roundup(&["stats", "--db", db, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    let number = |row: &Value, key: &str| row[key].as_u64().unwrap();
    stats["sessions_by_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["session"] == session)
        .map(|row| {
            (number(row, "runs"), number(row, "rounds"), number(row, "input_tokens"), number(row, "output_tokens"))
        })
        .collect()
}

#[test]
fn a_subagents_own_file_is_ingested_with_its_parent_its_tokens_once() {
    let parent_session = "491e126e-1e71-469c-ade2-fcc8af567c74";
    let subagent = format!("{parent_session}/agent-afb92ff");
    let project = crate::claude_transcript::projects_folder("ingest", &[]);
    let dir = scratch("cli-subagents");
    let (db, apart) = (dir.join("folder.db"), dir.join("apart.db"));
    let (db, apart) = (db.to_str().unwrap(), apart.to_str().unwrap());
    let folder = project.to_str().unwrap();

    // Named apart, the two files are two sources: the subagent twice.
    let agent = project.join(parent_session).join("subagents/agent-afb92ff.jsonl");
    let parent = project.join(format!("{parent_session}.jsonl"));
    let out = roundup(&["ingest", "--db", apart, parent.to_str().unwrap(), agent.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let twice = session_rows(apart, &subagent);
    assert_eq!(twice.len(), 2, "{twice:?}");
    assert_eq!(twice[0], twice[1]);

    // The folder: one source, the subagent once, with the parent's figures.
    let out = roundup(&["ingest", "--db", db, folder]);
    assert!(text(&out.stderr).contains("1 files into") && text(&out.stderr).contains("1 read, 0 read on, 0 unchanged"));
    let once = session_rows(db, &subagent);
    assert_eq!(once, [twice[0]]);
    // Its five API messages as the replay tests work them out by hand:
    // inputs 24, cache reads 95343 and writes 14285 (input tokens, to the
    // store), outputs 7.
    assert_eq!(once[0], (1, 5, 24 + 95_343 + 14_285, 7));
    assert_eq!(session_rows(db, parent_session), session_rows(apart, parent_session));

    let out = roundup(&["ingest", "--db", db, folder]);
    assert!(text(&out.stderr).contains("0 read, 0 read on, 1 unchanged; 0 records"), "{}", text(&out.stderr));

    // The subagent's file grows (its final answer): the source is read on,
    // and holds what a fresh ingest of the folder holds.
    let answer = crate::claude_transcript::ANSWER;
    let mut grown = std::fs::read(&agent).unwrap();
    grown.extend_from_slice(format!("{answer}\n").as_bytes());
    std::fs::write(&agent, &grown).unwrap();
    // What an ingest of the folder into a new database holds.
    let equals_fresh = |name: &str, what: &str| {
        let fresh = dir.join(name);
        assert!(roundup(&["ingest", "--db", fresh.to_str().unwrap(), folder]).status.success());
        same_rows(&dump(&Database::open(Path::new(db)).unwrap()), &dump(&Database::open(&fresh).unwrap()), what);
    };
    let out = roundup(&["ingest", "--db", db, folder]);
    assert!(text(&out.stderr).contains("0 read, 1 read on, 0 unchanged"), "{}", text(&out.stderr));
    assert_eq!(session_rows(db, &subagent), [(1, 6, 109_652 + 3 + 1000 + 100, 7 + 50)]);
    equals_fresh("fresh.db", "companion read on");

    // The parent grows before its companion: the source is read again.
    let mut parent_bytes = std::fs::read(&parent).unwrap();
    parent_bytes.extend_from_slice(br#"{"type":"system","subtype":"turn_duration","sessionId":"491e126e-1e71-469c-ade2-fcc8af567c74","uuid":"b0000000-0000-4000-8000-000000000002"}"#);
    parent_bytes.push(b'\n');
    std::fs::write(&parent, &parent_bytes).unwrap();
    let out = roundup(&["ingest", "--db", db, folder]);
    assert!(text(&out.stderr).contains("1 read, 0 read on, 0 unchanged"), "{}", text(&out.stderr));
    equals_fresh("fresh-again.db", "parent read again");
    assert_eq!(session_rows(db, &subagent), [(1, 6, 109_652 + 3 + 1000 + 100, 7 + 50)]);
    let _ = std::fs::remove_dir_all(project.parent().unwrap());
}
