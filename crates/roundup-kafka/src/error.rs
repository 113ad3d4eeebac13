//! What stops a worker.

use rdkafka::error::KafkaError;

/// Why a worker stopped. Bad events never do: each is an anomaly in the
/// output, as in `roundup replay`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// Kafka refused something the worker cannot go on without.
    #[error("cannot {what} {object}")]
    Kafka {
        /// What the worker was doing.
        what: &'static str,
        /// On what.
        object: String,
        /// Kafka's error.
        #[source]
        source: KafkaError,
    },
    /// The topics do not fit together (a checkpoint topic partitioned
    /// unlike the input, no input topic).
    #[error("{0}")]
    Setup(String),
}

impl WorkerError {
    /// An error mapper for `map_err`: what failed, and on what.
    pub fn kafka<'a>(what: &'static str, object: &'a str) -> impl FnOnce(KafkaError) -> WorkerError + 'a {
        move |source| WorkerError::Kafka { what, object: object.to_owned(), source }
    }
}
