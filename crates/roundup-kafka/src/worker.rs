//! The worker: a consumer-group member whose every batch is one Kafka
//! transaction.
//!
//! Each batch commits together, or not at all:
//! - the output lines it made (key: the session);
//! - the checkpoints of the sessions it touched (the checkpoint topic,
//!   compacted, keyed by session, written to the partition of the same
//!   number as the input's, so that a partition's state is one partition
//!   to read back), and for each input partition the position its
//!   checkpoints reach (see [`position`](crate::position));
//! - the input offsets after it (`send_offsets_to_transaction`, which
//!   also fences a worker that lost its partitions).
//!
//! A worker that takes a partition over reads its committed offsets
//! (waiting for a dead worker's open transaction to be aborted), then the
//! partition's checkpoints up to the position of those offsets, and reads
//! on from there. Nothing committed is lost and nothing is output twice.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use roundup::adapters::InputFormat;
use roundup::ReplayOptions;

use crate::error::WorkerError;
use crate::partition::Partition;
use crate::{position, restore, topics};

/// How long a transaction's calls may take before the batch is aborted.
const TXN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a worker tries to take its partitions again after a failure
/// before it stops.
const RECOVERY_TIME: Duration = Duration::from_secs(60);
/// Recovery attempts made even when they outlast [`RECOVERY_TIME`].
const MIN_RECOVERY_ATTEMPTS: u32 = 4;

/// What a worker reads and writes.
#[derive(Debug, Clone)]
pub struct Config {
    /// `bootstrap.servers`.
    pub brokers: String,
    /// The consumer group the workers share.
    pub group: String,
    /// Native events, one per record, key = session.
    pub input: String,
    /// SPEC §4 lines, key = session.
    pub output: String,
    /// The live UI events (`roundup replay --emit ui` lines), key =
    /// session, when set.
    pub ui: Option<String>,
    /// Checkpoints, key = session: `{input}.roundup-checkpoints` by default.
    pub checkpoints: String,
    /// The input format; `None` detects it per session.
    pub from: Option<&'static InputFormat>,
    /// This worker's transactional id: unique among live workers.
    pub transactional_id: String,
    /// At most this many records per transaction.
    pub batch_records: usize,
    /// A transaction gathers records for at most this long.
    pub batch_time: Duration,
    /// Says on stderr when each transaction begins and commits.
    pub trace: bool,
    /// **Broken on purpose**: commits the input offsets with the consumer,
    /// outside the transaction, as a worker without exactly-once would. The
    /// tests run it to show that their check catches what this loses.
    pub offsets_outside_transaction: bool,
}

/// Counts of a worker's run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Input records applied in committed transactions.
    pub events: u64,
    /// Output lines committed.
    pub lines: u64,
    /// Records committed to the checkpoint topic: the sessions'
    /// checkpoints, and one position per input partition per transaction.
    pub checkpoints: u64,
    /// The bytes of those checkpoints.
    pub checkpoint_bytes: u64,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions aborted (and their batches read again).
    pub aborted: u64,
}

/// Partition changes the rebalance callbacks saw, for the loop to apply.
#[derive(Default)]
struct Changes {
    assigned: BTreeSet<i32>,
    revoked: BTreeSet<i32>,
}

struct Context {
    input: String,
    changes: Mutex<Changes>,
}

impl ClientContext for Context {}

impl ConsumerContext for Context {
    fn pre_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            let mut changes = self.changes.lock().unwrap_or_else(|e| e.into_inner());
            for element in list.elements_for_topic(&self.input) {
                changes.revoked.insert(element.partition());
                changes.assigned.remove(&element.partition());
            }
        }
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            let mut changes = self.changes.lock().unwrap_or_else(|e| e.into_inner());
            for element in list.elements_for_topic(&self.input) {
                changes.assigned.insert(element.partition());
            }
        }
    }
}

/// Why a batch's transaction was aborted.
#[derive(Debug)]
enum Abort {
    Kafka(KafkaError),
    /// A record of a partition the worker has no state for.
    Unassigned(i32),
    /// The consumer is in no group (it has not joined yet).
    NoGroup,
}

impl std::fmt::Display for Abort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Abort::Kafka(error) => write!(f, "{error}"),
            Abort::Unassigned(partition) => {
                write!(f, "a record of partition {partition}, which this worker has no state for")
            }
            Abort::NoGroup => f.write_str("the consumer is in no group"),
        }
    }
}

/// What the producer needs before a worker reads on from the committed
/// state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mend {
    /// No transaction is open.
    Nothing,
    /// Abort the open transaction (or, if that fails, make a new producer).
    AbortTransaction,
    /// The producer cannot go on: a new one.
    NewProducer,
}

/// One input record, owned: a batch outlives the poll that read it.
struct Event {
    partition: i32,
    offset: i64,
    session: String,
    payload: Option<Vec<u8>>,
}

/// A running worker.
pub struct Worker {
    config: Config,
    consumer: BaseConsumer<Context>,
    producer: BaseProducer,
    partitions: HashMap<i32, Partition>,
    stats: Stats,
}

impl Worker {
    /// Connects, joins the group, and makes the checkpoint topic if it is
    /// missing (compacted, partitioned as the input).
    pub fn new(config: Config) -> Result<Worker, WorkerError> {
        let context = Context { input: config.input.clone(), changes: Mutex::new(Changes::default()) };
        let consumer: BaseConsumer<Context> = ClientConfig::new()
            .set("bootstrap.servers", &config.brokers)
            .set("group.id", &config.group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("isolation.level", "read_committed")
            .set("auto.offset.reset", "earliest")
            // A killed member leaves the group after 6 s (the broker's minimum).
            .set("session.timeout.ms", "6000")
            .set("heartbeat.interval.ms", "1000")
            .create_with_context(context)
            .map_err(WorkerError::kafka("connect to", &config.brokers))?;
        let Some(partitions) = topics::partitions(&consumer, &config.input)? else {
            return Err(WorkerError::Setup(format!("the input topic {} does not exist", config.input)));
        };
        match topics::partitions(&consumer, &config.checkpoints)? {
            None => topics::create(&config.brokers, &config.checkpoints, partitions, true)?,
            Some(n) if n != partitions => {
                return Err(WorkerError::Setup(format!(
                    "the checkpoint topic {} has {n} partitions and the input {} has {partitions}: they must match",
                    config.checkpoints, config.input
                )));
            }
            Some(_) => {}
        }
        for topic in std::iter::once(&config.output).chain(config.ui.as_ref()) {
            if topics::partitions(&consumer, topic)?.is_none() {
                topics::create(&config.brokers, topic, partitions, false)?;
            }
        }
        let producer = new_producer(&config)?;
        consumer.subscribe(&[&config.input]).map_err(WorkerError::kafka("subscribe to", &config.input))?;
        Ok(Worker { config, consumer, producer, partitions: HashMap::new(), stats: Stats::default() })
    }

    /// Runs until `stop` is set; the last batch is committed first.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<Stats, WorkerError> {
        while !stop.load(Ordering::Relaxed) {
            let batch = match self.gather() {
                Ok(batch) => batch,
                Err(error) => {
                    // A partition assigned meanwhile could not be taken (the
                    // broker away, say): no transaction is open, and what
                    // was read is read again.
                    eprintln!(
                        "roundup-kafka: taking a partition failed, reading again from the committed state: {error}"
                    );
                    self.recover(Mend::Nothing)?;
                    continue;
                }
            };
            if batch.is_empty() {
                continue;
            }
            match self.transaction(&batch).map_err(Abort::Kafka).and_then(|r| r) {
                Ok(()) => self.stats.committed += 1,
                Err(error) => {
                    eprintln!("roundup-kafka: batch aborted, reading again from the committed state: {error}");
                    self.stats.aborted += 1;
                    let fatal = matches!(&error, Abort::Kafka(KafkaError::Transaction(e)) if e.is_fatal());
                    self.recover(if fatal { Mend::NewProducer } else { Mend::AbortTransaction })?;
                }
            }
        }
        Ok(self.stats.clone())
    }

    /// Reads up to a batch of records, applying partition changes as they
    /// come: records of a partition revoked meanwhile are dropped (its new
    /// owner reads them from the committed offset).
    fn gather(&mut self) -> Result<Vec<Event>, WorkerError> {
        let mut batch = Vec::new();
        let deadline = Instant::now() + self.config.batch_time;
        while batch.len() < self.config.batch_records {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.consumer.poll(left) {
                None => break,
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(error)) => eprintln!("roundup-kafka: {error}"),
                Some(Ok(message)) => batch.push(Event {
                    partition: message.partition(),
                    offset: message.offset(),
                    session: String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned(),
                    payload: message.payload().map(<[u8]>::to_vec),
                }),
            }
            self.apply_changes(&mut batch)?;
        }
        self.apply_changes(&mut batch)?;
        Ok(batch)
    }

    fn apply_changes(&mut self, batch: &mut Vec<Event>) -> Result<(), WorkerError> {
        let changes = std::mem::take(&mut *self.consumer.context().changes.lock().unwrap_or_else(|e| e.into_inner()));
        if !changes.revoked.is_empty() {
            batch.retain(|event| !changes.revoked.contains(&event.partition));
            for partition in &changes.revoked {
                self.partitions.remove(partition);
            }
        }
        let changed = !changes.revoked.is_empty() || !changes.assigned.is_empty();
        for partition in changes.assigned {
            self.restore(partition, false)?;
        }
        if changed && self.config.trace {
            let mut held: Vec<i32> = self.partitions.keys().copied().collect();
            held.sort_unstable();
            eprintln!("roundup-kafka: partitions {held:?}");
        }
        Ok(())
    }

    /// Takes a partition: its committed offset first (which waits for a
    /// dead owner's open transaction to end), then its checkpoints. With
    /// `rewind`, the consumer goes back to the committed offset (after an
    /// aborted batch, it is ahead of it); a new assignment starts there by
    /// itself.
    fn restore(&mut self, partition: i32, rewind: bool) -> Result<(), WorkerError> {
        let mut list = TopicPartitionList::new();
        list.add_partition(&self.config.input, partition);
        let committed = self
            .consumer
            .committed_offsets(list, Duration::from_secs(60))
            .map_err(WorkerError::kafka("read the committed offsets of", &self.config.input))?;
        let committed = match committed.find_partition(&self.config.input, partition).map(|e| e.offset()) {
            Some(Offset::Offset(offset)) => Some(offset),
            // Nothing committed yet: from the start, as auto.offset.reset says.
            _ => None,
        };
        // The broken variant's offsets run ahead of its transactions: no
        // position would ever reach them.
        let until = committed.filter(|_| !self.config.offsets_outside_transaction);
        let mut state = Partition::new(self.replay_options(), self.config.ui.is_some());
        let restored = restore::read(&self.config.brokers, &self.config.checkpoints, partition, until, &mut state)?;
        if self.config.trace {
            let waited = if restored.waited { ", after waiting for the last commit's markers" } else { "" };
            eprintln!("roundup-kafka: partition {partition} restored from {} records{waited}", restored.records);
        }
        self.partitions.insert(partition, state);
        if rewind {
            let offset = committed.map_or(Offset::Beginning, Offset::Offset);
            self.consumer
                .seek(&self.config.input, partition, offset, Duration::from_secs(10))
                .map_err(WorkerError::kafka("go back to the committed offset of", &self.config.input))?;
        }
        Ok(())
    }

    fn replay_options(&self) -> ReplayOptions {
        match self.config.from {
            Some(format) => ReplayOptions::new().from(format),
            None => ReplayOptions::new(),
        }
    }

    /// One batch as one transaction.
    fn transaction(&mut self, batch: &[Event]) -> Result<Result<(), Abort>, KafkaError> {
        let began = Instant::now();
        self.producer.begin_transaction()?;
        let number = self.stats.committed + self.stats.aborted + 1;
        let mut offsets = TopicPartitionList::new();
        let mut next: BTreeMap<i32, i64> = BTreeMap::new();
        for event in batch {
            next.insert(event.partition, event.offset + 1);
        }
        for (&partition, &offset) in &next {
            offsets.add_partition_offset(&self.config.input, partition, Offset::Offset(offset))?;
        }
        if self.config.offsets_outside_transaction {
            self.consumer.commit(&offsets, CommitMode::Sync)?;
        }
        if self.config.trace {
            // Which input records the transaction holds: what a test that
            // kills the worker here knows it lost, if offsets were committed
            // outside it.
            let mut first: BTreeMap<i32, i64> = BTreeMap::new();
            for event in batch {
                first.entry(event.partition).or_insert(event.offset);
            }
            let ranges: Vec<String> =
                first.iter().map(|(partition, first)| format!("{partition}:{first}-{}", next[partition] - 1)).collect();
            eprintln!(
                "roundup-kafka: transaction {number} begins ({} records; offsets {})",
                batch.len(),
                ranges.join(" ")
            );
        }
        let mut lines = 0;
        for event in batch {
            let Some(partition) = self.partitions.get_mut(&event.partition) else {
                return Ok(Err(Abort::Unassigned(event.partition)));
            };
            let made = partition.event(&event.session, event.payload.as_deref());
            for line in &made.lines {
                send(&self.producer, BaseRecord::to(&self.config.output).key(&event.session).payload(line))?;
            }
            lines += made.lines.len() as u64;
            if let Some(ui) = &self.config.ui {
                for line in &made.ui_lines {
                    send(&self.producer, BaseRecord::to(ui).key(&event.session).payload(line))?;
                }
            }
        }
        let (mut checkpoints, mut checkpoint_bytes) = (0, 0);
        for (&number, partition) in &mut self.partitions {
            for (session, checkpoint) in partition.take_checkpoints() {
                let record =
                    BaseRecord::<String, Vec<u8>>::to(&self.config.checkpoints).key(&session).partition(number);
                let record = match &checkpoint {
                    Some(bytes) => {
                        checkpoint_bytes += bytes.len() as u64;
                        record.payload(bytes)
                    }
                    None => record,
                };
                send(&self.producer, record)?;
                checkpoints += 1;
            }
        }
        for (&partition, &offset) in &next {
            let value = position::encode(offset);
            checkpoint_bytes += value.len() as u64;
            let record = BaseRecord::<[u8], Vec<u8>>::to(&self.config.checkpoints)
                .key(position::KEY)
                .payload(&value)
                .partition(partition);
            send(&self.producer, record)?;
            checkpoints += 1;
        }
        let applied = began.elapsed();
        if !self.config.offsets_outside_transaction {
            let Some(group) = self.consumer.group_metadata() else {
                return Ok(Err(Abort::NoGroup));
            };
            self.producer.send_offsets_to_transaction(&offsets, &group, TXN_TIMEOUT)?;
        }
        let offsets_sent = began.elapsed();
        flush(&self.producer)?;
        self.producer.commit_transaction(TXN_TIMEOUT)?;
        if self.config.trace {
            let (offsets, committed) =
                ((offsets_sent - applied).as_millis(), (began.elapsed() - offsets_sent).as_millis());
            let applied = applied.as_millis();
            eprintln!("roundup-kafka: transaction {number} committed (applied and sent in {applied} ms, offsets in {offsets} ms, committed in {committed} ms)");
        }
        self.stats.events += batch.len() as u64;
        self.stats.lines += lines;
        self.stats.checkpoints += checkpoints;
        self.stats.checkpoint_bytes += checkpoint_bytes;
        Ok(Ok(()))
    }

    /// After a failed transaction or a partition that could not be taken:
    /// mend the producer, then take every assigned partition again from its
    /// committed state.
    ///
    /// The broker may be away (a restart): this is tried again for a
    /// minute before the worker gives up and stops, which is safe: its
    /// partitions go to another worker, from the committed state. The
    /// minute bounds the whole recovery, not each try: a try that itself
    /// took long (a restore waiting out its timeout) is not made again.
    fn recover(&mut self, mut mend: Mend) -> Result<(), WorkerError> {
        let deadline = Instant::now() + RECOVERY_TIME;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.try_recover(mend) {
                Ok(()) => return Ok(()),
                // A broker that is coming back can take one attempt's
                // whole timeouts (the abort's and the offsets' reads): a
                // few attempts are made whatever the clock says.
                Err(error) if attempts < MIN_RECOVERY_ATTEMPTS || Instant::now() < deadline => {
                    eprintln!("roundup-kafka: recovering, trying again in 2 s: {error}");
                    std::thread::sleep(Duration::from_secs(2));
                    // Whatever state the producer was left in, a new one
                    // is sure to be ready (an idle producer stays as it is).
                    if mend != Mend::Nothing {
                        mend = Mend::NewProducer;
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn try_recover(&mut self, mend: Mend) -> Result<(), WorkerError> {
        let replace = match mend {
            Mend::Nothing => false,
            Mend::AbortTransaction => self.producer.abort_transaction(TXN_TIMEOUT).is_err(),
            Mend::NewProducer => true,
        };
        if replace {
            self.producer = new_producer(&self.config)?;
        }
        self.partitions.clear();
        let assignment =
            self.consumer.assignment().map_err(WorkerError::kafka("read the assignment of", &self.config.group))?;
        let assigned: Vec<i32> =
            assignment.elements_for_topic(&self.config.input).iter().map(|e| e.partition()).collect();
        for partition in assigned {
            self.restore(partition, true)?;
        }
        Ok(())
    }
}

fn new_producer(config: &Config) -> Result<BaseProducer, WorkerError> {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &config.brokers)
        .set("transactional.id", &config.transactional_id)
        // A killed worker's open transaction is aborted after this.
        .set("transaction.timeout.ms", "10000")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        // A transaction that begins while the broker still writes the
        // previous one's markers is told to retry (CONCURRENT_TRANSACTIONS):
        // with the default backoff of 100 ms, that wait bounded every
        // commit at about 100 ms.
        .set("retry.backoff.ms", "5")
        .create()
        .map_err(WorkerError::kafka("connect to", &config.brokers))?;
    producer
        .init_transactions(Duration::from_secs(60))
        .map_err(WorkerError::kafka("begin the transactions of", &config.transactional_id))?;
    Ok(producer)
}

/// Waits until every record sent is delivered, serving delivery reports as
/// they come. `commit_transaction` flushes too, but rdkafka's flush polls
/// for 100 ms at a time whatever arrives, which bounded every transaction
/// at 100 ms; after this, its flush finds nothing left and returns at once.
/// A zero-timeout poll serves what has arrived without spinning (a short
/// timeout rounds down to zero inside rdkafka's poll loop and spins on the
/// clock until it ends), and the thread sleeps in between.
fn flush(producer: &BaseProducer) -> Result<(), KafkaError> {
    let deadline = Instant::now() + TXN_TIMEOUT;
    loop {
        producer.poll(Duration::ZERO);
        if producer.in_flight_count() == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut));
        }
        std::thread::sleep(Duration::from_micros(250));
    }
}

/// Sends a record, waiting for room in the producer's queue.
fn send<K: rdkafka::message::ToBytes + ?Sized, P: rdkafka::message::ToBytes + ?Sized>(
    producer: &BaseProducer,
    mut record: BaseRecord<'_, K, P>,
) -> Result<(), KafkaError> {
    loop {
        match producer.send(record) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                producer.poll(Duration::from_millis(50));
                record = back;
            }
            Err((error, _)) => return Err(error),
        }
    }
}
