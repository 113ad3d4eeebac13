//! Records and UI events as async streams (cargo feature `tokio`), for an
//! async server that aggregates an agent's stream live.
//!
//! [`attach`] gives a builder a sink and a UI handler that send into
//! channels, and hands back their receiving ends:
//!
//! - [`Records`], a [`Stream`] of every record for persistence, in order.
//!   Its channel is unbounded: persistence is never dropped and the
//!   producer never waits for it (a producer may call the builder from
//!   inside an async task, where blocking is not allowed).
//! - [`UiEvents`], a [`Stream`] of live UI events through a bounded
//!   channel: a consumer that cannot keep up is cut off (the builder stops
//!   producing UI events, [`UiFlow::Stop`]) and told so by
//!   [`UiEvents::lagged`], while records keep flowing. A slow UI never
//!   blocks persistence.
//! - [`RunEnds`]: await the end of a run, with its summary.
//!
//! ```
//! use futures_core::Stream;
//! use roundup::live;
//! use roundup::{OutputLine, RoundBuilder, StreamHandler};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (builder, mut records, _ui, mut ends) = live::attach(RoundBuilder::new(), 64);
//! builder.message("Hi");
//! builder.finish(roundup::FinishReason::Interrupted);
//! let summary = ends.next_end().await.unwrap();
//! assert_eq!(summary.rounds, 1);
//! let first = std::future::poll_fn(|cx| std::pin::Pin::new(&mut records).poll_next(cx)).await;
//! assert!(matches!(first, Some(OutputLine::Round(round)) if round.message == "Hi"));
//! # });
//! ```

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

pub use futures_core::Stream;
use tokio::sync::{mpsc, watch};

use crate::builder::RoundBuilder;
use crate::model::Summary;
use crate::ui::{UiEvent, UiEventOf, UiFlow};
use crate::wire::OutputLine;

/// Gives `builder` a sink and a UI handler that feed the returned streams;
/// `ui_capacity` bounds the UI events waiting to be read.
pub fn attach(builder: RoundBuilder, ui_capacity: usize) -> (RoundBuilder, Records, UiEvents, RunEnds) {
    let (records_in, records_out) = mpsc::unbounded_channel();
    let (ui_in, ui_out) = mpsc::channel(ui_capacity.max(1));
    let (ends_in, ends_out) = watch::channel(None);
    let lagged = Arc::new(AtomicBool::new(false));
    let cut_off = Arc::clone(&lagged);
    let builder = builder
        .with_sink(move |record| {
            let line = OutputLine::from(record);
            if let OutputLine::Summary(summary) = &line {
                ends_in.send_replace(Some(summary.clone()));
            }
            // A receiver gone means nobody persists any more: nothing to do.
            let _ = records_in.send(line);
        })
        .with_ui(move |event| match ui_in.try_send(OwnedUiEvent::new(event)) {
            Ok(()) => UiFlow::Continue,
            Err(_) => {
                cut_off.store(true, Ordering::Relaxed);
                UiFlow::Stop
            }
        });
    (builder, Records(records_out), UiEvents { events: ui_out, lagged }, RunEnds(ends_out))
}

/// Every record for persistence, in order, as owned output lines.
#[derive(Debug)]
pub struct Records(mpsc::UnboundedReceiver<OutputLine>);

impl Stream for Records {
    type Item = OutputLine;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<OutputLine>> {
        self.0.poll_recv(cx)
    }
}

/// A live UI event, owned (it outlives the builder's output buffer): its
/// strings in one buffer, as the builder's own output keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedUiEvent {
    event: UiEventOf<(usize, usize)>,
    text: String,
}

impl OwnedUiEvent {
    fn new(event: &UiEvent<'_>) -> Self {
        let mut text = String::new();
        let event = event.map(|s| {
            let start = text.len();
            text.push_str(s);
            (start, text.len())
        });
        OwnedUiEvent { event, text }
    }

    /// The event, borrowing its strings.
    pub fn event(&self) -> UiEvent<'_> {
        self.event.map(|(start, end)| self.text.get(start..end).unwrap_or_default())
    }
}

/// Live UI events, through a bounded channel.
#[derive(Debug)]
pub struct UiEvents {
    events: mpsc::Receiver<OwnedUiEvent>,
    lagged: Arc<AtomicBool>,
}

impl UiEvents {
    /// `true` once this consumer fell behind by more than the channel holds
    /// and was cut off: no more UI events come (the records still do).
    pub fn lagged(&self) -> bool {
        self.lagged.load(Ordering::Relaxed)
    }
}

impl Stream for UiEvents {
    type Item = OwnedUiEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<OwnedUiEvent>> {
        self.events.poll_recv(cx)
    }
}

/// The ends of runs, with their summaries.
#[derive(Debug)]
pub struct RunEnds(watch::Receiver<Option<Summary>>);

impl RunEnds {
    /// Waits for the next run to finish and gives its summary; `None` when
    /// the builder is gone. A run that finished before the call is not
    /// waited for: call it before the work that ends the run, or look at
    /// [`last`](Self::last).
    pub async fn next_end(&mut self) -> Option<Summary> {
        self.0.changed().await.ok()?;
        self.0.borrow_and_update().clone()
    }

    /// The summary of the last run that finished, if any.
    pub fn last(&self) -> Option<Summary> {
        self.0.borrow().clone()
    }
}
