//! roundup for Node.js: the native addon (`roundup.node`) under the npm
//! package `roundup` (crates/roundup-node/index.js).
//!
//! The addon is a thin layer over the Rust crate, which does all the work.
//! Records and UI events cross as the JSON text roundup writes (the command
//! line's bytes), parsed on the JavaScript side; the addon never calls into
//! JavaScript: what a call delivers is queued and handed back as its
//! return value, and the package gives it to the callbacks in order. A
//! callback that throws therefore throws after roundup applied the call,
//! from the call that delivered it.
//!
//! Sessions, routers and adapters cross as Externals handed to plain
//! functions (`sessionMessage(session, text)`): Node-API crosses those in
//! about half the time of a class method, which matters where a program
//! makes a call per streamed delta. A replay, fed per piece of input, is a
//! class.

// napi-derive registers the exported functions with Node only outside test
// builds (`cfg(not(test))`): a test build (`cargo clippy --all-targets`)
// sees them as unused.
#![cfg_attr(test, allow(dead_code))]

use napi_derive::napi;
use roundup::adapters::InputFormat;
use roundup::{AnomalyKind, FinishReason, ToolCallStatus};

mod adapter;
mod outbox;
mod replay;
mod router;
mod session;

/// An error whose message starts with its code in brackets
/// (`[BAD_EVENT] ...`): the package throws it as a `RoundupError` whose
/// `code` is that code.
pub(crate) fn error(code: &str, message: impl std::fmt::Display) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, format!("[{code}] {message}"))
}

/// Runs `f`, a panic in it (a bug of roundup's) turned into an `INTERNAL`
/// error: the process goes on, whatever the input.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> napi::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        error("INTERNAL", format!("roundup failed on this input (a bug: please report it with the input): {what}"))
    })
}

/// The registered input format of that name, or an error listing them.
pub(crate) fn input_format(name: &str) -> napi::Result<&'static InputFormat> {
    InputFormat::named(name).ok_or_else(|| {
        let names: Vec<&str> = roundup::adapters::REGISTRY.iter().map(|f| f.name()).collect();
        error("BAD_ARGUMENT", format!("{name:?} is not an input format: {}", names.join(", ")))
    })
}

fn parse<T>(what: &str, name: &str, parse: fn(&str) -> Option<T>, allowed: &str) -> napi::Result<T> {
    parse(name).ok_or_else(|| error("BAD_ARGUMENT", format!("{what} {name:?} is not one of {allowed}")))
}

pub(crate) fn status(name: &str) -> napi::Result<ToolCallStatus> {
    parse("status", name, ToolCallStatus::parse, "\"pending\", \"in_progress\", \"completed\", \"failed\"")
}

pub(crate) fn reason(name: &str) -> napi::Result<FinishReason> {
    parse("finish reason", name, FinishReason::parse, "\"completed\", \"failed\", \"canceled\", \"interrupted\"")
}

pub(crate) fn anomaly(name: &str) -> napi::Result<AnomalyKind> {
    parse("anomaly kind", name, AnomalyKind::parse, "the kinds of SPEC §4 (e.g. \"unknown_event\")")
}

/// A format's name and description.
#[napi(object)]
pub struct Described {
    /// The name, as `--from` or `--emit` spells it.
    pub name: String,
    /// What it is, on one line.
    pub about: String,
}

fn described(name: &str, about: &str) -> Described {
    Described { name: name.to_owned(), about: about.split_whitespace().collect::<Vec<_>>().join(" ") }
}

/// The input formats, in detection order.
#[napi]
pub fn input_formats() -> Vec<Described> {
    roundup::adapters::REGISTRY.iter().map(|f| described(f.name(), f.about())).collect()
}

/// The output formats; the first is the default.
#[napi]
pub fn output_formats() -> Vec<Described> {
    roundup::encoders::REGISTRY.iter().map(|f| described(f.name(), f.about())).collect()
}

/// The version of the Rust crate the addon was built from.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
