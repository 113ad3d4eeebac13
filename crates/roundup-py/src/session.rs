//! `roundup.RoundBuilder`: one session, fed with the `StreamHandler` calls.
//!
//! The same class serves a builder of its own and a session of a
//! [`Router`](crate::router::Router) (what `router.session(name)` returns),
//! so the calls are written once and a session reads the same either way.

use std::error::Error as _;
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyDict, PyList};
use roundup::{
    write_record, write_summary, Call, Checkpoint, OpsLine, RoundBuilder as Builder, SinkRecord, StreamHandler,
    ToolCallStatus,
};

use crate::callbacks::{raise_pending, PySink, PyUi};
use crate::router::Shared;
use crate::{json, names, CheckpointError};

/// What a session's calls go to.
enum Target {
    /// A builder of its own.
    Own { builder: Box<Builder>, callbacks: bool, name: Option<String> },
    /// A session of a router.
    Routed { router: Arc<Shared>, name: Option<String> },
}

/// One session's aggregation: feed it the calls of the stream, get rounds.
#[pyclass(frozen, module = "roundup._roundup", name = "RoundBuilder")]
pub struct Session {
    target: Target,
}

/// A builder delivering to Python callables.
pub fn new_builder(
    session: Option<&str>,
    on_record: Option<&Py<PyAny>>,
    on_ui: Option<&Py<PyAny>>,
    retain_rounds: bool,
) -> Builder {
    let mut builder = Builder::new().retain_rounds(retain_rounds);
    if let Some(name) = session {
        builder = builder.with_session(name);
    }
    if let Some(sink) = on_record {
        builder = builder.with_round_sink(PySink(Python::attach(|py| sink.clone_ref(py))));
    }
    if let Some(ui) = on_ui {
        let callable = Python::attach(|py| ui.clone_ref(py));
        builder = builder.with_ui_handler(PyUi { callable, session: session.map(str::to_owned) });
    }
    builder
}

impl Session {
    pub fn routed(router: Arc<Shared>, name: Option<String>) -> Session {
        Session { target: Target::Routed { router, name } }
    }

    /// Applies one call, away from the GIL when a callable may need it.
    fn apply(&self, py: Python<'_>, call: Call<'_>) -> PyResult<()> {
        match &self.target {
            Target::Own { builder, callbacks: false, .. } => builder.call(call),
            Target::Own { builder, callbacks: true, .. } => py.detach(|| builder.call(call)),
            Target::Routed { router, name } => router.with(py, |router| router.call(name.as_deref(), call))?,
        }
        raise_pending()
    }

    /// Runs `f` on this session's builder.
    fn with_builder<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Builder) -> T + Send) -> PyResult<T> {
        let result = match &self.target {
            Target::Own { builder, callbacks: false, .. } => f(builder),
            Target::Own { builder, callbacks: true, .. } => py.detach(|| f(builder)),
            Target::Routed { router, name } => router.with(py, |router| f(router.session(name.as_deref())))?,
        };
        raise_pending()?;
        Ok(result)
    }
}

fn records<'py>(py: Python<'py>, lines: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyList>> {
    let values = lines.iter().map(|line| json::loads(py, line)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, values)
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (session=None, *, on_record=None, on_ui=None, retain_rounds=true))]
    fn new(
        session: Option<&str>,
        on_record: Option<Py<PyAny>>,
        on_ui: Option<Py<PyAny>>,
        retain_rounds: bool,
    ) -> Session {
        let callbacks = on_record.is_some() || on_ui.is_some();
        let builder = new_builder(session, on_record.as_ref(), on_ui.as_ref(), retain_rounds);
        Session { target: Target::Own { builder: Box::new(builder), callbacks, name: session.map(str::to_owned) } }
    }

    /// The session's name, `None` for the session-less one.
    #[getter]
    fn session(&self) -> Option<String> {
        match &self.target {
            Target::Own { name, .. } | Target::Routed { name, .. } => name.clone(),
        }
    }

    fn message(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<()> {
        self.apply(py, Call::Message { text: &text })
    }

    fn thought(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<()> {
        self.apply(py, Call::Thought { text: &text })
    }

    #[pyo3(signature = (id, title=None, name=None))]
    fn tool_call(
        &self,
        py: Python<'_>,
        id: PyBackedStr,
        title: Option<PyBackedStr>,
        name: Option<PyBackedStr>,
    ) -> PyResult<()> {
        let (title, name) = (title.as_deref().unwrap_or(""), name.as_deref().unwrap_or(""));
        self.apply(py, Call::ToolCall { id: &id, title, name })
    }

    #[pyo3(signature = (id, content, status="in_progress"))]
    fn tool_update(&self, py: Python<'_>, id: PyBackedStr, content: PyBackedStr, status: &str) -> PyResult<()> {
        let status = names::status(status)?;
        self.apply(py, Call::ToolUpdate { id: &id, content: &content, status })
    }

    fn args_delta(&self, py: Python<'_>, id: PyBackedStr, delta: PyBackedStr) -> PyResult<()> {
        self.apply(py, Call::ToolUpdate { id: &id, content: &delta, status: ToolCallStatus::InProgress })
    }

    fn args_snapshot(&self, py: Python<'_>, id: PyBackedStr, args: PyBackedStr) -> PyResult<()> {
        self.apply(py, Call::ArgsSnapshot { id: &id, args: &args })
    }

    #[pyo3(signature = (id, content, *, failed=false))]
    fn tool_result(&self, py: Python<'_>, id: PyBackedStr, content: PyBackedStr, failed: bool) -> PyResult<()> {
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        self.apply(py, Call::ToolUpdate { id: &id, content: &content, status })
    }

    #[pyo3(signature = (id, content, *, replace=false))]
    fn tool_output(&self, py: Python<'_>, id: PyBackedStr, content: PyBackedStr, replace: bool) -> PyResult<()> {
        self.apply(py, Call::ToolOutput { id: &id, content: &content, replace })
    }

    fn token_usage(&self, py: Python<'_>, total: u64) -> PyResult<()> {
        self.apply(py, Call::TokenUsage { total })
    }

    fn start(&self, py: Python<'_>) -> PyResult<()> {
        self.apply(py, Call::Start)
    }

    #[pyo3(signature = (reason="interrupted"))]
    fn finish(&self, py: Python<'_>, reason: &str) -> PyResult<()> {
        let reason = names::reason(reason)?;
        self.apply(py, Call::Finish { reason })
    }

    fn tool_meta(&self, py: Python<'_>, id: PyBackedStr, meta: &Bound<'_, PyDict>) -> PyResult<()> {
        let meta = meta_of(meta)?;
        self.apply(py, Call::ToolMeta { id: &id, meta: &meta })
    }

    fn run_meta(&self, py: Python<'_>, meta: &Bound<'_, PyDict>) -> PyResult<()> {
        let meta = meta_of(meta)?;
        self.apply(py, Call::RunMeta { meta: &meta })
    }

    fn round_meta(&self, py: Python<'_>, meta: &Bound<'_, PyDict>) -> PyResult<()> {
        let meta = meta_of(meta)?;
        self.apply(py, Call::RoundMeta { meta: &meta })
    }

    #[pyo3(signature = (kind, detail, id=None))]
    fn anomaly(&self, py: Python<'_>, kind: &str, detail: PyBackedStr, id: Option<PyBackedStr>) -> PyResult<()> {
        let kind = names::anomaly(kind)?;
        self.apply(py, Call::Anomaly { kind, id: id.as_deref(), detail: &detail })
    }

    /// One call as its ops JSONL object (`{"op": "message", "text": "Hi"}`),
    /// SPEC §3; a `session` key in it is ignored here.
    fn call(&self, py: Python<'_>, op: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut bytes = Vec::new();
        json::payload(op, &mut bytes)?;
        let line = OpsLine::parse(&bytes).map_err(|bad| PyValueError::new_err(bad.reason))?;
        match line.call().map_err(|bad| PyValueError::new_err(bad.reason))? {
            Some(call) => self.apply(py, call),
            None => Ok(()),
        }
    }

    /// The rounds closed so far (with history on), as `round` records.
    #[getter]
    fn rounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let lines = self.with_builder(py, |builder| {
            let rounds = builder.rounds();
            rounds
                .iter()
                .map(|round| {
                    let mut line = Vec::new();
                    write_record(&mut line, SinkRecord::Round(round));
                    line
                })
                .collect::<Vec<_>>()
        })?;
        records(py, lines)
    }

    /// The round being built, as a reconnecting UI draws it; `None` when
    /// no round is open.
    fn open_round<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let line = self.with_builder(py, |builder| {
            builder.open_round().map(|round| serde_json::to_vec(&round).unwrap_or_default())
        })?;
        line.map(|line| json::loads(py, &line)).transpose()
    }

    /// The current run's summary record.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let line = self.with_builder(py, |builder| {
            let mut line = Vec::new();
            write_summary(&mut line, &builder.summary());
            line
        })?;
        json::loads(py, &line)
    }

    /// The run being built or last finished, counted from 0.
    #[getter]
    fn run(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_builder(py, Builder::run)
    }

    /// Whether the current run has finished.
    #[getter]
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_builder(py, Builder::is_finished)
    }

    /// The session's state as bytes (SPEC rule 14): what `restore` takes,
    /// in this process or another. Retained rounds go in only with
    /// `history=True`.
    #[pyo3(signature = (*, history=false))]
    fn checkpoint<'py>(&self, py: Python<'py>, history: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with_builder(py, |builder| {
            if history { builder.checkpoint_with_history() } else { builder.checkpoint() }.to_json()
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Continues from a checkpoint's bytes; raises `CheckpointError` (and
    /// changes nothing) when they are not a checkpoint this build reads.
    fn restore(&self, py: Python<'_>, checkpoint: &[u8]) -> PyResult<()> {
        let checkpoint = Checkpoint::from_json(checkpoint).map_err(checkpoint_error)?;
        self.with_builder(py, |builder| builder.restore(checkpoint))?.map_err(checkpoint_error)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Leaving the block finishes the open run: `canceled` when an
    /// exception left it, `interrupted` otherwise (SPEC's reasons).
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let reason = names::on_exit(exc_type);
        match &self.target {
            Target::Routed { router, name } => router.with(py, |router| router.close(name.as_deref(), reason))?,
            Target::Own { .. } => {
                self.with_builder(py, |builder| builder.finish_if_running(reason))?;
            }
        }
        raise_pending()?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (run, finished) = self.with_builder(py, |builder| (builder.run(), builder.is_finished()))?;
        Ok(format!(
            "RoundBuilder(session={:?}, run={run}, {})",
            self.session(),
            if finished { "finished" } else { "running" }
        ))
    }
}

/// A `dict` as roundup's metadata object.
fn meta_of(meta: &Bound<'_, PyDict>) -> PyResult<roundup::Meta> {
    let mut bytes = Vec::new();
    json::value(meta.as_any(), "meta", &mut bytes)?;
    serde_json::from_slice(&bytes).map_err(|e| PyValueError::new_err(format!("meta: {e}")))
}

pub fn checkpoint_error(error: roundup::CheckpointError) -> PyErr {
    let mut message = error.to_string();
    if let Some(source) = error.source() {
        message = format!("{message}: {source}");
    }
    CheckpointError::new_err(message)
}

/// A router's lock, taken again by a callable it called.
pub fn reentered() -> PyErr {
    PyRuntimeError::new_err("a callback of a Router called back into the same Router; hand the work to another thread")
}
