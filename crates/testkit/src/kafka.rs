//! Kafka helpers shared by roundup-kafka's tests and benchmark (feature
//! `kafka`): topics, recorded traffic produced as keyed events, worker
//! processes, and the committed output read back.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

/// The partitions of every topic the tests make.
pub const PARTITIONS: i32 = 4;

/// `$ROUNDUP_KAFKA_BROKERS`, else the broker scripts/kafka-broker.sh starts.
pub fn brokers() -> String {
    std::env::var("ROUNDUP_KAFKA_BROKERS").unwrap_or_else(|_| "127.0.0.1:9092".to_owned())
}

/// A name no earlier run used.
pub fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

/// Panics, naming the way to start one, when no broker answers: the
/// tests fail rather than skip without one.
pub fn require_broker() {
    let consumer: BaseConsumer = ClientConfig::new().set("bootstrap.servers", brokers()).create().unwrap();
    if let Err(error) = consumer.fetch_metadata(None, Duration::from_secs(15)) {
        panic!(
            "no Kafka broker answers at {} ({error}): start one with scripts/kafka-broker.sh start, or set ROUNDUP_KAFKA_BROKERS",
            brokers()
        );
    }
}

/// Makes `topic` with [`PARTITIONS`] partitions.
pub fn create_topic(topic: &str) {
    let admin: AdminClient<DefaultClientContext> =
        ClientConfig::new().set("bootstrap.servers", brokers()).create().unwrap();
    let new = NewTopic::new(topic, PARTITIONS, TopicReplication::Fixed(1));
    let result = block_on(admin.create_topics([&new], &AdminOptions::new()));
    assert!(result.unwrap().into_iter().all(|r| r.is_ok()), "topic {topic} created");
}

/// Runs a future on this thread (the admin client completes its own).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        thread::park_timeout(Duration::from_millis(50));
    }
}

/// `sessions` sessions of recorded agent traffic: every fixture of every
/// line-framed format and every vector (as ops JSONL), in turn.
pub fn traffic(sessions: usize) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut sources: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut dirs = vec![crate::repo_root().join("tests/fixtures")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "ndjson")) {
                files.push(path);
            }
        }
    }
    files.sort();
    for file in files {
        sources.push(lines(&std::fs::read(file).unwrap()));
    }
    for vector in crate::vectors() {
        sources.push(lines(vector.ops_jsonl().as_bytes()));
    }
    assert!(sources.len() > 60, "fixtures and vectors found: {}", sources.len());
    (0..sessions).map(|i| (format!("session-{i:04}"), sources[i % sources.len()].clone())).collect()
}

fn lines(input: &[u8]) -> Vec<Vec<u8>> {
    input.split(|&b| b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)).map(<[u8]>::to_vec).collect()
}

/// What `roundup replay` prints for each session's events.
pub fn expected(traffic: &[(String, Vec<Vec<u8>>)]) -> BTreeMap<String, Vec<String>> {
    expected_as(traffic, "records")
}

/// What `roundup replay --emit EMIT` prints for each session's events.
pub fn expected_as(traffic: &[(String, Vec<Vec<u8>>)], emit: &str) -> BTreeMap<String, Vec<String>> {
    let options =
        roundup::ReplayOptions::new().to(roundup::encoders::OutputFormat::named(emit).expect("an output format"));
    traffic
        .iter()
        .map(|(session, events)| {
            let mut input = events.join(&b'\n');
            input.push(b'\n');
            let mut out = Vec::new();
            roundup::replay(&input[..], &mut out, &options, &mut ()).unwrap();
            let lines = String::from_utf8(out).unwrap().lines().map(str::to_owned).collect();
            (session.clone(), lines)
        })
        .collect()
}

/// What a worker that skipped `lost` (a session and the index of its
/// event, its end counted as the event after its last) writes for the
/// sessions that lose any, those sessions only: a session whose end is
/// lost stays open, and its runs never finish.
pub fn expected_without(
    traffic: &[(String, Vec<Vec<u8>>)],
    lost: &BTreeSet<(String, usize)>,
) -> BTreeMap<String, Vec<String>> {
    let options = roundup::ReplayOptions::new();
    traffic
        .iter()
        .filter(|(session, _)| lost.iter().any(|(s, _)| s == session))
        .map(|(session, events)| {
            let kept = |i: usize| !lost.contains(&(session.clone(), i));
            let mut replayer = roundup::Replayer::new(&options).unwrap();
            for (_, event) in events.iter().enumerate().filter(|(i, _)| kept(*i)) {
                replayer.feed_payload(event, &mut ());
            }
            if kept(events.len()) {
                replayer.finish(&mut ());
            }
            let mut out = Vec::new();
            replayer.take_output(&mut out);
            (session.clone(), String::from_utf8(out).unwrap().lines().map(str::to_owned).collect())
        })
        .collect()
}

/// Where each event of `topic` is: (partition, offset) to (session, the
/// event's index in its session, counting its end), for the records there
/// now.
pub fn input_index(topic: &str) -> HashMap<(i32, i64), (String, usize)> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("group.id", unique("index"))
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .create()
        .unwrap();
    let mut list = TopicPartitionList::new();
    let mut open = BTreeSet::new();
    for partition in 0..PARTITIONS {
        let (low, high) = consumer.fetch_watermarks(topic, partition, Duration::from_secs(30)).unwrap();
        if high > low {
            list.add_partition_offset(topic, partition, Offset::Beginning).unwrap();
            open.insert(partition);
        }
    }
    consumer.assign(&list).unwrap();
    let mut index = HashMap::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !open.is_empty() {
        assert!(Instant::now() < deadline, "the input {topic} was not read within 60 s");
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(message)) => {
                let session = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
                let next = seen.entry(session.clone()).or_default();
                index.insert((message.partition(), message.offset()), (session, *next));
                *next += 1;
            }
            Some(Err(KafkaError::PartitionEOF(partition))) => {
                open.remove(&partition);
            }
            Some(Err(error)) => panic!("reading the input {topic}: {error}"),
            None => {}
        }
    }
    index
}

/// Produces the sessions interleaved (one event of each in turn), each
/// ended by a tombstone, spread over `over`; `sent` is told when each
/// session's tombstone was handed to the producer.
pub fn produce(topic: &str, traffic: &[(String, Vec<Vec<u8>>)], over: Duration, mut sent_end: impl FnMut(&str)) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("enable.idempotence", "true")
        .set("message.timeout.ms", "120000")
        .create()
        .unwrap();
    let longest = traffic.iter().map(|(_, events)| events.len()).max().unwrap_or(0);
    let total: usize = traffic.iter().map(|(_, events)| events.len() + 1).sum();
    let pause = over / (total as u32).max(1);
    let mut sent = 0usize;
    for step in 0..=longest {
        for (session, events) in traffic {
            let record = match step.cmp(&events.len()) {
                std::cmp::Ordering::Less => {
                    BaseRecord::<String, Vec<u8>>::to(topic).key(session).payload(&events[step])
                }
                std::cmp::Ordering::Equal => {
                    sent_end(session);
                    BaseRecord::<String, Vec<u8>>::to(topic).key(session)
                }
                std::cmp::Ordering::Greater => continue,
            };
            let mut record = record;
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((_, back)) => {
                        producer.poll(Duration::from_millis(20));
                        record = back;
                    }
                }
            }
            sent += 1;
            if sent.is_multiple_of(50) {
                producer.poll(Duration::ZERO);
                thread::sleep(pause * 50);
            }
        }
    }
    producer.flush(Duration::from_secs(120)).expect("every event reaches the broker");
}

/// The input records of a transaction, as a worker's trace says when it
/// begins: (partition, first offset, last offset).
pub type Batch = Vec<(i32, i64, i64)>;

/// The records of a trace line `transaction N begins (K records; offsets
/// P:FIRST-LAST ...)`.
fn batch_of(line: &str) -> Batch {
    let ranges = line.split_once("; offsets ").map_or("", |(_, rest)| rest.trim_end_matches(')'));
    ranges
        .split_whitespace()
        .map(|range| {
            let parsed = range.split_once(':').and_then(|(partition, offsets)| {
                let (first, last) = offsets.split_once('-')?;
                Some((partition.parse().ok()?, first.parse().ok()?, last.parse().ok()?))
            });
            parsed.unwrap_or_else(|| panic!("a range of offsets in the trace line {line:?}"))
        })
        .collect()
}

/// A worker process.
pub struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    /// Starts the `roundup-kafka` binary at `binary`; `broken` commits its
    /// offsets outside its transactions.
    pub fn start(binary: &str, name: &str, input: &str, output: &str, group: &str, broken: bool) -> Worker {
        Worker::start_with(binary, name, &["--input", input, "--output", output, "--group", group], broken)
    }

    /// [`start`](Self::start) with the worker's options given whole.
    pub fn start_with(binary: &str, name: &str, options: &[&str], broken: bool) -> Worker {
        let log = std::env::temp_dir().join(format!("{}.log", unique(name)));
        let child = Command::new(binary)
            .env("ROUNDUP_KAFKA_TRACE", "1")
            .envs(broken.then_some(("ROUNDUP_KAFKA_BREAK_EXACTLY_ONCE", "1")))
            .args(["--brokers", &brokers()])
            .args(options)
            .args(["--id", &unique(name), "--batch-ms", "50"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the worker starts");
        Worker { child, log }
    }

    /// SIGKILL while a transaction is open (its log's last line says one
    /// began), with no chance to commit or leave the group. Returns the
    /// transactions it had committed.
    pub fn kill_in_transaction(self) -> usize {
        self.kill_in_transaction_where(|_| true).0
    }

    /// [`kill_in_transaction`](Self::kill_in_transaction), in the first
    /// transaction whose input records `choose` takes. Returns the
    /// transactions committed before, and the records of the one killed.
    pub fn kill_in_transaction_where(mut self, choose: impl FnMut(&Batch) -> bool) -> (usize, Batch) {
        let batch = self.stop_in_transaction(choose);
        self.signal("-KILL");
        self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let last = log.lines().last().unwrap_or_default();
        assert!(last.contains(" begins "), "killed inside a transaction, its last line: {last}");
        (log.lines().filter(|line| line.contains(" committed")).count(), batch)
    }

    /// Stops the worker (SIGSTOP) inside a transaction whose records
    /// `choose` takes: the moment its log says one began, it is stopped;
    /// if its log says more by then (the transaction was quick), or
    /// `choose` does not take it, it goes on (SIGCONT) until the next one.
    fn stop_in_transaction(&mut self, mut choose: impl FnMut(&Batch) -> bool) -> Batch {
        let in_transaction = |log: &str| log.lines().last().filter(|line| line.contains(" begins ")).map(batch_of);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if in_transaction(&log).is_some() {
                self.signal("-STOP");
                self.wait_until_stopped();
                if let Some(batch) = in_transaction(&std::fs::read_to_string(&self.log).unwrap_or_default()) {
                    if choose(&batch) {
                        return batch;
                    }
                }
                self.signal("-CONT");
            }
            assert!(Instant::now() < deadline, "the worker was not stopped inside a transaction within 30 s:\n{log}");
            thread::sleep(Duration::from_micros(200));
        }
    }

    /// A signal is delivered after `kill` returns: the worker may still
    /// write a line. Its state in /proc says when it has stopped.
    fn wait_until_stopped(&self) {
        let stat = format!("/proc/{}/stat", self.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        // The state follows the command name, which is in parentheses.
        let state = || std::fs::read_to_string(&stat).ok()?.rsplit_once(") ")?.1.chars().next();
        while state() != Some('T') {
            assert!(Instant::now() < deadline, "the worker did not stop within 10 s of SIGSTOP: {:?}", state());
            thread::sleep(Duration::from_micros(100));
        }
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill").args([signal, &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success(), "kill {signal} {}", self.child.id());
    }

    /// SIGSTOP inside a transaction, for `pause` (longer than the group's
    /// session timeout: its partitions go to another worker), then SIGCONT:
    /// a zombie that wakes up with a transaction open. Returns its log.
    pub fn pause_in_transaction(&mut self, pause: Duration) -> String {
        self.stop_in_transaction(|_| true);
        thread::sleep(pause);
        self.signal("-CONT");
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The worker's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `lines` lines of the worker's log, headed by its name.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join("\n");
        format!("-- the last {} of {} lines of {}:\n{tail}\n", lines.min(all.len()), all.len(), self.log.display())
    }

    /// SIGTERM: commits its batch and leaves the group.
    pub fn stop(mut self) -> String {
        self.signal("-TERM");
        let status = self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        assert!(status.success(), "the worker stopped cleanly: {status}\n{log}");
        log
    }
}

/// A worker still running when its test ends (a failed assertion unwinds
/// past `stop`) is killed, so that it loads no later test's machine.
impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A consumer of `group` that reads committed records only, and commits
/// nothing by itself.
fn read_committed_consumer(group: &str) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("group.id", group)
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap()
}

/// A reader of every partition of `topic` from its start, committed
/// records only (as the output's readers must read).
pub fn committed_reader(topic: &str) -> BaseConsumer {
    let consumer = read_committed_consumer(&unique("reader"));
    let mut list = TopicPartitionList::new();
    for partition in 0..PARTITIONS {
        list.add_partition_offset(topic, partition, Offset::Beginning).unwrap();
    }
    consumer.assign(&list).unwrap();
    consumer
}

/// Waits until `group` has committed offsets at the end of every partition
/// of `input` (read stable, as a worker reads them): every event is then
/// in a committed transaction, however long the workers took to recover.
/// Else says how far the group got.
pub fn consumed(input: &str, group: &str, within: Duration) -> Result<(), String> {
    let consumer = read_committed_consumer(group);
    let mut ends = Vec::new();
    for partition in 0..PARTITIONS {
        let (_, high) = consumer.fetch_watermarks(input, partition, Duration::from_secs(30)).unwrap();
        ends.push(high);
    }
    let deadline = Instant::now() + within;
    let mut list = TopicPartitionList::new();
    for partition in 0..PARTITIONS {
        list.add_partition(input, partition);
    }
    let mut at = Vec::new();
    while Instant::now() < deadline {
        // The broker may be restarting: an error is asked again.
        if let Ok(committed) = consumer.committed_offsets(list.clone(), Duration::from_secs(10)) {
            at = (0..PARTITIONS)
                .map(|p| match committed.find_partition(input, p).map(|e| e.offset()) {
                    Some(Offset::Offset(offset)) => offset,
                    _ => 0,
                })
                .collect();
            if at.iter().zip(&ends).all(|(at, end)| at >= end) {
                return Ok(());
            }
        }
        thread::sleep(Duration::from_millis(250));
    }
    Err(format!(
        "the group {group} did not consume its input within {} s: its committed offsets are {at:?}, the ends {ends:?}",
        within.as_secs()
    ))
}

/// The committed output, by session, once `lines` lines are there and no
/// more come for a while (a duplicate would come late).
pub fn committed_output(topic: &str, lines: usize, within: Duration) -> BTreeMap<String, Vec<String>> {
    let consumer = committed_reader(topic);
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut count = 0;
    let deadline = Instant::now() + within;
    let mut quiet_since = None;
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(message)) => {
                let session = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
                let line = String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned();
                out.entry(session).or_default().push(line);
                count += 1;
                quiet_since = None;
            }
            Some(Err(KafkaError::PartitionEOF(_))) | None => {
                // Enough lines and 5 s with no more (a repeat would come
                // late), or 30 s with none at all (some were lost: when the
                // input is consumed, see `consumed`, the last transaction's
                // lines are readable within milliseconds).
                let since = *quiet_since.get_or_insert_with(Instant::now);
                let quiet = since.elapsed();
                if (count >= lines && quiet > Duration::from_secs(5)) || quiet > Duration::from_secs(30) {
                    break;
                }
            }
            Some(Err(error)) => panic!("reading the output: {error}"),
        }
    }
    out
}

/// The committed output equals `roundup replay`'s, session by session;
/// else what differs first.
pub fn exactly_once(
    actual: &BTreeMap<String, Vec<String>>,
    expected: &BTreeMap<String, Vec<String>>,
) -> Result<(), String> {
    let differing: Vec<&String> =
        expected.keys().filter(|session| actual.get(*session) != expected.get(*session)).collect();
    if let Some(session) = differing.first() {
        let have = actual.get(*session).map(Vec::len).unwrap_or(0);
        let wanted = expected[*session].len();
        let how =
            if have == wanted { "other lines".to_owned() } else { format!("{have} lines where {wanted} are expected") };
        return Err(format!(
            "{} of {} sessions differ from roundup replay; the first, {session}, has {how}",
            differing.len(),
            expected.len()
        ));
    }
    let extra: Vec<&String> = actual.keys().filter(|session| !expected.contains_key(*session)).collect();
    if !extra.is_empty() {
        return Err(format!("output for sessions never sent: {extra:?}"));
    }
    Ok(())
}
