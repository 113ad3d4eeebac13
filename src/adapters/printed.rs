//! The text serde_json prints for a JSON value, found from the value's own
//! text: where an adapter passes a value on as text (a tool call's
//! arguments, a result that is not a string), it prints the value the way
//! `serde_json::Value` does, so that a pretty-printed document and a JSON
//! line give the same bytes. Building a `Value` to print it allocates every
//! key and string of it; most values agents write are already in the
//! printed form (JavaScript's `JSON.stringify` and serde_json print alike
//! for the usual keys, strings and whole numbers), so the text is checked
//! and kept, or only its whitespace taken out, and a `Value` is built only
//! for the rest (a `\u` escape, a fraction, a key written twice).

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::json_scan::{plain_run, MAX_DEPTH};

/// What `serde_json::Value` prints for `json`, valid JSON text: the text
/// itself when it is already in that form, the text without its
/// whitespace when that is all that differs, and otherwise the value read
/// and printed (text that does not read as a value is kept as it is).
///
/// `{"a": [1, "\u00e9"]}` prints as `{"a":[1,"é"]}`, and `{"a":[1,"b"]}`
/// is its own printed form.
pub(crate) fn printed(json: &str) -> Cow<'_, str> {
    let mut spaced = false;
    match value(json.as_bytes(), 0, 0, &mut spaced).map(|end| space(json.as_bytes(), end, &mut spaced)) {
        Some(end) if end == json.len() && !spaced => Cow::Borrowed(json),
        Some(end) if end == json.len() => Cow::Owned(without_space(json)),
        _ => match serde_json::from_str::<serde_json::Value>(json) {
            Ok(read) => Cow::Owned(read.to_string()),
            Err(_) => Cow::Borrowed(json),
        },
    }
}

/// Where the value at `at` ends, if it is printed as serde_json prints it
/// (whitespace aside, which sets `spaced`); `None` if it is not, or is not
/// a value.
fn value(bytes: &[u8], at: usize, depth: usize, spaced: &mut bool) -> Option<usize> {
    let at = space(bytes, at, spaced);
    match bytes.get(at)? {
        b'"' => string(bytes, at),
        b'{' if depth < MAX_DEPTH => object(bytes, at, depth, spaced),
        b'[' if depth < MAX_DEPTH => array(bytes, at, depth, spaced),
        b't' => literal(bytes, at, b"true"),
        b'f' => literal(bytes, at, b"false"),
        b'n' => literal(bytes, at, b"null"),
        b'-' | b'0'..=b'9' => whole_number(bytes, at),
        _ => None,
    }
}

/// An object whose keys are each written once (a map keeps the last value
/// of a key written twice, at the first one's place).
fn object(bytes: &[u8], at: usize, depth: usize, spaced: &mut bool) -> Option<usize> {
    /// Keys compared one by one: beyond this many, the value is read.
    const KEYS: usize = 32;
    let mut keys: SmallVec<[&[u8]; 8]> = SmallVec::new();
    let mut at = space(bytes, at + 1, spaced);
    if bytes.get(at) == Some(&b'}') {
        return Some(at + 1);
    }
    loop {
        at = space(bytes, at, spaced);
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let end = string(bytes, at)?;
        let key = bytes.get(at..end)?;
        if keys.len() >= KEYS || keys.contains(&key) {
            return None;
        }
        keys.push(key);
        at = space(bytes, end, spaced);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = space(bytes, value(bytes, at + 1, depth + 1, spaced)?, spaced);
        match bytes.get(at)? {
            b',' => at += 1,
            b'}' => return Some(at + 1),
            _ => return None,
        }
    }
}

fn array(bytes: &[u8], at: usize, depth: usize, spaced: &mut bool) -> Option<usize> {
    let mut at = space(bytes, at + 1, spaced);
    if bytes.get(at) == Some(&b']') {
        return Some(at + 1);
    }
    loop {
        at = space(bytes, value(bytes, at, depth + 1, spaced)?, spaced);
        match bytes.get(at)? {
            b',' => at += 1,
            b']' => return Some(at + 1),
            _ => return None,
        }
    }
}

/// A string with only the escapes serde_json writes: a quote, a backslash
/// and the five short control escapes (a `\u` or a `\/` prints otherwise).
fn string(bytes: &[u8], at: usize) -> Option<usize> {
    let mut end = at + 1;
    loop {
        end += plain_run(bytes.get(end..)?);
        match bytes.get(end)? {
            b'"' => return Some(end + 1),
            b'\\' if matches!(bytes.get(end + 1)?, b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => end += 2,
            _ => return None,
        }
    }
}

/// A whole number that serde_json reads as one and prints as it came: at
/// most 18 digits (so it fits either integer type), no fraction, no
/// exponent, not `-0` (read as a float).
fn whole_number(bytes: &[u8], at: usize) -> Option<usize> {
    let negative = bytes.get(at) == Some(&b'-');
    let start = at + usize::from(negative);
    let digits = bytes.get(start..)?.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let end = start + digits;
    let leading_zero = bytes.get(start) == Some(&b'0') && (digits > 1 || negative);
    let more = matches!(bytes.get(end), Some(b'.' | b'e' | b'E'));
    (digits > 0 && digits <= 18 && !leading_zero && !more).then_some(end)
}

fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes.get(at..)?.starts_with(word).then_some(at + word.len())
}

/// The first byte at or after `at` that is not whitespace; `spaced` set if
/// there was any.
fn space(bytes: &[u8], at: usize, spaced: &mut bool) -> usize {
    let end = crate::json_scan::skip_space(bytes, at);
    *spaced |= end > at;
    end
}

/// `json` without the whitespace between its tokens.
fn without_space(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(quote) = rest.find('"') {
        let (between, string) = rest.split_at(quote);
        out.extend(between.chars().filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\r')));
        // The string's end: its closing quote, past the escapes.
        let bytes = string.as_bytes();
        let mut end = 1;
        while let Some(&byte) = bytes.get(end) {
            end += match byte {
                b'\\' => 2,
                b'"' => break,
                _ => 1,
            };
        }
        let end = (end + 1).min(string.len());
        out.push_str(string.get(..end).unwrap_or(string));
        rest = string.get(end..).unwrap_or_default();
    }
    out.extend(rest.chars().filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\r')));
    out
}

/// What [`printed`] gives against what serde_json prints, for the
/// property test below and the `json_scan` fuzz target: for any text
/// serde_json reads as a value, compact or pretty-printed, the same text.
/// Panics on a difference.
#[cfg(any(test, fuzzing))]
pub fn check_printed(text: &str) {
    if let Ok(read) = serde_json::from_str::<serde_json::Value>(text) {
        let want = read.to_string();
        assert_eq!(printed(text), want, "printed otherwise: {text:?}");
        if let Ok(pretty) = serde_json::to_string_pretty(&read) {
            assert_eq!(printed(&pretty), want, "printed otherwise: {pretty:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_serde(json: &str) -> String {
        serde_json::from_str::<serde_json::Value>(json).unwrap().to_string()
    }

    #[test]
    fn text_in_the_printed_form_is_kept_and_other_text_printed_again() {
        let kept = [
            r#"{"a":[1,-2,"b\n\"c\\"],"d":{},"e":[],"f":null,"g":true,"h":false}"#,
            r#""é😀\t""#,
            "0",
            "123456789012345678",
            "-9",
        ];
        for json in kept {
            assert!(matches!(printed(json), Cow::Borrowed(_)), "{json}");
            assert_eq!(printed(json), by_serde(json), "{json}");
        }
        let spaced = ["{ \"a\" : [ 1 , 2 ] }", "\n[\n  \"x y\",\n  {\"k\":\t\"v\"}\n]\n"];
        for json in spaced {
            assert!(matches!(printed(json), Cow::Owned(_)), "{json}");
            assert_eq!(printed(json), by_serde(json), "{json}");
        }
        let printed_again = [
            r#""\u00e9""#,
            r#""a\/b""#,
            "1.5",
            "1e3",
            "-0",
            "1234567890123456789012",
            r#"{"a":1,"a":2,"b":3}"#,
            r#"[1.0, "\u001f"]"#,
        ];
        for json in printed_again {
            assert_eq!(printed(json), by_serde(json), "{json}");
        }
        // Not JSON at all (never given): kept as it is.
        assert_eq!(printed("{\"a\""), "{\"a\"");
    }

    #[test]
    fn a_key_written_twice_anywhere_is_printed_as_a_map_keeps_it() {
        let json = r#"[{"x":{"k":1,"j":2,"k":3}}]"#;
        assert_eq!(printed(json), r#"[{"x":{"k":3,"j":2}}]"#);
    }

    #[test]
    fn nesting_beyond_the_limit_is_printed_by_serde() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5));
        assert_eq!(printed(&deep), by_serde(&deep));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

        /// Whatever serde_json reads, `printed` gives what serde_json
        /// prints, compact or pretty-printed.
        #[test]
        fn printed_is_what_serde_prints(text in crate::json_scan::tests::jsonish()) {
            check_printed(&text);
        }
    }
}
