//! Python callables as roundup's sink and UI handler.
//!
//! roundup calls its sink and UI handler outside its lock, on the thread
//! whose call produced the output. Every call into roundup from Python
//! leaves the GIL first whenever a callable is attached, so a thread that
//! waits for roundup never holds the GIL that the delivering thread needs:
//! the GIL and roundup's lock can never deadlock.
//!
//! A callable that raises does not unwind through roundup: its exception is
//! kept for the thread that delivered it, and raised from the Python call
//! that made the delivery, after roundup has applied that call (SPEC's
//! state is never half-updated). A second exception before the first was
//! raised goes to `sys.unraisablehook`, so that none is lost silently. A UI
//! handler that raised is detached: it gets no more events (records keep
//! going to the sink).

use std::cell::RefCell;

use pyo3::prelude::*;
use roundup::{write_record, write_ui_event, RoundSink, SinkRecord, UiEvent, UiFlow, UiHandler};

use crate::json;

thread_local! {
    /// The exception a callable raised on this thread, not raised yet.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keeps `error` for this thread's current call into roundup.
fn keep(py: Python<'_>, error: PyErr, callable: &Py<PyAny>) {
    let unraised = PENDING.with(|pending| {
        let mut pending = pending.borrow_mut();
        match *pending {
            None => {
                *pending = Some(error);
                None
            }
            Some(_) => Some(error),
        }
    });
    if let Some(error) = unraised {
        error.write_unraisable(py, Some(callable.bind(py)));
    }
}

/// Raises the exception a callable raised during this thread's call, if any.
pub fn raise_pending() -> PyResult<()> {
    match PENDING.with(|pending| pending.borrow_mut().take()) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// A Python callable given each record as a `dict` (a SPEC §4 line).
pub struct PySink(pub Py<PyAny>);

impl RoundSink for PySink {
    /// A raising callable is kept for the caller (the package's own
    /// way of surfacing callback errors), so the sink itself never fails.
    fn record(&self, record: SinkRecord<'_>) -> Result<(), roundup::BoxError> {
        let mut line = Vec::with_capacity(256);
        write_record(&mut line, record);
        Python::attach(|py| {
            if let Err(error) = json::loads(py, &line).and_then(|value| self.0.call1(py, (value,))) {
                keep(py, error, &self.0);
            }
        });
        Ok(())
    }
}

/// A Python callable given each UI event as a `dict` (the line of
/// `--emit ui`); returning `False` stops the events (the client is gone).
pub struct PyUi {
    pub callable: Py<PyAny>,
    pub session: Option<String>,
}

impl UiHandler for PyUi {
    fn event(&self, event: &UiEvent<'_>) -> UiFlow {
        let mut line = Vec::with_capacity(128);
        write_ui_event(&mut line, self.session.as_deref(), event);
        Python::attach(|py| match json::loads(py, &line).and_then(|value| self.callable.call1(py, (value,))) {
            Ok(returned) if returned.bind(py).is(&*pyo3::types::PyBool::new(py, false)) => UiFlow::Stop,
            Ok(_) => UiFlow::Continue,
            Err(error) => {
                // Raised once, from the call that delivered the event; the
                // handler is then detached, as one that returned `False`,
                // so that a broken view does not fail every later call.
                keep(py, error, &self.callable);
                UiFlow::Stop
            }
        })
    }
}
