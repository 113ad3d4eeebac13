//! The records of SPEC §4: rounds, stitches, anomalies, meta patches and
//! each run's summary at its finish, as they happen. What `roundup replay`
//! prints by default, and what persistence stores.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::{SinkRecord, Summary};
//!
//! let mut encoder = OutputFormat::named("records").unwrap().encoder();
//! let mut out = Frames::new(Framing::Lines);
//! encoder.record(SinkRecord::Summary(&Summary::default()), &mut out);
//! assert!(out.bytes().starts_with(br#"{"type":"summary","run":0,"rounds":0"#));
//! ```

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::sink::SinkRecord;
use crate::wire;

/// The registry row of the records.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::default_format(), &roundup::encoders::records::FORMAT);
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "records",
    about: "rounds, stitches, anomalies, and each run's
summary at its finish (SPEC §4)",
    encoder: || Box::new(RecordsEncoder),
};

/// Writes records as the output lines of SPEC §4.
///
/// ```
/// use roundup::encoders::{records::RecordsEncoder, Encoder, Framing, Frames};
/// use roundup::{RoundBuilder, StreamHandler};
///
/// let builder = RoundBuilder::new();
/// builder.message("Hi");
/// builder.finish(roundup::FinishReason::Canceled);
/// let mut out = Frames::new(Framing::Lines);
/// RecordsEncoder.record(roundup::SinkRecord::Round(&builder.rounds()[0]), &mut out);
/// assert!(out.bytes().starts_with(br#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"Hi""#));
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct RecordsEncoder;

impl Encoder for RecordsEncoder {
    /// Nothing is kept between values.
    fn save(&self) -> Option<serde_json::Value> {
        Some(serde_json::Value::Null)
    }

    fn reads(&self) -> Reads {
        Reads::Records
    }

    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        out.frame(|buf| wire::write_record(buf, record));
    }
}
