//! `roundup.Replayer` and `roundup.replay`: a recorded or live stream of
//! any input format in, any output format out, the command line's output
//! value for value.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

use parking_lot::Mutex;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use roundup::encoders::{Framing, OutputFormat};
use roundup::{ReplayOptions, Replayer as Inner};

use crate::{input_format, json};

/// Reads so much of a file at a time.
const CHUNK: usize = 64 << 10;

/// The options both entry points take.
fn options(
    from_: Option<&str>,
    emit: &str,
    sse: bool,
    max_sessions: Option<usize>,
    evict_dir: Option<PathBuf>,
) -> PyResult<ReplayOptions> {
    let to = OutputFormat::named(emit).ok_or_else(|| {
        let names: Vec<&str> = roundup::encoders::REGISTRY.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!("emit={emit:?} is not an output format: {}", names.join(", ")))
    })?;
    let mut options = ReplayOptions::new().to(to).framing(if sse { Framing::Sse } else { Framing::Lines });
    if let Some(from_) = from_ {
        options = options.from(input_format(from_)?);
    }
    if let Some(keep) = max_sessions {
        options = options.evict(keep, evict_dir);
    } else if evict_dir.is_some() {
        return Err(PyValueError::new_err("evict_dir needs max_sessions"));
    }
    Ok(options)
}

fn new_inner(options: &ReplayOptions) -> PyResult<Inner> {
    Inner::new(options).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|s| format!(": {s}")).unwrap_or_default();
        PyOSError::new_err(format!("{e}{cause}"))
    })
}

/// The output values in `bytes`: parsed JSON for lines, the text of each
/// event for SSE (ready to send).
fn values(py: Python<'_>, bytes: &[u8], sse: bool, into: &mut VecDeque<Py<PyAny>>) -> PyResult<()> {
    if sse {
        let text = String::from_utf8_lossy(bytes);
        for event in text.split_inclusive("\n\n") {
            into.push_back(PyString::new(py, event).into_any().unbind());
        }
    } else {
        for line in bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
            into.push_back(json::loads(py, line)?.unbind());
        }
    }
    Ok(())
}

fn stats<'py>(py: Python<'py>, inner: &Inner) -> PyResult<Bound<'py, PyDict>> {
    let stats = inner.stats();
    let dict = PyDict::new(py);
    dict.set_item("lines", stats.lines)?;
    dict.set_item("bad_lines", stats.bad_lines)?;
    dict.set_item("payloads", stats.payloads)?;
    dict.set_item("bytes", stats.bytes)?;
    dict.set_item("sessions", stats.sessions)?;
    dict.set_item("format", stats.format.map(|f| f.name()))?;
    Ok(dict)
}

/// A replay driven by its caller: feed it input, take its output.
#[pyclass(frozen, module = "roundup._roundup", name = "Replayer")]
pub struct Replayer {
    inner: Mutex<Inner>,
    sse: bool,
    /// `close` was called: the input ended, and nothing more is read.
    closed: std::sync::atomic::AtomicBool,
}

impl Replayer {
    /// An error for input given after `close`.
    fn open(&self, what: &str) -> PyResult<()> {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(PyValueError::new_err(format!("{what} after close: the replay's input has ended")));
        }
        Ok(())
    }

    fn output<'py>(&self, py: Python<'py>, inner: &mut Inner) -> PyResult<Bound<'py, PyList>> {
        let mut bytes = Vec::new();
        inner.take_output(&mut bytes);
        let mut out = VecDeque::new();
        values(py, &bytes, self.sse, &mut out)?;
        PyList::new(py, out)
    }
}

#[pymethods]
impl Replayer {
    #[new]
    #[pyo3(signature = (*, from_=None, emit="records", sse=false, max_sessions=None, evict_dir=None))]
    fn new(
        from_: Option<&str>,
        emit: &str,
        sse: bool,
        max_sessions: Option<usize>,
        evict_dir: Option<PathBuf>,
    ) -> PyResult<Replayer> {
        let inner = new_inner(&options(from_, emit, sse, max_sessions, evict_dir)?)?;
        Ok(Replayer { inner: Mutex::new(inner), sse, closed: std::sync::atomic::AtomicBool::new(false) })
    }

    /// A piece of input text (lines, cut anywhere); returns the output it
    /// completed.
    fn feed<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let mut bytes = Vec::new();
        if data.is_instance_of::<PyDict>() {
            return Err(PyValueError::new_err("feed takes text; a parsed event goes to feed_event"));
        }
        json::payload(data, &mut bytes)?;
        self.open("feed")?;
        let mut inner = self.inner.lock();
        inner.feed(&bytes, &mut ());
        self.output(py, &mut inner)
    }

    /// One whole event (a parsed `dict`, or the JSON text of one); returns
    /// the output it completed.
    fn feed_event<'py>(&self, py: Python<'py>, event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let mut bytes = Vec::new();
        json::payload(event, &mut bytes)?;
        self.open("feed_event")?;
        let mut inner = self.inner.lock();
        inner.feed_payload(&bytes, &mut ());
        self.output(py, &mut inner)
    }

    /// The input ended: every open run finishes; returns the rest of the
    /// output. A second close returns nothing more.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut inner = self.inner.lock();
        if !self.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            inner.finish(&mut ());
        }
        self.output(py, &mut inner)
    }

    /// What was read so far: lines, bad_lines, payloads, bytes, sessions
    /// (counted at the close), format.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats(py, &self.inner.lock())
    }
}

/// Where `replay` reads from.
enum Source {
    File(File),
    Iter(Py<PyAny>),
}

enum Phase {
    Reading,
    Finishing,
    Done,
}

struct State {
    inner: Inner,
    source: Source,
    phase: Phase,
    ready: VecDeque<Py<PyAny>>,
}

/// The output of a replay, value by value, read as it is needed.
#[pyclass(frozen, module = "roundup._roundup", name = "ReplayIterator")]
pub struct ReplayIterator {
    state: Mutex<State>,
    sse: bool,
}

impl ReplayIterator {
    /// Reads input until output is ready or the input ends.
    fn advance(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        let mut bytes = Vec::new();
        match state.phase {
            Phase::Reading => match &mut state.source {
                Source::File(file) => {
                    let mut buf = vec![0; CHUNK];
                    let inner = &mut state.inner;
                    let read = py.detach(|| {
                        let read = file.read(&mut buf)?;
                        inner.feed(&buf[..read], &mut ());
                        inner.take_output(&mut bytes);
                        Ok::<_, std::io::Error>(read)
                    });
                    match read {
                        Ok(0) => {
                            state.inner.end_input(&mut ());
                            state.phase = Phase::Finishing;
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(PyOSError::new_err(format!("cannot read the input: {e}"))),
                    }
                }
                Source::Iter(iter) => match iter.bind(py).call_method0("__next__") {
                    Ok(item) => {
                        if item.is_instance_of::<PyDict>() {
                            json::payload(&item, &mut bytes)?;
                            state.inner.feed_payload(&bytes, &mut ());
                        } else {
                            json::payload(&item, &mut bytes)?;
                            if bytes.last() != Some(&b'\n') {
                                bytes.push(b'\n');
                            }
                            state.inner.feed(&bytes, &mut ());
                        }
                        bytes.clear();
                        state.inner.take_output(&mut bytes);
                    }
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => {
                        state.inner.end_input(&mut ());
                        state.phase = Phase::Finishing;
                    }
                    Err(e) => return Err(e),
                },
            },
            Phase::Finishing => {
                // One session at a time: a million sessions' last rounds
                // are never held at once.
                if !state.inner.finish_next() {
                    state.phase = Phase::Done;
                }
                state.inner.take_output(&mut bytes);
            }
            Phase::Done => {}
        }
        values(py, &bytes, self.sse, &mut state.ready)
    }
}

#[pymethods]
impl ReplayIterator {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut state = self.state.lock();
        loop {
            if let Some(value) = state.ready.pop_front() {
                return Ok(Some(value));
            }
            if matches!(state.phase, Phase::Done) {
                return Ok(None);
            }
            self.advance(py, &mut state)?;
        }
    }

    /// What was read so far (see `Replayer.stats`).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats(py, &self.state.lock().inner)
    }
}

/// Replays `source` (a path, or an iterable of lines or parsed events).
#[pyfunction]
#[pyo3(signature = (source, *, from_=None, emit="records", sse=false, max_sessions=None, evict_dir=None))]
pub fn replay(
    source: &Bound<'_, PyAny>,
    from_: Option<&str>,
    emit: &str,
    sse: bool,
    max_sessions: Option<usize>,
    evict_dir: Option<PathBuf>,
) -> PyResult<ReplayIterator> {
    let inner = new_inner(&options(from_, emit, sse, max_sessions, evict_dir)?)?;
    let text_for_a_path = source.is_instance_of::<PyString>() && source.extract::<String>()?.contains('\n');
    if text_for_a_path {
        return Err(PyValueError::new_err(
            "replay takes a path, and this string holds a line break: to replay text, pass its lines (text.splitlines())",
        ));
    }
    let source = if source.is_instance_of::<PyString>() || source.hasattr("__fspath__")? {
        let path: PathBuf = source.extract()?;
        let file = File::open(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Source::File(file)
    } else if source.is_instance_of::<PyBytes>() {
        return Err(PyValueError::new_err("replay takes a path or an iterable of lines or events, not bytes"));
    } else {
        Source::Iter(source.try_iter()?.into_any().unbind())
    };
    Ok(ReplayIterator {
        state: Mutex::new(State { inner, source, phase: Phase::Reading, ready: VecDeque::new() }),
        sse,
    })
}
