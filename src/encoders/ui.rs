//! The live UI events, one JSON object each, with the session they belong
//! to: what a live view of roundup's own shape reads.

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::ui::UiEvent;
use crate::wire;

/// The registry row of the UI events.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::named("ui"), Some(&roundup::encoders::ui::FORMAT));
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "ui",
    about: "the live UI events (message_start,
message_delta, tool_call_start, ...), with
session",
    encoder: || Box::new(UiEncoder),
};

/// Writes UI events as the lines `--emit ui` prints.
///
/// ```
/// use roundup::encoders::{ui::UiEncoder, Encoder, Framing, Frames};
/// let mut out = Frames::new(Framing::Lines);
/// UiEncoder.ui_event(None, &roundup::UiEvent::ToolCallEnd { id: "t1" }, 0, &mut out);
/// assert_eq!(out.bytes(), b"{\"event\":\"tool_call_end\",\"id\":\"t1\"}\n");
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct UiEncoder;

impl Encoder for UiEncoder {
    /// Nothing is kept between values.
    fn save(&self) -> Option<serde_json::Value> {
        Some(serde_json::Value::Null)
    }

    fn reads(&self) -> Reads {
        Reads::UiEvents
    }

    fn ui_event(&mut self, session: Option<&str>, event: &UiEvent<'_>, _at_ms: u64, out: &mut Frames) {
        out.frame(|buf| wire::write_ui_event(buf, session, event));
    }
}
