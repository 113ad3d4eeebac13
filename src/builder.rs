//! The self-locking builder: the state machine plus a lock, a clock and
//! ordered delivery.

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::call::Call;
use crate::clock::{Clock, SystemClock};
use crate::handler::StreamHandler;
use crate::machine::{Checkpoint, CheckpointError, MachineOptions, RoundMachine};
use crate::model::{FinishReason, Round, RoundInProgress, Summary};
use crate::output::{Output, Outputs};
use crate::sink::{RoundSink, SinkOutcome, SinkRecord};
use crate::sink_failure::{SinkError, SinkFailure};
use crate::ui::{UiEvent, UiFlow, UiHandler};
use crate::wire::OutputLine;

/// Aggregates one session's stream into rounds; share it between threads
/// (it implements [`StreamHandler`](crate::StreamHandler) with `&self` methods).
///
/// Each call takes the builder's lock, reads the clock, runs the
/// [`RoundMachine`] and queues what it produced; the queue is then delivered
/// **after** the lock is released, in the order the state changed (SPEC §2
/// rule 11), in two lanes, so that persistence never waits for a UI:
///
/// - the records lane hands rounds, stitches, anomalies, meta patches and
///   summaries to the [`RoundSink`]; once a batch's records are delivered,
///   its UI events join the UI lane, so a round reaches the sink before the
///   UI events of the call that closed it;
/// - the UI lane hands UI events to the [`UiHandler`]. It holds at most
///   [`ui_queue_capacity`](Self::ui_queue_capacity) events: a handler that
///   falls that far behind is cut off (told once, through
///   [`UiHandler::overflowed`], and given nothing more), and the sink and
///   the callers never wait for it;
/// - a call that queued records delivers them (with what was queued before
///   them); if another thread is delivering, it waits until its records
///   are out, and that thread, once its own are out, hands the lane over
///   rather than delivering the waiting caller's. So no call delivers more
///   than one call's records of each other thread. A call made from a
///   callback on the delivering thread only queues (no deadlock); a sink
///   must not wait for another thread's call on the same builder;
/// - UI events never make a caller wait: whoever finds the UI lane free
///   delivers it, other threads' events included (at most the queue's
///   capacity). A handler that may be slow belongs on a
///   [`UiThread`](crate::UiThread): no caller then runs it, and what a
///   caller spends on another thread's event is one copy;
/// - each consumer sees its output in state order.
///
/// A callback that panics does not poison anything: the rest of the queue is
/// still delivered, then the panic resumes in the thread that delivered the
/// output: the caller's own, unless its records went out in the batch of a
/// caller that called after it while it waited. The round whose delivery
/// panicked stays in the retained rounds.
///
/// The clock is read outside the lock, so a [`Clock`] may itself use the
/// builder.
///
/// ```
/// use roundup::{FinishReason, ManualClock, RoundBuilder, StreamHandler, ToolCallStatus};
///
/// let clock = ManualClock::new(1_000);
/// let builder = RoundBuilder::new().with_clock(clock.clone()).with_session("s1");
/// builder.thought("The user wants a listing.");
/// builder.message("Let me look.");
/// builder.tool_call("t1", "bash");
/// builder.tool_update("t1", r#"{"cmd":"#, ToolCallStatus::InProgress);
/// builder.tool_update("t1", r#""ls"}"#, ToolCallStatus::InProgress);
/// clock.advance(400);
/// builder.tool_update("t1", "a.txt\nb.txt", ToolCallStatus::Completed);
///
/// let round = &builder.rounds()[0];
/// assert_eq!(round.session.as_deref(), Some("s1"));
/// assert_eq!(round.tool_calls[0].arguments, r#"{"cmd":"ls"}"#);
/// assert_eq!(round.tool_calls[0].result.content(), Some("a.txt\nb.txt"));
/// assert_eq!((round.started_at_ms, round.finished_at_ms), (1_000, 1_400));
/// ```
pub struct RoundBuilder {
    state: Mutex<State>,
    /// Signalled when a batch of records was delivered or the records lane
    /// was let go: callers waiting for their records re-check.
    records_done: Condvar,
    clock: Box<dyn Clock>,
    sink: Option<Box<dyn RoundSink>>,
    ui: Option<Box<dyn UiHandler>>,
    /// Set when the UI handler answered [`UiFlow::Stop`] or fell behind.
    ui_stopped: AtomicBool,
    ui_capacity: usize,
}

/// The default [`RoundBuilder::ui_queue_capacity`].
pub const DEFAULT_UI_QUEUE_CAPACITY: usize = 1 << 16;

struct State {
    machine: RoundMachine,
    /// Output whose records are not yet handed to a delivering thread.
    pending: Outputs,
    /// Empty buffers kept for their capacity.
    spares: Vec<Outputs>,
    /// The thread delivering records, if one is: new output only queues,
    /// and its own calls (from a callback) do not wait.
    records_deliverer: Option<std::thread::ThreadId>,
    /// Callers waiting for their records to be delivered.
    records_waiting: usize,
    /// Calls that queued records, counted (the latest is in `pending` until
    /// a deliverer takes it); the count of the latest one delivered.
    records_queued: u64,
    delivered_upto: u64,
    /// Batches whose records are delivered, with their UI events to go.
    ui_batches: VecDeque<Outputs>,
    /// The UI events in `ui_batches`.
    ui_queued: usize,
    /// A thread is delivering UI events.
    ui_delivering: bool,
    /// The UI handler fell behind by this many events and is cut off: to
    /// tell it, once.
    ui_overflow: Option<usize>,
    /// The last clock reading, passed when the machine needs none.
    last_now: u64,
    /// Records the sink refused during calls that return nothing, for
    /// [`RoundBuilder::take_sink_failures`].
    failures: Vec<SinkFailure>,
}

impl Default for RoundBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for RoundBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoundBuilder")
            .field("session", &self.state.lock().machine.options().session)
            .field("sink", &self.sink.is_some())
            .field("ui", &self.ui.is_some())
            .finish_non_exhaustive()
    }
}

impl RoundBuilder {
    /// A builder with the system clock, no sink, no UI handler, retaining
    /// its rounds, for a session without a name.
    pub fn new() -> Self {
        let options = MachineOptions { ui_events: false, ..MachineOptions::default() };
        RoundBuilder {
            state: Mutex::new(State {
                machine: RoundMachine::new(options),
                pending: Outputs::new(),
                spares: Vec::new(),
                records_deliverer: None,
                records_waiting: 0,
                records_queued: 0,
                delivered_upto: 0,
                ui_batches: VecDeque::new(),
                ui_queued: 0,
                ui_delivering: false,
                ui_overflow: None,
                last_now: 0,
                failures: Vec::new(),
            }),
            records_done: Condvar::new(),
            clock: Box::new(SystemClock),
            sink: None,
            ui: None,
            ui_stopped: AtomicBool::new(false),
            ui_capacity: DEFAULT_UI_QUEUE_CAPACITY,
        }
    }

    /// Sends the records for persistence (closed rounds, stitches,
    /// anomalies, meta patches, run summaries) to the closure `sink`.
    ///
    /// Taking a closure (not any [`RoundSink`]) is what lets its argument's
    /// type be inferred: `.with_sink(|record| ...)` needs no annotation. A
    /// sink type of one's own goes to [`with_round_sink`](Self::with_round_sink).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use roundup::{RoundBuilder, SinkRecord, StreamHandler};
    ///
    /// let rounds = Arc::new(AtomicUsize::new(0));
    /// let count = Arc::clone(&rounds);
    /// let builder = RoundBuilder::new().with_sink(move |record| {
    ///     if let SinkRecord::Round(_) = record {
    ///         count.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// });
    /// builder.message("Hi");
    /// builder.finish(roundup::FinishReason::Interrupted);
    /// assert_eq!(rounds.load(Ordering::Relaxed), 1);
    /// ```
    pub fn with_sink<F, R>(self, sink: F) -> Self
    where
        F: Fn(SinkRecord<'_>) -> R + Send + Sync + 'static,
        R: SinkOutcome + 'static,
    {
        self.with_round_sink(sink)
    }

    /// Sends the records for persistence to `sink`, any [`RoundSink`].
    pub fn with_round_sink(mut self, sink: impl RoundSink + 'static) -> Self {
        self.sink = Some(Box::new(sink));
        self
    }

    /// Sends live UI events to the closure `ui`; without a handler none are
    /// produced. Like [`with_sink`](Self::with_sink), it takes a closure so
    /// that `.with_ui(|event| ...)` needs no annotation; a handler type of
    /// one's own goes to [`with_ui_handler`](Self::with_ui_handler).
    ///
    /// ```
    /// use roundup::{RoundBuilder, StreamHandler, UiFlow};
    /// let builder = RoundBuilder::new().with_ui(|event| {
    ///     println!("{}", serde_json::to_string(event).unwrap());
    ///     UiFlow::Continue
    /// });
    /// builder.message("Hi");
    /// ```
    pub fn with_ui<F>(self, ui: F) -> Self
    where
        F: Fn(&UiEvent<'_>) -> UiFlow + Send + Sync + 'static,
    {
        self.with_ui_handler(ui)
    }

    /// Sends live UI events to `ui`, any [`UiHandler`].
    pub fn with_ui_handler(mut self, ui: impl UiHandler + 'static) -> Self {
        self.ui = Some(Box::new(ui));
        self.ui_stopped = AtomicBool::new(false);
        self.machine_mut().set_ui_events(true);
        self
    }

    /// How many UI events may wait for a slow [`UiHandler`] (default
    /// 65,536) before it is cut off. The producer and the sink never wait
    /// for the UI.
    pub fn ui_queue_capacity(mut self, events: usize) -> Self {
        self.ui_capacity = events.max(1);
        self
    }

    /// Takes timestamps from `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Names the session written into every record.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        let mut options = self.machine_mut().options().clone();
        options.session = Some(session.into());
        *self.machine_mut() = RoundMachine::new(options);
        self
    }

    /// Whether closed rounds are kept in memory (default `true`). With
    /// `false`, memory stays bounded by the open round however long the
    /// session runs; rounds still reach the sink.
    pub fn retain_rounds(mut self, retain: bool) -> Self {
        let mut options = self.machine_mut().options().clone();
        options.retain_rounds = retain;
        *self.machine_mut() = RoundMachine::new(options);
        self
    }

    fn machine_mut(&mut self) -> &mut RoundMachine {
        &mut self.state.get_mut().machine
    }

    /// A copy of the retained rounds of every run, stitches applied.
    pub fn rounds(&self) -> Vec<Round> {
        self.state.lock().machine.rounds().to_vec()
    }

    /// Takes the retained rounds out, leaving none.
    pub fn take_rounds(&self) -> Vec<Round> {
        self.state.lock().machine.take_rounds()
    }

    /// The round in progress, as a value: what a UI that connects mid-round
    /// draws before following the live events; `None` when none is open.
    pub fn open_round(&self) -> Option<RoundInProgress> {
        self.state.lock().machine.open_round()
    }

    /// The current run's summary.
    pub fn summary(&self) -> Summary {
        self.state.lock().machine.summary().clone()
    }

    /// The summaries of every run of the session, the current one last.
    pub fn summaries(&self) -> Vec<Summary> {
        self.state.lock().machine.summaries().cloned().collect()
    }

    /// The current run's number.
    pub fn run(&self) -> u64 {
        self.state.lock().machine.run()
    }

    /// `true` once the current run saw `finish`, until the next `start`.
    pub fn is_finished(&self) -> bool {
        self.state.lock().machine.is_finished()
    }

    /// Finishes the current run unless it is finished already (so, unlike
    /// [`finish`](crate::StreamHandler::finish), never an `after_finish` anomaly);
    /// `true` if it was running. For the end of a stream.
    pub fn finish_if_running(&self, reason: FinishReason) -> bool {
        let now = self.clock.now_ms();
        let mut state = self.state.lock();
        let state_ref = &mut *state;
        let before = state_ref.pending.records_len();
        let was_running = state_ref.machine.finish_if_running(reason, now, &mut state_ref.pending);
        let mine = state_ref.ticket(before);
        let failures = self.deliver_queued(state, mine);
        self.keep_failures(failures);
        was_running
    }

    /// Applies one call, like every [`StreamHandler`] method, and returns
    /// the records the sink refused while this call delivered them (its
    /// own, and those of other threads it delivered with them), each kept
    /// whole with the sink's error. The call itself is applied either way.
    ///
    /// # Errors
    ///
    /// [`SinkError`] when the sink failed on a record this call delivered.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use roundup::{Call, RoundBuilder, SinkRecord, StreamHandler};
    ///
    /// static DOWN: AtomicBool = AtomicBool::new(true);
    /// let builder = RoundBuilder::new().with_sink(|_record: SinkRecord<'_>| {
    ///     if DOWN.load(Ordering::Relaxed) { Err("store unreachable") } else { Ok(()) }
    /// });
    /// builder.message("First.");
    /// builder.tool_call("t1", "ls");
    /// // The last call's result closes the round: its persistence fails, the
    /// // round is handed back, and the call itself was applied.
    /// let status = roundup::ToolCallStatus::Completed;
    /// let error = builder.try_call(Call::ToolUpdate { id: "t1", content: "a.txt", status }).unwrap_err();
    /// assert_eq!(error.failures.len(), 1);
    /// assert!(matches!(&error.failures[0].record, roundup::OutputLine::Round(r) if r.message == "First."));
    /// assert_eq!(builder.rounds()[0].tool_calls[0].result.content(), Some("a.txt"));
    /// DOWN.store(false, Ordering::Relaxed);
    /// assert!(builder.try_call(Call::Message { text: " More." }).is_ok());
    /// ```
    pub fn try_call(&self, call: Call<'_>) -> Result<(), SinkError> {
        let failures = self.apply(call);
        if failures.is_empty() {
            Ok(())
        } else {
            Err(SinkError { failures })
        }
    }

    /// Takes the records the sink refused during calls that could not
    /// return an error (the [`StreamHandler`] methods,
    /// [`finish_if_running`](Self::finish_if_running)), oldest first.
    ///
    /// ```
    /// use roundup::{FinishReason, RoundBuilder, SinkRecord, StreamHandler};
    /// let builder = RoundBuilder::new().with_sink(|_: SinkRecord<'_>| Err::<(), _>("read-only database"));
    /// builder.message("Hi");
    /// builder.finish(FinishReason::Completed);
    /// let failures = builder.take_sink_failures();
    /// assert_eq!(failures.len(), 2, "the round and the summary");
    /// assert_eq!(failures[0].error.to_string(), "read-only database");
    /// assert!(builder.take_sink_failures().is_empty());
    /// ```
    pub fn take_sink_failures(&self) -> Vec<SinkFailure> {
        std::mem::take(&mut self.state.lock().failures)
    }

    fn keep_failures(&self, failures: Vec<SinkFailure>) {
        if !failures.is_empty() {
            self.state.lock().failures.extend(failures);
        }
    }

    /// The session's state, to restore in another builder, process or
    /// machine (SPEC rule 14): the same calls then give the same output as
    /// here. Output still being delivered is not part of it: take a
    /// checkpoint where the stream is quiet, or between calls of one
    /// thread.
    ///
    /// ```
    /// use roundup::{RoundBuilder, StreamHandler, ToolCallStatus};
    ///
    /// let before = RoundBuilder::new().with_session("s1");
    /// before.message("Working.");
    /// before.tool_call("t1", "build");
    /// let saved = before.checkpoint().to_json();
    ///
    /// let after = RoundBuilder::new();
    /// after.restore(roundup::Checkpoint::from_json(&saved).unwrap()).unwrap();
    /// after.tool_update("t1", "ok", ToolCallStatus::Completed);
    /// let round = &after.rounds()[0];
    /// assert_eq!((round.session.as_deref(), round.message.as_str()), (Some("s1"), "Working."));
    /// ```
    pub fn checkpoint(&self) -> Checkpoint {
        self.state.lock().machine.checkpoint()
    }

    /// [`checkpoint`](Self::checkpoint) with the retained rounds and the
    /// summaries of finished runs.
    pub fn checkpoint_with_history(&self) -> Checkpoint {
        self.state.lock().machine.checkpoint_with_history()
    }

    /// Continues from a checkpoint: the session's state becomes the
    /// checkpoint's (its name included); the sink, UI handler, clock and
    /// options stay. On error nothing changes.
    pub fn restore(&self, checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        self.state.lock().machine.restore(checkpoint)
    }

    /// Back to a new session (same options, sink, handler and clock): the
    /// retained rounds, summaries and open round are dropped. Output queued
    /// before the reset is still delivered.
    pub fn reset(&self) {
        self.state.lock().machine.reset();
    }

    /// Applies one call: what every [`StreamHandler`] method does.
    ///
    /// The clock is read only when the call needs a reading (a chunk
    /// appended to a started round does not pay for one), and never under
    /// the lock, so a [`Clock`] may itself use the builder. Two threads'
    /// readings can then reach the machine out of order by a few
    /// microseconds; the machine takes any reading (SPEC rule 12: timing
    /// is the clock's), and one thread's calls keep their order.
    fn apply(&self, call: Call<'_>) -> Vec<SinkFailure> {
        let mut state = self.state.lock();
        if state.machine.needs_clock(&call) {
            drop(state);
            let now = self.clock.now_ms();
            state = self.state.lock();
            state.last_now = now;
        }
        let state_ref = &mut *state;
        let before = state_ref.pending.records_len();
        state_ref.machine.handle(call, state_ref.last_now, &mut state_ref.pending);
        let mine = state_ref.ticket(before);
        self.deliver_queued(state, mine)
    }

    /// Delivers what is queued, records first, then UI events; each lane
    /// unless another thread is delivering it (which then does).
    /// Returns the records the sink refused.
    fn deliver_queued<'a>(&'a self, mut state: MutexGuard<'a, State>, mine: Option<u64>) -> Vec<SinkFailure> {
        let mut failures = Vec::new();
        if state.pending.is_empty() && state.ui_batches.is_empty() && state.ui_overflow.is_none() {
            return failures;
        }
        let mut panicked: Option<Box<dyn Any + Send>> = None;
        // The hot path (a chunk of text: UI events only, nobody delivering,
        // nothing queued before it): one batch straight to the UI lane.
        while !state.pending.is_empty()
            && state.pending.len() == state.pending.ui_len()
            && state.records_deliverer.is_none()
            && !state.ui_delivering
            && state.ui_batches.is_empty()
            && state.ui_overflow.is_none()
        {
            if self.ui.is_none() || self.ui_stopped.load(Ordering::Relaxed) {
                state.pending.clear();
                break;
            }
            state.ui_delivering = true;
            let mut batch = state.spares.pop().unwrap_or_default();
            std::mem::swap(&mut batch, &mut state.pending);
            drop(state);
            self.deliver_batch(&batch, Lane::Ui, &mut panicked, &mut failures);
            state = self.state.lock();
            state.recycle(batch);
            state.ui_delivering = false;
            if self.ui_stopped.load(Ordering::Relaxed) {
                state.machine.set_ui_events(false);
            }
        }
        if !state.pending.is_empty() {
            state = self.deliver_records(state, mine, &mut panicked, &mut failures);
        }
        if (!state.ui_batches.is_empty() || state.ui_overflow.is_some()) && !state.ui_delivering {
            state.ui_delivering = true;
            loop {
                if let Some(dropped) = state.ui_overflow.take() {
                    drop(state);
                    if let Some(ui) = &self.ui {
                        let told = catch_unwind(AssertUnwindSafe(|| ui.overflowed(dropped)));
                        if let Err(payload) = told {
                            panicked.get_or_insert(payload);
                        }
                    }
                    state = self.state.lock();
                }
                let Some(batch) = state.ui_batches.pop_front() else { break };
                state.ui_queued -= batch.ui_len();
                drop(state);
                self.deliver_batch(&batch, Lane::Ui, &mut panicked, &mut failures);
                state = self.state.lock();
                state.recycle(batch);
                if self.ui_stopped.load(Ordering::Relaxed) {
                    state.machine.set_ui_events(false);
                }
            }
            state.ui_delivering = false;
        }
        drop(state);
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
        failures
    }

    /// The records lane. A caller whose call queued records delivers them
    /// (with what others queued before), or waits until the thread that is
    /// delivering has; after its own, it hands the lane to a waiting caller
    /// rather than delivering theirs. So a caller delivers at most one batch
    /// of other threads' records: those queued before its own call, at most
    /// one call per other thread (each waits for its own). A call made by
    /// the delivering thread itself (from a callback) only queues.
    fn deliver_records<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        mine: Option<u64>,
        panicked: &mut Option<Box<dyn Any + Send>>,
        failures: &mut Vec<SinkFailure>,
    ) -> MutexGuard<'a, State> {
        let delivered = |state: &State| mine.is_none_or(|mine| state.delivered_upto >= mine);
        loop {
            if state.records_deliverer.is_some() {
                if delivered(&state) || state.records_deliverer == Some(std::thread::current().id()) {
                    return state;
                }
                state.records_waiting += 1;
                self.records_done.wait(&mut state);
                state.records_waiting -= 1;
                continue;
            }
            if state.pending.is_empty() || (delivered(&state) && state.records_waiting > 0) {
                return state;
            }
            break;
        }
        state.records_deliverer = Some(std::thread::current().id());
        loop {
            let mut batch = state.spares.pop().unwrap_or_default();
            std::mem::swap(&mut batch, &mut state.pending);
            let upto = state.records_queued;
            // Most calls (a chunk of text) make UI events only: they skip
            // the records lane's unlock and relock.
            if batch.len() > batch.ui_len() {
                drop(state);
                self.deliver_batch(&batch, Lane::Records, panicked, failures);
                state = self.state.lock();
            }
            state.delivered_upto = state.delivered_upto.max(upto);
            self.queue_ui(&mut state, batch);
            if state.records_waiting > 0 {
                self.records_done.notify_all();
            }
            // Done when nothing is left, or when this caller's own records
            // are out and a waiting caller can take the rest.
            if state.pending.is_empty() || (delivered(&state) && state.records_waiting > 0) {
                break;
            }
        }
        state.records_deliverer = None;
        self.records_done.notify_all();
        state
    }

    /// Puts a batch whose records went out into the UI lane, or cuts the UI
    /// handler off when it has fallen a whole queue behind.
    fn queue_ui(&self, state: &mut State, batch: Outputs) {
        if self.ui.is_none() || self.ui_stopped.load(Ordering::Relaxed) {
            return state.recycle(batch);
        }
        let events = batch.ui_len();
        if events == 0 {
            return state.recycle(batch);
        }
        if state.ui_queued + events > self.ui_capacity {
            self.ui_stopped.store(true, Ordering::Relaxed);
            state.machine.set_ui_events(false);
            state.ui_overflow = Some(state.ui_queued + events);
            state.ui_batches.clear();
            state.ui_batches.shrink_to(4);
            state.recycle(batch);
            state.ui_queued = 0;
            return;
        }
        state.ui_queued += events;
        state.ui_batches.push_back(batch);
    }

    /// Hands the outputs of `batch` of one lane to their consumer. A
    /// panicking callback skips only its own output; the first panic is
    /// kept for the caller, like the records the sink refused.
    fn deliver_batch(
        &self,
        batch: &Outputs,
        lane: Lane,
        panicked: &mut Option<Box<dyn Any + Send>>,
        failures: &mut Vec<SinkFailure>,
    ) {
        let mut next = 0;
        while next < batch.len() {
            let run = catch_unwind(AssertUnwindSafe(|| {
                while next < batch.len() {
                    let at = next;
                    next += 1;
                    if batch.is_ui(at) != matches!(lane, Lane::Ui) {
                        continue;
                    }
                    if let Some(output) = batch.get(at) {
                        self.deliver_one(output, failures);
                    }
                }
            }));
            if let Err(payload) = run {
                panicked.get_or_insert(payload);
            }
        }
    }

    fn deliver_one(&self, output: Output<'_>, failures: &mut Vec<SinkFailure>) {
        match output {
            Output::Record(record) => {
                if let Some(sink) = &self.sink {
                    if let Err(error) = sink.record(record) {
                        failures.push(SinkFailure { record: OutputLine::from(record), error });
                    }
                }
            }
            Output::Ui(event) => {
                if let Some(ui) = &self.ui {
                    if !self.ui_stopped.load(Ordering::Relaxed) && ui.event(&event) == UiFlow::Stop {
                        self.ui_stopped.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

impl State {
    /// The ticket of a call that queued records (`before`: the records
    /// pending before it), for waiting until they are delivered.
    fn ticket(&mut self, before: usize) -> Option<u64> {
        if self.pending.records_len() == before {
            return None;
        }
        self.records_queued += 1;
        Some(self.records_queued)
    }

    /// Keeps an emptied buffer for its capacity (a few: the rest are freed).
    fn recycle(&mut self, mut batch: Outputs) {
        if self.spares.len() < 4 {
            batch.clear();
            batch.release_outlier();
            self.spares.push(batch);
        }
    }
}

/// The two delivery lanes.
#[derive(Debug, Clone, Copy)]
enum Lane {
    Records,
    Ui,
}

impl StreamHandler for RoundBuilder {
    fn call(&self, call: Call<'_>) {
        let failures = self.apply(call);
        self.keep_failures(failures);
    }
}
