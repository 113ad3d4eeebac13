//! JSON between Python and roundup.
//!
//! Going in, a parsed event (`dict`, `list`, `str`, numbers, `None`) is
//! written as JSON text, which is what every adapter reads; going out, each
//! line roundup writes is given to `json.loads`, so that a record is exactly
//! what `json.loads` of the command line's line gives.

use std::fmt::Write as _;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `json.loads`, looked up once.
fn loads_fn(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    LOADS
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("json")?.getattr("loads")?.unbind()))
        .map(|loads| loads.bind(py))
}

/// The Python value of one JSON text roundup wrote.
pub fn loads<'py>(py: Python<'py>, json: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    // roundup writes UTF-8 only; `str` keeps json.loads on its fast path.
    let text = std::str::from_utf8(json).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    loads_fn(py)?.call1((text,))
}

/// The payload bytes of an event: `bytes` and `str` as they are (a raw
/// line), anything else written as JSON.
pub fn payload(event: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    if let Ok(bytes) = event.cast::<PyBytes>() {
        out.extend_from_slice(bytes.as_bytes());
    } else if let Ok(text) = event.cast::<PyString>() {
        out.extend_from_slice(text.to_cow()?.as_bytes());
    } else {
        value(event, "event", out)?;
    }
    Ok(())
}

/// Writes a Python value as JSON; an error names where in `root` the value
/// that cannot be written is.
pub fn value(value: &Bound<'_, PyAny>, root: &str, out: &mut Vec<u8>) -> PyResult<()> {
    write(value, out).map_err(|unwritable| unwritable.into_error(root))
}

/// A value that cannot be written, and where it is (outermost step last):
/// the path is only built when there is an error to report.
struct Unwritable {
    reason: String,
    path: Vec<String>,
    python: Option<PyErr>,
}

impl Unwritable {
    fn new(reason: String) -> Self {
        Unwritable { reason, path: Vec::new(), python: None }
    }

    fn at(mut self, step: String) -> Self {
        self.path.push(step);
        self
    }

    fn into_error(self, root: &str) -> PyErr {
        if let Some(error) = self.python {
            return error;
        }
        let path: String = self.path.iter().rev().map(String::as_str).collect();
        PyTypeError::new_err(format!("{root}{path}: {}", self.reason))
    }
}

impl From<PyErr> for Unwritable {
    fn from(error: PyErr) -> Self {
        Unwritable { reason: String::new(), path: Vec::new(), python: Some(error) }
    }
}

/// Writes `value` as JSON.
fn write(value: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Result<(), Unwritable> {
    if let Ok(text) = value.cast::<PyString>() {
        string(&text.to_cow()?, out);
    } else if let Ok(dict) = value.cast::<PyDict>() {
        out.push(b'{');
        for (i, (key, item)) in dict.iter().enumerate() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(Unwritable::new(format!("a key is not a str but {}", type_name(&key))));
            };
            let key = key.to_cow()?;
            if i > 0 {
                out.push(b',');
            }
            string(&key, out);
            out.push(b':');
            write(&item, out).map_err(|e| e.at(format!("[{key:?}]")))?;
        }
        out.push(b'}');
    } else if value.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
    } else if let Ok(int) = value.cast::<PyInt>() {
        match int.extract::<i64>() {
            Ok(n) => {
                let _ = write!(Utf8(out), "{n}");
            }
            // Beyond 64 bits: Python's own digits, which JSON allows.
            Err(_) => out.extend_from_slice(int.str()?.to_cow()?.as_bytes()),
        }
    } else if let Ok(float) = value.cast::<PyFloat>() {
        let x = float.value();
        if !x.is_finite() {
            return Err(Unwritable::new(format!("{x} has no JSON form")));
        }
        serde_json::to_writer(&mut *out, &x).map_err(|e| Unwritable::new(e.to_string()))?;
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        out.push(b'[');
        for (i, item) in value.try_iter()?.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write(&item?, out).map_err(|e| e.at(format!("[{i}]")))?;
        }
        out.push(b']');
    } else {
        return Err(Unwritable::new(format!("a {} cannot be written as JSON", type_name(value))));
    }
    Ok(())
}

/// `fmt::Write` into a byte buffer.
struct Utf8<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Utf8<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

fn string(text: &str, out: &mut Vec<u8>) {
    // Writing a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "value".to_owned())
}
