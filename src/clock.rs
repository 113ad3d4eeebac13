//! The injectable clock: where timestamps come from.
//!
//! The state machine never reads a clock; the builder reads one per call and
//! hands the reading in. Tests and replays use a [`ManualClock`] so that
//! timing is reproducible.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of unix-millisecond timestamps.
///
/// ```
/// use roundup::{Clock, RoundBuilder, StreamHandler};
///
/// /// A clock that ticks 10 ms per reading.
/// struct Ticking(std::sync::atomic::AtomicU64);
/// impl Clock for Ticking {
///     fn now_ms(&self) -> u64 {
///         self.0.fetch_add(10, std::sync::atomic::Ordering::Relaxed)
///     }
/// }
///
/// let builder = RoundBuilder::new().with_clock(Ticking(0.into()));
/// builder.message("Hi");
/// builder.finish(roundup::FinishReason::Interrupted);
/// let round = &builder.rounds()[0];
/// assert_eq!((round.started_at_ms, round.finished_at_ms), (0, 10));
/// ```
pub trait Clock: Send + Sync {
    /// The current reading, in milliseconds since the unix epoch (or any
    /// origin the caller chooses, for a manual clock).
    fn now_ms(&self) -> u64;
}

/// The system's wall clock.
///
/// ```
/// use roundup::{Clock, SystemClock};
/// assert!(SystemClock.now_ms() > 1_700_000_000_000, "after November 2023");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // A clock set before 1970 reads as 0 rather than failing.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
    }
}

/// A clock that only moves when told to. Clones share the reading, so a
/// test (or a replay) keeps one handle and gives another to the builder.
///
/// ```
/// use roundup::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// let handle = clock.clone();
/// handle.advance(250);
/// assert_eq!(clock.now_ms(), 1_250);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock reading `ms`.
    pub fn new(ms: u64) -> Self {
        ManualClock(Arc::new(AtomicU64::new(ms)))
    }

    /// Sets the reading.
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::Relaxed);
    }

    /// Moves the reading forward by `ms` (saturating).
    pub fn advance(&self, ms: u64) {
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| Some(now.saturating_add(ms)));
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}
