//! The OpenTelemetry traces of [`otlp`](super::otlp) with their content:
//! the assistant's text and reasoning, the prompts, each tool call's
//! arguments, result and live output, and the anomalies' dropped text.
//! Content may be sensitive (source code, personal data, secrets a tool
//! printed), so it goes to a tracing backend only when asked for:
//! `--emit otlp --otlp-content`, or this format by name.
//!
//! ```
//! use roundup::encoders::OutputFormat;
//! use roundup::{ReplayOptions, replay};
//!
//! let ops = b"{\"op\":\"tool_call\",\"id\":\"t1\",\"title\":\"ls\"}\n{\"op\":\"tool_update\",\"id\":\"t1\",\"content\":\"a.txt\",\"status\":\"completed\"}\n";
//! let mut out = Vec::new();
//! let options = ReplayOptions::new().to(OutputFormat::named("otlp-content").unwrap());
//! replay(&ops[..], &mut out, &options, &mut ()).unwrap();
//! let line = String::from_utf8(out).unwrap();
//! assert!(line.contains(r#"{"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt"}}"#));
//! ```

use super::otlp::OtlpEncoder;
use super::OutputFormat;

/// The registry row of the traces with content.
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("otlp-content").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "otlp-content",
    about: "the OpenTelemetry traces of otlp with their
content: texts, prompts, tool arguments, results;
--emit otlp --otlp-content",
    encoder: || Box::new(OtlpEncoder::new(true)),
};
