//! Exactly once on a real Kafka broker: 200 sessions of recorded agent
//! traffic in eight formats go through workers that are killed, joined,
//! stopped, and whose broker restarts; the committed output must equal,
//! line for line per session, what `roundup replay` prints for each
//! session's events.
//!
//! The broker is at `$ROUNDUP_KAFKA_BROKERS` (default `127.0.0.1:9092`):
//! `scripts/kafka-broker.sh start` starts one. Without one these tests
//! fail, they do not skip.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use roundup_testkit::kafka::{
    committed_output, consumed, create_topic, exactly_once, expected, expected_as, expected_without, input_index,
    produce, require_broker, traffic, unique, Batch, Worker,
};

/// One scenario at a time: they share the broker, and one restarts it.
static BROKER: Mutex<()> = Mutex::new(());

const SESSIONS: usize = 200;
const WORKER: &str = env!("CARGO_BIN_EXE_roundup-kafka");

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
        let traffic = traffic(SESSIONS);
        let expected = expected(&traffic);
        Scenario { output: unique(&format!("{name}-out")), group: unique(name), input, traffic, expected }
    }

    fn worker(&self, name: &str) -> Worker {
        Worker::start(WORKER, name, &self.input, &self.output, &self.group, false)
    }

    /// A worker that commits its offsets outside its transactions.
    fn broken_worker(&self, name: &str) -> Worker {
        Worker::start(WORKER, name, &self.input, &self.output, &self.group, true)
    }

    fn produce_in_background(&self, over: Duration) -> thread::JoinHandle<()> {
        let (topic, traffic) = (self.input.clone(), self.traffic.clone());
        thread::spawn(move || produce(&topic, &traffic, over, |_| {}))
    }

    /// Panics with what differs and the end of each worker's log.
    fn check(&self, workers: &[&Worker]) {
        if let Err(difference) = self.exactly_once() {
            let logs: String = workers.iter().map(|worker| worker.log_tail(60)).collect();
            panic!("{difference}\n{logs}");
        }
    }

    fn exactly_once(&self) -> Result<(), String> {
        let lines = self.expected.values().map(Vec::len).sum();
        exactly_once(&self.output(lines)?, &self.expected)
    }

    /// The committed output, once the group has consumed the input and
    /// `lines` lines are there.
    fn output(&self, lines: usize) -> Result<BTreeMap<String, Vec<String>>, String> {
        // Recovering from a broker restart may take the workers a while.
        consumed(&self.input, &self.group, Duration::from_secs(240))?;
        Ok(committed_output(&self.output, lines, Duration::from_secs(180)))
    }

    /// The events (session, index) of a transaction's input records, if
    /// losing them shows in the output: many events alone change nothing
    /// (a keep-alive, an empty delta).
    fn visible_loss(&self, batch: &Batch) -> Option<BTreeSet<(String, usize)>> {
        let index = input_index(&self.input);
        let records = batch.iter().flat_map(|&(partition, first, last)| (first..=last).map(move |o| (partition, o)));
        let events: BTreeSet<(String, usize)> = records.map(|at| index.get(&at).cloned()).collect::<Option<_>>()?;
        let without = expected_without(&self.traffic, &events);
        without.iter().any(|(session, lines)| self.expected[session] != *lines).then_some(events)
    }
}

#[test]
fn a_worker_killed_mid_stream_loses_nothing_and_repeats_nothing() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("crash");
    // These two also write the UI events, which must be exact too.
    let ui = unique("crash-ui");
    let options =
        ["--input", &scenario.input, "--output", &scenario.output, "--group", &scenario.group, "--ui-topic", &ui];
    let a = Worker::start_with(WORKER, "a", &options, false);
    let b = Worker::start_with(WORKER, "b", &options, false);
    let producing = scenario.produce_in_background(Duration::from_secs(12));
    thread::sleep(Duration::from_secs(6));
    // Mid-stream, while one of its transactions is open.
    let committed = a.kill_in_transaction();
    assert!(committed > 0, "the killed worker had committed transactions before");
    producing.join().unwrap();
    scenario.check(&[&b]);
    let expected_ui = expected_as(&scenario.traffic, "ui");
    let ui_lines = expected_ui.values().map(Vec::len).sum();
    if let Err(difference) = exactly_once(&committed_output(&ui, ui_lines, Duration::from_secs(120)), &expected_ui) {
        panic!("the UI events: {difference}");
    }
    let log = b.stop();
    assert!(log.contains("stopped:"), "{log}");
}

/// The same crash with offsets committed outside the transaction: the check
/// above must see the output lost or repeated, or it proves nothing. The
/// worker is killed in a transaction whose loss shows in the output, and
/// the output must then lack exactly that transaction's events.
#[test]
fn offsets_committed_outside_the_transaction_are_caught_losing_output() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("broken");
    let a = scenario.broken_worker("a");
    let b = scenario.broken_worker("b");
    let producing = scenario.produce_in_background(Duration::from_secs(12));
    thread::sleep(Duration::from_secs(6));
    let mut lost = BTreeSet::new();
    a.kill_in_transaction_where(|batch| match scenario.visible_loss(batch) {
        Some(events) => {
            lost = events;
            true
        }
        None => false,
    });
    producing.join().unwrap();
    let mut lossy = scenario.expected.clone();
    lossy.extend(expected_without(&scenario.traffic, &lost));
    let actual = scenario.output(lossy.values().map(Vec::len).sum()).unwrap();
    let difference = exactly_once(&actual, &scenario.expected)
        .expect_err("a worker that commits offsets outside its transaction loses output");
    eprintln!("the broken variant, as expected: {difference} ({} events lost)", lost.len());
    let log = b.stop();
    // The survivor commits its offsets outside its transactions too: one of
    // them aborted would lose its events as well.
    if !log.contains("batch aborted") {
        if let Err(difference) = exactly_once(&actual, &lossy) {
            panic!(
                "the broken variant lost more than the {} events of the transaction it was killed in: {difference}",
                lost.len()
            );
        }
    }
}

/// A worker frozen inside a transaction past its session timeout (a long
/// GC pause, a stopped VM) wakes up as a zombie: its partitions are
/// another's, its transaction was aborted. It must be fenced, abort, and
/// rejoin from the committed state.
#[test]
fn a_zombie_worker_waking_up_mid_transaction_is_fenced() {
    let _one = BROKER.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::new("zombie");
    let mut a = scenario.worker("a");
    let b = scenario.worker("b");
    let producing = scenario.produce_in_background(Duration::from_secs(20));
    thread::sleep(Duration::from_secs(5));
    a.pause_in_transaction(Duration::from_secs(14));
    producing.join().unwrap();
    scenario.check(&[&a, &b]);
    let log = a.log();
    assert!(log.contains("batch aborted"), "the zombie's transaction was refused:\n{log}");
    a.stop();
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
    scenario.check(&[&a, &b]);
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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka-broker.sh");
    let restart = Command::new(script).arg("restart").output().unwrap();
    assert!(restart.status.success(), "the broker restarts: {}", String::from_utf8_lossy(&restart.stderr));
    producing.join().unwrap();
    scenario.check(&[&a]);
    a.stop();
}
