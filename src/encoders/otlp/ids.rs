//! Trace and span ids that are the same in every build and every process:
//! a digest of the run (FNV-1a, 128 bits, over bytes roundup writes itself),
//! so that exporting the same input twice gives the same ids and a backend
//! holds each span once.
//!
//! Not the crate's map hasher (seeded per process) nor the standard
//! library's (whose output may change between releases): the ids are
//! output, and the same input gives the same bytes.

use std::io;

use serde::{Deserialize, Serialize};

const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

/// An FNV-1a 128-bit digest, fed as bytes; a writer, so that a record is
/// digested as its JSON is written, without a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Digest(#[serde(with = "hex128")] u128);

impl Default for Digest {
    fn default() -> Self {
        Digest(OFFSET)
    }
}

impl Digest {
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 ^= u128::from(byte);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    /// A string, its length first, so that `("ab", "c")` and `("a", "bc")`
    /// digest apart.
    pub(crate) fn text(&mut self, text: &str) {
        self.number(text.len() as u64);
        self.bytes(text.as_bytes());
    }

    pub(crate) fn number(&mut self, n: u64) {
        self.bytes(&n.to_le_bytes());
    }

    /// The trace id: 16 bytes, never all zero (W3C: an invalid id).
    pub(crate) fn trace_id(&self) -> u128 {
        finish(self.0).max(1)
    }

    /// A span id under this trace: 8 bytes from the trace id and the
    /// span's place (`parts`), never all zero.
    pub(crate) fn span_id(&self, parts: &[u64]) -> u64 {
        let mut digest = Digest::default();
        digest.bytes(&self.trace_id().to_le_bytes());
        for &part in parts {
            digest.number(part);
        }
        let mixed = finish(digest.0);
        ((mixed >> 64) as u64 ^ mixed as u64).max(1)
    }
}

/// Spreads every input bit over every output bit (FNV's low bits depend on
/// the input's low bits only): an xor-shift-multiply finaliser.
fn finish(mut x: u128) -> u128 {
    x ^= x >> 67;
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    x ^= x >> 61;
    x
}

impl io::Write for Digest {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `u128` saved as 32 hex digits (JSON numbers are not that wide).
mod hex128 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(value: &u128, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{value:032x}"))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u128, D::Error> {
        let text = String::deserialize(deserializer)?;
        u128::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_fnv1a_128() {
        // The published FNV-1a 128-bit test value of "a".
        let mut digest = Digest::default();
        digest.bytes(b"a");
        assert_eq!(digest.0, 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }

    #[test]
    fn ids_are_fixed_values_and_differ_by_place() {
        let mut digest = Digest::default();
        digest.text("s1");
        digest.number(0);
        let again = digest;
        assert_eq!(digest.trace_id(), again.trace_id());
        assert_ne!(digest.span_id(&[0]), digest.span_id(&[1, 0]));
        assert_ne!(digest.span_id(&[1, 0]), digest.span_id(&[1, 1]));
        // The same in every build: values written down once.
        assert_eq!(format!("{:032x}", digest.trace_id()), "e2f84cdc716fc6d67d48b683947140d8");
        assert_eq!(format!("{:016x}", digest.span_id(&[0])), "1b9669f15a5b3d92");
        let mut split = Digest::default();
        split.text("s");
        split.text("1");
        assert_ne!(split.trace_id(), digest.trace_id(), "lengths keep strings apart");
    }

    #[test]
    fn a_digest_survives_a_checkpoint() {
        let mut digest = Digest::default();
        digest.text("run");
        let saved = serde_json::to_value(digest).unwrap();
        assert!(saved.as_str().is_some_and(|hex| hex.len() == 32));
        assert_eq!(serde_json::from_value::<Digest>(saved).unwrap(), digest);
    }
}
