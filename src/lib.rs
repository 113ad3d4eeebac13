//! roundup turns the chunk-level event stream of an AI agent run into
//! **rounds**: one assistant turn with its reasoning, its tool calls, their
//! final arguments and exactly one result per call.
//!
//! Agents stream their work in fragments (text and reasoning deltas, tool
//! calls whose arguments arrive as deltas or snapshots, tool results, token
//! gauges), and upstreams misbehave: results arrive late, twice, or for calls
//! never declared; text arrives before a tool finished; runs are canceled
//! mid-tool. roundup applies one set of rules to all of it (the contract,
//! `docs/SPEC.md`, is in these docs as [`spec`]), stays correct, loses
//! nothing, and reports what it saw as [`Anomaly`] records.
//!
//! # A tour
//!
//! ## Feeding a builder
//!
//! A [`RoundBuilder`] aggregates one session. Feed it the calls of the
//! [`StreamHandler`] contract from any thread; it hands each round to a
//! sink the moment the round closes.
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
//!
//! ## Reading a protocol
//!
//! An [`Adapter`](adapters::Adapter) translates one protocol's events into
//! calls, each addressed to a session; the formats are listed in
//! [`adapters::REGISTRY`].
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut acp = InputFormat::named("acp").unwrap().adapter();
//! let event = br#"{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}"#;
//! acp.translate(event, &mut |_session: Option<&str>, call: Call<'_>| builder.call(call)).unwrap();
//! builder.finish_if_running(roundup::FinishReason::Interrupted);
//! assert_eq!(builder.rounds()[0].message, "Hi");
//! ```
//!
//! ## Replaying a recording
//!
//! [`replay`] reads a whole recorded stream, one builder per session, and
//! writes one of the output formats of [`encoders::REGISTRY`]: this is
//! what `roundup replay` runs.
//!
//! ```
//! let input = br#"{"op":"message","text":"Hi","session":"s1"}"#;
//! let mut out = Vec::new();
//! roundup::replay(&input[..], &mut out, &roundup::ReplayOptions::new(), &mut ()).unwrap();
//! let first: roundup::OutputLine = serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
//! assert!(matches!(first, roundup::OutputLine::Round(round) if round.message == "Hi"));
//! ```
//!
//! # Architecture
//!
//! - The data model ([`Round`], [`ToolCall`], [`Stitch`], [`Anomaly`],
//!   [`Summary`], ...): the output lines of SPEC §4, depending on nothing.
//! - [`Call`] and [`StreamHandler`]: the input contract, as a value and as
//!   named methods over it.
//! - [`RoundMachine`]: every rule, as a pure state machine (a [`Call`] and a
//!   clock reading in, [`Outputs`] out; no lock, clock, callback or I/O).
//! - [`RoundBuilder`]: the machine behind a lock, with an injectable
//!   [`Clock`], delivering closed rounds to a [`RoundSink`] and live
//!   [`UiEvent`]s to a [`UiHandler`], in order and never under the lock.
//! - [`adapters`] in, [`encoders`] out: one trait and one registry each, one
//!   file per format.
//! - [`Recorder`] and [`replay`]: capture any stream as ops JSONL and replay
//!   it; the `roundup` command line is a thin layer over these.

mod bad_line;
mod builder;
mod call;
mod clock;
mod handler;
mod hash;
mod json_scan;
mod json_write;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use json_scan::check_against_serde as json_scan_check;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use json_write::check_written as json_write_check;
mod machine;
mod model;
mod ops;
mod output;
mod pairs;
mod record;
mod replay;
mod session;
mod sink;
mod sink_failure;
mod spare_meta;
mod store_error;
mod text_map;
mod ui;
mod ui_thread;
mod usage;
mod utf8;
mod wire;

pub mod adapters;
pub mod encoders;
#[cfg(feature = "tokio")]
pub mod live;
pub mod router;
#[cfg(feature = "sqlite")]
pub mod store;

/// The contract: the rules and wire formats roundup implements (the
/// repository's `docs/SPEC.md`, shown here whole).
#[cfg_attr(not(doctest), doc = include_str!("../docs/SPEC.md"))]
pub mod spec {}

pub use bad_line::BadLine;
pub use builder::{RoundBuilder, DEFAULT_UI_QUEUE_CAPACITY};
pub use call::Call;
pub use clock::{Clock, ManualClock, SystemClock};
pub use handler::StreamHandler;
pub use machine::{Checkpoint, CheckpointError, MachineOptions, RoundMachine};
pub use model::{
    partial_json, Anomaly, AnomalyKind, CallInProgress, ClosedBy, FinishReason, Meta, MetaPatch, PlaceholderCounts,
    PlaceholderReason, Round, RoundInProgress, Stitch, Summary, TerminalStatus, ToolCall, ToolCallStatus, ToolResult,
};
pub use ops::OpsLine;
pub use output::{Output, Outputs};
pub use record::Recorder;
pub use replay::{
    records, replay, LineFramer, Payload, Records, ReplayCheckpoint, ReplayError, ReplayObserver, ReplayOptions,
    ReplayStats, Replayer, DEFAULT_MAX_LINE_BYTES,
};
pub use router::Router;
pub use session::{MachineStep, Session};
pub use sink::{BoxError, RoundSink, SinkOutcome, SinkRecord};
pub use sink_failure::{SinkError, SinkFailure};
pub use ui::{UiEvent, UiFlow, UiHandler};
pub use ui_thread::{UiDelivery, UiThread};
pub use wire::{write_record, write_summary, write_ui_event, OutputLine};

/// The README's Rust examples are compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
