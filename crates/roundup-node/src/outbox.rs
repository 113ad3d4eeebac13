//! What roundup delivers during a call, queued for the package to hand to
//! the JavaScript callbacks once the call returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use roundup::{write_record, write_ui_event, RoundSink, SinkRecord, UiEvent, UiFlow, UiHandler};

/// The records and UI events delivered and not yet taken, as the body of
/// a JSON array: `0,{record},1,{ui event},...` (0 a record, 1 a UI event),
/// in the order roundup delivered them.
#[derive(Default)]
pub struct Outbox {
    queue: Mutex<Vec<u8>>,
    /// The UI handler returned `false` (or threw): no more UI events.
    ui_stopped: AtomicBool,
}

impl Outbox {
    fn push(&self, kind: u8, write: impl FnOnce(&mut Vec<u8>)) {
        let mut queue = self.queue.lock();
        if !queue.is_empty() {
            queue.push(b',');
        }
        queue.push(kind);
        queue.push(b',');
        write(&mut queue);
    }

    /// What was delivered since the last take, as a JSON array's text;
    /// `None` when nothing was.
    pub fn take(&self) -> Option<String> {
        let mut queue = self.queue.lock();
        if queue.is_empty() {
            return None;
        }
        let mut text = String::with_capacity(queue.len() + 2);
        text.push('[');
        text.push_str(&String::from_utf8_lossy(&queue));
        text.push(']');
        queue.clear();
        Some(text)
    }

    /// The UI handler wants no more events.
    pub fn stop_ui(&self) {
        self.ui_stopped.store(true, Ordering::SeqCst);
    }
}

/// The sink of a builder whose records go to JavaScript.
pub struct Records(pub Arc<Outbox>);

impl RoundSink for Records {
    fn record(&self, record: SinkRecord<'_>) -> Result<(), roundup::BoxError> {
        self.0.push(b'0', |out| write_record(out, record));
        Ok(())
    }
}

/// The UI handler of a builder whose UI events go to JavaScript.
pub struct Ui {
    pub outbox: Arc<Outbox>,
    pub session: Option<String>,
}

impl UiHandler for Ui {
    fn event(&self, event: &UiEvent<'_>) -> UiFlow {
        if self.outbox.ui_stopped.load(Ordering::SeqCst) {
            return UiFlow::Stop;
        }
        self.outbox.push(b'1', |out| write_ui_event(out, self.session.as_deref(), event));
        UiFlow::Continue
    }
}

/// A builder delivering into `outbox`.
pub fn new_builder(
    session: Option<&str>,
    outbox: &Arc<Outbox>,
    records: bool,
    ui: bool,
    retain_rounds: bool,
) -> roundup::RoundBuilder {
    let mut builder = roundup::RoundBuilder::new().retain_rounds(retain_rounds);
    if let Some(name) = session {
        builder = builder.with_session(name);
    }
    if records {
        builder = builder.with_round_sink(Records(Arc::clone(outbox)));
    }
    if ui {
        builder = builder.with_ui_handler(Ui { outbox: Arc::clone(outbox), session: session.map(str::to_owned) });
    }
    builder
}
