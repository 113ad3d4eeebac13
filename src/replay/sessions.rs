//! The sessions of a replay: a [`Router`] of bare machines, each with one
//! encoder per output format, driven directly.
//!
//! No lock, clock handle or callback sits between the adapter and the
//! encoders: a call goes to its session's [`RoundMachine`], whose output
//! goes, in the same step, to that session's encoders, which frame it into
//! the output buffers of the replay's [`ReplayStep`]. An encoder serves
//! one session, so its state lives and goes with the session: evicted
//! with it (inside its checkpoint), freed when it ends. A replay's memory
//! is its open sessions, whatever it writes.

use smallvec::SmallVec;

use crate::adapters::CallSink;
use crate::call::Call;
use crate::encoders::{Encoder, Frames, Framing, OutputFormat};
use crate::machine::{Checkpoint, CheckpointError, MachineOptions, RoundMachine};
use crate::model::{AnomalyKind, FinishReason};
use crate::output::{Output, Outputs};
use crate::router::{CheckpointStore, MakeSession, Router};
use crate::session::Session;
use crate::wire::OutputLine;

/// What a replay hands its sessions with every call: the clock reading,
/// the machine's output buffer (emptied after each call), and one framed
/// output per format.
#[derive(Debug, Default)]
pub(crate) struct ReplayStep {
    now_ms: u64,
    outputs: Outputs,
    frames: Vec<Frames>,
    /// The records as values too, when the replay keeps them
    /// ([`ReplayOptions::record_values`](super::ReplayOptions::record_values)).
    values: Option<Vec<OutputLine>>,
}

/// One session of a replay: its machine and its encoders, one per output
/// format of the replay, in order.
#[derive(Debug)]
pub(crate) struct ReplaySession {
    machine: RoundMachine,
    encoders: SmallVec<[Box<dyn Encoder>; 1]>,
    formats: Formats,
}

/// The output formats of a replay, in order.
pub(crate) type Formats = SmallVec<[&'static OutputFormat; 2]>;

/// Makes a replay's sessions: a machine and an encoder of each format.
#[derive(Debug)]
pub(crate) struct MakeReplaySession(Formats);

impl MakeSession<ReplaySession> for MakeReplaySession {
    fn make(&self, name: Option<&str>) -> ReplaySession {
        ReplaySession::new(name, self.0.clone())
    }
}

impl ReplaySession {
    fn new(name: Option<&str>, formats: Formats) -> Self {
        let encoders: SmallVec<[Box<dyn Encoder>; 1]> = formats.iter().map(|format| format.encoder()).collect();
        let ui_events = encoders.iter().any(|encoder| encoder.reads().ui_events());
        let mut options = MachineOptions::default().retain_rounds(false).ui_events(ui_events);
        options.session = name.map(str::to_owned);
        ReplaySession { machine: RoundMachine::new(options), encoders, formats }
    }

    /// Hands what the last call caused to every encoder that reads it.
    fn deliver(&mut self, step: &mut ReplayStep) {
        let ReplayStep { now_ms, outputs, frames, values } = step;
        let session = self.machine.options().session.as_deref();
        for output in outputs.iter() {
            if let (Some(values), Output::Record(record)) = (values.as_mut(), output) {
                values.push(OutputLine::from(record));
            }
            for (encoder, out) in self.encoders.iter_mut().zip(frames.iter_mut()) {
                let reads = encoder.reads();
                match output {
                    Output::Record(record) if reads.records() => encoder.record_at(record, *now_ms, out),
                    Output::Ui(event) if reads.ui_events() => encoder.ui_event(session, &event, *now_ms, out),
                    _ => {}
                }
            }
        }
        outputs.clear();
        outputs.release_outlier();
    }
}

impl Session for ReplaySession {
    type Context = ReplayStep;

    fn call(&mut self, call: Call<'_>, step: &mut ReplayStep) {
        self.machine.handle(call, step.now_ms, &mut step.outputs);
        self.deliver(step);
    }

    fn finish_if_running(&mut self, reason: FinishReason, step: &mut ReplayStep) -> bool {
        let was_running = self.machine.finish_if_running(reason, step.now_ms, &mut step.outputs);
        self.deliver(step);
        was_running
    }

    /// The machine's checkpoint, with what each encoder keeps (left out
    /// when none keeps anything).
    fn checkpoint(&self) -> Result<Checkpoint, CheckpointError> {
        let mut states = Vec::with_capacity(self.encoders.len());
        for (encoder, format) in self.encoders.iter().zip(&self.formats) {
            let state = encoder
                .save()
                .ok_or_else(|| CheckpointError::NotSaveable(format!("output format {}", format.name())))?;
            states.push(state);
        }
        let mut checkpoint = self.machine.checkpoint();
        if states.iter().any(|state| !state.is_null()) {
            checkpoint.encoders = states;
        }
        Ok(checkpoint)
    }

    fn restore(&mut self, mut checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        let states = std::mem::take(&mut checkpoint.encoders);
        if !states.is_empty() && states.len() != self.formats.len() {
            let detail = format!("{} output states for {} output formats", states.len(), self.formats.len());
            return Err(CheckpointError::Inconsistent(detail));
        }
        let mut encoders: SmallVec<[Box<dyn Encoder>; 1]> =
            self.formats.iter().map(|format| format.encoder()).collect();
        for (at, encoder) in encoders.iter_mut().enumerate() {
            encoder.restore(states.get(at).cloned().unwrap_or_default())?;
        }
        self.machine.restore(checkpoint)?;
        self.encoders = encoders;
        Ok(())
    }
}

/// The sessions of a replay: a [`Router`] of [`ReplaySession`]s, whose
/// context holds the replay's clock and its framed outputs.
#[derive(Debug)]
pub(crate) struct Sessions {
    router: Router<ReplaySession, MakeReplaySession>,
    /// Calls that kept an event the adapter did not know (`unknown_event`
    /// anomalies, unknown ops), counted: what tells a wrong `--from` from
    /// a stream of the right format.
    pub(crate) unknown_events: u64,
}

/// Keep at most this many sessions open, the rest in this store.
pub(crate) type Eviction = (usize, Box<dyn CheckpointStore>);

impl Sessions {
    pub(crate) fn new(formats: Formats, framing: Framing, eviction: Option<Eviction>, values: bool) -> Self {
        let frames = formats.iter().map(|_| Frames::new(framing)).collect();
        let mut router = Router::with_maker(MakeReplaySession(formats));
        router.context_mut().frames = frames;
        router.context_mut().values = values.then(Vec::new);
        if let Some((keep, store)) = eviction {
            router = router.evict_beyond(keep, store);
        }
        Sessions { router, unknown_events: 0 }
    }

    /// The replay's clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.router.context().now_ms
    }

    /// Moves the replay's clock.
    pub(crate) fn set_clock(&mut self, at_ms: u64) {
        self.router.context_mut().now_ms = at_ms;
    }

    /// Every session's checkpoint, in order of first appearance
    /// ([`Replayer::checkpoint`](super::Replayer::checkpoint)).
    pub(crate) fn checkpoint(&mut self) -> Result<Vec<Checkpoint>, CheckpointError> {
        self.router.checkpoint_sessions()
    }

    /// Restores what [`checkpoint`](Self::checkpoint) gave, into sessions
    /// that have none yet.
    pub(crate) fn restore(&mut self, sessions: Vec<Checkpoint>) -> Result<(), CheckpointError> {
        self.router.restore_sessions(sessions)
    }

    /// The sessions seen, at least one: an empty input has the
    /// session-less one (SPEC §6).
    pub(crate) fn count(&mut self) -> usize {
        if self.router.sessions() == 0 {
            self.router.session(None);
        }
        self.router.sessions()
    }

    /// End of input for the session seen first: its open run finishes,
    /// writing its summary (SPEC §3, §6); `false` when none is left.
    pub(crate) fn finish_first(&mut self) -> bool {
        self.router.finish_first(FinishReason::Interrupted)
    }

    /// Moves the records kept as values so far to the end of `out`.
    pub(crate) fn take_values(&mut self, out: &mut Vec<OutputLine>) {
        if let Some(values) = self.router.context_mut().values.as_mut() {
            out.append(values);
        }
    }

    /// The framed output of format `index` not taken yet.
    pub(crate) fn output(&self, index: usize) -> &[u8] {
        self.router.context().frames.get(index).map_or(&[], Frames::bytes)
    }

    /// Forgets the output of every format.
    pub(crate) fn clear_all_output(&mut self) {
        self.router.context_mut().frames.iter_mut().for_each(Frames::clear);
    }

    /// Forgets the output of format `index` (once written).
    pub(crate) fn clear_output(&mut self, index: usize) {
        if let Some(frames) = self.router.context_mut().frames.get_mut(index) {
            frames.clear();
        }
    }
}

/// Adapters address their calls to the sessions of the replay.
impl CallSink for Sessions {
    #[inline]
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        if matches!(call, Call::Unknown { .. } | Call::Anomaly { kind: AnomalyKind::UnknownEvent, .. }) {
            self.unknown_events += 1;
        }
        self.router.call(session, call);
    }

    fn clock(&mut self, at_ms: u64) {
        self.set_clock(at_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::Reads;
    use crate::router::MemoryStore;
    use crate::ui::UiEvent;

    /// An output format that keeps a state it cannot save.
    #[derive(Debug, Default)]
    struct Unsaveable(u64);

    impl Encoder for Unsaveable {
        fn reads(&self) -> Reads {
            Reads::UiEvents
        }
        fn ui_event(&mut self, _: Option<&str>, _: &UiEvent<'_>, _: u64, out: &mut Frames) {
            self.0 += 1;
            let n = self.0;
            out.frame(|buf| buf.extend_from_slice(n.to_string().as_bytes()));
        }
    }

    static UNSAVEABLE: OutputFormat =
        OutputFormat { name: "unsaveable", about: "", encoder: || Box::<Unsaveable>::default() };

    fn message(sessions: &mut Sessions, name: &str) {
        sessions.call(Some(name), Call::Message { text: "x" });
    }

    #[test]
    fn a_session_whose_output_state_cannot_be_saved_is_refused_and_never_evicted() {
        let formats: Formats = [&UNSAVEABLE].into_iter().collect();
        let mut sessions =
            Sessions::new(formats.clone(), Framing::Lines, Some((1, Box::new(MemoryStore::default()))), false);
        message(&mut sessions, "a");
        message(&mut sessions, "b");
        // "a" could not be evicted for "b": both are open, and "a" counts on.
        assert_eq!(sessions.router.open_sessions(), 2);
        message(&mut sessions, "a");
        let out = String::from_utf8(sessions.output(0).to_vec()).unwrap();
        // a: run_start, message_start, delta (1-3); b: 1-3; a: delta (4).
        assert_eq!(out.lines().collect::<Vec<_>>(), ["1", "2", "3", "1", "2", "3", "4"]);
        let error = sessions.checkpoint().unwrap_err();
        assert_eq!(error.to_string(), "output format unsaveable keeps a state that cannot be saved");
    }

    #[test]
    fn a_checkpoint_with_output_states_for_other_formats_does_not_fit() {
        let agui: Formats = [OutputFormat::named("agui").unwrap()].into_iter().collect();
        let mut sessions = Sessions::new(agui, Framing::Lines, None, false);
        message(&mut sessions, "a");
        let saved = sessions.checkpoint().unwrap();
        assert_eq!(saved[0].encoders.len(), 1, "the AG-UI thread is in the session's checkpoint");
        let two: Formats = ["agui", "ui"].into_iter().map(|n| OutputFormat::named(n).unwrap()).collect();
        let error = Sessions::new(two, Framing::Lines, None, false).restore(saved).unwrap_err();
        assert!(error.to_string().contains("1 output states for 2 output formats"), "{error}");
    }
}
