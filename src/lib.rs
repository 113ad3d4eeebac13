//! roundup turns the chunk-level event stream of an AI agent run into
//! **rounds**: one assistant turn with its reasoning, its tool calls, their
//! final arguments and exactly one result per call.
//!
//! Agents stream their work in fragments (text and reasoning deltas, tool
//! calls whose arguments arrive as deltas or snapshots, tool results, token
//! gauges), and upstreams misbehave: results arrive late, twice, or for calls
//! never declared; text arrives before a tool finished; runs are canceled
//! mid-tool. roundup applies one set of rules to all of it (the contract is
//! `SPEC.md`), stays correct, loses nothing, and reports what it saw as
//! [`Anomaly`] records.
//!
//! # Architecture
//!
//! - [`StreamHandler`]: the input contract that protocol adapters call.
//! - [`RoundMachine`]: the rules, as a pure state machine (a [`Call`] and a
//!   clock reading in, [`Outputs`] out; no lock, clock, callback or I/O).
//! - [`RoundBuilder`]: the machine behind a lock, with an injectable
//!   [`Clock`], delivering closed rounds to a [`RoundSink`] and live
//!   [`UiEvent`]s to a [`UiHandler`], in order and never under the lock.
//! - [`Recorder`] and [`replay_ops`]: capture any stream as ops JSONL and
//!   replay it; the `roundup` command line is a thin layer over these.
//!
//! # Example
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use roundup::{FinishReason, RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus, ToolResult};
//!
//! let persisted = Arc::new(Mutex::new(Vec::new()));
//! let store = Arc::clone(&persisted);
//! let builder = RoundBuilder::new().with_sink(move |record: SinkRecord<'_>| {
//!     if let SinkRecord::Round(round) = record {
//!         store.lock().unwrap().push(round.clone());
//!     }
//! });
//!
//! builder.message("Let me look.");
//! builder.tool_call("t1", "bash");
//! builder.tool_update("t1", r#"{"cmd":"ls"}"#, ToolCallStatus::InProgress);
//! builder.tool_call("t2", "read");
//! builder.tool_update("t2", "fn main() {}", ToolCallStatus::Completed);
//! // t1 never answers: new text closes the round and t1 gets a placeholder.
//! builder.message("Here is what I found.");
//! // ...until its result arrives late, and is stitched into the round.
//! builder.tool_update("t1", "a.txt", ToolCallStatus::Completed);
//! builder.finish(FinishReason::Interrupted);
//!
//! let persisted = persisted.lock().unwrap();
//! assert_eq!(persisted.len(), 2);
//! assert!(persisted[0].tool_calls[0].result.is_placeholder());
//! // The builder's own copy already carries the stitched result.
//! assert_eq!(
//!     builder.rounds()[0].tool_calls[0].result,
//!     ToolResult::Completed { content: "a.txt".into() }
//! );
//! assert_eq!(builder.summary().stitches, 1);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod acp;
mod adapter;
mod anomaly;
mod builder;
mod call;
mod clock;
pub mod deepwork;
mod format;
mod handler;
mod machine;
mod open_round;
mod ops;
mod output;
mod record;
mod replay;
mod round;
mod sessions;
mod sink;
mod stitch;
mod summary;
pub mod uagent;
mod ui;
mod wire;

pub use anomaly::{Anomaly, AnomalyKind};
pub use builder::RoundBuilder;
pub use call::Call;
pub use clock::{Clock, ManualClock, SystemClock};
pub use format::Format;
pub use handler::{FinishReason, StreamHandler, ToolCallStatus};
pub use machine::{MachineOptions, RoundMachine};
pub use ops::{BadLine, OpsLine};
pub use output::{Output, Outputs};
pub use record::Recorder;
pub use replay::{replay, replay_ops, Emit, ReplayError, ReplayObserver, ReplayStats};
pub use round::{ClosedBy, Meta, PlaceholderReason, Round, TerminalStatus, ToolCall, ToolCalls, ToolResult};
pub use sink::{RoundSink, SinkRecord};
pub use stitch::{MetaPatch, Stitch};
pub use summary::{PlaceholderCounts, Summary};
pub use ui::{UiEvent, UiEventOf, UiFlow, UiHandler};
pub use wire::{write_record, write_summary, write_ui_event, OutputLine};

/// The README's Rust examples are compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
