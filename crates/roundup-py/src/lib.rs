//! roundup for Python: the extension module `roundup._roundup`.
//!
//! The Python package `roundup` (python/roundup) re-exports these classes
//! with their documentation and types; this crate only binds the Rust
//! crate, which does all the work.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use roundup::adapters::InputFormat;

mod adapter;
mod callbacks;
mod json;
mod names;
mod replay;
mod router;
mod session;

create_exception!(
    _roundup,
    CheckpointError,
    PyValueError,
    "Bytes that are not a checkpoint this build of roundup reads."
);
create_exception!(_roundup, BadEventError, PyValueError, "An event its input format cannot read.");

/// The registered input format of that name, or an error listing them.
pub(crate) fn input_format(name: &str) -> PyResult<&'static InputFormat> {
    InputFormat::named(name).ok_or_else(|| {
        let names: Vec<&str> = roundup::adapters::REGISTRY.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!("{name:?} is not an input format: {}", names.join(", ")))
    })
}

/// The input formats: name and description, in detection order.
#[pyfunction]
fn input_formats(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    roundup::adapters::REGISTRY.iter().map(|f| described(py, f.name(), f.about())).collect()
}

/// The output formats: name and description; the first is the default.
#[pyfunction]
fn output_formats(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    roundup::encoders::REGISTRY.iter().map(|f| described(py, f.name(), f.about())).collect()
}

fn described<'py>(py: Python<'py>, name: &str, about: &str) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", name)?;
    dict.set_item("about", about.split_whitespace().collect::<Vec<_>>().join(" "))?;
    Ok(dict)
}

#[pymodule]
fn _roundup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<session::Session>()?;
    m.add_class::<router::Router>()?;
    m.add_class::<adapter::Adapter>()?;
    m.add_class::<replay::Replayer>()?;
    m.add_class::<replay::ReplayIterator>()?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    m.add_function(wrap_pyfunction!(input_formats, m)?)?;
    m.add_function(wrap_pyfunction!(output_formats, m)?)?;
    m.add("CheckpointError", m.py().get_type::<CheckpointError>())?;
    m.add("BadEventError", m.py().get_type::<BadEventError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
