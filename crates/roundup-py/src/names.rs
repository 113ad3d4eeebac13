//! The wire names of roundup's enums, read from Python strings with an
//! error that lists what is allowed.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use roundup::{AnomalyKind, FinishReason, ToolCallStatus};

fn parse<T>(what: &str, name: &str, parse: fn(&str) -> Option<T>, allowed: &str) -> PyResult<T> {
    parse(name).ok_or_else(|| PyValueError::new_err(format!("{what} {name:?} is not one of {allowed}")))
}

pub fn status(name: &str) -> PyResult<ToolCallStatus> {
    parse("status", name, ToolCallStatus::parse, "'pending', 'in_progress', 'completed', 'failed'")
}

pub fn reason(name: &str) -> PyResult<FinishReason> {
    parse("finish reason", name, FinishReason::parse, "'completed', 'failed', 'canceled', 'interrupted'")
}

/// Why a `with` block's run ends: `canceled` when an exception left the
/// block, `interrupted` otherwise.
pub fn on_exit(exc_type: Option<&Bound<'_, PyAny>>) -> FinishReason {
    if exc_type.is_some() {
        FinishReason::Canceled
    } else {
        FinishReason::Interrupted
    }
}

pub fn anomaly(name: &str) -> PyResult<AnomalyKind> {
    parse("anomaly kind", name, AnomalyKind::parse, "the kinds of SPEC §4 (e.g. 'unknown_event')")
}
