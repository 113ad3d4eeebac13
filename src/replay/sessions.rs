//! The sessions of a replay: one builder each, made on first sight, all
//! delivering into one encoder in state order.
//!
//! The registry knows no output format: it hands what the builders deliver
//! to an [`Encoder`], producing only what the encoder reads.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::adapters::CallSink;
use crate::builder::RoundBuilder;
use crate::call::Call;
use crate::clock::{Clock, ManualClock};
use crate::encoders::{Encoder, Frames, Framing, Reads};
use crate::handler::StreamHandler;
use crate::model::FinishReason;
use crate::sink::SinkRecord;
use crate::ui::{UiEvent, UiFlow};

/// The encoder and the bytes it framed, shared by every builder's callbacks.
struct Encoding {
    encoder: Box<dyn Encoder>,
    out: Frames,
}

/// The builders of a replay, by session, in order of first appearance.
pub(crate) struct Sessions {
    /// One clock for the whole replay (SPEC §6).
    clock: ManualClock,
    reads: Reads,
    encoding: Arc<Mutex<Encoding>>,
    builders: Vec<RoundBuilder>,
    names: Vec<Option<String>>,
    by_name: HashMap<String, usize>,
    unnamed: Option<usize>,
    /// The session of the previous line: lines of one session usually come
    /// in runs, and comparing a name is cheaper than hashing it.
    last: Option<usize>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").field("names", &self.names).finish_non_exhaustive()
    }
}

impl Sessions {
    pub(crate) fn new(encoder: Box<dyn Encoder>, framing: Framing) -> Self {
        Sessions {
            clock: ManualClock::new(0),
            reads: encoder.reads(),
            encoding: Arc::new(Mutex::new(Encoding { encoder, out: Frames::new(framing) })),
            builders: Vec::new(),
            names: Vec::new(),
            by_name: HashMap::new(),
            unnamed: None,
            last: None,
        }
    }

    /// Moves the replay's clock.
    pub(crate) fn set_clock(&self, at_ms: u64) {
        self.clock.set(at_ms);
    }

    /// The builder of a session, made on first sight.
    pub(crate) fn get(&mut self, name: Option<&str>) -> &RoundBuilder {
        if let Some(last) = self.last.filter(|&at| self.names[at].as_deref() == name) {
            return &self.builders[last];
        }
        let found = match name {
            Some(name) => self.by_name.get(name).copied(),
            None => self.unnamed,
        };
        let at = match found {
            Some(at) => at,
            None => {
                let at = self.builders.len();
                let builder = self.new_builder(name);
                self.builders.push(builder);
                self.names.push(name.map(str::to_owned));
                match name {
                    Some(name) => {
                        self.by_name.insert(name.to_owned(), at);
                    }
                    None => self.unnamed = Some(at),
                }
                at
            }
        };
        self.last = Some(at);
        &self.builders[at]
    }

    fn new_builder(&self, name: Option<&str>) -> RoundBuilder {
        let mut builder = RoundBuilder::new().with_clock(self.clock.clone()).retain_rounds(false);
        if let Some(name) = name {
            builder = builder.with_session(name);
        }
        let encoding = Arc::clone(&self.encoding);
        match self.reads {
            Reads::Records => builder.with_sink(move |record: SinkRecord<'_>| {
                let Encoding { encoder, out } = &mut *encoding.lock();
                encoder.record(record, out);
            }),
            Reads::UiEvents => {
                let (session, clock) = (name.map(str::to_owned), self.clock.clone());
                builder.with_ui(move |event: &UiEvent<'_>| {
                    let Encoding { encoder, out } = &mut *encoding.lock();
                    encoder.ui_event(session.as_deref(), event, clock.now_ms(), out);
                    UiFlow::Continue
                })
            }
        }
    }

    /// End of input: open runs finish in order of first appearance, each
    /// writing its summary (SPEC §3, §6). Returns the number of sessions.
    pub(crate) fn end(&mut self) -> usize {
        if self.builders.is_empty() {
            self.get(None);
        }
        for builder in &self.builders {
            builder.finish_if_running(FinishReason::Interrupted);
        }
        self.builders.len()
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

/// Adapters address their calls to the sessions of the replay.
impl CallSink for Sessions {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        self.get(session).call(call);
    }

    fn clock(&mut self, at_ms: u64) {
        self.set_clock(at_ms);
    }
}
