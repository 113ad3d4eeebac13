//! Random call sequences for the property tests, biased towards the
//! adversarial cases: a small pool of ids (so results come late, twice, or
//! for ids never declared), snapshots between deltas, `finish` mid-tool,
//! `start` over unfinished runs, interleaved sessions, a clock that may go
//! backwards.

use proptest::prelude::*;
use roundup::{Call, FinishReason, Meta, ToolCallStatus};

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Message(String),
    Thought(String),
    ToolCall(String, String),
    Update(String, String, ToolCallStatus),
    Snapshot(String, String),
    Output(String, String, bool),
    Usage(u64),
    Start,
    Finish(FinishReason),
    ToolMeta(String, Meta),
    RunMeta(Meta),
    RoundMeta(Meta),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub session: Option<&'static str>,
    pub at: u64,
    pub op: Op,
}

impl Step {
    pub fn call(&self) -> Call<'_> {
        match &self.op {
            Op::Message(text) => Call::Message { text },
            Op::Thought(text) => Call::Thought { text },
            Op::ToolCall(id, title) => Call::ToolCall { id, title, name: "" },
            Op::Update(id, content, status) => Call::ToolUpdate { id, content, status: *status },
            Op::Snapshot(id, args) => Call::ArgsSnapshot { id, args },
            Op::Output(id, content, replace) => Call::ToolOutput { id, content, replace: *replace },
            Op::Usage(total) => Call::TokenUsage { total: *total },
            Op::Start => Call::Start,
            Op::Finish(reason) => Call::Finish { reason: *reason },
            Op::ToolMeta(id, meta) => Call::ToolMeta { id, meta },
            Op::RunMeta(meta) => Call::RunMeta { meta },
            Op::RoundMeta(meta) => Call::RoundMeta { meta },
        }
    }

    /// The step as an ops JSONL line (with `at_ms`, and `session` if any).
    pub fn line(&self) -> String {
        let mut value = serde_json::to_value(self.call()).unwrap();
        value["at_ms"] = self.at.into();
        if let Some(session) = self.session {
            value["session"] = session.into();
        }
        format!("{value}\n")
    }

    pub fn is_terminal(&self) -> bool {
        matches!(&self.op, Op::Update(_, _, status) if status.is_terminal())
    }
}

pub fn jsonl(steps: &[Step]) -> String {
    steps.iter().map(Step::line).collect()
}

fn id() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", ""]).prop_map(str::to_owned)
}

pub fn text() -> impl Strategy<Value = String> {
    "[ab é☃😀\n\"\\\\]{0,6}"
}

fn status() -> impl Strategy<Value = ToolCallStatus> {
    prop::sample::select(vec![
        ToolCallStatus::Pending,
        ToolCallStatus::InProgress,
        ToolCallStatus::Completed,
        ToolCallStatus::Failed,
    ])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => text().prop_map(Op::Message),
        2 => text().prop_map(Op::Thought),
        3 => (id(), prop::sample::select(vec!["", "bash", "read"])).prop_map(|(id, t)| Op::ToolCall(id, t.to_owned())),
        5 => (id(), text(), status()).prop_map(|(id, c, s)| Op::Update(id, c, s)),
        1 => (id(), text()).prop_map(|(id, a)| Op::Snapshot(id, a)),
        3 => (id(), text(), prop::bool::weighted(0.2)).prop_map(|(id, c, r)| Op::Output(id, c, r)),
        1 => (0u64..100_000).prop_map(Op::Usage),
        1 => Just(Op::Start),
        1 => prop::sample::select(vec![FinishReason::Canceled, FinishReason::Interrupted]).prop_map(Op::Finish),
        1 => (id(), meta()).prop_map(|(id, meta)| Op::ToolMeta(id, meta)),
        1 => meta().prop_map(Op::RunMeta),
        1 => round_meta().prop_map(Op::RoundMeta),
    ]
}

/// A small metadata object; `rounds` names a summary field (refused by
/// `run_meta`).
fn meta() -> impl Strategy<Value = Meta> {
    let key = prop::sample::select(vec!["kind", "locations", "stop_reason", "rounds"]);
    prop::collection::btree_map(key, 0u64..3, 0..3)
        .prop_map(|entries| entries.into_iter().map(|(k, v)| (k.to_owned(), serde_json::Value::from(v))).collect())
}

/// Round metadata: arrays (which accumulate) and plain values (which
/// replace) under a few keys.
fn round_meta() -> impl Strategy<Value = Meta> {
    let key = prop::sample::select(vec!["ids", "model"]);
    let value = prop_oneof![
        (0u64..3).prop_map(serde_json::Value::from),
        prop::collection::vec(0u64..4, 0..3).prop_map(serde_json::Value::from),
    ];
    prop::collection::btree_map(key, value, 0..3)
        .prop_map(|entries| entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// Gives every terminal with content a unique content, so that where each
/// one ended up can be checked (an empty one takes the call's live output).
fn unique_results(mut steps: Vec<Step>) -> Vec<Step> {
    for (n, step) in steps.iter_mut().enumerate() {
        if let Op::Update(_, content, status) = &mut step.op {
            if status.is_terminal() && !content.is_empty() {
                content.push_str(&format!("#{n}"));
            }
        }
    }
    steps
}

/// Steps of one session (no `session` field).
pub fn steps(max: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec((op(), 0u64..1_000), 0..max)
        .prop_map(|ops| ops.into_iter().map(|(op, at)| Step { session: None, at, op }).collect())
        .prop_map(unique_results)
}

/// Steps of up to three interleaved sessions.
pub fn session_steps(max: usize) -> impl Strategy<Value = Vec<Step>> {
    let session = prop::sample::select(vec![None, Some("s1"), Some("s2")]);
    prop::collection::vec((op(), 0u64..1_000, session), 0..max)
        .prop_map(|ops| ops.into_iter().map(|(op, at, session)| Step { session, at, op }).collect())
        .prop_map(unique_results)
}
