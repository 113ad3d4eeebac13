//! A fast path for the common shape of an ops line: one flat JSON object
//! whose values are strings and plain integers.
//!
//! Decoding through serde costs about twice what merely scanning the JSON
//! costs, most of it in generic machinery (key and value visitors, option
//! layers, moving a wide struct around). Recorded traces are nearly all flat
//! objects, so this scanner reads them directly and borrows every string
//! that has no escape. Anything it does not handle exactly (a nested or
//! literal value, a number that is not a plain integer, an escape in a key,
//! a repeated field, trailing bytes) makes it give up, and the line goes
//! through serde, which also words the errors. The two paths are checked to
//! agree on every input by a property test and a fuzz target.

use super::{Fields, Key, Slot};
use crate::json_scan::{decode_tail, plain_run, skip_space, special_bytes};

/// Scans `line` (already valid UTF-8, without its line terminator) into
/// `fields`; `false` when the line is not of the simple shape (`fields` is
/// then left partly filled, for the caller to overwrite).
pub(super) fn scan<'a>(line: &'a str, fields: &mut Fields<'a>) -> bool {
    scan_fields(line, fields).is_some()
}

fn scan_fields<'a>(line: &'a str, fields: &mut Fields<'a>) -> Option<()> {
    let bytes = line.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return finish(bytes, at + 1);
    }
    loop {
        let (key, end) = key(line, at)?;
        at = skip_space(bytes, end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(bytes, at + 1);
        let (value, end) = value(line, at, &mut fields.decoded)?;
        at = skip_space(bytes, end);
        if let Key(Some(index)) = key {
            if !fields.set_slot(index, value) {
                return None;
            }
        }
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return finish(bytes, at + 1),
            _ => return None,
        }
    }
}

fn finish(bytes: &[u8], at: usize) -> Option<()> {
    (skip_space(bytes, at) == bytes.len()).then_some(())
}

/// A string value, a plain non-negative integer, or `true` / `false`.
fn value<'a>(line: &'a str, at: usize, decoded: &mut String) -> Option<(Slot<'a>, usize)> {
    let bytes = line.as_bytes();
    match bytes.get(at)? {
        b'"' => string(line, at, decoded),
        b't' if bytes[at..].starts_with(b"true") => Some((Slot::Bool(true), at + 4)),
        b'f' if bytes[at..].starts_with(b"false") => Some((Slot::Bool(false), at + 5)),
        b'0'..=b'9' => {
            let mut number = 0u64;
            let mut end = at;
            // Clock readings have 13 digits: eight at a time, then one by one.
            while let Some(eight) = bytes.get(end..end + 8).and_then(eight_digits) {
                number = number.checked_mul(100_000_000)?.checked_add(eight)?;
                end += 8;
            }
            while let Some(digit @ b'0'..=b'9') = bytes.get(end) {
                // Out of the 64-bit range: serde words it.
                number = number.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
                end += 1;
            }
            // A leading zero, a fraction or an exponent: serde words it.
            if (end - at > 1 && bytes[at] == b'0') || matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
                return None;
            }
            Some((Slot::UInt(number), end))
        }
        _ => None,
    }
}

/// The number the eight bytes spell when they are all ASCII digits.
fn eight_digits(bytes: &[u8]) -> Option<u64> {
    let word = u64::from_le_bytes(bytes.try_into().ok()?);
    // Each byte 0x30..=0x39: its high nibble is 3, and adding 6 keeps it 3.
    let nibbles = 0xF0F0_F0F0_F0F0_F0F0u64;
    let threes = 0x3030_3030_3030_3030u64;
    if word & nibbles != threes || word.wrapping_add(0x0606_0606_0606_0606) & nibbles != threes {
        return None;
    }
    // The digits, first in the lowest byte, combined pairwise: 2, 4, then 8.
    let digits = word - threes;
    let pairs = (digits * 10 + (digits >> 8)) & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs * 100 + (pairs >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((fours * 10_000 + (fours >> 32)) & 0xFFFF_FFFF)
}

/// The key starting at the quote at `at`, and the index after its closing
/// quote. Every known key is shorter than eight bytes: when the closing
/// quote is among the eight bytes after the opening one, the key is read as
/// one word and matched as a number; anything else goes through
/// [`string`].
fn key(line: &str, at: usize) -> Option<(Key, usize)> {
    let bytes = line.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    if let Some(Ok(word)) = bytes.get(start..start + 8).map(<[u8; 8]>::try_from) {
        let word = u64::from_le_bytes(word);
        let special = special_bytes(word);
        let len = (special.trailing_zeros() / 8) as usize;
        if special != 0 && bytes[start + len] == b'"' {
            let key = word & ((1u64 << (len * 8)) - 1);
            return Some((Key::of_word(key), start + len + 1));
        }
    }
    // A key with an escape is left to serde.
    let end = start + plain_run(&bytes[start..]);
    if bytes.get(end)? != &b'"' {
        return None;
    }
    Some((Key::of(line.get(start..end)?), end + 1))
}

/// The string starting at the quote at `at`, and the index after its
/// closing quote. Borrowed when it has no escape; decoded in one pass onto
/// the end of `decoded` when it has. An invalid escape or a raw control
/// character gives up (serde then words the error).
fn string<'a>(line: &'a str, at: usize, decoded: &mut String) -> Option<(Slot<'a>, usize)> {
    let bytes = line.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let end = start + plain_run(&bytes[start..]);
    if bytes.get(end)? == &b'"' {
        return Some((Slot::Str(line.get(start..end)?), end + 1));
    }
    let first = decoded.len();
    // The decoded string is at most as long as the rest of the line.
    decoded.reserve(bytes.len() - start);
    decoded.push_str(line.get(start..end)?);
    let end = decode_tail(line, end, decoded)?;
    let range = (u32::try_from(first).ok()?, u32::try_from(decoded.len()).ok()?);
    Some((Slot::Decoded(range.0, range.1), end))
}

#[cfg(test)]
mod tests {
    use super::super::Field;
    use super::*;

    #[test]
    fn eight_digits_read_as_a_number() {
        assert_eq!(eight_digits(b"12345678"), Some(12_345_678));
        assert_eq!(eight_digits(b"00000009"), Some(9));
        assert_eq!(eight_digits(b"99999999"), Some(99_999_999));
        for not_digits in [&b"1234567:"[..], b"/2345678", b"1234 678", b"12345\xb078", b"1234567"] {
            assert_eq!(eight_digits(not_digits), None, "{not_digits:?}");
        }
        for line in
            [r#"{"at_ms":1700000000020}"#, r#"{"at_ms":18446744073709551615}"#, r#"{"at_ms":123456789012345678}"#]
        {
            let mut f = Fields::default();
            assert!(scan(line, &mut f), "{line}");
            let expected: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(f.get(super::super::AT_MS), Some(Field::UInt(expected["at_ms"].as_u64().unwrap())));
        }
        assert!(!scan(r#"{"at_ms":18446744073709551616}"#, &mut Fields::default()), "out of range: serde words it");
    }

    #[test]
    fn escapes_decode_as_serde_json_decodes_them() {
        for text in [r#"\"\\\/\b\f\n\r\t"#, r"\u0041\u00e9\u2603", r"\ud83d\ude00", r"a\u0000b", "pré\\n😀"] {
            let line = format!(r#""{text}""#);
            let expected: String = serde_json::from_str(&line).unwrap();
            let mut decoded = String::from("before");
            let (slot, end) = string(&line, 0, &mut decoded).unwrap();
            assert_eq!((&decoded[6..], end), (expected.as_str(), line.len()), "{text}");
            assert_eq!(slot, Slot::Decoded(6, decoded.len() as u32));
        }
    }

    #[test]
    fn simple_lines_are_scanned() {
        let line = r#" { "op" : "message", "text":"a\"b\u00e9", "at_ms": 12 , "x":"y"} "#;
        let mut f = Fields::default();
        assert!(scan(line, &mut f));
        assert_eq!(f.get(super::super::OP), Some(Field::Str("message")));
        assert_eq!(f.get(super::super::TEXT), Some(Field::Str("a\"bé")));
        assert_eq!(f.get(super::super::AT_MS), Some(Field::UInt(12)));
        assert!(scan("{}", &mut Fields::default()));
    }

    #[test]
    fn anything_unusual_is_left_to_serde() {
        for line in [
            r#"{"op":"message","text":null}"#,
            r#"{"op":"message","x":{}}"#,
            r#"{"op":"message","x":[1]}"#,
            r#"{"op":"message","x":tru}"#,
            r#"{"op":"message","x":truex}"#,
            r#"{"op":"message","x":nul}"#,
            r#"{"total":-1}"#,
            r#"{"total":1.5}"#,
            r#"{"total":1e3}"#,
            r#"{"total":01}"#,
            r#"{"total":99999999999999999999}"#,
            r#"{"op":"a","op":"b"}"#,
            r#"{"o\u0070":"a"}"#,
            "{\"op\":\"a\tb\"}",
            r#"{"op":"a"} x"#,
            r#"{"op":"a",}"#,
            r#"{"op" "a"}"#,
            r#"{"op":"a\"}"#,
            r#"{"op":"\x"}"#,
            r#"{"op":"\ud800"}"#,
            r#"{"op":"\udc00\ud800"}"#,
            r#"{"op":"\ud800\u0041"}"#,
            r#"{"op":"\u12"}"#,
            "{\"op\":\"a\\\u{1}\"}",
            r#"["op"]"#,
            r#"{"op":"a""#,
        ] {
            assert!(!scan(line, &mut Fields::default()), "{line}");
        }
    }
}
