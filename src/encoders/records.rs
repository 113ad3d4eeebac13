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
pub static FORMAT: OutputFormat = OutputFormat {
    name: "records",
    about: "rounds, stitches and anomalies as they happen,
then one summary line per run (SPEC §4)",
    encoder: || Box::new(RecordsEncoder),
};

/// Writes records and summaries as the output lines of SPEC §4.
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
