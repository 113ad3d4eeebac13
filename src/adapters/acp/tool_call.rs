//! Per-call state: what the adapter knows of each tool call of a current
//! run, and the translation of a call's declaration and updates.
//!
//! ACP sends a call's whole state again and again (`tool_call`, then
//! `tool_call_update`s with replace semantics), while the machine takes
//! declarations, argument snapshots, live output and one terminal result.
//! What a call of the run needs for that is here: the session it was
//! declared in, where its live output came from, whether it has its
//! result. Whether a `tool_call` for a known id is the same call again
//! or a new one is the machine's call (SPEC rule 7 and §6): the adapter
//! reads it from its copy of the machine's open round (`sessions.rs`).

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};

use super::render::render;
use super::wire::{self, Update, UpdateMeta};
use super::{AcpAdapter, CallSink};
use crate::adapters::support::report;
use crate::call::Call;
use crate::model::{AnomalyKind, Meta, ToolCallStatus};

/// What the adapter knows of one tool call of a current run.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct CallState {
    /// The session it was declared in.
    pub session: Box<str>,
    /// A `rawInput` was seen: `content` is output, never arguments.
    raw_input: bool,
    /// Where its live output came from last.
    output: Option<OutputFrom>,
    /// It has its result: later updates are metadata, a second terminal a
    /// duplicate.
    pub done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
enum OutputFrom {
    /// `rawOutput`: a stand-in until real output comes, which replaces it.
    RawOutput,
    Content,
    Terminal,
}

/// The tool call a background task (`async_task_*`) runs for.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct TaskOf {
    /// The root session of the call's session, whose run end forgets it.
    pub root: Box<str>,
    pub session: Box<str>,
    pub call: Box<str>,
}

/// What a `tool_call` or `tool_call_update` is to a call, decided as the
/// machine decides it (SPEC rule 7 and §6), so that the two agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A new call: a declaration (or an update with a title, an upsert)
    /// of an id the adapter has no call of, or whose call has its result
    /// in a round closed since.
    NewCall,
    /// More of a call still waiting for its result.
    Update,
    /// More of a call that has its result: an update, or a `tool_call`
    /// while the machine's open round holds the call with its result
    /// (for the machine the same call again, rule 7), whether or not the
    /// adapter still remembers the call.
    AfterResult,
    /// An update without a title for a call the adapter does not know.
    Undeclared,
}

impl Reading {
    /// `done`: what the adapter remembers of the call (whether it has its
    /// result); `names`: the update declares the call or gives it a
    /// title; `resulted`: the machine's open round holds the call with its
    /// result.
    fn of(done: Option<bool>, names: bool, declare: bool, resulted: bool) -> Reading {
        match done {
            Some(false) => Reading::Update,
            Some(true) if declare && !resulted => Reading::NewCall,
            Some(true) => Reading::AfterResult,
            None if names && resulted => Reading::AfterResult,
            None if names => Reading::NewCall,
            None => Reading::Undeclared,
        }
    }
}

impl AcpAdapter {
    /// A `tool_call` (`declare`) or `tool_call_update` for a call of
    /// `session`.
    pub(super) fn tool_call(
        &mut self,
        session: &str,
        id: &str,
        update: &Update<'_>,
        update_meta: UpdateMeta<'_>,
        declare: bool,
        calls: &mut dyn CallSink,
    ) {
        let root = self.root(session);
        let title = update.title.as_deref().unwrap_or_default();
        if let Some(state) = self.sessions.get_mut(session) {
            // A tool call ends a message: text after it is a new message.
            state.last_message_id = None;
        }
        let done = self.calls.get(root.as_ref()).and_then(|c| c.get(id)).map(|c| c.done);
        let resulted = self.sessions.get(session).is_some_and(|s| s.round.has_result(id));
        match Reading::of(done, declare || !title.is_empty(), declare, resulted) {
            Reading::NewCall => {
                let state = CallState { session: session.into(), raw_input: false, output: None, done: false };
                self.calls.entry(Box::from(root.as_ref())).or_default().insert(id.into(), state);
            }
            Reading::Update => {}
            Reading::AfterResult => return self.after_result(session, id, update, update_meta, calls),
            Reading::Undeclared => return self.undeclared(session, id, update, update_meta, calls),
        }
        let content_is_arguments = self.content_is_arguments;
        let Some(state) = self.calls.get_mut(root.as_ref()).and_then(|c| c.get_mut(id)) else {
            // Made or found above.
            return self.undeclared(session, id, update, update_meta, calls);
        };
        let mut meta = call_meta(update, update_meta.rest);
        if declare || !title.is_empty() {
            let name = update_meta.tool_name.as_deref().unwrap_or_default();
            calls.call(Some(session), Call::ToolCall { id, title, name });
            if let Some(declared_in) = self.sessions.get_mut(session) {
                declared_in.round.declared(id);
            }
        }
        if let Some(raw_input) = update.raw_input {
            state.raw_input = true;
            calls.call(Some(session), Call::ArgsSnapshot { id, args: &wire::text(raw_input) });
        }
        let status = update.status.as_deref();
        let mut result: Option<String> = None;
        if let Some(content) = update.content {
            match render(content) {
                // Kimi CLI sends the arguments of a pending call without
                // rawInput as its content: a snapshot, not output.
                Some(rendered)
                    if content_is_arguments
                        && !state.raw_input
                        && matches!(status, Some("pending") | None)
                        && rendered.only_text =>
                {
                    calls.call(Some(session), Call::ArgsSnapshot { id, args: &rendered.text });
                }
                Some(rendered) => {
                    if rendered.unrendered {
                        meta.insert("content".into(), wire::value(content));
                    }
                    if !rendered.text.is_empty() {
                        state.output = Some(OutputFrom::Content);
                        result = Some(rendered.text);
                    }
                }
                None => {
                    meta.insert("content".into(), wire::value(content));
                }
            }
        }
        if let (Some(raw_output), None) = (update.raw_output, state.output) {
            let text = wire::text(raw_output);
            if raw_output.get() != "null" && !text.is_empty() {
                state.output = Some(OutputFrom::RawOutput);
                calls.call(Some(session), Call::ToolOutput { id, content: &text, replace: true });
            }
        }
        if let Some(text) = &result {
            if terminal_status(status).is_none() {
                calls.call(Some(session), Call::ToolOutput { id, content: text, replace: true });
            }
        }
        if let Some(data) = &update_meta.terminal_whole {
            state.output = Some(OutputFrom::Terminal);
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace: true });
        }
        if let Some(data) = &update_meta.terminal_delta {
            // Terminal bytes replace a rawOutput stand-in, and add to
            // earlier terminal or content output.
            let replace = state.output == Some(OutputFrom::RawOutput);
            state.output = Some(OutputFrom::Terminal);
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace });
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        match status {
            None | Some("pending" | "in_progress") => {}
            Some(other) => match terminal_status(Some(other)) {
                Some(status) => {
                    state.done = true;
                    // A terminal with content has it as its result; one
                    // without takes the live output (SPEC rule 13).
                    let content = result.unwrap_or_default();
                    calls.call(Some(session), Call::ToolUpdate { id, content: &content, status });
                    self.resulted(session, id);
                }
                None => {
                    let detail = format!("acp: tool call `{id}` status `{other}`");
                    report(calls, Some(session), AnomalyKind::UnknownStatus, &detail);
                }
            },
        }
    }

    /// An update (or a `tool_call` of the same open round) for a call that
    /// has its result: what changes is metadata, and a second terminal a
    /// duplicate the machine reports (SPEC rule 10: the first result wins).
    fn after_result(
        &mut self,
        session: &str,
        id: &str,
        update: &Update<'_>,
        update_meta: UpdateMeta<'_>,
        calls: &mut dyn CallSink,
    ) {
        let mut meta = call_meta(update, update_meta.rest);
        let title = update.title.as_deref().unwrap_or_default();
        if !title.is_empty() {
            meta.insert("title".into(), title.into());
        }
        let status = terminal_status(update.status.as_deref());
        // A second terminal carries its output in the duplicate the
        // machine reports: its content, else its rawOutput.
        let mut duplicate = String::new();
        if status.is_some() {
            let rendered = update.content.and_then(render).map(|r| r.text).unwrap_or_default();
            let from_raw_output;
            (duplicate, from_raw_output) = result_text(rendered, update.raw_output);
            if from_raw_output {
                meta.remove("rawOutput");
            }
        }
        let content = update.content.filter(|_| duplicate.is_empty());
        raw_fields(&mut meta, [("rawInput", update.raw_input), ("content", content)]);
        // Terminal output after the result has no call to go to: the
        // machine reports it with the output (SPEC rule 13), each piece.
        for (data, replace) in [(&update_meta.terminal_whole, true), (&update_meta.terminal_delta, false)] {
            if let Some(data) = data {
                calls.call(Some(session), Call::ToolOutput { id, content: data, replace });
            }
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        if let Some(status) = status {
            calls.call(Some(session), Call::ToolUpdate { id, content: &duplicate, status });
            self.resulted(session, id);
        }
    }

    /// A terminal for `id` was sent to `session`'s machine.
    fn resulted(&mut self, session: &str, id: &str) {
        if let Some(state) = self.sessions.get_mut(session) {
            state.round.resulted(id);
        }
    }

    /// An update for a call the adapter never saw declared: passed on as
    /// is, so the machine reports it (`unknown_tool_call`, or
    /// `undeclared_terminal` with the result) and nothing is lost.
    fn undeclared(
        &mut self,
        session: &str,
        id: &str,
        update: &Update<'_>,
        update_meta: UpdateMeta<'_>,
        calls: &mut dyn CallSink,
    ) {
        let mut meta = call_meta(update, update_meta.rest);
        raw_fields(&mut meta, [("rawInput", update.raw_input)]);
        let content = update.content.and_then(render);
        if let Some(content) = update.content.filter(|_| content.as_ref().is_none_or(|r| r.unrendered)) {
            meta.insert("content".into(), wire::value(content));
        }
        for data in [&update_meta.terminal_whole, &update_meta.terminal_delta].into_iter().flatten() {
            calls.call(Some(session), Call::ToolOutput { id, content: data, replace: false });
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::ToolMeta { id, meta: &meta });
        }
        match (update.status.as_deref(), terminal_status(update.status.as_deref())) {
            (_, Some(status)) => {
                let (text, _) = result_text(content.map(|r| r.text).unwrap_or_default(), update.raw_output);
                calls.call(Some(session), Call::ToolUpdate { id, content: &text, status });
                self.resulted(session, id);
            }
            (None | Some("pending" | "in_progress"), None) => {}
            (Some(other), None) => {
                let detail = format!("acp: tool call `{id}` status `{other}`");
                report(calls, Some(session), AnomalyKind::UnknownStatus, &detail);
            }
        }
    }
}

/// Raw fields an update has, as metadata under their own names.
fn raw_fields<const N: usize>(meta: &mut Meta, fields: [(&str, Option<Raw<'_>>); N]) {
    for (field, raw) in fields {
        if let Some(raw) = raw {
            meta.insert(field.into(), wire::value(raw));
        }
    }
}

/// What an update carries as a tool's result, for the machine to report
/// when it cannot be the result (a duplicate, an undeclared call): its
/// rendered content, else its `rawOutput` as text; and whether it is the
/// `rawOutput`.
fn result_text(rendered: String, raw_output: Option<Raw<'_>>) -> (String, bool) {
    match raw_output.filter(|_| rendered.is_empty()) {
        Some(raw) => (wire::text(raw).into_owned(), true),
        None => (rendered, false),
    }
}

fn terminal_status(status: Option<&str>) -> Option<ToolCallStatus> {
    match status {
        Some("completed") => Some(ToolCallStatus::Completed),
        Some("failed") => Some(ToolCallStatus::Failed),
        _ => None,
    }
}

/// What an update says of a call beyond its title, arguments and result:
/// the update's other `_meta` keys, then its `kind`, `locations` and
/// `rawOutput` as sent.
fn call_meta(update: &Update<'_>, rest: Meta) -> Meta {
    let mut meta = rest;
    raw_fields(&mut meta, [("kind", update.kind), ("locations", update.locations), ("rawOutput", update.raw_output)]);
    meta
}
