//! Reading a partition's checkpoints back from the checkpoint topic, as
//! Kafka Streams restores a task's state from its changelog.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::error::WorkerError;
use crate::partition::Partition;
use crate::position;

/// How long reading a partition's checkpoints may take before the worker
/// gives up (and stops, rather than go on without its state).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(120);

/// What a restore read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Records read: checkpoints, tombstones and positions.
    pub records: usize,
    /// The end of what was readable came before the committed offset's
    /// position, and the read waited for it.
    pub waited: bool,
}

/// Reads every committed checkpoint of `partition` of `topic` into `into`,
/// the latest of each session winning. Committed only: a checkpoint of a
/// transaction that a killed worker left open is never read.
///
/// With `until` (the partition's committed input offset), reading goes on
/// past the end of what is readable until the partition's position record
/// says that offset (see [`position`]): the state restored is then the one
/// the offset was committed with.
pub fn read(
    brokers: &str,
    topic: &str,
    partition: i32,
    until: Option<i64>,
    into: &mut Partition,
) -> Result<Restored, WorkerError> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        // Assigned by hand, never committed: the id is only required.
        .set("group.id", "roundup-kafka-restore")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("enable.partition.eof", "true")
        .create()
        .map_err(WorkerError::kafka("connect to", brokers))?;
    if until.is_none() {
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, Duration::from_secs(10))
            .map_err(WorkerError::kafka("read the offsets of", topic))?;
        if low >= high {
            return Ok(Restored::default());
        }
    }
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, partition, Offset::Beginning)
        .map_err(WorkerError::kafka("assign", topic))?;
    consumer.assign(&assignment).map_err(WorkerError::kafka("assign", topic))?;
    let deadline = Instant::now() + RESTORE_TIMEOUT;
    let mut read = Restored::default();
    let mut reached = None;
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => match (until, reached) {
                (None, _) => return Ok(read),
                (Some(until), Some(reached)) if reached == until => return Ok(read),
                (Some(until), Some(reached)) if reached > until => {
                    return Err(WorkerError::Setup(format!(
                        "the checkpoints of partition {partition} of {topic} reach input offset {reached}, past the committed offset {until}: does another consumer group write them?"
                    )));
                }
                // Committed, but not yet readable here: its markers come.
                _ => read.waited = true,
            },
            Some(Err(error)) => return Err(WorkerError::kafka("read", topic)(error)),
            Some(Ok(message)) => {
                let key = message.key().unwrap_or_default();
                if key == position::KEY {
                    let value = message.payload().unwrap_or_default();
                    let Some(offset) = position::decode(value) else {
                        return Err(WorkerError::Setup(format!(
                            "the position record at offset {} of partition {partition} of {topic} holds no input offset: {:?}",
                            message.offset(),
                            String::from_utf8_lossy(value)
                        )));
                    };
                    reached = Some(offset);
                } else {
                    let session = String::from_utf8_lossy(key).into_owned();
                    into.saved(session, message.payload().map(<[u8]>::to_vec));
                }
                read.records += 1;
            }
        }
    }
    let reached = match reached {
        Some(offset) => format!("input offset {offset}"),
        None => "no input offset".to_owned(),
    };
    let wanted = match until {
        Some(offset) => format!(", and the committed offset is {offset}"),
        None => String::new(),
    };
    Err(WorkerError::Setup(format!(
        "the checkpoints of partition {partition} of {topic} were not read within {} s: they reach {reached}{wanted}",
        RESTORE_TIMEOUT.as_secs()
    )))
}

/// Against the broker at `$ROUNDUP_KAFKA_BROKERS`, as the worker's tests.
#[cfg(test)]
mod tests {
    use std::thread;

    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use roundup::ReplayOptions;
    use roundup_testkit::kafka::{brokers, create_topic, require_broker, unique};

    use super::*;

    /// A transaction left open on partition 0 of a new topic, holding one
    /// session's checkpoint and the position `offset`.
    fn open_transaction(topic: &str, offset: i64) -> BaseProducer {
        let producer: BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", brokers())
            .set("transactional.id", unique("restore-test"))
            .create()
            .unwrap();
        producer.init_transactions(Duration::from_secs(30)).unwrap();
        producer.begin_transaction().unwrap();
        let checkpoint = BaseRecord::<str, [u8]>::to(topic).key("session-1").payload(b"{}").partition(0);
        producer.send(checkpoint).map_err(|(e, _)| e).unwrap();
        let value = position::encode(offset);
        let record = BaseRecord::<[u8], Vec<u8>>::to(topic).key(position::KEY).payload(&value).partition(0);
        producer.send(record).map_err(|(e, _)| e).unwrap();
        producer.flush(Duration::from_secs(30)).unwrap();
        producer
    }

    fn partition() -> Partition {
        Partition::new(ReplayOptions::new(), false)
    }

    #[test]
    fn a_restore_waits_for_the_checkpoints_of_the_committed_offset() {
        require_broker();
        let topic = unique("restore-waits");
        create_topic(&topic);
        let producer = open_transaction(&topic, 7);
        // What a restore stopping at the end of what is readable sees: the
        // open transaction's checkpoint is not there yet.
        let mut early = partition();
        assert_eq!(read(&brokers(), &topic, 0, None, &mut early).unwrap(), Restored::default());
        assert_eq!(early.sessions(), 0);
        let committing = thread::spawn(move || {
            thread::sleep(Duration::from_secs(2));
            producer.commit_transaction(Duration::from_secs(30)).unwrap();
        });
        // Told the committed offset is 7, it reads until the position says so.
        let mut state = partition();
        assert_eq!(read(&brokers(), &topic, 0, Some(7), &mut state).unwrap(), Restored { records: 2, waited: true });
        assert_eq!(state.sessions(), 1);
        committing.join().unwrap();
    }

    #[test]
    fn checkpoints_past_the_committed_offset_are_refused() {
        require_broker();
        let topic = unique("restore-ahead");
        create_topic(&topic);
        open_transaction(&topic, 7).commit_transaction(Duration::from_secs(30)).unwrap();
        let error = read(&brokers(), &topic, 0, Some(5), &mut partition()).unwrap_err().to_string();
        assert!(error.contains("reach input offset 7, past the committed offset 5"), "{error}");
    }

    #[test]
    fn a_position_record_holding_no_offset_is_an_error_naming_where() {
        require_broker();
        let topic = unique("restore-bad-position");
        create_topic(&topic);
        let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", brokers()).create().unwrap();
        let record = BaseRecord::<[u8], [u8]>::to(&topic).key(position::KEY).payload(b"seven").partition(0);
        producer.send(record).map_err(|(e, _)| e).unwrap();
        producer.flush(Duration::from_secs(30)).unwrap();
        let error = read(&brokers(), &topic, 0, Some(7), &mut partition()).unwrap_err().to_string();
        assert!(error.contains("at offset 0 of partition 0") && error.contains("\"seven\""), "{error}");
    }
}
