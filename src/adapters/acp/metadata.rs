//! The updates that carry only metadata: of a run (usage, plan, modes,
//! compactions, messages between sessions), of a subagent (its spawn and
//! states) or of a background task (its spawn, progress and states).
//!
//! They are rare, so each is read again as a whole JSON value rather than
//! through the borrowed views of `wire.rs`: what they carry is kept as it
//! came, with the keys the adapter reads removed only where they would say
//! twice what the metadata key already says.

use serde_json::{Map, Value};

use super::tool_call::TaskOf;
use super::wire::MetadataKind;
use super::{AcpAdapter, CallSink};
use crate::adapters::support::{one, report};
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta};

/// Subagent and background-task states after which nothing more comes.
fn is_final_state(state: &str) -> bool {
    matches!(
        state,
        "idle"
            | "completed"
            | "complete"
            | "done"
            | "failed"
            | "error"
            | "cancelled"
            | "canceled"
            | "killed"
            | "stopped"
    )
}

/// How a subagent's run ends at a final state: stopped from outside is
/// `canceled`, done `completed`, failed `failed`, anything else (idle)
/// `interrupted`.
fn reason_of_state(state: &str) -> FinishReason {
    match state {
        "cancelled" | "canceled" | "killed" | "stopped" => FinishReason::Canceled,
        "completed" | "done" | "success" | "succeeded" => FinishReason::Completed,
        "failed" | "error" | "errored" => FinishReason::Failed,
        _ => FinishReason::Interrupted,
    }
}

/// Sends one run-metadata key to `session`.
fn run_meta(calls: &mut dyn CallSink, session: &str, key: &str, value: Value) {
    calls.call(Some(session), Call::RunMeta { meta: &one(key, value) });
}

/// A text field of the update, owned (the adapter changes itself next).
fn text_of(update: &Value, name: &str) -> Option<String> {
    update.get(name).and_then(Value::as_str).map(str::to_owned)
}

impl AcpAdapter {
    /// An update of `kind` for `session`, read as a whole value.
    pub(super) fn metadata_update(
        &mut self,
        session: &str,
        kind: MetadataKind,
        update: &Value,
        calls: &mut dyn CallSink,
    ) {
        let field = |name: &str| update.get(name).cloned().unwrap_or(Value::Null);
        // The update without its kind: what metadata keeps of it.
        let mut rest = update.as_object().cloned().unwrap_or_default();
        rest.remove("sessionUpdate");
        match kind {
            MetadataKind::UsageUpdate => {
                if let Some(used) = update.get("used").and_then(Value::as_u64) {
                    calls.call(Some(session), Call::TokenUsage { total: used });
                }
                let mut meta = Meta::new();
                for (field, key) in [("size", "acp_context_size"), ("cost", "acp_cost"), ("_meta", "acp_usage_meta")] {
                    if let Some(value) = update.get(field) {
                        meta.insert(key.into(), value.clone());
                    }
                }
                if !meta.is_empty() {
                    calls.call(Some(session), Call::RunMeta { meta: &meta });
                }
            }
            MetadataKind::Plan => run_meta(calls, session, "acp_plan", field("entries")),
            MetadataKind::AvailableCommandsUpdate => {
                run_meta(calls, session, "acp_available_commands", field("availableCommands"))
            }
            MetadataKind::CurrentModeUpdate => run_meta(calls, session, "acp_mode", field("currentModeId")),
            MetadataKind::ConfigOptionUpdate => run_meta(calls, session, "acp_config_options", field("configOptions")),
            MetadataKind::SessionInfoUpdate => run_meta(calls, session, "acp_session_info", Value::Object(rest)),
            MetadataKind::CompactionUpdate => {
                let id = update.get("compactionId").cloned().unwrap_or(Value::Null);
                self.compaction(session, &id).extend(rest);
            }
            MetadataKind::CompactionSummaryChunk => {
                match update.get("content").and_then(|c| c.get("text")).and_then(Value::as_str) {
                    Some(text) => {
                        let id = update.get("compactionId").cloned().unwrap_or(Value::Null);
                        let summary = self.compaction(session, &id).entry("summary").or_insert_with(|| "".into());
                        if let Value::String(summary) = summary {
                            summary.push_str(text);
                        }
                    }
                    None => {
                        let detail = format!("acp: {} with non-text content: {update}", kind.name());
                        report(calls, Some(session), AnomalyKind::UnknownContent, &detail);
                    }
                }
            }
            MetadataKind::SubagentSpawned | MetadataKind::SubagentUpdate | MetadataKind::SubagentStateUpdate => {
                self.subagent(session, kind, update, rest, calls)
            }
            MetadataKind::SessionMessage => self.session_message(session, update, rest, calls),
            MetadataKind::AsyncTaskSpawned => self.async_task_spawned(session, kind, update, rest, calls),
            MetadataKind::AsyncTaskProgress | MetadataKind::AsyncTaskStateUpdate => {
                self.async_task_update(session, kind, update, rest, calls)
            }
        }
    }

    /// A subagent with a session of its own (JetBrains Air): a child of
    /// `session`, whose run starts at its first event and ends at a final
    /// state.
    fn subagent(
        &mut self,
        session: &str,
        kind: MetadataKind,
        update: &Value,
        mut rest: Map<String, Value>,
        calls: &mut dyn CallSink,
    ) {
        let child = text_of(update, "subagentSessionId").or_else(|| text_of(update, "sessionId"));
        let Some(child) = child.filter(|child| child != session) else {
            let detail = format!("acp: {} without a subagent session: {update}", kind.name());
            return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
        };
        self.adopt(session, &child);
        let state = match update.get("state") {
            Some(Value::Object(state)) => state.get("state").and_then(Value::as_str).map(str::to_owned),
            Some(Value::String(state)) => Some(state.clone()),
            _ => None,
        };
        rest.remove("state");
        rest.remove("sessionId");
        rest.remove("subagentSessionId");
        if let Some(state) = state.as_deref().filter(|state| is_final_state(state)) {
            if self.sessions.get(&*child).is_some_and(|s| s.phase.is_running()) {
                run_meta(calls, &child, "acp_subagent_state", state.into());
            }
            self.end_children(&child, reason_of_state(state), calls);
            return self.end_child(&child, reason_of_state(state), calls);
        }
        self.ensure_running(&child, calls);
        run_meta(calls, &child, "acp_parent_session", session.into());
        if !rest.is_empty() {
            run_meta(calls, &child, "acp_subagent", Value::Object(rest));
        }
        if let Some(state) = state {
            run_meta(calls, &child, "acp_subagent_state", state.into());
        }
    }

    /// A message to a session (its recipient, else `session`) from another
    /// (its sender, whose subagent the recipient then is): the recipient's
    /// run metadata.
    fn session_message(&mut self, session: &str, update: &Value, rest: Map<String, Value>, calls: &mut dyn CallSink) {
        let recipient = text_of(update, "recipientSessionId").unwrap_or_else(|| session.to_owned());
        let sender = text_of(update, "senderSessionId");
        if let Some(sender) = &sender {
            self.adopt(sender, &recipient);
        }
        self.ensure_running(&recipient, calls);
        let texts: Option<Vec<&str>> = update
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect());
        let mut meta = Meta::new();
        match texts {
            Some(texts) => meta.insert("acp_user_message".into(), texts.concat().into()),
            None => meta.insert("acp_session_message".into(), Value::Object(rest)),
        };
        if let Some(sender) = sender {
            meta.insert("acp_message_from".into(), sender.into());
        }
        calls.call(Some(&recipient), Call::RunMeta { meta: &meta });
    }

    /// A background task spawned by a tool call: the call's metadata, and
    /// the task remembered until its call's run ends.
    fn async_task_spawned(
        &mut self,
        session: &str,
        kind: MetadataKind,
        update: &Value,
        rest: Map<String, Value>,
        calls: &mut dyn CallSink,
    ) {
        let (Some(task), Some(call)) = (text_of(update, "asyncTaskId"), text_of(update, "toolCallId")) else {
            let detail = format!("acp: {} without asyncTaskId or toolCallId: {update}", kind.name());
            return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
        };
        let target = self.route(session, None, Some(&call));
        let root = self.root(&target);
        self.tasks.insert(
            task.into(),
            TaskOf { root: root.into(), session: target.as_ref().into(), call: call.as_str().into() },
        );
        let meta = one("acp_async_task", Value::Object(rest));
        calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
    }

    /// A background task's progress or state: its call's metadata (and,
    /// progress of a call still waiting for its result, its live output).
    fn async_task_update(
        &mut self,
        session: &str,
        kind: MetadataKind,
        update: &Value,
        mut rest: Map<String, Value>,
        calls: &mut dyn CallSink,
    ) {
        let task_id = text_of(update, "asyncTaskId").unwrap_or_default();
        let Some(task) = self.tasks.get(task_id.as_str()) else {
            let detail = format!("acp: {} for a background task not seen spawned: {update}", kind.name());
            return report(calls, Some(session), AnomalyKind::UnknownEvent, &detail);
        };
        let (target, call) = (task.session.clone(), task.call.clone());
        rest.remove("asyncTaskId");
        let root = self.root(&target);
        let running = self.calls.get(root.as_ref()).and_then(|c| c.get(&*call)).is_some_and(|c| !c.done);
        if kind == MetadataKind::AsyncTaskProgress {
            // A running task's progress is its call's live output; after
            // the call's result, it is metadata.
            if let (true, Some(summary)) = (running, text_of(update, "summary")) {
                calls.call(Some(&target), Call::ToolOutput { id: &call, content: &summary, replace: true });
            }
            let meta = one("acp_async_task_progress", Value::Object(rest));
            calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
        } else {
            let finished = text_of(update, "state").as_deref().is_some_and(is_final_state);
            let meta = one("acp_async_task_state", Value::Object(rest));
            calls.call(Some(&target), Call::ToolMeta { id: &call, meta: &meta });
            if finished {
                self.tasks.remove(task_id.as_str());
            }
        }
    }
}
