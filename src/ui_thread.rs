//! A UI handler on a thread of its own, so that no caller of the builder
//! ever runs a UI callback.
//!
//! The builder delivers UI events on its callers' threads: whoever finds the
//! UI lane free delivers what is queued, other threads' events included. A
//! fast handler makes that cheap; a slow one (a socket write, a render)
//! makes the caller that happens to deliver pay for everybody's events, up
//! to a whole queue of them. [`UiThread`] moves the handler to a thread of
//! its own: what a caller then does for another thread's event is copy it
//! into a buffer under a short lock, so the time any caller spends on
//! others' UI events is bounded by the builder's queue capacity times one
//! copy, whatever the handler does.

use std::any::Any;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use crate::output::{Output, Outputs};
use crate::ui::{UiEvent, UiFlow, UiHandler};

/// A [`UiHandler`] that hands each event to `handler` on a delivery thread,
/// through a bounded buffer: give it to
/// [`RoundBuilder::with_ui_handler`](crate::RoundBuilder::with_ui_handler).
///
/// The same policy as the builder's own UI lane applies, one step further
/// from the caller: the producer never waits; a handler that falls
/// `capacity` events behind is cut off (its queued events are dropped, it is
/// told once through [`UiHandler::overflowed`], and the builder stops
/// producing UI events); a handler that answers [`UiFlow::Stop`] gets
/// nothing more. Events keep their order. Dropping the `UiThread` (with the
/// builder that owns it) lets the thread deliver what is queued and end;
/// [`UiDelivery::join`] waits for that and reports a panic of the handler.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use roundup::{FinishReason, RoundBuilder, StreamHandler, UiEvent, UiFlow, UiThread};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = Arc::clone(&seen);
/// let slow_view = move |event: &UiEvent<'_>| {
///     // A socket write, a render: it runs on the delivery thread.
///     log.lock().unwrap().push(serde_json::to_string(event).unwrap());
///     UiFlow::Continue
/// };
/// let (ui, delivery) = UiThread::spawn(slow_view, 4096).expect("a thread");
/// let builder = RoundBuilder::new().with_ui_handler(ui);
/// builder.message("Hi");
/// builder.finish(FinishReason::Interrupted);
/// drop(builder); // the thread delivers what is queued, then ends
/// delivery.join().expect("the handler did not panic");
/// assert_eq!(seen.lock().unwrap()[2], r#"{"event":"message_delta","text":"Hi"}"#);
/// ```
pub struct UiThread {
    shared: Arc<Shared>,
}

/// The delivery thread of a [`UiThread`]: join it to wait until every
/// queued event is delivered.
#[derive(Debug)]
pub struct UiDelivery {
    thread: JoinHandle<Option<Box<dyn Any + Send>>>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when events were queued, the handler was cut off, or the
    /// producer went away.
    ready: Condvar,
    /// The handler stopped or was cut off: events are refused.
    stopped: AtomicBool,
    capacity: usize,
}

#[derive(Default)]
struct Queue {
    /// Events not yet taken by the delivery thread.
    filling: Outputs,
    /// The handler fell this many events behind: to tell it, once.
    cut_off: Option<usize>,
    /// The [`UiThread`] was dropped: deliver what is left and end.
    closed: bool,
    /// The delivery thread is waiting for events.
    idle: bool,
}

impl UiThread {
    /// Starts a thread that delivers to `handler`, with room for `capacity`
    /// events (at least 1) between the producer and the handler.
    ///
    /// # Errors
    /// When the operating system cannot start a thread.
    pub fn spawn(handler: impl UiHandler + 'static, capacity: usize) -> io::Result<(UiThread, UiDelivery)> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            stopped: AtomicBool::new(false),
            capacity: capacity.max(1),
        });
        let thread_shared = Arc::clone(&shared);
        let thread =
            std::thread::Builder::new().name("roundup-ui".into()).spawn(move || deliver(&thread_shared, &handler))?;
        Ok((UiThread { shared }, UiDelivery { thread }))
    }

    /// Cuts the handler off, `dropped` events behind.
    fn cut_off(&self, queue: &mut Queue, dropped: usize) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        queue.cut_off = Some(dropped);
        queue.filling = Outputs::new();
        self.shared.ready.notify_one();
    }
}

impl UiHandler for UiThread {
    fn event(&self, event: &UiEvent<'_>) -> UiFlow {
        if self.shared.stopped.load(Ordering::Relaxed) {
            return UiFlow::Stop;
        }
        let mut queue = self.shared.queue.lock();
        let queued = queue.filling.len();
        if queued >= self.shared.capacity {
            self.cut_off(&mut queue, queued + 1);
            return UiFlow::Stop;
        }
        queue.filling.ui(*event);
        if queue.idle {
            queue.idle = false;
            self.shared.ready.notify_one();
        }
        UiFlow::Continue
    }

    fn overflowed(&self, dropped: usize) {
        let mut queue = self.shared.queue.lock();
        let dropped = dropped + queue.filling.len();
        self.cut_off(&mut queue, dropped);
    }
}

impl Drop for UiThread {
    fn drop(&mut self) {
        self.shared.queue.lock().closed = true;
        self.shared.ready.notify_one();
    }
}

impl std::fmt::Debug for UiThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiThread")
            .field("capacity", &self.shared.capacity)
            .field("stopped", &self.shared.stopped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl UiDelivery {
    /// Waits until the [`UiThread`] is dropped and everything it queued is
    /// delivered (or the handler stopped or was cut off).
    ///
    /// # Errors
    /// The payload of the handler's first panic. A panicking call skips
    /// only its own event: the rest are still delivered.
    pub fn join(self) -> std::thread::Result<()> {
        match self.thread.join()? {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }
}

/// The delivery thread: takes everything queued at once (swapping buffers,
/// so the producer's lock is held only to swap) and hands it to the handler
/// outside the lock. Returns the first panic's payload.
fn deliver(shared: &Shared, handler: &dyn UiHandler) -> Option<Box<dyn Any + Send>> {
    let mut panicked = None;
    let mut taken = Outputs::new();
    loop {
        let mut queue = shared.queue.lock();
        while queue.filling.is_empty() && queue.cut_off.is_none() && !queue.closed {
            queue.idle = true;
            shared.ready.wait(&mut queue);
        }
        queue.idle = false;
        if let Some(dropped) = queue.cut_off.take() {
            drop(queue);
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| handler.overflowed(dropped))) {
                panicked.get_or_insert(payload);
            }
            return panicked;
        }
        if queue.filling.is_empty() {
            return panicked;
        }
        std::mem::swap(&mut taken, &mut queue.filling);
        drop(queue);
        for output in taken.iter() {
            let Output::Ui(event) = output else { continue };
            if shared.stopped.load(Ordering::Relaxed) {
                break;
            }
            match catch_unwind(AssertUnwindSafe(|| handler.event(&event))) {
                Ok(UiFlow::Continue) => {}
                Ok(UiFlow::Stop) => shared.stopped.store(true, Ordering::Relaxed),
                Err(payload) => {
                    panicked.get_or_insert(payload);
                }
            }
        }
        taken.clear();
        taken.release_outlier();
        if shared.stopped.load(Ordering::Relaxed) && shared.queue.lock().cut_off.is_none() {
            return panicked;
        }
    }
}
