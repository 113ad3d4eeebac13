//! The session tree and each session's state.
//!
//! ACP has no run of its own: a top-level session's runs are its prompts
//! (and `session/load` replays), from the request to its response. A
//! subagent is a session too, a child of the session whose Task call (or
//! `subagent_*` event) runs it: its runs start at its first traffic and end
//! with its parent's. The tool calls of every session of a tree belong to
//! the tree's root, whose run end releases them.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{AcpAdapter, CallSink};
use crate::adapters::support::one;
use crate::call::Call;
use crate::model::{FinishReason, Meta};

/// What the adapter knows of one session.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct SessionState {
    /// The session whose subagent this one is.
    parent: Option<Box<str>>,
    /// Subagent sessions of this one.
    children: Vec<Box<str>>,
    /// Made up by the adapter (`{session}/{parentToolUseId}`) for subagent
    /// traffic that came under its parent's id: forgotten with the run.
    made_up: bool,
    /// Whether a run is going on, and whether a `session/load` replay is.
    pub phase: Phase,
    /// Text gathered for run-metadata keys (the prompt), sent whole when
    /// the run ends, so that n chunks cost n and not n².
    gathering: Vec<(Cow<'static, str>, String)>,
    /// The run's context compactions, each its latest update with its
    /// summary text whole, sent when the run ends.
    compactions: Vec<Map<String, Value>>,
    /// The message id last put in the round's metadata.
    pub last_message_id: Option<Box<str>>,
    /// The parent's Task call was told this session's name.
    linked: bool,
    /// The machine's open round in this session, as the calls the adapter
    /// made left it.
    pub round: Round,
}

/// Where a session is in its runs: one state, since whether a run is going
/// on and whether a `session/load` replays the history are not independent
/// (a replay begins with a run), and whether the run saw agent content
/// matters only to a replay, which cuts its runs there.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Phase {
    /// No run is going on: none began yet, or the last one ended.
    #[default]
    Idle,
    /// A run is going on: a prompt's until its response, or a subagent's
    /// from its first traffic to its end.
    Running,
    /// A `session/load` replays the session's history, and one of its
    /// runs is going on. The history is a sequence of prompts: a user
    /// message after agent content is the next prompt, so it begins the
    /// next run.
    Replaying {
        /// The current run saw agent content.
        agent_content: bool,
    },
    /// A replay whose run ended before the load's response came (a
    /// subagent's, ended with its parent's run, or by its final state):
    /// the replay goes on, and the session's next traffic begins the next
    /// run (a user message does when the last run saw agent content).
    ReplayBetweenRuns {
        /// The run that ended saw agent content.
        agent_content: bool,
    },
}

impl Phase {
    /// A run is going on: its end will be a `finish`.
    pub(super) fn is_running(self) -> bool {
        matches!(self, Phase::Running | Phase::Replaying { .. })
    }

    /// After a subagent's run begins: a replay's next run, or a run.
    fn run_begun(self) -> Phase {
        match self {
            Phase::Replaying { .. } | Phase::ReplayBetweenRuns { .. } => Phase::Replaying { agent_content: false },
            Phase::Idle | Phase::Running => Phase::Running,
        }
    }

    /// After a subagent's run ended: a replay goes on until its response.
    fn run_ended(self) -> Phase {
        match self {
            Phase::Replaying { agent_content } | Phase::ReplayBetweenRuns { agent_content } => {
                Phase::ReplayBetweenRuns { agent_content }
            }
            Phase::Idle | Phase::Running => Phase::Idle,
        }
    }
}

/// The machine's open round of a session, as the calls the adapter made
/// left it (SPEC rules 2 to 4, 7 and §6's first terminal match), so that
/// the adapter reads a `tool_call` for an id the way the machine will:
/// while the open round holds a call of that id, an upsert of it (rule 7),
/// after which a second result is a duplicate; once that round closed, a
/// new call (SPEC §6). It follows what was sent, not what the adapter
/// remembers of each call, which it forgets at times the machine does not
/// (when a run of another session of the tree begins).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Round {
    /// The session's run takes calls; its open round holds these tool
    /// calls, by id (none: it holds text only, or nothing).
    Open {
        /// Without their result.
        pending: BTreeSet<Box<str>>,
        /// With their result.
        resulted: BTreeSet<Box<str>>,
    },
    /// The session's run finished: until its next start, the machine
    /// reports what comes as `after_finish`, and no round takes a call.
    Finished,
}

impl Default for Round {
    fn default() -> Self {
        Round::Open { pending: BTreeSet::new(), resulted: BTreeSet::new() }
    }
}

impl Round {
    /// Text (a message or a thought) was sent: non-empty, it closes a
    /// round that holds a tool call (rule 2).
    pub(super) fn text(&mut self, text: &str) {
        if let Round::Open { pending, resulted } = self {
            if !text.is_empty() {
                pending.clear();
                resulted.clear();
            }
        }
    }

    /// A `tool_call` for `id` was sent: the open round takes it, unless it
    /// holds it already (an upsert, rule 7).
    pub(super) fn declared(&mut self, id: &str) {
        if let Round::Open { pending, resulted } = self {
            if !pending.contains(id) && !resulted.contains(id) {
                pending.insert(id.into());
            }
        }
    }

    /// A terminal for `id` was sent: the open round's call of that id
    /// without a result takes it, and the last such result closes the
    /// round (rule 3). A terminal that goes elsewhere (a stitch, an
    /// anomaly) changes nothing here.
    pub(super) fn resulted(&mut self, id: &str) {
        if let Round::Open { pending, resulted } = self {
            if pending.remove(id) {
                if pending.is_empty() {
                    resulted.clear();
                } else {
                    resulted.insert(id.into());
                }
            }
        }
    }

    /// The open round holds a call of `id` that has its result.
    pub(super) fn has_result(&self, id: &str) -> bool {
        matches!(self, Round::Open { resulted, .. } if resulted.contains(id))
    }
}

impl SessionState {
    /// Something is held back for run metadata.
    pub(super) fn has_gathered(&self) -> bool {
        !self.gathering.is_empty() || !self.compactions.is_empty()
    }

    /// Agent content came: a replay's next user message is the next prompt.
    pub(super) fn saw_agent_content(&mut self) {
        if let Phase::Replaying { agent_content } | Phase::ReplayBetweenRuns { agent_content } = &mut self.phase {
            *agent_content = true;
        }
    }

    /// A user message now begins the next run of a replay.
    pub(super) fn replay_cut(&self) -> bool {
        matches!(
            self.phase,
            Phase::Replaying { agent_content: true } | Phase::ReplayBetweenRuns { agent_content: true }
        )
    }

    /// The session's run starts, or starts again: a new run, whose round
    /// holds nothing yet.
    fn started(&mut self) {
        self.last_message_id = None;
        self.round = Round::default();
    }
}

impl AcpAdapter {
    /// The session a message goes to. A tool call's session is fixed when
    /// it is declared, so its later updates follow it wherever they are
    /// sent. Subagent traffic (`_meta.claudeCode.parentToolUseId`) sent
    /// under its parent's session id goes to a session of its own,
    /// `{session}/{parentToolUseId}`; a subagent that has its own session
    /// id already (JetBrains Air's `subagent_*` events) keeps it.
    pub(super) fn route<'s>(
        &mut self,
        session: &'s str,
        parent_tool: Option<&str>,
        call: Option<&str>,
    ) -> Cow<'s, str> {
        let root = self.root_of(session);
        if let Some(state) = call.and_then(|call| self.calls.get(root)?.get(call)) {
            // Most calls stay in the session they were sent to: no copy.
            return match &*state.session {
                same if same == session => Cow::Borrowed(session),
                other => Cow::Owned(other.to_owned()),
            };
        }
        let is_child = self.sessions.get(session).is_some_and(|s| s.parent.is_some());
        match parent_tool {
            Some(parent_tool) if !is_child => {
                let child = format!("{session}/{parent_tool}");
                if !self.sessions.contains_key(child.as_str()) {
                    self.adopt(session, &child);
                    if let Some(state) = self.sessions.get_mut(child.as_str()) {
                        state.made_up = true;
                    }
                }
                Cow::Owned(child)
            }
            _ => Cow::Borrowed(session),
        }
    }

    /// Names a subagent's session in the metadata of the parent's call
    /// that runs it (Claude Code's Task), once, so that a consumer can
    /// link the two.
    pub(super) fn link(&mut self, child: &str, parent_tool: Option<&str>, calls: &mut dyn CallSink) {
        let Some(parent_tool) = parent_tool else { return };
        if self.sessions.get(child).is_none_or(|s| s.linked || s.parent.is_none()) {
            return;
        }
        let root = self.root(child);
        let Some(call) = self.calls.get(root.as_ref()).and_then(|c| c.get(parent_tool)) else { return };
        let session = call.session.clone();
        if let Some(state) = self.sessions.get_mut(child) {
            state.linked = true;
        }
        let meta = one("acp_child_session", child.into());
        calls.call(Some(&session), Call::ToolMeta { id: parent_tool, meta: &meta });
    }

    /// The topmost parent of a session (itself when it has none), apart
    /// from the adapter, for callers that change it next: the session
    /// itself, borrowed, when it has no parent (most do); a copy when it
    /// has.
    pub(super) fn root<'s>(&self, session: &'s str) -> Cow<'s, str> {
        match self.root_of(session) {
            root if root == session => Cow::Borrowed(session),
            root => Cow::Owned(root.to_owned()),
        }
    }

    /// The topmost parent of a session (itself when it has none).
    fn root_of<'s>(&'s self, session: &'s str) -> &'s str {
        let mut at = session;
        // Parents form a forest ([`adopt`](Self::adopt) refuses cycles);
        // the bound only guards against a bug.
        for _ in 0..64 {
            match self.sessions.get(at).and_then(|s| s.parent.as_deref()) {
                Some(parent) => at = parent,
                None => break,
            }
        }
        at
    }

    /// A session's state, made on first sight (the name is copied only
    /// then: `entry` would copy it on every event).
    pub(super) fn session_mut(&mut self, session: &str) -> &mut SessionState {
        if !self.sessions.contains_key(session) {
            self.sessions.insert(session.into(), SessionState::default());
        }
        self.sessions.get_mut(session).expect("the session was inserted above")
    }

    /// Makes `child` a subagent session of `parent` (unless it has a
    /// parent already or that would make a cycle).
    pub(super) fn adopt(&mut self, parent: &str, child: &str) {
        if parent == child || &*self.root(parent) == child {
            return;
        }
        let state = self.sessions.entry(child.into()).or_default();
        if state.parent.is_some() {
            return;
        }
        state.parent = Some(parent.into());
        self.sessions.entry(parent.into()).or_default().children.push(child.into());
    }

    /// A subagent session begins a run at its first traffic after its
    /// last one finished. (A top-level session's runs are its prompts.)
    pub(super) fn ensure_running(&mut self, session: &str, calls: &mut dyn CallSink) {
        let state = self.session_mut(session);
        if state.parent.is_some() && !state.phase.is_running() {
            state.phase = state.phase.run_begun();
            state.started();
            calls.call(Some(session), Call::Start);
        }
    }

    /// A prompt (or load) begins a run of `session`; subagents still
    /// running from the last one end with it.
    pub(super) fn begin_run(&mut self, session: &str, loading: bool, calls: &mut dyn CallSink) {
        self.flush(session, calls);
        self.end_children(session, FinishReason::Interrupted, calls);
        let root = self.root(session);
        self.release(&root);
        let state = self.sessions.entry(session.into()).or_default();
        state.phase = if loading { Phase::Replaying { agent_content: false } } else { Phase::Running };
        state.started();
        calls.call(Some(session), Call::Start);
    }

    /// The response to a prompt (or load): the run ends, with what the
    /// response said; so do the runs of the session's subagents. A load's
    /// replay ends with it.
    pub(super) fn end_run(&mut self, session: &str, reason: FinishReason, meta: &Meta, calls: &mut dyn CallSink) {
        self.end_children(session, reason, calls);
        self.flush(session, calls);
        if !meta.is_empty() {
            calls.call(Some(session), Call::RunMeta { meta });
        }
        calls.call(Some(session), Call::Finish { reason });
        let state = self.sessions.entry(session.into()).or_default();
        state.phase = Phase::Idle;
        state.round = Round::Finished;
        let root = self.root(session);
        if &*root == session {
            self.release(&root);
        }
    }

    /// Ends the runs of `session`'s subagents (depth first), and forgets
    /// the sessions the adapter made up for them.
    pub(super) fn end_children(&mut self, session: &str, reason: FinishReason, calls: &mut dyn CallSink) {
        let children = self.sessions.get(session).map(|s| s.children.clone()).unwrap_or_default();
        for child in &children {
            self.end_children(child, reason, calls);
            self.end_child(child, reason, calls);
        }
        let made_up: Vec<Box<str>> =
            children.into_iter().filter(|c| self.sessions.get(c).is_some_and(|s| s.made_up)).collect();
        if made_up.is_empty() {
            return;
        }
        for child in &made_up {
            self.sessions.remove(child);
        }
        if let Some(state) = self.sessions.get_mut(session) {
            state.children.retain(|c| !made_up.contains(c));
        }
    }

    /// Ends a subagent's run, if one is going on.
    pub(super) fn end_child(&mut self, child: &str, reason: FinishReason, calls: &mut dyn CallSink) {
        self.flush(child, calls);
        if let Some(state) = self.sessions.get_mut(child) {
            if state.phase.is_running() {
                state.phase = state.phase.run_ended();
                state.round = Round::Finished;
                calls.call(Some(child), Call::Finish { reason });
            }
        }
    }

    /// Forgets the tool calls and background tasks of a root session's
    /// run: no late result can reach them any more.
    pub(super) fn release(&mut self, root: &str) {
        self.calls.remove(root);
        if !self.tasks.is_empty() {
            self.tasks.retain(|_, task| &*task.root != root);
        }
    }

    /// Appends text to a run-metadata key, sent whole by
    /// [`flush`](Self::flush).
    pub(super) fn gather(&mut self, session: &str, key: &'static str, text: &str) {
        let gathering = &mut self.sessions.entry(session.into()).or_default().gathering;
        match gathering.iter_mut().find(|(k, _)| *k == key) {
            Some((_, gathered)) => gathered.push_str(text),
            None => gathering.push((Cow::Borrowed(key), text.to_owned())),
        }
    }

    /// Sends gathered text as run metadata: before anything else of the
    /// session, and before its run ends.
    pub(super) fn flush(&mut self, session: &str, calls: &mut dyn CallSink) {
        let Some(state) = self.sessions.get_mut(session) else { return };
        let mut meta: Meta =
            state.gathering.drain(..).map(|(key, text)| (key.into_owned(), Value::String(text))).collect();
        if !state.compactions.is_empty() {
            let compactions = state.compactions.drain(..).map(Value::Object).collect();
            meta.insert("acp_compactions".into(), Value::Array(compactions));
        }
        if !meta.is_empty() {
            calls.call(Some(session), Call::RunMeta { meta: &meta });
        }
    }

    /// The entry of compaction `id` in the session's run.
    pub(super) fn compaction(&mut self, session: &str, id: &Value) -> &mut Map<String, Value> {
        let compactions = &mut self.sessions.entry(session.into()).or_default().compactions;
        let at = match compactions.iter().position(|c| c.get("compactionId") == Some(id)) {
            Some(at) => at,
            None => {
                compactions.push(Map::from_iter([("compactionId".to_owned(), id.clone())]));
                compactions.len() - 1
            }
        };
        &mut compactions[at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_round_follows_the_machines_rules() {
        let mut round = Round::default();
        round.declared("a");
        round.declared("b");
        round.resulted("a");
        assert!(round.has_result("a") && !round.has_result("b"));
        round.declared("a");
        assert!(round.has_result("a"), "an upsert: the call keeps its result");
        round.resulted("b");
        assert!(!round.has_result("a"), "the last result closed the round");
        round.declared("a");
        round.declared("b");
        round.resulted("a");
        round.text("");
        assert!(round.has_result("a"), "empty text changes nothing");
        round.text("next");
        assert_eq!(round, Round::default(), "text closes a round with calls");
        round = Round::Finished;
        round.declared("a");
        round.resulted("a");
        assert_eq!(round, Round::Finished, "after finish, no round takes a call");
    }

    #[test]
    fn a_replay_outlives_a_run_its_parent_ends() {
        let replaying = Phase::Replaying { agent_content: true };
        assert_eq!(replaying.run_ended(), Phase::ReplayBetweenRuns { agent_content: true });
        assert!(!replaying.run_ended().is_running());
        assert_eq!(replaying.run_ended().run_begun(), Phase::Replaying { agent_content: false });
        assert_eq!(Phase::Running.run_ended(), Phase::Idle);
        assert_eq!(Phase::Idle.run_begun(), Phase::Running);
    }
}
