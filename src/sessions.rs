//! The sessions of a replay: one builder each, made on first sight, all
//! writing their output lines into one buffer in state order.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::builder::RoundBuilder;
use crate::clock::{Clock, ManualClock};
use crate::deepwork::DeepworkEmitter;
use crate::handler::FinishReason;
use crate::replay::Emit;
use crate::sink::SinkRecord;
use crate::ui::{UiEvent, UiFlow};
use crate::wire;

/// The builders of a replay, by session, in order of first appearance.
pub(crate) struct Sessions {
    emit: Emit,
    /// One clock for the whole replay (SPEC §6).
    pub(crate) clock: ManualClock,
    builders: Vec<RoundBuilder>,
    names: Vec<Option<String>>,
    by_name: HashMap<String, usize>,
    unnamed: Option<usize>,
    /// The session of the previous line: lines of one session usually come
    /// in runs, and comparing a name is cheaper than hashing it.
    last: Option<usize>,
    /// Output lines not yet written.
    out: Arc<Mutex<Vec<u8>>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").field("names", &self.names).finish_non_exhaustive()
    }
}

impl Sessions {
    pub(crate) fn new(emit: Emit) -> Self {
        Sessions {
            emit,
            clock: ManualClock::new(0),
            builders: Vec::new(),
            names: Vec::new(),
            by_name: HashMap::new(),
            unnamed: None,
            last: None,
            out: Arc::new(Mutex::new(Vec::with_capacity(1 << 17))),
        }
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
        let out = Arc::clone(&self.out);
        match self.emit {
            Emit::Records => builder.with_sink(move |record: SinkRecord<'_>| {
                let mut out = out.lock();
                wire::write_record(&mut out, record);
                out.push(b'\n');
            }),
            Emit::Ui => {
                let session = name.map(str::to_owned);
                builder.with_ui(move |event: &UiEvent<'_>| {
                    let mut out = out.lock();
                    wire::write_ui_event(&mut out, session.as_deref(), event);
                    out.push(b'\n');
                    UiFlow::Continue
                })
            }
            Emit::Deepwork { sse } => {
                let (session, clock) = (name.map(str::to_owned), self.clock.clone());
                let emitter = Mutex::new(DeepworkEmitter::new());
                builder.with_ui(move |event: &UiEvent<'_>| {
                    let Some(mut event) = emitter.lock().event(event, clock.now_ms()) else {
                        return UiFlow::Continue;
                    };
                    if let Some(session) = &session {
                        event["source"] = session.as_str().into();
                    }
                    let mut out = out.lock();
                    if sse {
                        out.extend_from_slice(b"data: ");
                    }
                    wire::write_json(&mut out, &event);
                    out.extend_from_slice(if sse { b"\n\n" } else { b"\n" });
                    UiFlow::Continue
                })
            }
        }
    }

    /// End of input: open runs finish in order of first appearance, then
    /// one summary per run (SPEC §3, §6). Returns the number of sessions.
    pub(crate) fn end(&mut self) -> usize {
        if self.builders.is_empty() {
            self.get(None);
        }
        for builder in &self.builders {
            builder.finish_if_running(FinishReason::Interrupted);
        }
        if self.emit == Emit::Records {
            let mut out = self.out.lock();
            for summary in self.builders.iter().flat_map(RoundBuilder::summaries) {
                wire::write_summary(&mut out, &summary);
                out.push(b'\n');
            }
        }
        self.builders.len()
    }

    /// Writes the pending output once it exceeds `at_least` bytes (all of
    /// it when `at_least` is 0).
    pub(crate) fn flush(&self, output: &mut impl Write, at_least: usize) -> io::Result<()> {
        let mut out = self.out.lock();
        if out.len() > at_least || (at_least == 0 && !out.is_empty()) {
            output.write_all(&out)?;
            out.clear();
        }
        Ok(())
    }
}
