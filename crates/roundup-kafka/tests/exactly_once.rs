//! Exactly once on a real Kafka broker: 200 sessions of recorded agent
//! traffic in eight formats go through workers that are killed, joined,
//! stopped, and whose broker restarts; the committed output must equal,
//! line for line per session, what `roundup replay` prints for each
//! session's events.
//!
//! The broker is at `$ROUNDUP_KAFKA_BROKERS` (default `127.0.0.1:9092`):
//! `scripts/kafka-broker.sh start` starts one. Without one these tests
//! fail, they do not skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
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

/// One scenario at a time: they share the broker, and one restarts it.
static BROKER: Mutex<()> = Mutex::new(());

const PARTITIONS: i32 = 4;
const SESSIONS: usize = 200;

fn brokers() -> String {
    std::env::var("ROUNDUP_KAFKA_BROKERS").unwrap_or_else(|_| "127.0.0.1:9092".to_owned())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A name no earlier run used.
fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

fn require_broker() {
    let consumer: BaseConsumer = ClientConfig::new().set("bootstrap.servers", brokers()).create().unwrap();
    if let Err(error) = consumer.fetch_metadata(None, Duration::from_secs(15)) {
        panic!(
            "no Kafka broker answers at {} ({error}): start one with scripts/kafka-broker.sh start, or set ROUNDUP_KAFKA_BROKERS",
            brokers()
        );
    }
}

fn create_topic(topic: &str) {
    let admin: AdminClient<DefaultClientContext> =
        ClientConfig::new().set("bootstrap.servers", brokers()).create().unwrap();
    let new = NewTopic::new(topic, PARTITIONS, TopicReplication::Fixed(1));
    let result = block_on(admin.create_topics([&new], &AdminOptions::new()));
    assert!(result.unwrap().into_iter().all(|r| r.is_ok()), "topic {topic} created");
}

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

/// The sessions: every recorded fixture of every line-framed format and
/// every vector (as ops JSONL), in turn, until there are `SESSIONS`.
fn traffic() -> Vec<(String, Vec<Vec<u8>>)> {
    let mut sources: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut dirs = vec![repo().join("tests/fixtures")];
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
    for vector in roundup_testkit::vectors() {
        sources.push(lines(vector.ops_jsonl().as_bytes()));
    }
    assert!(sources.len() > 60, "fixtures and vectors found: {}", sources.len());
    (0..SESSIONS).map(|i| (format!("session-{i:03}"), sources[i % sources.len()].clone())).collect()
}

fn lines(input: &[u8]) -> Vec<Vec<u8>> {
    input.split(|&b| b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)).map(<[u8]>::to_vec).collect()
}

/// What `roundup replay` prints for each session's events.
fn expected(traffic: &[(String, Vec<Vec<u8>>)]) -> BTreeMap<String, Vec<String>> {
    traffic
        .iter()
        .map(|(session, events)| {
            let mut input = events.join(&b'\n');
            input.push(b'\n');
            let mut out = Vec::new();
            roundup::replay(&input[..], &mut out, &roundup::ReplayOptions::new(), &mut ()).unwrap();
            let lines = String::from_utf8(out).unwrap().lines().map(str::to_owned).collect();
            (session.clone(), lines)
        })
        .collect()
}

/// Produces the sessions interleaved (one event of each in turn), each
/// ended by a tombstone, spread over `over`.
fn produce(topic: &str, traffic: &[(String, Vec<Vec<u8>>)], over: Duration) {
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
                std::cmp::Ordering::Equal => BaseRecord::<String, Vec<u8>>::to(topic).key(session),
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
            if sent % 50 == 0 {
                producer.poll(Duration::ZERO);
                thread::sleep(pause * 50);
            }
        }
    }
    producer.flush(Duration::from_secs(120)).expect("every event reaches the broker");
}

struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn start(name: &str, input: &str, output: &str, group: &str, broken: bool) -> Worker {
        let log = std::env::temp_dir().join(format!("{}.log", unique(name)));
        let child = Command::new(env!("CARGO_BIN_EXE_roundup-kafka"))
            .env("ROUNDUP_KAFKA_TRACE", "1")
            .envs(broken.then_some(("ROUNDUP_KAFKA_BREAK_EXACTLY_ONCE", "1")))
            .args(["--brokers", &brokers(), "--input", input, "--output", output, "--group", group])
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
    fn kill_in_transaction(mut self) -> usize {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.lines().last().is_some_and(|line| line.contains(" begins ")) {
                self.child.kill().unwrap();
                break;
            }
            assert!(Instant::now() < deadline, "the worker opened no transaction within 30 s:\n{log}");
            thread::sleep(Duration::from_micros(200));
        }
        self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let last = log.lines().last().unwrap_or_default();
        assert!(last.contains(" begins "), "killed inside a transaction, its last line: {last}");
        log.lines().filter(|line| line.ends_with(" committed")).count()
    }

    /// SIGTERM: commits its batch and leaves the group.
    fn stop(mut self) -> String {
        Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        let status = self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        assert!(status.success(), "the worker stopped cleanly: {status}\n{log}");
        log
    }
}

/// The committed output, by session, once `lines` lines are there and no
/// more come for a while (a duplicate would come late).
fn committed_output(topic: &str, lines: usize, within: Duration) -> BTreeMap<String, Vec<String>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("group.id", unique("reader"))
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut list = TopicPartitionList::new();
    for partition in 0..PARTITIONS {
        list.add_partition_offset(topic, partition, Offset::Beginning).unwrap();
    }
    consumer.assign(&list).unwrap();
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
                // late), or 30 s with none at all (some were lost).
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
fn exactly_once(
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

struct Scenario {
    input: String,
    output: String,
    group: String,
    traffic: Vec<(String, Vec<Vec<u8>>)>,
    expected: BTreeMap<String, Vec<String>>,
}

impl Scenario {
    fn new(name: &str) -> Scenario {
        require_broker();
        let input = unique(&format!("{name}-in"));
        create_topic(&input);
        let traffic = traffic();
        let expected = expected(&traffic);
        Scenario { output: unique(&format!("{name}-out")), group: unique(name), input, traffic, expected }
    }

    fn worker(&self, name: &str) -> Worker {
        Worker::start(name, &self.input, &self.output, &self.group, false)
    }

    /// A worker that commits its offsets outside its transactions.
    fn broken_worker(&self, name: &str) -> Worker {
        Worker::start(name, &self.input, &self.output, &self.group, true)
    }

    fn produce_in_background(&self, over: Duration) -> thread::JoinHandle<()> {
        let (topic, traffic) = (self.input.clone(), self.traffic.clone());
        thread::spawn(move || produce(&topic, &traffic, over))
    }

    fn check(&self) {
        if let Err(difference) = self.exactly_once() {
            panic!("{difference}");
        }
    }

    fn exactly_once(&self) -> Result<(), String> {
        let lines = self.expected.values().map(Vec::len).sum();
        let actual = committed_output(&self.output, lines, Duration::from_secs(180));
        exactly_once(&actual, &self.expected)
    }
}

#[test]
fn a_worker_killed_mid_stream_loses_nothing_and_repeats_nothing() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("crash");
    let a = scenario.worker("a");
    let b = scenario.worker("b");
    let producing = scenario.produce_in_background(Duration::from_secs(12));
    thread::sleep(Duration::from_secs(6));
    // Mid-stream, while one of its transactions is open.
    let committed = a.kill_in_transaction();
    assert!(committed > 0, "the killed worker had committed transactions before");
    producing.join().unwrap();
    scenario.check();
    let log = b.stop();
    assert!(log.contains("stopped:"), "{log}");
}

/// The same crash with offsets committed outside the transaction: the check
/// above must see the output lost or repeated, or it proves nothing.
#[test]
fn offsets_committed_outside_the_transaction_are_caught_losing_output() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("broken");
    let a = scenario.broken_worker("a");
    let b = scenario.broken_worker("b");
    let producing = scenario.produce_in_background(Duration::from_secs(12));
    thread::sleep(Duration::from_secs(6));
    a.kill_in_transaction();
    producing.join().unwrap();
    let difference =
        scenario.exactly_once().expect_err("a worker that commits offsets outside its transaction loses output");
    eprintln!("the broken variant, as expected: {difference}");
    b.stop();
}

#[test]
fn a_worker_joining_and_leaving_loses_nothing_and_repeats_nothing() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("rebalance");
    let a = scenario.worker("a");
    let b = scenario.worker("b");
    let producing = scenario.produce_in_background(Duration::from_secs(15));
    thread::sleep(Duration::from_secs(4));
    let c = scenario.worker("c");
    thread::sleep(Duration::from_secs(5));
    c.stop();
    producing.join().unwrap();
    scenario.check();
    a.stop();
    b.stop();
}

#[test]
fn a_broker_restart_loses_nothing_and_repeats_nothing() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("restart");
    let a = scenario.worker("a");
    let producing = scenario.produce_in_background(Duration::from_secs(12));
    thread::sleep(Duration::from_secs(4));
    let restart = Command::new(repo().join("scripts/kafka-broker.sh")).arg("restart").output().unwrap();
    assert!(restart.status.success(), "the broker restarts: {}", String::from_utf8_lossy(&restart.stderr));
    producing.join().unwrap();
    scenario.check();
    a.stop();
}
