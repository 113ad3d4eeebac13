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

/// How long reading a partition's checkpoints may take before the worker
/// gives up (and stops, rather than go on without its state).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(120);

/// Reads every committed checkpoint of `partition` of `topic` into `into`,
/// the latest of each session winning. Committed only: a checkpoint of a
/// transaction that a killed worker left open is never read.
pub fn read(brokers: &str, topic: &str, partition: i32, into: &mut Partition) -> Result<usize, WorkerError> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        // Assigned by hand, never committed: the id is only required.
        .set("group.id", "roundup-kafka-restore")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("enable.partition.eof", "true")
        .create()
        .map_err(WorkerError::kafka("connect to", brokers))?;
    let (low, high) = consumer
        .fetch_watermarks(topic, partition, Duration::from_secs(10))
        .map_err(WorkerError::kafka("read the offsets of", topic))?;
    if low >= high {
        return Ok(0);
    }
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, partition, Offset::Beginning)
        .map_err(WorkerError::kafka("assign", topic))?;
    consumer.assign(&assignment).map_err(WorkerError::kafka("assign", topic))?;
    let deadline = Instant::now() + RESTORE_TIMEOUT;
    let mut read = 0;
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => return Ok(read),
            Some(Err(error)) => return Err(WorkerError::kafka("read", topic)(error)),
            Some(Ok(message)) => {
                let session = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
                into.saved(session, message.payload().map(<[u8]>::to_vec));
                read += 1;
            }
        }
    }
    Err(WorkerError::Setup(format!(
        "the checkpoints of partition {partition} of {topic} were not read within {} s",
        RESTORE_TIMEOUT.as_secs()
    )))
}
