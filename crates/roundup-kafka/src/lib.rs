//! roundup scaled out on Apache Kafka.
//!
//! A topic of native agent events (any input format of roundup's registry,
//! one event per record, the key a session) is read by a consumer group of
//! workers. Each session is aggregated by roundup's core, as `roundup
//! replay` would aggregate that session's events, and the SPEC §4 lines go
//! to an output topic. Every batch is one Kafka transaction: its output,
//! the checkpoints of the sessions it touched and the input offsets commit
//! together or not at all, so a worker killed at any point loses nothing
//! and repeats nothing: the worker that takes its partitions over restores
//! their sessions from the checkpoint topic (compacted, keyed by session,
//! co-partitioned with the input) and reads on from the committed offsets.
//!
//! A record with no value (a tombstone) ends its session's stream: its
//! open runs finish (`interrupted`, with their summaries), as at the end of
//! a replayed file, and its checkpoint is deleted.
//!
//! The pure part, [`Partition`], is the sessions of one partition: events
//! in, output lines and checkpoints out; [`Worker`] adds the consumer, the
//! transactional producer and the rebalances.

mod error;
mod partition;
mod position;
mod restore;
mod topics;
mod worker;

pub use error::WorkerError;
pub use partition::{Made, Partition};
pub use worker::{Config, Stats, Worker};
