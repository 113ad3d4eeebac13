//! `roundup.adapters`: one protocol's events in, the calls they mean out,
//! as ops JSONL objects (SPEC §3) that any builder or router takes.

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyList;
use roundup::adapters::{Adapter as Inner, CallSink, InputFormat};
use roundup::Call;

use crate::{input_format, json, BadEventError};

/// The translator of one stream of a protocol: it keeps what translating
/// needs across events (which request a response answers, ...).
#[pyclass(frozen, module = "roundup._roundup", name = "Adapter")]
pub struct Adapter {
    format: &'static InputFormat,
    inner: Mutex<Box<dyn Inner>>,
}

/// The calls an adapter makes, each written as its ops JSONL line.
#[derive(Default)]
struct Lines {
    lines: Vec<Vec<u8>>,
    at_ms: Option<u64>,
}

impl CallSink for Lines {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        let mut line = serde_json::to_vec(&call).unwrap_or_default();
        // The call's object, then its address and clock reading (SPEC §3).
        if line.pop() == Some(b'}') {
            if let Some(session) = session {
                line.extend_from_slice(b",\"session\":");
                line.extend_from_slice(&serde_json::to_vec(session).unwrap_or_default());
            }
            if let Some(at_ms) = self.at_ms {
                line.extend_from_slice(format!(",\"at_ms\":{at_ms}").as_bytes());
            }
            line.push(b'}');
            self.lines.push(line);
        }
    }

    fn clock(&mut self, at_ms: u64) {
        self.at_ms = Some(at_ms);
    }
}

impl Lines {
    fn into_list(self, py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        let values = self.lines.iter().map(|line| json::loads(py, line)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, values)
    }
}

#[pymethods]
impl Adapter {
    #[new]
    fn new(format: &str) -> PyResult<Adapter> {
        let format = input_format(format)?;
        Ok(Adapter { format, inner: Mutex::new(format.adapter()) })
    }

    /// The format's name, as `--from` spells it.
    #[getter]
    fn format(&self) -> &'static str {
        self.format.name()
    }

    /// The calls one event means, as ops objects (`{"op": "message",
    /// "text": "Hi", "session": "s1"}`). An event that cannot be read
    /// raises `BadEventError`; one that reads but means nothing roundup
    /// knows comes back as an `anomaly` call that keeps it.
    fn translate<'py>(&self, py: Python<'py>, event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let mut bytes = Vec::new();
        json::payload(event, &mut bytes)?;
        let mut lines = Lines::default();
        self.inner
            .lock()
            .translate(&bytes, &mut lines)
            .map_err(|bad| BadEventError::new_err(format!("{} event: {}", self.format.name(), bad.reason)))?;
        lines.into_list(py)
    }

    /// The stream ended: the calls for what the adapter still holds.
    fn end<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut lines = Lines::default();
        self.inner.lock().end(&mut lines);
        lines.into_list(py)
    }

    fn __repr__(&self) -> String {
        format!("Adapter({:?})", self.format.name())
    }
}
