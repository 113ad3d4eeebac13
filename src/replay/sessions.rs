//! The sessions of a replay: one builder each, made on first sight, all
//! delivering into one encoder in state order.
//!
//! The registry knows no output format: it hands what the builders deliver
//! to an [`Encoder`], producing only what the encoder reads.

use std::io::{self, Write};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::adapters::CallSink;
use crate::builder::RoundBuilder;
use crate::call::Call;
use crate::clock::{Clock, ManualClock};
use crate::encoders::{Encoder, Frames, Framing, Reads};
use crate::machine::{Checkpoint, CheckpointError};
use crate::model::FinishReason;
use crate::router::{CheckpointStore, Router};
use crate::ui::UiFlow;
use serde_json::Value;

/// The encoder and the bytes it framed, shared by every builder's callbacks.
struct Encoding {
    encoder: Box<dyn Encoder>,
    out: Frames,
}

/// The sessions of a replay: a [`Router`] whose builders all deliver into
/// one encoder, and the replay's one clock.
pub(crate) struct Sessions {
    /// One clock for the whole replay (SPEC §6).
    clock: ManualClock,
    router: Router,
    encoding: Arc<Mutex<Encoding>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").field("router", &self.router).finish_non_exhaustive()
    }
}

/// Keep at most this many sessions open, the rest in this store.
pub(crate) type Eviction = (usize, Box<dyn CheckpointStore>);

impl Sessions {
    pub(crate) fn new(encoder: Box<dyn Encoder>, framing: Framing, eviction: Option<Eviction>) -> Self {
        let clock = ManualClock::new(0);
        let reads = encoder.reads();
        let encoding = Arc::new(Mutex::new(Encoding { encoder, out: Frames::new(framing) }));
        let (make_clock, make_encoding) = (clock.clone(), Arc::clone(&encoding));
        let mut router =
            Router::new(move |name| new_builder(name, reads, make_clock.clone(), Arc::clone(&make_encoding)));
        if let Some((keep, store)) = eviction {
            router = router.evict_beyond_boxed(keep, store);
        }
        Sessions { clock, router, encoding }
    }

    /// The replay's clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Every session's checkpoint and the encoder's state
    /// ([`Replayer::checkpoint`](super::Replayer::checkpoint)).
    pub(crate) fn checkpoint(&mut self) -> Result<(Vec<Checkpoint>, Value), CheckpointError> {
        let encoder = self.encoding.lock().encoder.save().ok_or_else(|| {
            CheckpointError::Inconsistent("this output format keeps a state that cannot be saved yet".into())
        })?;
        Ok((self.router.checkpoint_sessions()?, encoder))
    }

    /// Restores what [`checkpoint`](Self::checkpoint) gave, into sessions
    /// that have none yet.
    pub(crate) fn restore(&mut self, sessions: Vec<Checkpoint>, encoder: Value) -> Result<(), CheckpointError> {
        self.encoding.lock().encoder.restore(encoder)?;
        self.router.restore_sessions(sessions)
    }

    /// Moves the replay's clock.
    pub(crate) fn set_clock(&self, at_ms: u64) {
        self.clock.set(at_ms);
    }

    /// The builder of a session, made on first sight.
    pub(crate) fn get(&mut self, name: Option<&str>) -> &RoundBuilder {
        self.router.builder(name)
    }

    /// The sessions seen, at least one: an empty input has the
    /// session-less one (SPEC §6).
    pub(crate) fn count(&mut self) -> usize {
        if self.router.sessions() == 0 {
            self.get(None);
        }
        self.router.sessions()
    }

    /// End of input for the session seen first: its open run finishes,
    /// writing its summary (SPEC §3, §6); `false` when none is left.
    pub(crate) fn finish_first(&mut self) -> bool {
        self.router.finish_first(FinishReason::Interrupted)
    }

    /// Bytes of output not written yet.
    pub(crate) fn pending_output(&self) -> usize {
        self.encoding.lock().out.bytes().len()
    }

    /// Writes the pending output.
    pub(crate) fn flush(&self, output: &mut impl Write) -> io::Result<()> {
        let mut encoding = self.encoding.lock();
        if !encoding.out.bytes().is_empty() {
            output.write_all(encoding.out.bytes())?;
            encoding.out.clear();
        }
        Ok(())
    }
}

/// A session's builder, delivering what the encoder reads into it.
fn new_builder(name: Option<&str>, reads: Reads, clock: ManualClock, encoding: Arc<Mutex<Encoding>>) -> RoundBuilder {
    let mut builder = RoundBuilder::new().with_clock(clock.clone()).retain_rounds(false);
    if let Some(name) = name {
        builder = builder.with_session(name);
    }
    match reads {
        Reads::Records => builder.with_sink(move |record| {
            let Encoding { encoder, out } = &mut *encoding.lock();
            encoder.record(record, out);
        }),
        Reads::UiEvents => {
            let session = name.map(str::to_owned);
            builder.with_ui(move |event| {
                let Encoding { encoder, out } = &mut *encoding.lock();
                encoder.ui_event(session.as_deref(), event, clock.now_ms(), out);
                UiFlow::Continue
            })
        }
    }
}

/// Adapters address their calls to the sessions of the replay.
impl CallSink for Sessions {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        self.router.call(session, call);
    }

    fn clock(&mut self, at_ms: u64) {
        self.set_clock(at_ms);
    }
}
