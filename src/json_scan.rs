//! A strict, fast reader of JSON text's structure, for the lines of the
//! common shapes: an object's members as keys and values read where they
//! are, a value's end, a string borrowed or decoded, a plain count.
//!
//! Reading a line through serde costs about twice what merely scanning it
//! costs, most of it in generic machinery (a visitor per key and per value,
//! a raw value buffered and checked again, errors threaded through every
//! layer). Nearly every line an agent writes is plain JSON, so a view reads
//! it through this scanner first. The scanner accepts exactly what
//! serde_json accepts, or gives up (`None`): a key with an escape, a string
//! with a lone surrogate, a number that is not a plain count where a count
//! is read, nesting deeper than [`MAX_DEPTH`], bytes after the value, or
//! anything serde_json refuses. A line it gives up on is read again by
//! serde from its start, which also words the error; unit tests, a property
//! test and the adapters' fuzz targets hold the two paths to the same
//! result.

use std::borrow::Cow;

/// The deepest nesting the scanner reads; deeper values are left to serde
/// (which refuses beyond 127 levels).
pub(crate) const MAX_DEPTH: usize = 100;

/// A JSON value in `text`, starting at byte `at` (after any whitespace),
/// `depth` levels down: what a reader of one value is handed. In text
/// `checked` as JSON already (a value kept raw when its line was read, and
/// read again later), a value skipped is only measured, not checked again:
/// a string's end is its next unescaped quote, found a vector at a time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Value<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
    checked: bool,
}

impl<'a> Value<'a> {
    /// The value that is all of `text`, with whitespace around it allowed:
    /// `read` reads it and returns where it ends; `None` when it gives up
    /// or bytes other than whitespace follow.
    pub(crate) fn whole(text: &'a str, read: impl FnOnce(Value<'a>) -> Option<usize>) -> Option<()> {
        Self::whole_of(text, false, read)
    }

    /// [`Value::whole`] for text that was checked as one JSON value when it
    /// was first read: what the reader skips is not checked a second time
    /// (what it decodes or reads as a count still is).
    pub(crate) fn whole_checked(text: &'a str, read: impl FnOnce(Value<'a>) -> Option<usize>) -> Option<()> {
        Self::whole_of(text, true, read)
    }

    fn whole_of(text: &'a str, checked: bool, read: impl FnOnce(Value<'a>) -> Option<usize>) -> Option<()> {
        let bytes = text.as_bytes();
        let end = read(Value { text, at: skip_space(bytes, 0), depth: 1, checked })?;
        (skip_space(bytes, end) == bytes.len()).then_some(())
    }

    /// The value at `at`, one level below this one.
    fn below(&self, at: usize) -> Value<'a> {
        Value { text: self.text, at, depth: self.depth + 1, checked: self.checked }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn first(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    /// Where the value starts in its text.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// The value's first byte, which tells its kind.
    pub(crate) fn first_byte(&self) -> Option<u8> {
        self.first()
    }

    /// The value's text up to `end` (where a reader of it said it ends).
    pub(crate) fn text_to(&self, end: usize) -> Option<&'a str> {
        self.text.get(self.at..end)
    }

    /// Whether the value is an object (it starts with a brace).
    pub(crate) fn is_object(&self) -> bool {
        self.first() == Some(b'{')
    }

    /// Whether the value is `null`; its end when it is.
    pub(crate) fn null(&self) -> Option<usize> {
        self.bytes().get(self.at..)?.starts_with(b"null").then_some(self.at + 4)
    }

    /// Where the value ends, once checked as serde_json checks a value it
    /// skips.
    pub(crate) fn skip(self) -> Option<usize> {
        let bytes = self.bytes();
        if self.checked {
            return checked_end(bytes, self.at);
        }
        match self.first()? {
            b'"' => string_end(bytes, self.at),
            b'{' => self.object(|_, value| value.skip()),
            b'[' => self.array(|item| item.skip()),
            b't' => literal(bytes, self.at, b"true"),
            b'f' => literal(bytes, self.at, b"false"),
            b'n' => literal(bytes, self.at, b"null"),
            b'-' | b'0'..=b'9' => number_end(bytes, self.at),
            _ => None,
        }
    }

    /// Where the value ends, read as serde reads a value of any kind into a
    /// visitor that keeps nothing of it (`deserialize_any`): a string is
    /// decoded (a lone surrogate refused), a number parsed (only a plain
    /// count here: any other is left to serde), a list's items skipped.
    /// `None` for an object, which such a visitor reads key by key.
    pub(crate) fn discard(self) -> Option<usize> {
        match self.first()? {
            b'"' => self.string().map(|(_, end)| end),
            b'[' => self.array(|item| item.skip()),
            b'{' => None,
            _ => {
                self.null().or_else(|| self.boolean().map(|(_, end)| end)).or_else(|| self.count().map(|(_, end)| end))
            }
        }
    }

    /// The value's text, as a raw value holds it, and where it ends.
    pub(crate) fn raw(self) -> Option<(&'a str, usize)> {
        let end = self.skip()?;
        Some((self.text.get(self.at..end)?, end))
    }

    /// The value's text when it is a string (borrowed unless it has an
    /// escape), and where it ends; `None` for any other value.
    pub(crate) fn string(self) -> Option<(Cow<'a, str>, usize)> {
        let bytes = self.bytes();
        if self.first()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let end = start + plain_run(&bytes[start..]);
        if *bytes.get(end)? == b'"' {
            return Some((Cow::Borrowed(self.text.get(start..end)?), end + 1));
        }
        let mut decoded = String::with_capacity(end - start + 16);
        decoded.push_str(self.text.get(start..end)?);
        let end = decode_tail(self.text, end, &mut decoded)?;
        Some((Cow::Owned(decoded), end))
    }

    /// The value when it is a whole number in the 64-bit range written
    /// plainly (no sign, fraction or exponent), and where it ends.
    pub(crate) fn count(self) -> Option<(u64, usize)> {
        let bytes = self.bytes();
        let mut number = 0u64;
        let mut end = self.at;
        while let Some(digit @ b'0'..=b'9') = bytes.get(end) {
            number = number.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
            end += 1;
        }
        let plain = end > self.at && (end - self.at == 1 || bytes[self.at] != b'0');
        (plain && !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'))).then_some((number, end))
    }

    /// The value when it is `true` or `false`, and where it ends.
    pub(crate) fn boolean(self) -> Option<(bool, usize)> {
        match self.first()? {
            b't' => Some((true, literal(self.bytes(), self.at, b"true")?)),
            b'f' => Some((false, literal(self.bytes(), self.at, b"false")?)),
            _ => None,
        }
    }

    /// Reads an object member by member: `member` is handed each key (a
    /// string without escapes, between its quotes) and its value, and
    /// returns where the value ends. The object's end; `None` when the
    /// value is not an object, or gives up.
    pub(crate) fn object(self, mut member: impl FnMut(&'a str, Value<'a>) -> Option<usize>) -> Option<usize> {
        let bytes = self.bytes();
        if self.first()? != b'{' || self.depth > MAX_DEPTH {
            return None;
        }
        let mut at = skip_space(bytes, self.at + 1);
        if bytes.get(at) == Some(&b'}') {
            return Some(at + 1);
        }
        loop {
            if bytes.get(at) != Some(&b'"') {
                return None;
            }
            let start = at + 1;
            let end = start + plain_run(&bytes[start..]);
            if bytes.get(end) != Some(&b'"') {
                return None;
            }
            let key = self.text.get(start..end)?;
            at = skip_space(bytes, end + 1);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            at = skip_space(bytes, at + 1);
            at = member(key, self.below(at))?;
            at = skip_space(bytes, at);
            match bytes.get(at) {
                Some(b',') => at = skip_space(bytes, at + 1),
                Some(b'}') => return Some(at + 1),
                _ => return None,
            }
        }
    }

    /// Reads an array item by item: `item` is handed each item and returns
    /// where it ends. The array's end; `None` when the value is not an
    /// array, or gives up.
    pub(crate) fn array(self, mut item: impl FnMut(Value<'a>) -> Option<usize>) -> Option<usize> {
        let bytes = self.bytes();
        if self.first()? != b'[' || self.depth > MAX_DEPTH {
            return None;
        }
        let mut at = skip_space(bytes, self.at + 1);
        if bytes.get(at) == Some(&b']') {
            return Some(at + 1);
        }
        loop {
            at = item(self.below(at))?;
            at = skip_space(bytes, at);
            match bytes.get(at) {
                Some(b',') => at = skip_space(bytes, at + 1),
                Some(b']') => return Some(at + 1),
                _ => return None,
            }
        }
    }
}

/// Decodes a string of `text` from `at`, its first byte after the opening
/// quote that needs attention, onto `decoded` (what came before it is the
/// caller's to copy): escapes decoded, plain runs copied, up to the closing
/// quote; the index after that quote. `None` at a raw control character,
/// a bad escape or a lone surrogate, as serde refuses them.
#[inline(always)]
pub(crate) fn decode_tail(text: &str, mut at: usize, decoded: &mut String) -> Option<usize> {
    let bytes = text.as_bytes();
    loop {
        match bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                let (c, len) = escape(bytes, at)?;
                decoded.push(c);
                at += len;
            }
            _ => return None,
        }
        let run = plain_run(&bytes[at..]);
        decoded.push_str(text.get(at..at + run)?);
        at += run;
    }
}

/// Where the value at `at` ends, in text checked as JSON already: strings
/// jumped over from quote to quote, brackets counted, a number or a
/// literal read up to the byte that ends it.
fn checked_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => checked_string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut end = at;
            loop {
                match bytes.get(end)? {
                    b'"' => {
                        end = checked_string_end(bytes, end)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(end + 1);
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
        }
        _ => {
            let rest = bytes.get(at..)?;
            let run = rest.iter().position(|byte| matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'));
            Some(at + run.unwrap_or(rest.len()))
        }
    }
}

/// The end of the string whose opening quote is at `at`, in text checked
/// as JSON already: the first quote after it not escaped (preceded by an
/// even run of backslashes).
fn checked_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut from = at + 1;
    loop {
        let quote = from + next_quote(bytes.get(from..)?)?;
        let body = bytes.get(at + 1..quote)?;
        let backslashes = body.iter().rev().take_while(|&&byte| byte == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(quote + 1);
        }
        from = quote + 1;
    }
}

/// The first quote in `bytes`: most strings are short (keys, ids,
/// statuses), so the first few words are looked at eight bytes at a time,
/// and only a longer string is searched a vector at a time (whose setup
/// costs more than a short string's whole scan).
#[inline]
fn next_quote(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    for _ in 0..4 {
        let Some(chunk) = bytes.get(at..at + 8) else {
            return bytes.get(at..)?.iter().position(|&byte| byte == b'"').map(|found| at + found);
        };
        let quotes = bytes_equal(u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?), b'"');
        if quotes != 0 {
            return Some(at + (quotes.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    memchr::memchr(b'"', bytes.get(at..)?).map(|found| at + found)
}

/// `word` at `at`, and where it ends.
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes.get(at..)?.starts_with(word).then_some(at + word.len())
}

/// The end of the string whose opening quote is at `at`, every escape
/// checked as serde_json checks a string it skips (a `\u` needs four hex
/// digits; which code point they name is not checked).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut end = at + 1;
    loop {
        end += plain_run(bytes.get(end..)?);
        match bytes.get(end)? {
            b'"' => return Some(end + 1),
            b'\\' => {
                end += match bytes.get(end + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' => hex4(bytes, end + 2).map(|_| 6)?,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// The end of the number at `at`, in JSON's grammar as serde_json reads
/// it: an optional minus, `0` or a digit run not led by `0`, then an
/// optional fraction and exponent, each with at least one digit.
fn number_end(bytes: &[u8], at: usize) -> Option<usize> {
    let digits =
        |from: usize| from + bytes.get(from..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_digit()).count());
    let mut end = at + usize::from(bytes.get(at) == Some(&b'-'));
    match bytes.get(end)? {
        b'0' => {
            end += 1;
            if bytes.get(end).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        b'1'..=b'9' => end = digits(end),
        _ => return None,
    }
    if bytes.get(end) == Some(&b'.') {
        let fraction = digits(end + 1);
        if fraction == end + 1 {
            return None;
        }
        end = fraction;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        end += 1;
        if matches!(bytes.get(end), Some(b'+' | b'-')) {
            end += 1;
        }
        let exponent = digits(end);
        if exponent == end {
            return None;
        }
        end = exponent;
    }
    Some(end)
}

/// The index of the first byte at or after `at` that is not JSON
/// whitespace.
#[inline]
pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The text of a JSON string's body (what is between its quotes), its
/// escapes decoded, for a reader that has the body already (a raw JSON
/// value); `None` when the body is not one of valid JSON (a raw quote or
/// control character, a bad escape).
///
/// One pass and one allocation, where decoding it through serde would scan
/// it again and build a deserializer for it.
pub(crate) fn unescape(body: &str) -> Option<String> {
    let mut decoded = String::with_capacity(body.len());
    unescape_into(body, &mut decoded)?;
    Some(decoded)
}

/// [`unescape`] onto the end of `decoded` (a buffer reused from one
/// string to the next); `None` as there, with `decoded` then holding part
/// of the text.
pub(crate) fn unescape_into(body: &str, decoded: &mut String) -> Option<()> {
    let bytes = body.as_bytes();
    decoded.reserve(body.len());
    let mut at = 0;
    loop {
        let run = plain_run(&bytes[at..]);
        decoded.push_str(body.get(at..at + run)?);
        at += run;
        match bytes.get(at) {
            None => return Some(()),
            Some(b'\\') => {
                let (c, len) = escape(bytes, at)?;
                decoded.push(c);
                at += len;
            }
            Some(_) => return None,
        }
    }
}

/// The character of the escape at `at` (a backslash) and its length, as
/// serde_json decodes it: a surrogate pair is one character, a lone
/// surrogate is refused.
#[inline]
pub(crate) fn escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let simple = |c| Some((c, 2));
    match bytes.get(at + 1)? {
        b'"' => simple('"'),
        b'\\' => simple('\\'),
        b'/' => simple('/'),
        b'b' => simple('\u{8}'),
        b'f' => simple('\u{c}'),
        b'n' => simple('\n'),
        b'r' => simple('\r'),
        b't' => simple('\t'),
        b'u' => {
            let high = hex4(bytes, at + 2)?;
            match high {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes, at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    Some((char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?, 12))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((char::from_u32(high)?, 6)),
            }
        }
        _ => None,
    }
}

#[inline]
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4)?.iter().try_fold(0u32, |n, &b| Some(n * 16 + char::from(b).to_digit(16)?))
}

/// The length of the leading run of bytes that need no attention in a JSON
/// string: not a quote, a backslash or a control character. Eight bytes at
/// a time, the last few padded, so a short string costs one step.
#[inline]
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    let mut at = 0;
    while at < bytes.len() {
        let chunk = &bytes[at..bytes.len().min(at + 8)];
        let word = match <[u8; 8]>::try_from(chunk) {
            Ok(full) => u64::from_le_bytes(full),
            // The tail, padded with plain bytes (a variable-length copy
            // would be a call to memcpy).
            Err(_) => chunk.iter().rev().fold(u64::from_le_bytes([b'a'; 8]), |w, &b| (w << 8) | u64::from(b)),
        };
        let special = special_bytes(word);
        if special != 0 {
            return at + (special.trailing_zeros() / 8) as usize;
        }
        at += chunk.len();
    }
    bytes.len()
}

/// The bytes of `word` (little-endian) that need attention in a JSON
/// string, a quote, a backslash or a control character, each marked by its
/// high bit; the lowest mark is exact (borrows make false marks only above
/// a true one).
#[inline]
pub(crate) fn special_bytes(word: u64) -> u64 {
    bytes_equal(word, b'"')
        | bytes_equal(word, b'\\')
        // Bytes below 0x20: subtracting 0x20 borrows into the high bit.
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS)
}

/// A one in every byte of a word, and its high bit in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// How many bytes `a` and `b` begin with alike: compared 32 at a time,
/// then one at a time in the first stretch that differs.
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let same_chunks = a.chunks_exact(32).zip(b.chunks_exact(32)).take_while(|(a, b)| a == b).count();
    let at = same_chunks * 32;
    let (Some(a), Some(b)) = (a.get(at..), b.get(at..)) else { return at };
    at + a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

/// The bytes of `word` (little-endian) equal to `byte`, each marked by its
/// high bit; the lowest mark is exact, as in [`special_bytes`].
#[inline]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let zeros = word ^ (ONES * u64::from(byte));
    zeros.wrapping_sub(ONES) & !zeros & HIGHS
}

/// What the scanner makes of `text` against what serde_json makes of it,
/// for the property test below and the `json_scan` fuzz target: a value
/// the scanner reads whole, serde reads whole too, and a string or a count
/// the scanner decodes, serde decodes alike. (Serde may read what the
/// scanner gives up on.) Panics on a disagreement.
#[cfg(any(test, fuzzing))]
pub fn check_against_serde(text: &str) {
    use serde::de::IgnoredAny;
    if Value::whole(text, Value::skip).is_some() {
        assert!(serde_json::from_str::<IgnoredAny>(text).is_ok(), "the scanner reads what serde refuses: {text:?}");
    }
    if serde_json::from_str::<IgnoredAny>(text).is_ok() {
        // Checked text: a value skipped is measured to the same end, and
        // an object's members are found at the same places.
        let members = |checked: bool| {
            let mut found = Vec::new();
            let read = |value: Value<'_>| {
                value.object(|key, value| {
                    let (raw, end) = value.raw()?;
                    found.push((key.to_owned(), raw.to_owned()));
                    Some(end)
                })
            };
            let whole = if checked { Value::whole_checked(text, read) } else { Value::whole(text, read) };
            whole.map(|()| found)
        };
        let strict = members(false);
        let checked = members(true);
        if let Some(strict) = strict {
            assert_eq!(checked, Some(strict), "checked text measured otherwise: {text:?}");
        }
        if Value::whole(text, Value::skip).is_some() {
            assert!(Value::whole_checked(text, Value::skip).is_some(), "checked text measured otherwise: {text:?}");
        }
    }
    if Value::whole(text, Value::discard).is_some() {
        assert!(serde_json::from_str::<Dropped>(text).is_ok(), "discarded what serde refuses: {text:?}");
    }
    let mut decoded = None;
    let read = Value::whole(text, |value| {
        let (text, end) = value.string()?;
        decoded = Some(text.into_owned());
        Some(end)
    });
    if read.is_some() {
        assert_eq!(serde_json::from_str::<String>(text).ok(), decoded, "a string read otherwise: {text:?}");
    }
    let mut count = None;
    let read = Value::whole(text, |value| {
        let (read, end) = value.count()?;
        count = Some(read);
        Some(end)
    });
    if read.is_some() {
        assert_eq!(serde_json::from_str::<u64>(text).ok(), count, "a count read otherwise: {text:?}");
    }
    let mut members = Vec::new();
    let read = Value::whole(text, |value| {
        value.object(|key, value| {
            let (raw, end) = value.raw()?;
            members.push((key.to_owned(), raw.to_owned()));
            Some(end)
        })
    });
    if read.is_some() {
        let serde: Vec<(String, String)> =
            serde_json::from_str::<Vec<(String, Box<serde_json::value::RawValue>)>>(&format!(
                "[{}]",
                members.iter().map(|(key, raw)| format!("[\"{key}\",{raw}]")).collect::<Vec<_>>().join(",")
            ))
            .map(|pairs| pairs.into_iter().map(|(key, raw)| (key, raw.get().to_owned())).collect())
            .unwrap_or_default();
        assert_eq!(serde, members, "members read otherwise: {text:?}");
        let map: Result<std::collections::BTreeMap<String, IgnoredAny>, _> = serde_json::from_str(text);
        let repeated = members.iter().enumerate().any(|(at, (key, _))| members[..at].iter().any(|(k, _)| k == key));
        assert!(map.is_ok() || repeated, "an object serde refuses: {text:?}");
    }
}

/// A value read as serde reads one of any kind into a visitor that keeps
/// nothing of it, an object refused: what [`Value::discard`] answers for.
#[cfg(any(test, fuzzing))]
struct Dropped;

#[cfg(any(test, fuzzing))]
impl<'de> serde::Deserialize<'de> for Dropped {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Dropped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("anything but an object")
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Dropped, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Dropped)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Dropped, E> {
                Ok(Dropped)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Dropped, E> {
                Ok(Dropped)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Dropped, E> {
                Ok(Dropped)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Dropped, E> {
                Ok(Dropped)
            }
            fn visit_str<E>(self, _: &str) -> Result<Dropped, E> {
                Ok(Dropped)
            }
            fn visit_unit<E>(self) -> Result<Dropped, E> {
                Ok(Dropped)
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde::de::IgnoredAny;

    /// Whether the scanner reads `text` whole as one value.
    fn skips(text: &str) -> bool {
        Value::whole(text, Value::skip).is_some()
    }

    #[test]
    fn common_prefix_is_where_two_texts_first_differ() {
        let text: Vec<u8> = (0..100u8).collect();
        for len in [0, 1, 31, 32, 33, 64, 99, 100] {
            for at in 0..len {
                let mut other = text[..len].to_vec();
                other[at] ^= 0x80;
                assert_eq!(common_prefix(&text[..len], &other), at);
                assert_eq!(common_prefix(&other, &text), at);
            }
            assert_eq!(common_prefix(&text[..len], &text), len);
            assert_eq!(common_prefix(&text, &text[..len]), len);
        }
    }

    #[test]
    fn plain_run_stops_at_every_special_byte_at_every_position() {
        for len in 0..20 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for pos in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    bytes.insert(pos, special);
                    assert_eq!(plain_run(&bytes), pos, "len {len} special {special} at {pos}");
                }
            }
            assert_eq!(plain_run(&vec![0xc3; len]), len, "high bytes are plain");
        }
    }

    #[test]
    fn bodies_unescape_as_serde_json_decodes_them() {
        for text in [r#"\"\\\/\b\f\n\r\t"#, r"\u0041\u00e9\u2603", r"\ud83d\ude00", "pré\\n😀", "plain", ""] {
            let expected: String = serde_json::from_str(&format!(r#""{text}""#)).unwrap();
            assert_eq!(unescape(text), Some(expected), "{text}");
        }
        for bad in ["a\"b", "a\\", "\\x", "\\ud800", "a\u{1}b"] {
            assert_eq!(unescape(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn what_serde_refuses_is_refused_and_the_rest_read_to_its_end() {
        let accepted = [
            r#"{"a":[1,-2,0.5,-0,1e3,1E-3,2.5e+10,0e0],"b":{"c":null,"d":[true,false,{}]},"e":"x\"\u00e9\ud800"}"#,
            " [ ] ",
            "\t{ \"a\" :\n\"b\" }\r\n",
            r#""a string""#,
            "123456789012345678901234567890",
            "-0.0e-0",
        ];
        for text in accepted {
            assert!(serde_json::from_str::<IgnoredAny>(text).is_ok(), "serde reads {text}");
            assert!(skips(text), "{text}");
        }
        let refused = [
            "",
            "{",
            "[1,]",
            "[,1]",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "tru",
            "nul",
            "truex",
            r#""a"#,
            r#""\x""#,
            r#""\u12""#,
            "\"a\u{1}b\"",
            "[1] x",
            "{} {}",
            "NaN",
        ];
        for text in refused {
            assert!(!skips(text), "{text}");
        }
    }

    #[test]
    fn nesting_beyond_the_limit_is_left_to_serde() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(skips(&deep(MAX_DEPTH)));
        assert!(!skips(&deep(MAX_DEPTH + 1)));
        assert!(
            serde_json::from_str::<IgnoredAny>(&deep(MAX_DEPTH + 1)).is_ok(),
            "serde reads it, and words any error"
        );
    }

    #[test]
    fn strings_and_counts_read_as_serde_reads_them() {
        for text in [r#""plain""#, r#""a\"b\u00e9\ud83d\ude00\n""#, r#""""#] {
            let expected: String = serde_json::from_str(text).unwrap();
            let (found, end) = Value { text, at: 0, depth: 1, checked: false }.string().unwrap();
            assert_eq!((found.as_ref(), end), (expected.as_str(), text.len()), "{text}");
            assert_eq!(matches!(found, Cow::Borrowed(_)), !text.contains('\\'), "{text}");
        }
        for lone in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#] {
            assert!(serde_json::from_str::<String>(lone).is_err());
            assert!(Value { text: lone, at: 0, depth: 1, checked: false }.string().is_none(), "{lone}");
        }
        for (text, count) in [("0", Some(0)), ("17", Some(17)), ("18446744073709551615", Some(u64::MAX))] {
            assert_eq!(Value { text, at: 0, depth: 1, checked: false }.count().map(|c| c.0), count, "{text}");
            assert_eq!(serde_json::from_str::<u64>(text).ok(), count);
        }
        for text in ["18446744073709551616", "-1", "1.0", "1e2", "01", "\"1\""] {
            assert!(Value { text, at: 0, depth: 1, checked: false }.count().is_none(), "{text}");
        }
    }

    /// JSON-ish text: valid JSON with some of JSON's usual mistakes put in
    /// at random places, or such pieces glued together.
    pub(crate) fn jsonish() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"",
            "\"a\"",
            "\"k\":",
            "\\",
            "\\n",
            "\\u00e9",
            "\\ud800",
            "\\udc00",
            "\\u12",
            "\\x",
            "0",
            "01",
            "-",
            "-0",
            "1.5",
            "1.",
            "e5",
            "E-",
            "+",
            "18446744073709551616",
            "true",
            "tru",
            "false",
            "null",
            "nul",
            "x",
            "\u{1}",
            "\t",
            "\n",
            "é",
            "😀",
        ]);
        let text =
            prop::sample::select(vec!["", "a", "é😀", "a\"b", "\\", "\n\t", "\u{1}", "k"]).prop_map(str::to_owned);
        let number = prop_oneof![
            any::<u64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            (-1e6f64..1e6).prop_map(serde_json::Value::from),
        ];
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            number,
            text.clone().prop_map(serde_json::Value::from),
        ];
        let value = leaf.prop_recursive(4, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::vec((text.clone(), inner), 0..4)
                    .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
            ]
        });
        let mangled = (value, prop::collection::vec((any::<prop::sample::Index>(), piece.clone()), 0..3)).prop_map(
            |(value, changes)| {
                let mut text = value.to_string();
                for (at, piece) in changes {
                    let bounds: Vec<usize> = (0..=text.len()).filter(|&at| text.is_char_boundary(at)).collect();
                    text.insert_str(bounds[at.index(bounds.len())], piece);
                }
                text
            },
        );
        prop_oneof![4 => mangled, 1 => prop::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 8192, ..Default::default() })]

        #[test]
        fn what_the_scanner_reads_serde_reads_alike(text in jsonish()) {
            check_against_serde(&text);
        }
    }

    /// The generated text is read whole by the scanner often enough that
    /// the property above is not vacuous.
    #[test]
    fn generated_text_is_often_read_whole() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let read = (0..4000)
            .filter(|_| {
                let text = jsonish().new_tree(&mut runner).unwrap().current();
                Value::whole(&text, Value::skip).is_some()
            })
            .count();
        assert!(read > 600, "{read} of 4000");
    }

    #[test]
    fn a_discarded_value_is_read_as_serde_reads_any_value() {
        let discard = |text: &str| Value::whole(text, Value::discard).is_some();
        for text in ["null", "true", "7", r#""a\n\u00e9""#, r#"[1,"\ud800",{"a":1e400}]"#, "[]"] {
            assert!(discard(text), "{text}");
            assert!(serde_json::from_str::<Dropped>(text).is_ok(), "{text}");
        }
        // An object is the caller's; a lone surrogate and a number other
        // than a count are left to serde (which refuses the first).
        for text in ["{}", r#""\ud800""#, "1.5", "-1"] {
            assert!(!discard(text), "{text}");
        }
        assert!(serde_json::from_str::<Dropped>(r#""\ud800""#).is_err());
    }

    #[test]
    fn members_come_with_their_keys_in_order() {
        let text = r#" {"a": 1 , "b":{"c":[2]}, "a":"x"} "#;
        let mut seen = Vec::new();
        let read = Value::whole(text, |value| {
            value.object(|key, value| {
                let (raw, end) = value.raw()?;
                seen.push((key, raw));
                Some(end)
            })
        });
        assert!(read.is_some());
        assert_eq!(seen, [("a", "1"), ("b", r#"{"c":[2]}"#), ("a", r#""x""#)]);
        for text in [r#"{"a\u0062":1}"#, "[1]", r#"{"a":1} 2"#] {
            assert!(Value::whole(text, |value| value.object(|_, value| value.skip())).is_none(), "{text}");
        }
    }
}
