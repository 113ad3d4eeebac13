//! The topics a worker needs: the input (which must exist), the output, and
//! the checkpoint topic, compacted and co-partitioned with the input.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::RDKafkaErrorCode;

use crate::error::WorkerError;

const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// The partitions of `topic`, `None` when it does not exist.
pub fn partitions(
    consumer: &BaseConsumer<impl rdkafka::consumer::ConsumerContext>,
    topic: &str,
) -> Result<Option<i32>, WorkerError> {
    let metadata = consumer
        .fetch_metadata(Some(topic), METADATA_TIMEOUT)
        .map_err(WorkerError::kafka("read the metadata of", topic))?;
    Ok(metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .map(|t| t.partitions().len() as i32)
        .filter(|&n| n > 0))
}

/// Creates `topic` with `partitions` (compacted when `compact`), unless it
/// exists; a topic created meanwhile by another worker is fine.
pub fn create(brokers: &str, topic: &str, partitions: i32, compact: bool) -> Result<(), WorkerError> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .map_err(WorkerError::kafka("connect to", brokers))?;
    let mut new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
    if compact {
        new = new.set("cleanup.policy", "compact");
    }
    let options = AdminOptions::new().operation_timeout(Some(METADATA_TIMEOUT));
    let results = block_on(admin.create_topics([&new], &options)).map_err(WorkerError::kafka("create", topic))?;
    for result in results {
        match result {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => {
                return Err(WorkerError::Setup(format!("cannot create topic {name}: {code}")));
            }
        }
    }
    Ok(())
}

/// Runs a future to its end on this thread: the admin client's futures are
/// completed by its own thread, and need no runtime.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => thread::park_timeout(Duration::from_millis(100)),
        }
    }
}
