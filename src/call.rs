//! One `StreamHandler` call as a value.
//!
//! The same value is what the state machine consumes, what the ops JSONL
//! reader produces and what the [`Recorder`](crate::Recorder) writes, so a
//! call has one representation from the wire to the rules.

use serde::Serialize;

use crate::model::{AnomalyKind, FinishReason, Meta, TerminalStatus, ToolCallStatus};

/// One call of the input contract (SPEC §1), borrowing its strings.
///
/// Serialises to its ops JSONL line (SPEC §3), `op` first:
///
/// ```
/// use roundup::Call;
/// let line = serde_json::to_string(&Call::ToolCall { id: "t1", title: "ls -la", name: "Bash" }).unwrap();
/// assert_eq!(line, r#"{"op":"tool_call","id":"t1","title":"ls -la","name":"Bash"}"#);
/// ```
///
/// It is `#[non_exhaustive]` because the contract grows (SPEC §1 gained
/// `tool_output`): a handler that matches on calls keeps a fallback arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Call<'a> {
    /// `message(text)`.
    Message {
        /// The fragment.
        text: &'a str,
    },
    /// `thought(text)`.
    Thought {
        /// The fragment.
        text: &'a str,
    },
    /// `tool_call(id, title, name)`.
    ToolCall {
        /// The call's id.
        id: &'a str,
        /// What a person is shown (`Read a.ts`, `ls -la`; may be empty).
        title: &'a str,
        /// The tool's machine name as the model called it (`Read`,
        /// `get_weather`); empty when the protocol gives none.
        #[serde(skip_serializing_if = "str::is_empty")]
        name: &'a str,
    },
    /// `tool_update(id, content, status)`.
    ToolUpdate {
        /// The call's id.
        id: &'a str,
        /// An argument delta, or the result when `status` is terminal.
        content: &'a str,
        /// The call's status.
        status: ToolCallStatus,
    },
    /// `args_snapshot(id, args)`.
    ArgsSnapshot {
        /// The call's id.
        id: &'a str,
        /// The whole arguments.
        args: &'a str,
    },
    /// `tool_output(id, content, replace)`: live output of a running tool
    /// call (SPEC rule 13).
    ToolOutput {
        /// The call's id.
        id: &'a str,
        /// Output to append, or the whole output so far when `replace`.
        content: &'a str,
        /// Replaces what came before instead of appending.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        replace: bool,
    },
    /// `token_usage(total)`.
    TokenUsage {
        /// The context-window occupancy.
        total: u64,
    },
    /// `start()`.
    Start,
    /// `finish(reason)`.
    Finish {
        /// Why the run ended.
        reason: FinishReason,
    },
    /// `tool_meta(id, meta)`: what a protocol says about a tool call beyond
    /// its title, arguments and result (ACP `kind` and `locations`, uagent
    /// `op_id`, ...), merged into the call's `meta` object. A roundup
    /// extension of ops JSONL, like `anomaly`.
    ToolMeta {
        /// The call's id.
        id: &'a str,
        /// Keys to set (later values replace earlier ones).
        meta: &'a Meta,
    },
    /// `run_meta(meta)`: what a protocol says about the run as a whole
    /// (ACP stop reason and cost, uagent statistics, ...), merged into the
    /// run's summary line. A roundup extension of ops JSONL.
    RunMeta {
        /// Keys to set (later values replace earlier ones).
        meta: &'a Meta,
    },
    /// `round_meta(meta)`: what a protocol says about the round being
    /// built (the ids of ACP messages whose text it holds, ...), merged into
    /// the open round's `meta` object. Rounds accumulate: an array value is
    /// joined to the array already there (items it holds already are not
    /// repeated), any other value replaces. Metadata still held when the
    /// run finishes, with no round to go to (a model call refused before
    /// any text), joins the run's metadata. A roundup extension of ops
    /// JSONL.
    RoundMeta {
        /// Keys to merge.
        meta: &'a Meta,
    },
    /// `anomaly(kind, id, detail)`: a problem reported by whoever feeds the
    /// handler. In ops JSONL this is a roundup extension (`"op":"anomaly"`),
    /// which readers that do not know it ignore as the spec asks.
    Anomaly {
        /// What went wrong.
        kind: AnomalyKind,
        /// The tool call concerned, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        /// What was seen.
        detail: &'a str,
    },
    /// A line whose `op` this contract does not define (SPEC §3): reported
    /// as anomaly `unknown_event` keeping the line whole, or, after the
    /// run's `finish`, as `after_finish` naming the op. Written back by the
    /// [`Recorder`](crate::Recorder) as the line it was.
    #[serde(skip)]
    Unknown {
        /// The op it names.
        op: &'a str,
        /// The line as it came.
        line: &'a str,
    },
}

impl<'a> Call<'a> {
    /// The op name, as in ops JSONL (`"tool_update"`, ...).
    pub fn op_name(&self) -> &'static str {
        match self {
            Call::Message { .. } => "message",
            Call::Thought { .. } => "thought",
            Call::ToolCall { .. } => "tool_call",
            Call::ToolUpdate { .. } => "tool_update",
            Call::ArgsSnapshot { .. } => "args_snapshot",
            Call::ToolOutput { .. } => "tool_output",
            Call::TokenUsage { .. } => "token_usage",
            Call::Start => "start",
            Call::Finish { .. } => "finish",
            Call::ToolMeta { .. } => "tool_meta",
            Call::RunMeta { .. } => "run_meta",
            Call::RoundMeta { .. } => "round_meta",
            Call::Anomaly { .. } => "anomaly",
            Call::Unknown { .. } => "unknown",
        }
    }

    /// The tool call id the call names, if any.
    pub fn id(&self) -> Option<&'a str> {
        match *self {
            Call::ToolCall { id, .. }
            | Call::ToolUpdate { id, .. }
            | Call::ArgsSnapshot { id, .. }
            | Call::ToolOutput { id, .. }
            | Call::ToolMeta { id, .. } => Some(id),
            Call::Anomaly { id, .. } => id,
            _ => None,
        }
    }

    /// What the call carries (text, title, content, arguments, token total,
    /// finish reason), as text; empty for `start`. This is what an anomaly
    /// keeps when the call cannot be applied.
    pub fn payload(&self) -> String {
        match *self {
            Call::Message { text } | Call::Thought { text } => text.to_owned(),
            Call::ToolCall { title, .. } => title.to_owned(),
            Call::ToolUpdate { content, .. } | Call::ToolOutput { content, .. } => content.to_owned(),
            Call::ArgsSnapshot { args, .. } => args.to_owned(),
            Call::TokenUsage { total } => total.to_string(),
            Call::Finish { reason } => reason.as_str().to_owned(),
            Call::ToolMeta { meta, .. } | Call::RunMeta { meta } | Call::RoundMeta { meta } => {
                serde_json::to_string(meta).unwrap_or_default()
            }
            Call::Anomaly { detail, .. } => detail.to_owned(),
            Call::Unknown { line, .. } => line.to_owned(),
            Call::Start => String::new(),
        }
    }

    /// The terminal status of a `tool_update` that carries a result.
    pub fn terminal_status(&self) -> Option<TerminalStatus> {
        match *self {
            Call::ToolUpdate { status: ToolCallStatus::Completed, .. } => Some(TerminalStatus::Completed),
            Call::ToolUpdate { status: ToolCallStatus::Failed, .. } => Some(TerminalStatus::Failed),
            _ => None,
        }
    }
}
