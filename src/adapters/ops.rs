//! Ops JSONL (SPEC §3), roundup's own format: one recorded call per line,
//! as the [`Recorder`](crate::Recorder) writes it. The line decoder (and
//! its fast path for flat lines) is [`OpsLine`]; this adapter only hands
//! its calls on.
//!
//! ```
//! use roundup::adapters::{ops::OpsAdapter, Adapter};
//! use roundup::Call;
//!
//! let mut ops = OpsAdapter::default();
//! let mut seen = Vec::new();
//! ops.translate(br#"{"op":"message","text":"Hi","session":"s1"}"#, &mut |session: Option<&str>, call: Call<'_>| {
//!     seen.push((session.map(str::to_owned), call.op_name()))
//! })
//! .unwrap();
//! assert_eq!(seen, [(Some("s1".to_owned()), "message")]);
//!
//! let bad = ops.translate(br#"{"op":"message"}"#, &mut |_: Option<&str>, _: Call<'_>| {}).unwrap_err();
//! assert_eq!(bad.reason, "missing field `text`");
//! ```

use serde_json::{Map, Value};

use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::ops::OpsLine;

/// The registry row of ops JSONL.
///
/// ```
/// assert_eq!(roundup::adapters::REGISTRY[0], &roundup::adapters::ops::FORMAT);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "ops",
    about: "ops JSONL: one StreamHandler call per line,\ne.g. {\"op\":\"message\",\"text\":\"Hi\",\"at_ms\":100}",
    detect: |event: &Map<String, Value>| event.contains_key("op"),
    adapter: || Box::<OpsAdapter>::default(),
};

/// Reads ops JSONL lines. It keeps no state: every line is a whole call.
///
/// ```
/// use roundup::adapters::{ops::OpsAdapter, Adapter};
/// let mut calls = 0;
/// OpsAdapter::default().translate(br#"{"op":"start"}"#, &mut |_: Option<&str>, _: roundup::Call<'_>| calls += 1).unwrap();
/// assert_eq!(calls, 1);
/// ```
#[derive(Debug, Default, Clone)]
pub struct OpsAdapter {
    /// Where the strings with escapes of each line are decoded: a buffer,
    /// not state (every line is read on its own).
    scratch: String,
}

impl Adapter for OpsAdapter {
    /// Ops lines are read one by one: nothing is kept between them.
    fn save(&self) -> Option<serde_json::Value> {
        Some(serde_json::Value::Null)
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        OpsLine::read(payload, &mut self.scratch, |parsed| {
            let line = parsed?;
            if let Some(at_ms) = line.at_ms() {
                calls.clock(at_ms);
            }
            if let Some(call) = line.call()? {
                calls.call(line.session(), call);
            }
            Ok(())
        })
    }
}
