//! `roundup.Router`: many sessions, one builder each, made on first sight;
//! optionally fed a protocol's events through an adapter of the registry.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use roundup::adapters::{Adapter, InputFormat};
use roundup::router::{DirectoryStore, MemoryStore};
use roundup::{FinishReason, OpsLine, Router as Inner};

use crate::callbacks::raise_pending;
use crate::session::{new_builder, reentered, Session};
use crate::{input_format, json, names, BadEventError};

thread_local! {
    /// The routers whose lock this thread holds: a callable that calls back
    /// into one of them gets an error instead of a deadlock.
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// A router and what its calls need, shared with its sessions.
pub struct Shared {
    router: Mutex<Inner>,
    adapter: Mutex<Option<Box<dyn Adapter>>>,
    /// A Python callable is attached: calls leave the GIL.
    callbacks: bool,
}

impl Shared {
    /// Runs `f` on the router, under its lock, away from the GIL when a
    /// callable may need it.
    pub fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Inner) -> T + Send) -> PyResult<T> {
        let key = self as *const Shared as usize;
        if HELD.with(|held| held.borrow().contains(&key)) {
            return Err(reentered());
        }
        let locked = || {
            let _held = Held::enter(key);
            f(&mut self.router.lock())
        };
        Ok(if self.callbacks { py.detach(locked) } else { locked() })
    }
}

/// This thread holds the lock of the router `key` while this lives: taken
/// off when dropped, a panic's unwinding included, so that a panic does
/// not leave the thread shut out of the router for good.
struct Held(usize);

impl Held {
    fn enter(key: usize) -> Held {
        HELD.with(|held| held.borrow_mut().push(key));
        Held(key)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.with(|held| held.borrow_mut().retain(|&k| k != self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_under_the_lock_does_not_shut_the_thread_out() {
        let held = || HELD.with(|held| held.borrow().contains(&7));
        let caught = std::panic::catch_unwind(|| {
            let _held = Held::enter(7);
            assert!(held());
            panic!("inside");
        });
        assert!(caught.is_err());
        assert!(!held(), "taken off by the unwinding");
    }
}

/// Calls an adapter makes, applied to the router's sessions (clock
/// readings are not used: the builders read the system clock).
struct Apply<'a>(&'a mut Inner);

impl roundup::adapters::CallSink for Apply<'_> {
    fn call(&mut self, session: Option<&str>, call: roundup::Call<'_>) {
        self.0.call(session, call);
    }
}

/// Many sessions, one builder each.
#[pyclass(frozen, module = "roundup._roundup", name = "Router")]
pub struct Router {
    shared: Arc<Shared>,
    format: Option<&'static InputFormat>,
}

#[pymethods]
impl Router {
    #[new]
    #[pyo3(signature = (*, from_=None, on_record=None, on_ui=None, retain_rounds=false, max_sessions=None, evict_dir=None))]
    fn new(
        from_: Option<&str>,
        on_record: Option<Py<PyAny>>,
        on_ui: Option<Py<PyAny>>,
        retain_rounds: bool,
        max_sessions: Option<usize>,
        evict_dir: Option<PathBuf>,
    ) -> PyResult<Router> {
        let format = from_.map(input_format).transpose()?;
        let callbacks = on_record.is_some() || on_ui.is_some();
        let mut router = Inner::new(move |name| new_builder(name, on_record.as_ref(), on_ui.as_ref(), retain_rounds));
        match (max_sessions, evict_dir) {
            (Some(keep), Some(dir)) => {
                let store = DirectoryStore::new(&dir)
                    .map_err(|e| PyOSError::new_err(format!("evict_dir {}: {e}", dir.display())))?;
                router = router.evict_beyond(keep, store);
            }
            (Some(keep), None) => router = router.evict_beyond(keep, MemoryStore::default()),
            (None, Some(_)) => return Err(PyValueError::new_err("evict_dir needs max_sessions")),
            (None, None) => {}
        }
        let adapter = Mutex::new(format.map(InputFormat::adapter));
        Ok(Router { shared: Arc::new(Shared { router: Mutex::new(router), adapter, callbacks }), format })
    }

    /// The input format `feed` reads, if one was given.
    #[getter]
    fn from_(&self) -> Option<&'static str> {
        self.format.map(InputFormat::name)
    }

    /// The session of that name (`None`: the session-less one), made on its
    /// first call. As a context manager, leaving it closes the session.
    #[pyo3(signature = (name=None))]
    fn session(&self, name: Option<String>) -> Session {
        Session::routed(Arc::clone(&self.shared), name)
    }

    /// One call as its ops JSONL object; its `session` key addresses it.
    fn call(&self, py: Python<'_>, op: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut bytes = Vec::new();
        json::payload(op, &mut bytes)?;
        let line = OpsLine::parse(&bytes).map_err(|bad| PyValueError::new_err(bad.reason))?;
        if let Some(call) = line.call().map_err(|bad| PyValueError::new_err(bad.reason))? {
            self.shared.with(py, |router| router.call(line.session(), call))?;
        }
        raise_pending()
    }

    /// One event of the router's input format (`from_`): a parsed event
    /// (`dict`), or its JSON text (`str` or `bytes`). An event that cannot
    /// be read raises `BadEventError` and changes nothing.
    fn feed(&self, py: Python<'_>, event: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some(format) = self.format else {
            return Err(PyValueError::new_err("feed needs an input format: Router(from_=...)"));
        };
        let mut bytes = Vec::new();
        json::payload(event, &mut bytes)?;
        let adapter = &self.shared.adapter;
        let result = self.shared.with(py, |router| match adapter.lock().as_mut() {
            Some(adapter) => adapter.translate(&bytes, &mut Apply(router)),
            None => Ok(()),
        })?;
        raise_pending()?;
        result.map_err(|bad| BadEventError::new_err(format!("{} event: {}", format.name(), bad.reason)))
    }

    /// Closes a session: its open run finishes and the session is forgotten.
    #[pyo3(signature = (name, reason="interrupted"))]
    fn close(&self, py: Python<'_>, name: Option<PyBackedStr>, reason: &str) -> PyResult<()> {
        let reason = names::reason(reason)?;
        self.shared.with(py, |router| router.close(name.as_deref(), reason))?;
        raise_pending()
    }

    /// End of the stream: the adapter hands over what it still holds, then
    /// every session's open run finishes, in order of first appearance.
    /// Returns how many sessions there were.
    #[pyo3(signature = (reason="interrupted"))]
    fn finish_all(&self, py: Python<'_>, reason: &str) -> PyResult<usize> {
        self.end_stream(py, names::reason(reason)?)
    }

    /// Sessions seen and not closed (open or evicted).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.shared.with(py, |router| router.sessions())
    }

    /// Sessions held in memory (the others are evicted as checkpoints).
    #[getter]
    fn open_sessions(&self, py: Python<'_>) -> PyResult<usize> {
        self.shared.with(py, |router| router.open_sessions())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Leaving the block finishes every session: `canceled` when an
    /// exception left it, `interrupted` otherwise.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.end_stream(py, names::on_exit(exc_type))?;
        Ok(false)
    }
}

impl Router {
    /// `finish_all` with the reason already read.
    fn end_stream(&self, py: Python<'_>, reason: FinishReason) -> PyResult<usize> {
        let adapter = &self.shared.adapter;
        let finished = self.shared.with(py, |router| {
            if let Some(adapter) = adapter.lock().as_mut() {
                adapter.end(&mut Apply(router));
            }
            router.finish_all(reason)
        })?;
        raise_pending()?;
        Ok(finished)
    }
}
