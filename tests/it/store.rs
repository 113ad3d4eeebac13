//! The SQLite store: every input's rows give back its records exactly;
//! a source that grows, one whose head changed, an ingest stopped between
//! any two commits, and the figures `stats` answers with.

use std::io;
use std::path::{Path, PathBuf};

use roundup::store::{read_source, Batch, Database, DatabaseError, Outcome};
use roundup::{write_record, OutputLine, ReplayOptions};
use roundup_testkit::capture::{options, replay_raw};
use roundup_testkit::{repo_root, vectors};

/// A folder of its own for a test's databases, emptied first.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("roundup-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every recording under tests/fixtures (any kind but the notes) and every
/// vector's ops, by name.
fn all_inputs() -> Vec<(String, Vec<u8>)> {
    let mut inputs = Vec::new();
    let mut dirs = vec![repo_root().join("tests/fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_none_or(|e| e != "md") {
                inputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    inputs.sort();
    for vector in vectors() {
        inputs.push((vector.name.clone(), vector.ops_jsonl().into_bytes()));
    }
    assert!(inputs.len() > 100, "the fixtures and vectors are found: {}", inputs.len());
    inputs
}

/// Records as `roundup replay` writes them.
fn lines(records: &[OutputLine]) -> String {
    let mut out = Vec::new();
    for record in records {
        write_record(&mut out, record.as_record());
        out.push(b'\n');
    }
    String::from_utf8(out).unwrap()
}

fn replayed(input: &[u8]) -> String {
    String::from_utf8(replay_raw(input, &options("auto", "records")).0).unwrap()
}

/// Every row of every table, in key order, as text: two databases that
/// hold the same have the same dump.
pub(crate) fn dump(db: &Database) -> Vec<String> {
    let connection = db.connection();
    let mut out = Vec::new();
    for (table, key) in [
        ("sources", "id"),
        ("rounds", "source_id, seq"),
        ("tool_calls", "source_id, seq, position"),
        ("stitches", "source_id, seq"),
        ("meta_patches", "source_id, seq"),
        ("anomalies", "source_id, seq"),
        ("runs", "source_id, seq"),
    ] {
        let mut statement = connection.prepare(&format!("SELECT * FROM {table} ORDER BY {key}")).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let cells: Vec<String> = (0..columns)
                .map(|i| match row.get_ref(i).unwrap() {
                    roundup::store::rusqlite::types::ValueRef::Text(text)
                    | roundup::store::rusqlite::types::ValueRef::Blob(text) => {
                        String::from_utf8_lossy(text).into_owned()
                    }
                    other => format!("{other:?}"),
                })
                .collect();
            out.push(format!("{table}: {}", cells.join(" | ")));
        }
    }
    out
}

/// Two dumps are the same; the first row that differs is shown when not.
pub(crate) fn same_rows(actual: &[String], expected: &[String], what: &str) {
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a, e, "{what}");
    }
    assert_eq!(actual.len(), expected.len(), "{what}");
}

#[test]
fn every_input_is_given_back_by_its_rows_as_replay_writes_it() {
    let dir = scratch("all");
    let mut db = Database::open(&dir.join("all.db")).unwrap();
    let inputs = all_inputs();
    for (name, input) in &inputs {
        let ingested = db.ingest_bytes(name, input, &ReplayOptions::new()).unwrap();
        assert_eq!(ingested.outcome, Outcome::Read, "{name}");
        let rebuilt = lines(&db.records(name).unwrap());
        assert_eq!(rebuilt, replayed(input), "{name}");
        assert_eq!(ingested.records as usize, rebuilt.lines().count(), "{name}");
    }
    // Again: nothing changed, nothing is read or written.
    let before = dump(&db);
    for (name, input) in &inputs {
        let again = db.ingest_bytes(name, input, &ReplayOptions::new()).unwrap();
        assert_eq!((again.outcome, again.records), (Outcome::Unchanged, 0), "{name}");
    }
    assert_eq!(dump(&db), before);
    let stats = db.stats().unwrap();
    assert_eq!(stats.sources as usize, inputs.len());
    let integrity: String = db.connection().query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(integrity, "ok");
}

/// The same source ingested as it grew, cut at `cuts`, and at once.
fn grown_and_whole(name: &str, input: &[u8], cuts: &[usize], batch_bytes: u64) -> (Vec<String>, Vec<String>) {
    let dir = scratch(&format!("grow-{}", cuts.len()));
    let mut grown = Database::open(&dir.join("grown.db")).unwrap();
    let options = ReplayOptions::new();
    for (i, &cut) in cuts.iter().chain([input.len()].iter()).enumerate() {
        let piece = &input[..cut];
        let ingested = grown.ingest(name, &mut || Ok(piece), &options, batch_bytes).unwrap();
        let expected = if i == 0 { Outcome::Read } else { Outcome::Grew };
        assert_eq!(ingested.outcome, expected, "{name} cut at {cut}");
    }
    let mut whole = Database::open(&dir.join("whole.db")).unwrap();
    whole.ingest(name, &mut || Ok(input), &options, batch_bytes).unwrap();
    assert_eq!(lines(&grown.records(name).unwrap()), replayed(input), "{name} cut at {cuts:?}");
    (dump(&grown), dump(&whole))
}

#[test]
fn a_source_that_grows_ends_with_the_rows_of_one_ingest_of_it() {
    for (name, input) in all_inputs() {
        if input.len() < 4 {
            continue;
        }
        // Cut mid-line, at line ends, and mid-way through a line's bytes.
        let newline = input.iter().position(|&b| b == b'\n').map_or(1, |at| at + 1);
        let cuts = [newline.min(input.len()), input.len() / 3, input.len() / 2 + 1, input.len() - 1];
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&cut| cut > 0 && cut < input.len()).collect();
        cuts.sort_unstable();
        let (grown, whole) = grown_and_whole(&name, &input, &cuts, 1 << 20);
        same_rows(&grown, &whole, &format!("{name} cut at {cuts:?}"));
    }
}

#[test]
fn a_source_whose_head_changed_is_read_again_and_its_old_rows_replaced() {
    let dir = scratch("changed");
    let mut db = Database::open(&dir.join("changed.db")).unwrap();
    let first = br#"{"op":"message","text":"one"}
{"op":"tool_call","id":"t1","title":"ls"}
{"op":"finish","reason":"canceled"}
{"op":"message","text":"two"}
"#;
    let second = b"{\"op\":\"message\",\"text\":\"ONE\"}\n";
    db.ingest_bytes("log", first, &ReplayOptions::new()).unwrap();
    let ingested = db.ingest_bytes("log", second, &ReplayOptions::new()).unwrap();
    assert_eq!(ingested.outcome, Outcome::Read);
    assert_eq!(lines(&db.records("log").unwrap()), replayed(second));
    let mut fresh = Database::open(&dir.join("fresh.db")).unwrap();
    fresh.ingest_bytes("log", second, &ReplayOptions::new()).unwrap();
    assert_eq!(dump(&db), dump(&fresh));
    // A file cut shorter than what was read is a changed head too.
    let ingested = db.ingest_bytes("log", &first[..20], &ReplayOptions::new()).unwrap();
    assert_eq!(ingested.outcome, Outcome::Read);
    assert_eq!(lines(&db.records("log").unwrap()), replayed(&first[..20]));
}

/// An ingest whose process dies after `commits` batches: the commits after
/// are never made.
fn stopped_after(db: &mut Database, name: &str, input: &[u8], batch_bytes: u64, commits: usize) {
    let known = db.sources(&[name]).unwrap().remove(0);
    let mut made = 0;
    let result = read_source(
        &known,
        &mut || Ok(input),
        &ReplayOptions::new(),
        batch_bytes,
        &mut |batch: Batch| -> Result<(), DatabaseError> {
            if made == commits {
                return Err(DatabaseError::Read(io::Error::other("killed")));
            }
            made += 1;
            db.commit(&batch)
        },
        &mut |_| {},
    );
    assert!(result.is_err() || made <= commits);
}

#[test]
fn an_ingest_stopped_between_any_two_commits_ends_as_one_never_stopped() {
    let dir = scratch("stopped");
    // Inputs with sessions left open across batches, stitches, anomalies.
    let picked: Vec<(String, Vec<u8>)> = all_inputs()
        .into_iter()
        .filter(|(name, input)| {
            input.len() > 2_000 && (name.contains("acp/") || name.contains("claude") || name.contains("codex"))
        })
        .take(6)
        .collect();
    assert!(picked.len() >= 4, "{}", picked.len());
    for (name, input) in &picked {
        let batch = (input.len() / 7).max(1) as u64;
        let mut whole = Database::open(&dir.join("whole.db")).unwrap();
        whole.ingest(name, &mut || Ok(&input[..]), &ReplayOptions::new(), batch).unwrap();
        let expected = dump(&whole);
        drop(whole);
        std::fs::remove_file(dir.join("whole.db")).unwrap();
        for commits in 0..9 {
            let path = dir.join(format!("stopped-{commits}.db"));
            let mut db = Database::open(&path).unwrap();
            stopped_after(&mut db, name, input, batch, commits);
            // Stopped twice in a row, the second time one commit later.
            stopped_after(&mut db, name, input, batch, 1);
            db.ingest(name, &mut || Ok(&input[..]), &ReplayOptions::new(), batch).unwrap();
            same_rows(&dump(&db), &expected, &format!("{name} stopped after {commits} commits"));
            drop(db);
            std::fs::remove_file(&path).unwrap();
        }
    }
}

#[test]
fn a_batch_from_a_reader_that_another_ingest_overtook_is_refused() {
    let dir = scratch("concurrent");
    let mut db = Database::open(&dir.join("c.db")).unwrap();
    let input = b"{\"op\":\"message\",\"text\":\"one\"}\n";
    let stale = db.sources(&["log"]).unwrap().remove(0);
    db.ingest_bytes("log", input, &ReplayOptions::new()).unwrap();
    let error = read_source(
        &stale,
        &mut || Ok(&input[..]),
        &ReplayOptions::new(),
        1 << 20,
        &mut |batch: Batch| db.commit(&batch),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(error, DatabaseError::Concurrent(ref path) if path == "log"), "{error}");
    assert_eq!(lines(&db.records("log").unwrap()), replayed(input));
}

#[test]
fn stats_answer_the_usual_questions() {
    let dir = scratch("stats");
    let mut db = Database::open(&dir.join("s.db")).unwrap();
    let a = br#"{"op":"message","text":"Looking.","session":"a"}
{"op":"tool_call","id":"t1","title":"ls -la","name":"Bash","session":"a"}
{"op":"tool_update","id":"t1","content":"denied","status":"failed","session":"a"}
{"op":"tool_call","id":"t2","title":"cat a","name":"Bash","session":"a"}
{"op":"tool_update","id":"t2","content":"x","status":"completed","session":"a"}
{"op":"tool_call","id":"t3","title":"Read a.ts","name":"Read","session":"a"}
{"op":"finish","reason":"canceled","session":"a"}
{"op":"message","text":"Done.","session":"b"}
{"op":"finish","reason":"completed","session":"b"}
"#;
    db.ingest_bytes("a.jsonl", a, &ReplayOptions::new()).unwrap();
    let stats = db.stats().unwrap();
    assert_eq!((stats.sources, stats.sessions, stats.runs, stats.rounds, stats.tool_calls), (1, 2, 2, 4, 3));
    assert_eq!(stats.runs_by_finish.get("canceled"), Some(&1));
    assert_eq!(stats.runs_by_finish.get("completed"), Some(&1));
    assert_eq!(stats.unanswered_by_reason.get("canceled"), Some(&1));
    let bash = &stats.tools[0];
    assert_eq!((bash.name.as_str(), bash.calls, bash.failed, bash.unanswered), ("Bash", 2, 1, 0));
    assert_eq!(bash.failure_rate, 0.5);
    let read = &stats.tools[1];
    assert_eq!((read.name.as_str(), read.calls, read.unanswered, read.unanswered_rate), ("Read", 1, 1, 1.0));
    assert!(stats.anomalies.is_empty());
}

#[test]
fn a_late_result_replaces_the_placeholder_in_tool_results() {
    let dir = scratch("late");
    let mut db = Database::open(&dir.join("l.db")).unwrap();
    let input = br#"{"op":"tool_call","id":"t1","title":"ls"}
{"op":"message","text":"next"}
{"op":"tool_update","id":"t1","content":"a.txt","status":"completed"}
{"op":"tool_update","id":"t1","content":"again","status":"completed"}
"#;
    db.ingest_bytes("late", input, &ReplayOptions::new()).unwrap();
    let (status, content, stitched): (String, String, bool) = db
        .connection()
        .query_row("SELECT status, content, stitched FROM tool_results WHERE call_id = 't1'", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap();
    assert_eq!((status.as_str(), content.as_str(), stitched), ("completed", "a.txt", true));
    let (kind, detail): (String, String) = db
        .connection()
        .query_row("SELECT kind, detail FROM anomalies", [], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap();
    assert_eq!((kind.as_str(), detail.as_str()), ("duplicate_terminal", "again"));
}

#[test]
fn a_database_of_another_schema_version_is_refused() {
    let dir = scratch("version");
    let path: &Path = &dir.join("v.db");
    drop(Database::open(path).unwrap());
    {
        let db = Database::open(path).unwrap();
        db.connection().pragma_update(None, "user_version", 99).unwrap();
    }
    let error = Database::open(path).unwrap_err();
    assert!(matches!(error, DatabaseError::Version { found: 99 }), "{error}");
    assert!(error.to_string().contains("schema version 99"));
}

/// A live session fed `steps`, committing after each call, killed (its
/// builder and uncommitted records gone) after `killed_at` calls of which
/// the last `uncommitted` were never committed, then resumed from what the
/// database holds: the records it ends with.
fn live_run(steps: &[roundup_testkit::generate::Step], killed_at: Option<(usize, usize)>) -> Vec<OutputLine> {
    use roundup::{FinishReason, ManualClock, RoundBuilder, StreamHandler};
    let dir = scratch("live");
    let path = dir.join(format!("live-{}.db", killed_at.map_or(0, |(k, u)| k * 1000 + u + 1)));
    let mut db = Database::open(&path).unwrap();
    let feed = |db: &mut Database, from: usize, to: usize, committed: usize, finish: bool| {
        let mut live = db.live("agent").unwrap();
        let resume = live.resume(db).unwrap();
        let clock = ManualClock::new(0);
        let builder = RoundBuilder::new().with_clock(clock.clone()).with_round_sink(live.sink());
        if let Some(checkpoint) = resume.checkpoint {
            builder.restore(checkpoint).unwrap();
        }
        assert_eq!(resume.position as usize, from);
        for (i, step) in steps.iter().enumerate().take(to).skip(from) {
            clock.set(step.at);
            builder.call(step.call());
            if i < committed {
                live.commit(db, &builder.checkpoint(), i as u64 + 1).unwrap();
            }
        }
        if finish {
            // The end comes at the time of the last call (a restarted
            // builder's clock knows no earlier reading).
            clock.set(steps.last().map_or(0, |step| step.at));
            builder.finish_if_running(FinishReason::Interrupted);
            live.commit(db, &builder.checkpoint(), to as u64).unwrap();
        }
    };
    match killed_at {
        None => feed(&mut db, 0, steps.len(), steps.len(), true),
        Some((at, uncommitted)) => {
            let at = at.min(steps.len());
            let committed = at.saturating_sub(uncommitted);
            feed(&mut db, 0, at, committed, false);
            feed(&mut db, committed, steps.len(), steps.len(), true);
        }
    }
    db.records("agent").unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// A live session killed with calls left uncommitted, resumed from the
    /// last commit and fed those calls again, ends with the records of one
    /// never killed: none lost, none doubled.
    #[test]
    fn a_live_session_resumed_after_a_crash_loses_and_doubles_nothing(
        steps in roundup_testkit::generate::steps(60),
        at in 0usize..70,
        uncommitted in 0usize..5,
    ) {
        let whole = lines(&live_run(&steps, None));
        let resumed = lines(&live_run(&steps, Some((at, uncommitted))));
        proptest::prop_assert_eq!(resumed, whole);
    }
}

#[test]
fn a_live_session_is_not_an_ingested_source() {
    let dir = scratch("live-not");
    let mut db = Database::open(&dir.join("n.db")).unwrap();
    db.ingest_bytes("log", b"{\"op\":\"message\",\"text\":\"one\"}\n", &ReplayOptions::new()).unwrap();
    let mut live = db.live("log").unwrap();
    let error = live.resume(&mut db).unwrap_err();
    assert!(error.to_string().contains("not a live session"), "{error}");
    let checkpoint = roundup::RoundBuilder::new().checkpoint();
    let error = live.commit(&mut db, &checkpoint, 0).unwrap_err();
    assert!(error.to_string().contains("not a live session"), "{error}");
}
