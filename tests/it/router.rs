//! The session router: eviction to a store changes no output, closing and
//! restoring work, a checkpoint that cannot be read back is reported, and a
//! million sessions replay in bounded memory.

use std::sync::{Arc, Mutex};

use roundup::router::{CheckpointStore, MemoryStore, StoreError};
use roundup::{Call, FinishReason, RoundBuilder, Router};
use roundup_testkit::capture::{options, replay_raw};
use serde_json::Value;

/// A router whose sessions log their records, as output lines.
fn logging_router(log: &Arc<Mutex<Vec<Value>>>) -> Router {
    let log = Arc::clone(log);
    Router::new(move |session| {
        let log = Arc::clone(&log);
        let builder = RoundBuilder::new().retain_rounds(false);
        let builder = match session {
            Some(name) => builder.with_session(name),
            None => builder,
        };
        builder.with_sink(move |record| log.lock().unwrap().push(roundup_testkit::capture::record_json(record)))
    })
}

#[test]
fn eviction_changes_no_output() {
    let input = roundup_testkit::repo_root().join("examples/session.ops.jsonl");
    let input = std::fs::read(input).unwrap();
    let (plain, _) = replay_raw(&input, &options("auto", "records"));
    for keep in [1, 2] {
        let (memory, _) = replay_raw(&input, &options("auto", "records").evict(keep, None));
        assert_eq!(String::from_utf8_lossy(&memory), String::from_utf8_lossy(&plain), "memory store, keep {keep}");
        let dir = std::env::temp_dir().join(format!("roundup-evict-{}-{keep}", std::process::id()));
        let (files, _) = replay_raw(&input, &options("auto", "records").evict(keep, Some(dir.clone())));
        assert_eq!(String::from_utf8_lossy(&files), String::from_utf8_lossy(&plain), "directory store, keep {keep}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().path()).collect();
        assert_eq!(left, Vec::<std::path::PathBuf>::new(), "every evicted session taken back, no empty folder left");
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn sessions_are_evicted_restored_and_closed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut router = logging_router(&log).evict_beyond(2, MemoryStore::default());
    for n in 0..10 {
        router.call(Some(&format!("s{n}")), Call::Message { text: "hello" });
    }
    assert_eq!((router.sessions(), router.open_sessions()), (10, 2), "ten sessions, two in memory");
    router.call(Some("s0"), Call::Message { text: " again" });
    router.close(Some("s0"), FinishReason::Canceled);
    assert_eq!(router.sessions(), 9, "a closed session is forgotten");
    assert_eq!(router.finish_all(FinishReason::Interrupted), 9);
    let log = log.lock().unwrap();
    let rounds: Vec<(&str, &str)> = log
        .iter()
        .filter(|l| l["type"] == "round")
        .map(|l| (l["session"].as_str().unwrap(), l["message"].as_str().unwrap()))
        .collect();
    assert_eq!(rounds[0], ("s0", "hello again"), "s0 was restored with its open round");
    let order: Vec<&str> = rounds[1..].iter().map(|r| r.0).collect();
    assert_eq!(order, ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"], "first-appearance order");
    assert_eq!(log.iter().filter(|l| l["type"] == "summary").count(), 10);
}

/// A store that hands back something that is not a checkpoint.
struct Garbage;

impl CheckpointStore for Garbage {
    fn save(&mut self, _: &str, _: &[u8]) -> Result<(), StoreError> {
        Ok(())
    }
    fn load(&mut self, _: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(Some(b"{\"version\":1,\"run\":7}".to_vec()))
    }
    fn remove(&mut self, _: &str) -> Result<(), StoreError> {
        Ok(())
    }
}

#[test]
fn a_checkpoint_that_cannot_be_restored_is_reported() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut router = logging_router(&log).evict_beyond(1, Garbage);
    router.call(Some("a"), Call::Message { text: "one" });
    router.call(Some("b"), Call::Message { text: "two" });
    router.call(Some("a"), Call::Message { text: "three" });
    let log = log.lock().unwrap();
    let anomaly = log.iter().find(|l| l["kind"] == "restore_failed").expect("a restore_failed anomaly");
    assert_eq!(anomaly["session"], "a");
    assert!(anomaly["detail"].as_str().unwrap().contains("could not be restored"), "{anomaly}");
}

#[test]
fn the_sink_sees_every_record_type_through_the_router() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut router = logging_router(&log);
    router.call(None, Call::ToolCall { id: "t", title: "x", name: "" });
    router.session(None).finish_if_running(FinishReason::Canceled);
    let types: Vec<String> = log.lock().unwrap().iter().map(|l| l["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(types, ["round", "summary"]);
}

/// Writes `count` generated lines to `stdin` in 64 KiB pieces.
fn write_lines(stdin: &mut dyn std::io::Write, count: usize, line: impl Fn(usize) -> String) {
    let mut chunk = String::new();
    for n in 0..count {
        chunk.push_str(&line(n));
        if chunk.len() > 1 << 16 {
            stdin.write_all(chunk.as_bytes()).unwrap();
            chunk.clear();
        }
    }
    stdin.write_all(chunk.as_bytes()).unwrap();
}

/// Peak RSS (KiB) of `roundup replay` over `sessions` one-message sessions
/// streamed through stdin, with `args`.
fn peak_rss_kib(sessions: usize, args: &[&str]) -> (u64, usize) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let rounds = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&rounds);
    let all_args: Vec<&str> = ["replay", "-q"].into_iter().chain(args.iter().copied()).chain(["-"]).collect();
    let piped = roundup_testkit::pipe_through(
        env!("CARGO_BIN_EXE_roundup"),
        &all_args,
        |stdin| {
            write_lines(stdin, sessions, |n| {
                format!("{{\"op\":\"message\",\"text\":\"hello from a session\",\"session\":\"s{n}\"}}\n")
            })
        },
        move |line| {
            if line.windows(7).any(|w| w == b"\"round\"") {
                counted.fetch_add(1, Ordering::Relaxed);
            }
        },
    );
    assert!(piped.status.success(), "{}", piped.stderr);
    (piped.peak_kib, rounds.load(Ordering::Relaxed))
}

/// Release only: a million one-message sessions written as AG-UI events,
/// evicted to a directory: each session's AG-UI thread goes with it, so
/// the memory is that of the sessions kept open, whatever the format.
#[test]
#[ignore]
fn a_million_sessions_as_agui_replay_in_bounded_memory() {
    const SESSIONS: usize = 1_000_000;
    const LIMIT_KIB: u64 = 64 << 10;
    let dir = std::env::temp_dir().join(format!("roundup-million-agui-{}", std::process::id()));
    let args = ["--emit", "agui", "--max-sessions", "1000", "--evict-dir", dir.to_str().unwrap()];
    let (peak, _) = peak_rss_kib(SESSIONS, &args);
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("{SESSIONS} one-message sessions as AG-UI, at most 1,000 open, evicted to disk: peak RSS {peak} KiB");
    assert!(peak < LIMIT_KIB, "peak RSS {peak} KiB");
}

/// Release only: one run of a million tool calls (each answered) holds
/// what late results and late metadata can still reach, compactly.
#[test]
#[ignore]
fn a_run_of_a_million_tool_calls_replays_in_bounded_memory() {
    const CALLS: usize = 1_000_000;
    const LIMIT_KIB: u64 = 128 << 10;
    let piped = roundup_testkit::pipe_through(
        env!("CARGO_BIN_EXE_roundup"),
        &["replay", "-q", "-"],
        |stdin| {
            write_lines(stdin, CALLS, |n| {
                format!("{{\"op\":\"tool_call\",\"id\":\"toolu_01{n:022}\",\"title\":\"bash\"}}\n{{\"op\":\"tool_update\",\"id\":\"toolu_01{n:022}\",\"content\":\"ok\",\"status\":\"completed\"}}\n")
            })
        },
        |_| {},
    );
    assert!(piped.status.success(), "{}", piped.stderr);
    eprintln!("one run of {CALLS} tool calls: peak RSS {} KiB", piped.peak_kib);
    assert!(piped.peak_kib < LIMIT_KIB, "peak RSS {} KiB", piped.peak_kib);
}

/// Release only (`cargo test --release -- --ignored`): a million sessions
/// that each send one message, evicted to a directory, in bounded memory.
#[test]
#[ignore]
fn a_million_sessions_replay_in_bounded_memory() {
    const SESSIONS: usize = 1_000_000;
    const LIMIT_KIB: u64 = 48 << 10;
    let dir = std::env::temp_dir().join(format!("roundup-million-{}", std::process::id()));
    let (peak, rounds) = peak_rss_kib(SESSIONS, &["--max-sessions", "1000", "--evict-dir", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("{SESSIONS} one-message sessions, at most 1,000 open, evicted to disk: peak RSS {peak} KiB");
    assert_eq!(rounds, SESSIONS, "every session's round");
    assert!(peak < LIMIT_KIB, "peak RSS {peak} KiB");
}

/// A store that fails, in turn, some of its saves and removals (a full
/// disk, a permission flipped), around a memory store.
struct Flaky {
    inner: MemoryStore,
    calls: u64,
    saves_failed: u64,
    removals_failed: u64,
}

impl Flaky {
    fn failing(&mut self) -> bool {
        self.calls += 1;
        self.calls % 3 == 0
    }
    fn error(session: &str, action: &'static str) -> StoreError {
        StoreError::new(session, action, None, std::io::Error::other("injected"))
    }
}

impl CheckpointStore for Flaky {
    fn save(&mut self, session: &str, checkpoint: &[u8]) -> Result<(), StoreError> {
        if self.failing() {
            self.saves_failed += 1;
            return Err(Flaky::error(session, "write"));
        }
        self.inner.save(session, checkpoint)
    }
    fn load(&mut self, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.load(session)
    }
    fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        if self.failing() {
            self.removals_failed += 1;
            return Err(Flaky::error(session, "remove"));
        }
        self.inner.remove(session)
    }
}

/// Saves and removals that fail lose no session and leave none stale:
/// every session's output is what a router that evicts nothing writes,
/// line for line, with sessions closed and reopened under the same names.
#[test]
fn a_failing_store_loses_no_session_and_restores_none_stale() {
    let drive = |router: &mut Router| {
        for step in 0..400 {
            let name = format!("s{}", (step * 7) % 13);
            let id = format!("t{step}");
            router.call(Some(&name), Call::Message { text: "step " });
            router.call(Some(&name), Call::ToolCall { id: &id, title: "ls", name: "" });
            if step % 5 == 0 {
                router.close(Some(&name), FinishReason::Canceled);
            }
        }
        router.finish_all(FinishReason::Interrupted);
    };
    // A clock that stands still: both routers' records are then the same
    // bytes, times included.
    let still = |log: &Arc<Mutex<Vec<Value>>>| {
        let log = Arc::clone(log);
        Router::new(move |session| {
            let log = Arc::clone(&log);
            let builder = RoundBuilder::new().retain_rounds(false).with_clock(roundup::ManualClock::new(0));
            let builder = match session {
                Some(name) => builder.with_session(name),
                None => builder,
            };
            builder.with_sink(move |record| log.lock().unwrap().push(roundup_testkit::capture::record_json(record)))
        })
    };
    let (plain_log, flaky_log) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    drive(&mut still(&plain_log));
    let store = Flaky { inner: MemoryStore::default(), calls: 0, saves_failed: 0, removals_failed: 0 };
    let counts = Arc::new(Mutex::new((0, 0)));
    struct Counted(Flaky, Arc<Mutex<(u64, u64)>>);
    impl CheckpointStore for Counted {
        fn save(&mut self, s: &str, c: &[u8]) -> Result<(), StoreError> {
            let r = self.0.save(s, c);
            *self.1.lock().unwrap() = (self.0.saves_failed, self.0.removals_failed);
            r
        }
        fn load(&mut self, s: &str) -> Result<Option<Vec<u8>>, StoreError> {
            self.0.load(s)
        }
        fn remove(&mut self, s: &str) -> Result<(), StoreError> {
            let r = self.0.remove(s);
            *self.1.lock().unwrap() = (self.0.saves_failed, self.0.removals_failed);
            r
        }
    }
    drive(&mut still(&flaky_log).evict_beyond(2, Counted(store, Arc::clone(&counts))));
    let (saves_failed, removals_failed) = *counts.lock().unwrap();
    assert!(
        saves_failed > 10 && removals_failed > 5,
        "failures injected: {saves_failed} saves, {removals_failed} removals"
    );
    let (plain, flaky) = (plain_log.lock().unwrap(), flaky_log.lock().unwrap());
    assert!(plain.len() > 400, "{} lines", plain.len());
    assert_eq!(flaky.len(), plain.len());
    for (at, (flaky, plain)) in flaky.iter().zip(plain.iter()).enumerate() {
        assert_eq!(flaky, plain, "line {at}");
    }
}

/// `roundup replay --evict-dir` killed in the middle of writing a
/// checkpoint leaves a scratch database that is whole: SQLite's integrity
/// check passes and every checkpoint committed in it reads back, never a
/// torn one.
///
/// The kill lands inside a write for certain: the replay runs under a file
/// size limit (`ulimit -f`), and its sessions' checkpoints grow until one
/// crosses it, when the kernel stops the process (SIGXFSZ) in that write.
#[cfg(all(unix, feature = "sqlite"))]
#[test]
fn a_replay_killed_mid_checkpoint_leaves_no_torn_checkpoint() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    // 40 sessions, 4 open at most: each visit adds 8 KiB to a session's
    // open round, so its checkpoint grows by as much at every eviction.
    let chunk = "x".repeat(8 << 10);
    let mut input = String::new();
    for step in 0..4_000 {
        input.push_str(&format!("{{\"op\":\"message\",\"text\":\"{chunk}\",\"session\":\"s{}\"}}\n", step % 40));
    }
    let dir = std::env::temp_dir().join(format!("roundup-killed-{}", std::process::id()));
    // 200 blocks of 512 bytes: 100 KiB, about the twelfth visit.
    let script = format!(
        "ulimit -f 200 && exec '{}' replay -q --max-sessions 4 --evict-dir '{}' -",
        env!("CARGO_BIN_EXE_roundup"),
        dir.display()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let status = child.wait().unwrap();
    writer.join().unwrap();
    const SIGXFSZ: i32 = 25;
    assert_eq!(status.signal(), Some(SIGXFSZ), "the replay was stopped inside a write: {status:?}");
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "db"))
        .collect();
    assert_eq!(files.len(), 1, "one scratch database: {files:?}");
    let connection = roundup::store::rusqlite::Connection::open(&files[0]).unwrap();
    let integrity: String = connection.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let mut statement = connection.prepare("SELECT session, checkpoint FROM checkpoints").unwrap();
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))).unwrap();
    for row in rows {
        let (session, bytes) = row.unwrap();
        if let Err(error) = roundup::Checkpoint::from_json(&bytes) {
            panic!("{session}: a torn checkpoint ({} bytes): {error}", bytes.len());
        }
    }
    drop(statement);
    drop(connection);
    std::fs::remove_dir_all(&dir).ok();
}
