//! JSON written as serde_json's compact writer writes it, byte for byte:
//! the output lines' strings and metadata by hand, anything else through
//! serde_json ([`write_json`]).
//!
//! Most of an output line is strings (a round's text and reasoning, a
//! call's arguments and output) and metadata. serde_json looks each byte of
//! a string up in a table and writes the text between escapes as a fragment
//! of its own; here the plain runs are found eight bytes at a time
//! ([`plain_run`], the scanner's own measure of the bytes a JSON string
//! holds as they are) and copied whole. A metadata value is written
//! member by member, without a serializer's state between them. The bytes
//! are serde_json's (a property test holds them to it).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::json_scan::plain_run;

/// Appends `value` as serde_json writes it. Serialising into memory the
/// types roundup writes cannot fail (strings, numbers, maps and enums, and
/// a `Vec` never refuses a write); should it ever, the partial text is
/// removed rather than left corrupt.
pub(crate) fn write_json(out: &mut Vec<u8>, value: &(impl Serialize + ?Sized)) {
    let len = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(len);
    }
}

/// Appends `text` as a JSON string: a quote, a backslash and the control
/// characters escaped, `\b \f \n \r \t` by their letters and the others as
/// `\u00xx` (lowercase), everything else as it is.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (plain, special) = rest.split_at(plain_run(rest));
        out.extend_from_slice(plain);
        let Some((&byte, after)) = special.split_first() else { break };
        write_escape(out, byte);
        rest = after;
    }
    out.push(b'"');
}

/// Appends the escape of `byte`, a quote, a backslash or a control
/// character.
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let letter = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            let high = HEX[usize::from(byte >> 4)];
            let low = HEX[usize::from(byte & 0x0f)];
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', high, low]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', letter]);
}

/// Appends `value` as JSON.
pub(crate) fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => write_json(out, number),
        Value::String(text) => write_str(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => write_object(out, members),
    }
}

/// Appends `members` as a JSON object, in their order.
pub(crate) fn write_object(out: &mut Vec<u8>, members: &Map<String, Value>) {
    out.push(b'{');
    for (at, (key, value)) in members.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write_str(out, key);
        out.push(b':');
        write_value(out, value);
    }
    out.push(b'}');
}

/// `text` written as a string, and as a value when it is JSON, against
/// serde_json's bytes, for the `json_scan` fuzz target (and the tests).
/// Panics on a difference.
#[cfg(any(test, fuzzing))]
pub fn check_written(text: &str) {
    let mut out = Vec::new();
    write_str(&mut out, text);
    assert_eq!(out, serde_json::to_vec(text).unwrap_or_default(), "{text:?}");
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        out.clear();
        write_value(&mut out, &value);
        assert_eq!(out, serde_json::to_vec(&value).unwrap_or_default(), "{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        write_value(&mut out, value);
        out
    }

    #[test]
    fn every_byte_is_written_as_serde_writes_it_at_every_place_in_a_word() {
        // Each ASCII byte and a multi-byte character, alone and at each
        // place of a word of plain text, with text before and after.
        let mut specials: Vec<String> = (0u8..0x80).map(|byte| char::from(byte).to_string()).collect();
        specials.push("é".into());
        specials.push("😀".into());
        for special in &specials {
            for before in 0..17 {
                for after in [0, 1, 7, 8, 9] {
                    let text = format!("{}{special}{}", "a".repeat(before), "b".repeat(after));
                    let mut out = Vec::new();
                    write_str(&mut out, &text);
                    assert_eq!(out, serde_json::to_vec(&text).unwrap(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn metadata_is_written_as_serde_writes_it() {
        let value = serde_json::json!({
            "a": [1, -2, 1.5, 1e300, true, false, null, "x\u{1}\"\\\n"],
            "nested": {"": {}, "list": [], "k\u{7f}": "é"},
            "big": u64::MAX,
            "small": i64::MIN,
        });
        assert_eq!(written(&value), serde_json::to_vec(&value).unwrap());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        #[test]
        fn a_string_is_written_as_serde_writes_it(text in any::<String>()) {
            let mut out = Vec::new();
            write_str(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
        }

        #[test]
        fn a_string_of_escapes_is_written_as_serde_writes_it(
            pieces in prop::collection::vec(prop::sample::select(vec!["a", "bcdefghi", "\n", "\"", "\\", "\u{0}", "\u{1f}", "é", "\t"]), 0..40),
        ) {
            let text = pieces.concat();
            let mut out = Vec::new();
            write_str(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
        }

        #[test]
        fn a_value_is_written_as_serde_writes_it(text in crate::json_scan::tests::jsonish()) {
            check_written(&text);
        }
    }
}
