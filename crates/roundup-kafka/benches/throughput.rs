//! Throughput and latency of roundup-kafka workers on a real broker:
//! `cargo bench -p roundup-kafka` (a broker at `$ROUNDUP_KAFKA_BROKERS`,
//! `scripts/kafka-broker.sh start`).
//!
//! - **Throughput**: `ROUNDUP_BENCH_SESSIONS` sessions (default 10,000) of
//!   recorded traffic in eight formats, all produced before the workers
//!   start, read by one worker and then by two (new topics each time, 4
//!   partitions). Events/s and rounds/s from the group's first committed
//!   offset to its last (joining and restoring left out), the records per
//!   transaction, and the CPU time the workers and the broker used.
//! - **Latency**: the same traffic produced at a steady pace to one worker;
//!   for each session, the time from handing its last record (the end of its
//!   stream) to the producer, to reading its summary line, committed, from
//!   the output topic.
//!
//! `ROUNDUP_BENCH_BATCH` sets the records per transaction (default 2000).
//! Figures are in docs/kafka.md.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rdkafka::message::Message;
use roundup_testkit::kafka::{
    committed_reader, create_topic, expected, produce, require_broker, traffic, unique, Worker,
};

const WORKER: &str = env!("CARGO_BIN_EXE_roundup-kafka");

fn main() {
    require_broker();
    let sessions: usize = std::env::var("ROUNDUP_BENCH_SESSIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let traffic = traffic(sessions);
    let expected = expected(&traffic);
    let events: usize = traffic.iter().map(|(_, events)| events.len() + 1).sum();
    let total_events = events;
    assert!(
        expected.values().all(|lines| lines.iter().any(|l| l.starts_with(r#"{"type":"summary""#))),
        "every session ends with a summary"
    );
    let lines: usize = expected.values().map(Vec::len).sum();
    let rounds: usize = expected.values().flatten().filter(|line| line.starts_with(r#"{"type":"round""#)).count();
    println!(
        "{sessions} sessions: {events} events (end-of-session records included), {lines} output lines, {rounds} rounds"
    );

    // ROUNDUP_BENCH_BATCH: records per transaction at most (the worker's
    // --batch; its default is 2000).
    let batch = std::env::var("ROUNDUP_BENCH_BATCH").unwrap_or_else(|_| "2000".to_owned());
    let mut by_workers = Vec::new();
    for workers in [1, 2] {
        let input = unique("bench-in");
        create_topic(&input);
        produce(&input, &traffic, Duration::ZERO, |_| {});
        let (output, group) = (unique("bench-out"), unique("bench"));
        let broker_cpu = broker_pid().map(cpu_seconds);
        let start = Instant::now();
        let options = ["--input", &input, "--output", &output, "--group", &group, "--batch", &batch];
        let running: Vec<Worker> =
            (0..workers).map(|i| Worker::start_with(WORKER, &format!("w{i}"), &options, false)).collect();
        // Steady throughput: from the moment every worker holds its share
        // of the partitions to the last committed offset (joining the
        // group, restoring and rebalancing are not in it).
        let (first, done_then, last) =
            committed_progress(&group, &input, events as i64, || settled(&running), Duration::from_secs(600));
        let seen = wait_for_lines(&output, lines, Duration::from_secs(600));
        let elapsed = start.elapsed();
        assert_eq!(seen, lines, "every line committed");
        let worker_cpu: f64 = running.iter().map(|w| cpu_seconds(w.pid())).sum();
        let broker_cpu = broker_pid().map(cpu_seconds).zip(broker_cpu).map(|(after, before)| after - before);
        let logs: Vec<String> = running.into_iter().map(Worker::stop).collect();
        let transactions: u64 = logs.iter().map(|log| stat(log, "transactions")).sum();
        let checkpoint_bytes: u64 = logs.iter().map(|log| stat(log, "bytes")).sum();
        let checkpoints: u64 = logs.iter().map(|log| stat(log, "checkpoints")).sum();
        let seconds = (last - first).as_secs_f64();
        let events = events - done_then as usize;
        println!(
            "{workers} worker(s): {events} events in {:.2} s steady ({:.1} s from start), {:.0} events/s, {:.0} rounds/s, \
             {} transactions ({:.0} records each), {checkpoints} checkpoints ({:.2} per event, {:.0} bytes each); \
             CPU: workers {worker_cpu:.1} s, broker {}",
            seconds,
            elapsed.as_secs_f64(),
            events as f64 / seconds,
            rounds as f64 * events as f64 / total_events as f64 / seconds,
            transactions,
            events as f64 / transactions.max(1) as f64,
            checkpoints as f64 / events as f64,
            checkpoint_bytes as f64 / checkpoints.max(1) as f64,
            broker_cpu.map_or("unknown".to_owned(), |s| format!("{s:.1} s")),
        );
        by_workers.push(seconds);
    }
    println!("1 -> 2 workers: {:.2}x", by_workers[0] / by_workers[1]);

    // Latency, at a steady pace one worker keeps up with.
    let input = unique("latency-in");
    create_topic(&input);
    let (output, group) = (unique("latency-out"), unique("latency"));
    let worker = Worker::start(WORKER, "latency", &input, &output, &group, false);
    thread::sleep(Duration::from_secs(5));
    let ended: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    // Sessions whose last summary is made by their end (a run still open
    // when the stream ends), and how many summaries they have in all.
    let summaries: HashMap<String, usize> = traffic
        .iter()
        .filter_map(|(session, events)| {
            let whole = expected[session].iter().filter(|l| l.starts_with(r#"{"type":"summary""#)).count();
            let mut replayer = roundup::Replayer::new(&roundup::ReplayOptions::new()).unwrap();
            for event in events {
                replayer.feed_payload(event, &mut ());
            }
            let mut before_end = Vec::new();
            replayer.take_output(&mut before_end);
            let before = before_end.split(|&b| b == b'\n').filter(|l| l.starts_with(br#"{"type":"summary""#)).count();
            (whole > before).then(|| (session.clone(), whole))
        })
        .collect();
    let timed = summaries.len();
    let reader = {
        let (output, ended) = (output.clone(), Arc::clone(&ended));
        thread::spawn(move || summary_latencies(&output, summaries, &ended))
    };
    let pace = Duration::from_secs_f64(events as f64 / 5_000.0);
    let sent = Arc::clone(&ended);
    produce(&input, &traffic, pace, |session| {
        sent.lock().unwrap().insert(session.to_owned(), Instant::now());
    });
    let mut latencies = reader.join().unwrap();
    worker.stop();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "latency, end of a session's stream -> its summary committed and read ({} of {timed} sessions whose end \
         finishes a run, {sessions} sessions at ~5,000 events/s): p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

/// A figure of a worker's last line: `N events, ... N transactions`.
fn stat(log: &str, after_number: &str) -> u64 {
    let line = log.lines().rev().find(|line| line.contains("stopped:")).unwrap_or_default();
    let words: Vec<&str> = line.split([' ', '(', ')', ',']).filter(|w| !w.is_empty()).collect();
    words.windows(2).find(|w| w[1] == after_number).and_then(|w| w[0].parse().ok()).unwrap_or(0)
}

/// Every worker holds partitions, and together all of them, each once (its
/// trace's last `partitions` line says what it holds).
fn settled(workers: &[Worker]) -> bool {
    let mut all = Vec::new();
    for worker in workers {
        let log = worker.log();
        let Some(line) = log.lines().rev().find(|line| line.contains(": partitions [")) else { return false };
        let held: Vec<i32> = line
            .rsplit('[')
            .next()
            .unwrap_or("")
            .trim_end_matches(']')
            .split(", ")
            .filter_map(|p| p.parse().ok())
            .collect();
        if held.is_empty() {
            return false;
        }
        all.extend(held);
    }
    all.sort_unstable();
    all == (0..roundup_testkit::kafka::PARTITIONS).collect::<Vec<_>>()
}

/// When `ready` first held, the group's committed offsets of `topic` then,
/// and when they reached `total`.
fn committed_progress(
    group: &str,
    topic: &str,
    total: i64,
    mut ready: impl FnMut() -> bool,
    within: Duration,
) -> (Instant, i64, Instant) {
    let consumer: rdkafka::consumer::BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", roundup_testkit::kafka::brokers())
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        // Not read_committed: that would make each offset fetch wait until
        // no transaction of the group is open, which under load is rarely.
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let mut list = rdkafka::TopicPartitionList::new();
    for partition in 0..roundup_testkit::kafka::PARTITIONS {
        list.add_partition(topic, partition);
    }
    let deadline = Instant::now() + within;
    let mut first = None;
    while Instant::now() < deadline {
        let committed =
            rdkafka::consumer::Consumer::committed_offsets(&consumer, list.clone(), Duration::from_secs(10));
        let done: i64 = committed
            .map(|c| c.elements().iter().filter_map(|e| e.offset().to_raw()).filter(|&o| o > 0).sum())
            .unwrap_or(0);
        let now = Instant::now();
        if first.is_none() && ready() {
            first = Some((now, done));
        }
        if done >= total {
            let (at, then) = first.unwrap_or((now, done));
            return (at, then, now);
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("the group's offsets did not reach {total} within {within:?}");
}

/// CPU seconds (user and system) a process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command (which may hold spaces) in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 100 ticks a second.
    (ticks(11) + ticks(12)) / 100.0
}

/// The broker scripts/kafka-broker.sh started, if it runs here.
fn broker_pid() -> Option<u32> {
    let port = std::env::var("ROUNDUP_KAFKA_PORT").unwrap_or_else(|_| "9092".to_owned());
    let dir = std::env::var("ROUNDUP_KAFKA_DIR").unwrap_or_else(|_| {
        format!("{}/roundup-kafka-{port}", std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_owned()))
    });
    std::fs::read_to_string(format!("{dir}/kafka.pid")).ok()?.trim().parse().ok()
}

/// Reads until `lines` committed lines are in, or `within` passes.
fn wait_for_lines(topic: &str, lines: usize, within: Duration) -> usize {
    let consumer = committed_reader(topic);
    let deadline = Instant::now() + within;
    let mut seen = 0;
    while seen < lines && Instant::now() < deadline {
        if let Some(Ok(_)) = consumer.poll(Duration::from_millis(100)) {
            seen += 1;
        }
    }
    seen
}

/// For each session, the time from sending its end to reading its last
/// summary (the one its end made; `summaries` says how many it has).
fn summary_latencies(
    topic: &str,
    mut summaries: HashMap<String, usize>,
    ended: &Mutex<HashMap<String, Instant>>,
) -> Vec<Duration> {
    let consumer = committed_reader(topic);
    let sessions = summaries.len();
    let mut latencies = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    while latencies.len() < sessions && Instant::now() < deadline {
        let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) else { continue };
        if !message.payload().unwrap_or_default().starts_with(br#"{"type":"summary""#) {
            continue;
        }
        let session = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
        // Only sessions whose end makes their last summary are timed.
        let Some(left) = summaries.get_mut(&session) else { continue };
        *left -= 1;
        if *left == 0 {
            match ended.lock().unwrap().remove(&session) {
                Some(sent) => latencies.push(sent.elapsed()),
                None => eprintln!("{session}: its last summary came before its end was sent"),
            }
        }
    }
    eprintln!("{} of {sessions} sessions' ends seen", latencies.len());
    latencies
}
