//! One session as a [`Router`](crate::Router) drives it: what both the
//! pure [`RoundMachine`] and the self-locking [`RoundBuilder`] are.
//!
//! A router only opens sessions, hands them their calls, evicts idle ones
//! as checkpoints and finishes them at the end. What a session does with a
//! call, and where its output goes, is the session's: a builder reads its
//! own clock and delivers to its own sink, while a bare machine takes the
//! clock reading and the output buffer from the router's [`Context`]. So
//! the replay drives machines directly, with no lock, clock handle or
//! callback between the adapter and the encoder, and a live server drives
//! builders, with the same router.
//!
//! [`Context`]: Session::Context

use crate::builder::RoundBuilder;
use crate::call::Call;
use crate::handler::StreamHandler;
use crate::machine::{Checkpoint, CheckpointError, RoundMachine};
use crate::model::FinishReason;
use crate::output::Outputs;

/// One session of a [`Router`](crate::Router).
///
/// ```
/// use roundup::{Call, MachineOptions, MachineStep, Output, RoundMachine, Router, SinkRecord};
///
/// // Machines, driven by the router: the clock reading goes in through the
/// // router's context, and every output comes out of it.
/// let mut router: Router<RoundMachine> =
///     Router::new(|name| RoundMachine::new(MachineOptions::default().session(name.unwrap_or("-")).ui_events(false)));
/// router.context_mut().now_ms = 100;
/// router.call(Some("a"), Call::Message { text: "Hi" });
/// router.finish_all(roundup::FinishReason::Interrupted);
/// let step: &MachineStep = router.context();
/// let Some(Output::Record(SinkRecord::Round(round))) = step.outputs.get(0) else { panic!() };
/// assert_eq!((round.message.as_str(), round.started_at_ms), ("Hi", 100));
/// ```
pub trait Session {
    /// What the router hands the session with every call, beside the
    /// call: nothing for a [`RoundBuilder`] (it has its own clock and
    /// delivery), the clock reading and the output buffer for a bare
    /// [`RoundMachine`] ([`MachineStep`]).
    type Context: Default;

    /// Applies one call.
    fn call(&mut self, call: Call<'_>, cx: &mut Self::Context);

    /// Finishes the current run unless it is finished already; `true` if
    /// it was running (end of input, or a session closed).
    fn finish_if_running(&mut self, reason: FinishReason, cx: &mut Self::Context) -> bool;

    /// The session's state, for the router's store.
    ///
    /// # Errors
    ///
    /// [`CheckpointError`] when a part of the session keeps a state that
    /// cannot be saved: the router then keeps the session open rather
    /// than lose it.
    fn checkpoint(&self) -> Result<Checkpoint, CheckpointError>;

    /// Continues from a [`checkpoint`](Session::checkpoint); on error the
    /// session is unchanged.
    ///
    /// # Errors
    ///
    /// [`CheckpointError`] when the checkpoint does not fit.
    fn restore(&mut self, checkpoint: Checkpoint) -> Result<(), CheckpointError>;
}

/// A bare machine's [`Session::Context`]: the clock reading its next call
/// is made at, and the buffer its output accumulates in until the driver
/// takes it.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct MachineStep {
    /// The clock reading of the next call (SPEC §6: a replay's clock).
    pub now_ms: u64,
    /// What the calls caused, in delivery order; cleared by the driver.
    pub outputs: Outputs,
}

impl Session for RoundMachine {
    type Context = MachineStep;

    fn call(&mut self, call: Call<'_>, cx: &mut MachineStep) {
        self.handle(call, cx.now_ms, &mut cx.outputs);
    }

    fn finish_if_running(&mut self, reason: FinishReason, cx: &mut MachineStep) -> bool {
        RoundMachine::finish_if_running(self, reason, cx.now_ms, &mut cx.outputs)
    }

    fn checkpoint(&self) -> Result<Checkpoint, CheckpointError> {
        Ok(RoundMachine::checkpoint(self))
    }

    fn restore(&mut self, checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        RoundMachine::restore(self, checkpoint)
    }
}

impl Session for RoundBuilder {
    type Context = ();

    fn call(&mut self, call: Call<'_>, _: &mut ()) {
        StreamHandler::call(self, call);
    }

    fn finish_if_running(&mut self, reason: FinishReason, _: &mut ()) -> bool {
        RoundBuilder::finish_if_running(self, reason)
    }

    fn checkpoint(&self) -> Result<Checkpoint, CheckpointError> {
        Ok(RoundBuilder::checkpoint(self))
    }

    fn restore(&mut self, checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        RoundBuilder::restore(self, checkpoint)
    }
}
