//! The output buffer the state machine writes into.
//!
//! Output is owned by the buffer, not by the machine's state, because it is
//! delivered after the builder's lock is released while other threads may
//! already be changing the state. UI event strings are copied into one
//! reused text arena and referenced by offsets, so that the hot path (a
//! message chunk) allocates nothing once the buffer has grown: the builder
//! swaps two buffers, delivers one and clears it, keeping its capacity.

use crate::model::{Anomaly, MetaPatch, Round, Stitch, Summary};
use crate::sink::SinkRecord;
use crate::spare_meta::SpareMeta;
use crate::ui::{UiEvent, UiEventOf};

/// A byte range of the text arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Span {
    start: usize,
    end: usize,
}

#[derive(Debug)]
enum Item {
    Round(Box<Round>),
    Stitch(Box<Stitch>),
    Anomaly(Box<Anomaly>),
    Meta(Box<MetaPatch>),
    Summary(Box<Summary>),
    Ui(UiEventOf<Span>),
}

/// One piece of output, borrowed from an [`Outputs`] buffer.
///
/// ```
/// use roundup::{Call, Output, Outputs, RoundMachine, UiEvent};
/// let mut machine = RoundMachine::default();
/// let mut out = Outputs::new();
/// machine.handle(Call::Message { text: "Hi" }, 0, &mut out);
/// let events: Vec<Output<'_>> = out.iter().collect();
/// assert_eq!(
///     events,
///     [
///         Output::Ui(UiEvent::RunStart { run: 0 }),
///         Output::Ui(UiEvent::MessageStart),
///         Output::Ui(UiEvent::MessageDelta { text: "Hi" }),
///     ]
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output<'a> {
    /// For the round sink: a closed round, a stitch or an anomaly.
    Record(SinkRecord<'a>),
    /// For the UI handler: a live event.
    Ui(UiEvent<'a>),
}

/// Output records of the state machine, in delivery order.
///
/// Within one call, records for the sink come before the call's UI events
/// (SPEC §2 rule 11: a closed round reaches the sink before the UI events of
/// the call that closed it); across calls, order is the order of the calls.
///
/// ```
/// use roundup::{Call, FinishReason, Output, Outputs, RoundMachine, SinkRecord};
/// let mut machine = RoundMachine::default();
/// let mut out = Outputs::new();
/// machine.handle(Call::Message { text: "Hi" }, 0, &mut out);
/// out.clear(); // delivered: the capacity is kept for the next call
/// machine.handle(Call::Finish { reason: FinishReason::Canceled }, 9, &mut out);
/// // The round comes before the UI events of the call that closed it.
/// assert!(matches!(out.get(0), Some(Output::Record(SinkRecord::Round(_)))));
/// assert!(out.len() > 1 && !out.is_empty());
/// ```
#[derive(Debug, Default)]
pub struct Outputs {
    items: Vec<Item>,
    text: String,
    /// Where the current call's UI events begin: records are inserted here.
    call_mark: usize,
    /// When `false`, UI events are not produced at all.
    ui_disabled: bool,
    /// How many of the items are UI events.
    ui_len: usize,
    /// The metadata maps of the rounds cleared, for the machine to copy
    /// the next rounds' metadata into.
    spare: SpareMeta,
}

impl Outputs {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// `true` when there is nothing to deliver.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The number of records and events held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Forgets everything held, keeping the allocated capacity (and the
    /// rounds' metadata maps, which the next rounds' metadata is copied
    /// into).
    pub fn clear(&mut self) {
        for item in &mut self.items {
            if let Item::Round(round) = item {
                self.spare.keep(round);
            }
        }
        self.items.clear();
        self.text.clear();
        self.call_mark = 0;
        self.ui_len = 0;
    }

    /// Gives back memory beyond what ordinary calls need, after an outlier
    /// (a chunk of megabytes, a call that closed a thousand rounds): a
    /// buffer kept for reuse would otherwise hold it for good.
    pub(crate) fn release_outlier(&mut self) {
        self.text.shrink_to(1 << 20);
        self.items.shrink_to(1 << 12);
    }

    /// The metadata maps kept from the rounds cleared.
    pub(crate) fn spare_meta(&mut self) -> &mut SpareMeta {
        &mut self.spare
    }

    /// How many of the outputs held are UI events.
    pub(crate) fn ui_len(&self) -> usize {
        self.ui_len
    }

    /// How many of the outputs held are records.
    pub(crate) fn records_len(&self) -> usize {
        self.items.len() - self.ui_len
    }

    /// Whether the output at position `i` is a UI event (without building
    /// it).
    pub(crate) fn is_ui(&self, i: usize) -> bool {
        matches!(self.items.get(i), Some(Item::Ui(_)))
    }

    /// The output in delivery order.
    pub fn iter(&self) -> impl Iterator<Item = Output<'_>> + '_ {
        (0..self.items.len()).filter_map(move |i| self.get(i))
    }

    /// The output at position `i` in delivery order.
    pub fn get(&self, i: usize) -> Option<Output<'_>> {
        Some(match self.items.get(i)? {
            Item::Round(round) => Output::Record(SinkRecord::Round(round)),
            Item::Stitch(stitch) => Output::Record(SinkRecord::Stitch(stitch)),
            Item::Anomaly(anomaly) => Output::Record(SinkRecord::Anomaly(anomaly)),
            Item::Meta(patch) => Output::Record(SinkRecord::Meta(patch)),
            Item::Summary(summary) => Output::Record(SinkRecord::Summary(summary)),
            Item::Ui(event) => Output::Ui(event.map(|span| self.text.get(span.start..span.end).unwrap_or_default())),
        })
    }

    /// Marks the start of a call: its records go before its UI events.
    pub(crate) fn begin_call(&mut self, ui_enabled: bool) {
        self.call_mark = self.items.len();
        self.ui_disabled = !ui_enabled;
    }

    pub(crate) fn round(&mut self, round: Round) {
        self.record(Item::Round(Box::new(round)));
    }

    pub(crate) fn stitch(&mut self, stitch: Stitch) {
        self.record(Item::Stitch(Box::new(stitch)));
    }

    pub(crate) fn anomaly(&mut self, anomaly: Anomaly) {
        self.record(Item::Anomaly(Box::new(anomaly)));
    }

    pub(crate) fn meta(&mut self, patch: MetaPatch) {
        self.record(Item::Meta(Box::new(patch)));
    }

    pub(crate) fn summary(&mut self, summary: Summary) {
        self.record(Item::Summary(Box::new(summary)));
    }

    fn record(&mut self, item: Item) {
        let at = self.call_mark.min(self.items.len());
        self.items.insert(at, item);
        self.call_mark = at + 1;
    }

    /// Queues a UI event without strings before the current call's other
    /// UI events (and after its records).
    pub(crate) fn ui_first(&mut self, event: UiEvent<'static>) {
        if self.ui_disabled {
            return;
        }
        let event = event.map(|_| Span { start: 0, end: 0 });
        let at = self.call_mark.min(self.items.len());
        self.items.insert(at, Item::Ui(event));
        self.ui_len += 1;
    }

    /// Queues a UI event, copying its strings into the arena.
    pub(crate) fn ui(&mut self, event: UiEvent<'_>) {
        if self.ui_disabled {
            return;
        }
        let text = &mut self.text;
        let event = event.map(|s| {
            let start = text.len();
            text.push_str(s);
            Span { start, end: text.len() }
        });
        self.items.push(Item::Ui(event));
        self.ui_len += 1;
    }
}
