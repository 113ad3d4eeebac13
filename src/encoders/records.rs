//! The records of SPEC §4: rounds, stitches, anomalies and meta patches as
//! they happen, then one summary per run. What `roundup replay` prints by
//! default, and what persistence stores.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::Summary;
//!
//! let mut encoder = OutputFormat::named("records").unwrap().encoder();
//! let mut out = Frames::new(Framing::Lines);
//! encoder.summary(&Summary::default(), &mut out);
//! assert!(out.bytes().starts_with(br#"{"type":"summary","run":0,"rounds":0"#));
//! ```

use super::{Encoder, Frames, OutputFormat, Reads};
use crate::model::Summary;
use crate::sink::SinkRecord;
use crate::wire;

/// The registry row of the records.
///
/// ```
/// assert_eq!(roundup::encoders::OutputFormat::default_format(), &roundup::encoders::records::FORMAT);
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "records",
    about: "rounds, stitches and anomalies as they happen,
then one summary line per run (SPEC §4)",
    encoder: || Box::new(RecordsEncoder),
};

/// Writes records and summaries as the output lines of SPEC §4.
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
    fn reads(&self) -> Reads {
        Reads::Records
    }

    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        out.frame(|buf| wire::write_record(buf, record));
    }

    fn summary(&mut self, summary: &Summary, out: &mut Frames) {
        out.frame(|buf| wire::write_summary(buf, summary));
    }
}
