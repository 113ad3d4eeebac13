//! The round rules (SPEC §2 and §6), as a pure state machine.
//!
//! This file is where every rule is decided. The machine takes one
//! [`Call`] with the clock reading the caller made for it and writes what
//! the call caused into an [`Outputs`] buffer: closed rounds, stitches,
//! anomalies and live UI events. It holds no lock, reads no clock, calls
//! nothing back and does no I/O, so every rule is testable with plain values
//! (the design of `quinn-proto` and `rustls`); the
//! [`RoundBuilder`](crate::RoundBuilder) adds the lock, the clock and the
//! delivery.
//!
//! One machine aggregates one session, as a sequence of runs.

mod checkpoint;
mod closed_calls;
mod meta_items;
mod open_round;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

pub(crate) use checkpoint::read_versioned;
pub use checkpoint::{Checkpoint, CheckpointError};

use crate::call::Call;
use crate::hash::HashMap;
use crate::model::{
    Anomaly, AnomalyKind, CallInProgress, ClosedBy, FinishReason, Meta, MetaPatch, PlaceholderReason, Round,
    RoundInProgress, Stitch, Summary, TerminalStatus, ToolCall, ToolResult,
};
use crate::output::Outputs;
use crate::spare_meta::SpareMeta;
use crate::ui::UiEvent;
use closed_calls::{ClosedCalls, Id};
use open_round::{OpenCall, OpenRound};

/// Options of a [`RoundMachine`].
///
/// ```
/// use roundup::{MachineOptions, RoundMachine};
/// let options = MachineOptions::default().session("s1").retain_rounds(false);
/// let machine = RoundMachine::new(options);
/// assert_eq!(machine.options().session.as_deref(), Some("s1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MachineOptions {
    /// The session name written into every record (`None`: no session).
    pub session: Option<String>,
    /// Keep the history in memory: closed rounds (for
    /// [`RoundMachine::rounds`]) and the summaries of finished runs (for
    /// [`RoundMachine::summaries`]). Turn it off for sessions whose rounds
    /// and summaries go to a sink anyway: a session then holds its open
    /// round and what late results of its current run can still reach, and
    /// nothing per finished run.
    pub retain_rounds: bool,
    /// Produce live UI events.
    pub ui_events: bool,
}

impl Default for MachineOptions {
    fn default() -> Self {
        MachineOptions { session: None, retain_rounds: true, ui_events: true }
    }
}

impl MachineOptions {
    /// Names the session written into every record.
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Keeps closed rounds in memory, or not.
    pub fn retain_rounds(mut self, retain: bool) -> Self {
        self.retain_rounds = retain;
        self
    }

    /// Produces live UI events, or not.
    pub fn ui_events(mut self, on: bool) -> Self {
        self.ui_events = on;
        self
    }
}

/// Which text stream the UI has open, so that starts and ends pair up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TextKind {
    Message,
    Thought,
}

/// Where a tool call of a closed round sits: for a late result to stitch
/// its placeholder, for late metadata to patch it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct CallSlot {
    round: u64,
    position: usize,
}

/// A `superseded` placeholder a late result may still stitch, with the live
/// output its call had sent (a late terminal with empty content takes it).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Superseded {
    slot: CallSlot,
    output: String,
}

/// The state of one run: what a checkpoint saves.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Run {
    number: u64,
    /// `run_start` was sent to the UI.
    announced: bool,
    finished: bool,
    next_round: u64,
    open: OpenRound,
    open_text: Option<TextKind>,
    /// Unstitched `superseded` placeholders by id, oldest first. An id
    /// rarely has more than one, so the list is inline.
    #[serde(serialize_with = "crate::pairs::sorted_map")]
    superseded: HashMap<Id, SmallVec<[Superseded; 1]>>,
    /// The latest closed call of each id (for late metadata), and whether
    /// the id has a real result (for `duplicate_terminal`).
    closed: ClosedCalls,
    summary: Summary,
}

/// The pure round state machine for one session (SPEC §2).
///
/// ```
/// use roundup::{Call, Output, Outputs, RoundMachine, SinkRecord};
///
/// let mut machine = RoundMachine::default();
/// let mut out = Outputs::new();
/// machine.handle(Call::Message { text: "Hi" }, 100, &mut out);
/// machine.handle(Call::ToolCall { id: "t", title: "ls", name: "" }, 110, &mut out);
/// out.clear();
/// machine.handle(Call::Thought { text: "next" }, 120, &mut out);
///
/// // The thought closed the round: its tool call got a `superseded` placeholder.
/// let Some(Output::Record(SinkRecord::Round(round))) = out.get(0) else { panic!() };
/// assert_eq!(round.message, "Hi");
/// assert!(round.tool_calls[0].result.is_placeholder());
/// assert_eq!((round.started_at_ms, round.finished_at_ms), (100, 120));
/// ```
#[derive(Debug, Default)]
pub struct RoundMachine {
    options: MachineOptions,
    run: Run,
    retained: Vec<Round>,
    finished_runs: Vec<Summary>,
}

impl RoundMachine {
    /// A machine for a new session.
    pub fn new(options: MachineOptions) -> Self {
        let mut machine = RoundMachine { options, ..Default::default() };
        machine.run.summary.session = machine.options.session.clone();
        machine
    }

    /// The options the machine was made with.
    pub fn options(&self) -> &MachineOptions {
        &self.options
    }

    /// Turns UI events on or off from the next call on.
    pub fn set_ui_events(&mut self, on: bool) {
        self.options.ui_events = on;
    }

    /// Back to a new session with the same options; retained rounds and
    /// summaries are dropped.
    pub fn reset(&mut self) {
        *self = RoundMachine::new(self.options.clone());
    }

    /// The retained closed rounds of every run, oldest first, with stitches
    /// applied.
    pub fn rounds(&self) -> &[Round] {
        &self.retained
    }

    /// Takes the retained rounds out; a later stitch for one of them is
    /// still delivered as a [`Stitch`], it just has nothing to patch here.
    pub fn take_rounds(&mut self) -> Vec<Round> {
        std::mem::take(&mut self.retained)
    }

    /// The round in progress, as a value; `None` when none is open (nothing
    /// since the last close, or the run finished).
    pub fn open_round(&self) -> Option<RoundInProgress> {
        let open = &self.run.open;
        if open.is_empty() {
            return None;
        }
        let tool_calls = open
            .calls
            .iter()
            .map(|call| CallInProgress {
                id: call.id.clone(),
                title: call.title.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                output: call.output.clone(),
                result: call.result.clone(),
                started_at_ms: call.started_at_ms,
                meta: call.meta.clone(),
            })
            .collect();
        Some(RoundInProgress {
            session: self.options.session.clone(),
            run: self.run.number,
            index: self.run.next_round,
            message: open.message.clone(),
            thought: open.thought.clone(),
            tool_calls,
            started_at_ms: open.started_at_ms,
            meta: open.meta.clone(),
        })
    }

    /// The summary of the current run.
    pub fn summary(&self) -> &Summary {
        &self.run.summary
    }

    /// The summaries of every run, the current one last (without history,
    /// [`MachineOptions::retain_rounds`] off: the current one only).
    pub fn summaries(&self) -> impl Iterator<Item = &Summary> + '_ {
        self.finished_runs.iter().chain(std::iter::once(&self.run.summary))
    }

    /// The current run's number.
    pub fn run(&self) -> u64 {
        self.run.number
    }

    /// `true` once the current run saw `finish` (and no `start` since).
    pub fn is_finished(&self) -> bool {
        self.run.finished
    }

    /// Whether [`handle`](Self::handle) would use its clock reading for
    /// `call` in the current state. When it would not (text and reasoning
    /// appended to a round already started, argument deltas and snapshots,
    /// token gauges, calls after `finish`), any reading gives the same
    /// result, so a caller can skip reading an expensive clock on the hot
    /// path. A pure query: it changes nothing.
    pub fn needs_clock(&self, call: &Call<'_>) -> bool {
        let open = &self.run.open;
        if self.run.finished {
            return *call == Call::Start;
        }
        match *call {
            Call::Message { text } | Call::Thought { text } => {
                !text.is_empty() && (open.started_at_ms.is_none() || !open.calls.is_empty())
            }
            Call::ToolCall { id, .. } => open.position(id).is_none(),
            Call::ToolUpdate { status, .. } => status.is_terminal(),
            Call::ArgsSnapshot { .. }
            | Call::ToolOutput { .. }
            | Call::TokenUsage { .. }
            | Call::ToolMeta { .. }
            | Call::RunMeta { .. }
            | Call::RoundMeta { .. }
            | Call::Anomaly { .. }
            | Call::Unknown { .. } => false,
            Call::Start | Call::Finish { .. } => true,
        }
    }

    /// Applies one call made at clock reading `now_ms`, appending what it
    /// caused to `out`.
    pub fn handle(&mut self, call: Call<'_>, now_ms: u64, out: &mut Outputs) {
        out.begin_call(self.options.ui_events);
        let (run, mark) = (self.run.number, out.len());
        self.dispatch(call, now_ms, out);
        // `run_start` comes right before the first output of a run, so that
        // a call that changes nothing (an empty fragment) emits nothing.
        if self.run.number == run && out.len() > mark {
            self.announce(out);
        }
    }

    /// Tells the UI that the current run began, once, before this call's
    /// other UI events.
    fn announce(&mut self, out: &mut Outputs) {
        if !self.run.announced {
            self.run.announced = true;
            out.ui_first(UiEvent::RunStart { run: self.run.number });
        }
    }

    fn dispatch(&mut self, call: Call<'_>, now_ms: u64, out: &mut Outputs) {
        let now = now_ms;
        if let Call::Anomaly { kind, id, detail } = call {
            return self.anomaly(out, kind, id, None, detail.to_owned(), None);
        }
        if self.run.finished && call != Call::Start {
            return self.after_finish(call, out);
        }
        match call {
            Call::Message { text } => self.fragment(TextKind::Message, text, now, out),
            Call::Thought { text } => self.fragment(TextKind::Thought, text, now, out),
            Call::ToolCall { id, title, name } => self.declare(id, title, name, now, out),
            Call::ToolUpdate { id, content, .. } => match call.terminal_status() {
                Some(status) => self.terminal(id, content, status, now, out),
                None => self.arguments(id, content, false, out),
            },
            Call::ArgsSnapshot { id, args } => self.arguments(id, args, true, out),
            Call::ToolOutput { id, content, replace } => self.output(id, content, replace, out),
            Call::TokenUsage { total } => {
                self.run.summary.last_token_usage = Some(total);
                out.ui(UiEvent::TokenUsage { total });
            }
            Call::ToolMeta { id, meta } => self.tool_meta(id, meta, out),
            Call::RunMeta { meta } => self.run_meta(meta, out),
            Call::RoundMeta { meta } => {
                let open = &mut self.run.open;
                meta_items::accumulate(&mut open.meta, &mut open.meta_items, meta, out.spare_meta());
            }
            Call::Start => self.start(now, out),
            Call::Finish { reason } => self.finish(reason, now, out),
            Call::Unknown { line, .. } => {
                self.anomaly(out, AnomalyKind::UnknownEvent, None, None, line.to_owned(), None)
            }
            Call::Anomaly { .. } => {}
        }
    }

    /// Finishes the current run if it is not finished yet; `true` if it was
    /// running. This is what end of input does (SPEC §3).
    pub fn finish_if_running(&mut self, reason: FinishReason, now_ms: u64, out: &mut Outputs) -> bool {
        if self.run.finished {
            return false;
        }
        // As `handle` would a `finish`, but quiet for a run that held
        // nothing (`finish_run` announces the run itself otherwise).
        out.begin_call(self.options.ui_events);
        self.finish_run(reason, true, now_ms, out);
        true
    }

    /// Rules 1 and 2: text and reasoning.
    fn fragment(&mut self, kind: TextKind, text: &str, now: u64, out: &mut Outputs) {
        if text.is_empty() {
            return;
        }
        if !self.run.open.calls.is_empty() {
            self.close(ClosedBy::NextChunk, PlaceholderReason::Superseded, now, out);
        }
        self.run.open.touch(now);
        if self.run.open_text != Some(kind) {
            self.end_text(out);
            self.run.open_text = Some(kind);
            out.ui(match kind {
                TextKind::Message => UiEvent::MessageStart,
                TextKind::Thought => UiEvent::ThoughtStart,
            });
        }
        match kind {
            TextKind::Message => {
                self.run.open.message.push_str(text);
                out.ui(UiEvent::MessageDelta { text });
            }
            TextKind::Thought => {
                self.run.open.thought.push_str(text);
                out.ui(UiEvent::ThoughtDelta { text });
            }
        }
    }

    /// Rule 7: a declaration, or an upsert of one in the open round (a
    /// non-empty title or name replaces the old one).
    fn declare(&mut self, id: &str, title: &str, name: &str, now: u64, out: &mut Outputs) {
        if let Some(call) = self.run.open.call_mut(id) {
            let renamed = !name.is_empty() && call.name != name;
            if renamed {
                call.name.clear();
                call.name.push_str(name);
            }
            let retitled = !title.is_empty() && call.title != title;
            if retitled {
                call.title.clear();
                call.title.push_str(title);
            }
            if renamed || retitled {
                out.ui(UiEvent::ToolCallTitle { id, title: &call.title, name: &call.name });
            }
            return;
        }
        self.end_text(out);
        self.run.open.declare(id, title, name, now);
        out.ui(UiEvent::ToolCallStart { id, title, name });
    }

    /// Rule 8: argument deltas append, snapshots replace; the id check comes
    /// first (SPEC §6).
    fn arguments(&mut self, id: &str, args: &str, replace: bool, out: &mut Outputs) {
        let Some(call) = self.run.open.call_mut(id) else {
            return self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, args.to_owned(), None);
        };
        if append_or_replace(&mut call.arguments, args, replace) {
            out.ui(UiEvent::ToolCallArgs { id, args, replace });
        }
    }

    /// Rule 13: live output of a result-less call of the open round; the id
    /// check comes first (SPEC §6).
    fn output(&mut self, id: &str, content: &str, replace: bool, out: &mut Outputs) {
        let Some(call) = self.run.open.call_mut(id).filter(|call| call.result.is_none()) else {
            return self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, content.to_owned(), None);
        };
        if append_or_replace(&mut call.output, content, replace) {
            out.ui(UiEvent::ToolCallOutput { id, content, replace });
        }
    }

    /// Rules 3, 9, 10 and 13: where a terminal goes, first match wins (SPEC
    /// §6); empty terminal content takes the call's live output.
    fn terminal(&mut self, id: &str, content: &str, status: TerminalStatus, now: u64, out: &mut Outputs) {
        let success = status == TerminalStatus::Completed;
        // (1) A result-less call with that id in the open round.
        if let Some(call) = self.run.open.call_mut(id).filter(|call| call.result.is_none()) {
            let output = std::mem::take(&mut call.output);
            let content = if content.is_empty() { output } else { content.to_owned() };
            out.ui(UiEvent::ToolCallResult { id, content: &content, success });
            call.result = Some(ToolResult::real(status, content));
            call.finished_at_ms = now;
            self.run.open.pending -= 1;
            out.ui(UiEvent::ToolCallEnd { id });
            if self.run.open.pending == 0 {
                self.close(ClosedBy::ToolsDone, PlaceholderReason::Superseded, now, out);
            }
            return;
        }
        // (2) The oldest unstitched `superseded` placeholder with that id.
        let oldest = self.run.superseded.get_mut(id).and_then(|slots| {
            let oldest = (!slots.is_empty()).then(|| slots.remove(0));
            Some((oldest?, slots.is_empty()))
        });
        if let Some((Superseded { slot, output }, last)) = oldest {
            // An id's list goes with its last placeholder: a run that
            // stitches everything holds nothing for it.
            if last {
                self.run.superseded.remove(id);
            }
            let content = if content.is_empty() { output } else { content.to_owned() };
            return self.stitch(id, slot, ToolResult::real(status, content), now, out);
        }
        // (3) An id that already has a real result in this run; (4) otherwise.
        let resulted_open = self.run.open.call_mut(id).is_some_and(|call| call.result.is_some());
        let kind = if resulted_open || self.run.closed.resulted(id) {
            AnomalyKind::DuplicateTerminal
        } else {
            AnomalyKind::UndeclaredTerminal
        };
        self.anomaly(out, kind, Some(id), Some(status), content.to_owned(), None);
    }

    /// Rule 9: a late result replaces its placeholder in the retained round.
    fn stitch(&mut self, id: &str, slot: CallSlot, result: ToolResult, now: u64, out: &mut Outputs) {
        let run = self.run.number;
        self.run.closed.mark_resulted(id);
        self.run.summary.stitch(PlaceholderReason::Superseded, &result);
        if let Ok(at) = self.retained.binary_search_by_key(&(run, slot.round), |r| (r.run, r.index)) {
            if let Some(call) = self.retained[at].tool_calls.get_mut(slot.position) {
                call.result = result.clone();
                call.finished_at_ms = now;
            }
        }
        let (content, success) = (result.content().unwrap_or_default(), !result.is_failed());
        out.ui(UiEvent::ToolCallStitched { id, run, round: slot.round, content, success });
        out.stitch(Stitch {
            session: self.options.session.clone(),
            run,
            round: slot.round,
            id: id.to_owned(),
            result,
            finished_at_ms: now,
        });
    }

    /// Metadata for a tool call: merged into the open round's call, else
    /// into the latest closed call of that id in this run (a patch is
    /// delivered), else reported with what it carried.
    fn tool_meta(&mut self, id: &str, meta: &Meta, out: &mut Outputs) {
        if let Some(call) = self.run.open.call_mut(id) {
            return merge(&mut call.meta, meta, out.spare_meta());
        }
        let Some(slot) = self.run.closed.get(id).map(|c| CallSlot { round: c.round(), position: c.position() }) else {
            let detail = serde_json::to_string(meta).unwrap_or_default();
            return self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, detail, None);
        };
        let run = self.run.number;
        if let Ok(at) = self.retained.binary_search_by_key(&(run, slot.round), |r| (r.run, r.index)) {
            if let Some(call) = self.retained[at].tool_calls.get_mut(slot.position) {
                merge(&mut call.meta, meta, out.spare_meta());
            }
        }
        out.meta(MetaPatch {
            session: self.options.session.clone(),
            run,
            round: slot.round,
            id: id.to_owned(),
            meta: meta.clone(),
        });
    }

    /// Metadata for the run, merged into its summary; a key that names a
    /// summary field would corrupt the summary line, and is refused.
    fn run_meta(&mut self, meta: &Meta, out: &mut Outputs) {
        for (key, value) in meta {
            if Summary::FIELDS.contains(&key.as_str()) {
                let detail = format!("key `{key}` names a summary field; value: {value}");
                self.anomaly(out, AnomalyKind::BadMeta, None, None, detail, None);
            } else {
                self.run.summary.meta.insert(key.clone(), value.clone());
            }
        }
    }

    /// Rule 4: the run ends; the open round closes if it holds anything,
    /// and round metadata without a round goes to the run. The summary, as the run is now, goes to the sink (SPEC §6
    /// "Summary"); nothing is counted into it afterwards.
    fn finish(&mut self, reason: FinishReason, now: u64, out: &mut Outputs) {
        self.finish_run(reason, false, now, out);
    }

    /// [`finish`](Self::finish); with `quiet_if_empty`, a run that held
    /// nothing and showed nothing gets its summary (SPEC §6) but no UI
    /// events: the end of a stream that said nothing (an empty input) is
    /// nothing for a live view. An explicit `finish` is always told.
    fn finish_run(&mut self, reason: FinishReason, quiet_if_empty: bool, now: u64, out: &mut Outputs) {
        let silent = quiet_if_empty && !self.run.announced && self.run_is_pristine();
        self.close(ClosedBy::Finish, reason.into(), now, out);
        // What was said about a round that never got content (a model call
        // refused before any text) is kept in the run's metadata.
        if !self.run.open.meta.is_empty() {
            let meta = std::mem::take(&mut self.run.open.meta);
            self.run_meta(&meta, out);
        }
        self.run.finished = true;
        self.run.summary.finish_reason = Some(reason);
        out.summary(self.run.summary.clone());
        if !silent {
            self.announce(out);
            out.ui(UiEvent::RunEnd { run: self.run.number, reason });
        }
    }

    /// Rule 4: a new run. An unfinished run is finished first, unless it
    /// never saw anything (then `start` only confirms the implicit one).
    /// The new run is announced with its first output.
    fn start(&mut self, now: u64, out: &mut Outputs) {
        if !self.run.finished {
            if self.run_is_pristine() {
                return;
            }
            self.finish(FinishReason::Interrupted, now, out);
        }
        let number = self.run.number + 1;
        let summary = std::mem::take(&mut self.run.summary);
        if self.options.retain_rounds {
            self.finished_runs.push(summary);
        }
        self.run = Run { number, ..Default::default() };
        self.run.summary.session = self.options.session.clone();
        self.run.summary.run = number;
    }

    fn run_is_pristine(&self) -> bool {
        let fresh = Summary { session: self.options.session.clone(), run: self.run.number, ..Default::default() };
        self.run.open.is_empty() && self.run.summary == fresh
    }

    /// Closes the open round if it holds anything (rule 5): result-less
    /// calls get a placeholder with `reason` (rule 6), the round is counted,
    /// retained and queued for the sink.
    fn close(&mut self, closed_by: ClosedBy, reason: PlaceholderReason, now: u64, out: &mut Outputs) {
        self.end_text(out);
        if self.run.open.is_empty() {
            return;
        }
        let index = self.run.next_round;
        let run = self.run.number;
        let (message, thought, mut calls, started_at_ms, meta) = self.run.open.take();
        let tool_calls = calls
            .drain(..)
            .enumerate()
            .map(|(position, call)| self.settle(call, position, index, reason, now, out))
            .collect();
        // The emptied list goes back, so the next round's calls need no
        // allocation of their own.
        self.run.open.calls = calls;
        let round = Round {
            session: self.options.session.clone(),
            run,
            index,
            closed_by,
            message,
            thought,
            tool_calls,
            started_at_ms: started_at_ms.unwrap_or(now),
            finished_at_ms: now,
            meta,
        };
        self.run.next_round += 1;
        self.run.summary.add_round(&round);
        if self.options.retain_rounds {
            self.retained.push(round.clone());
        }
        out.round(round);
        out.ui(UiEvent::RoundEnd { run, index, closed_by });
    }

    /// Gives a call of a closing round its placeholder if it has no result.
    fn settle(
        &mut self,
        call: OpenCall,
        position: usize,
        round: u64,
        reason: PlaceholderReason,
        now: u64,
        out: &mut Outputs,
    ) -> ToolCall {
        self.run.closed.close(&call.id, round, position, call.result.is_some());
        let (result, finished_at_ms) = match call.result {
            Some(result) => (result, call.finished_at_ms),
            None => {
                out.ui(UiEvent::ToolCallInterrupted { id: &call.id, reason });
                if reason == PlaceholderReason::Superseded {
                    let slots = self.run.superseded.entry(Id::new(&call.id)).or_default();
                    slots.push(Superseded { slot: CallSlot { round, position }, output: call.output.clone() });
                }
                (ToolResult::placeholder_with_output(reason, call.output), now)
            }
        };
        ToolCall {
            id: call.id,
            title: call.title,
            name: call.name,
            arguments: call.arguments,
            result,
            started_at_ms: call.started_at_ms,
            finished_at_ms,
            meta: call.meta,
        }
    }

    /// Ends the open text stream of the UI, if any.
    fn end_text(&mut self, out: &mut Outputs) {
        match self.run.open_text.take() {
            Some(TextKind::Message) => out.ui(UiEvent::MessageEnd),
            Some(TextKind::Thought) => out.ui(UiEvent::ThoughtEnd),
            None => {}
        }
    }

    /// SPEC §6: after `finish`, every call but `start` is `after_finish`,
    /// and keeps what it carried.
    fn after_finish(&mut self, call: Call<'_>, out: &mut Outputs) {
        let content = Some(call.payload()).filter(|c| !c.is_empty());
        let status = call.terminal_status();
        let op = match call {
            Call::Unknown { op, .. } => op,
            _ => call.op_name(),
        };
        self.anomaly(out, AnomalyKind::AfterFinish, call.id(), status, op.to_owned(), content);
    }

    fn anomaly(
        &mut self,
        out: &mut Outputs,
        kind: AnomalyKind,
        id: Option<&str>,
        status: Option<TerminalStatus>,
        detail: String,
        content: Option<String>,
    ) {
        // A finished run's summary is already written: what follows its
        // finish carries its number but is not counted (SPEC §6).
        if !self.run.finished {
            self.run.summary.anomalies += 1;
        }
        out.anomaly(Anomaly {
            session: self.options.session.clone(),
            run: self.run.number,
            kind,
            id: id.map(str::to_owned),
            status,
            detail,
            content,
        });
    }
}

/// Appends `text` to `buffer`, or with `replace` puts it in place of what
/// was there (rules 8 and 13); `false` when nothing changed (an empty
/// append).
fn append_or_replace(buffer: &mut String, text: &str, replace: bool) -> bool {
    if replace {
        buffer.clear();
    } else if text.is_empty() {
        return false;
    }
    buffer.push_str(text);
    true
}

/// Sets every key of `patch` in `meta`.
fn merge(meta: &mut Meta, patch: &Meta, spare: &mut SpareMeta) {
    if meta.is_empty() {
        // A call's first metadata: a copy, into a map kept from a call
        // delivered when there is one.
        return spare.copy_call_meta(meta, patch);
    }
    for (key, value) in patch {
        meta.insert(key.clone(), value.clone());
    }
}

#[cfg(test)]
mod tests;
