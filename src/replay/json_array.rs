//! JSON array framing: the whole input is one JSON array whose elements are
//! the events. Gemini's `streamGenerateContent` without `alt=sse` answers
//! this way (`[{"candidates": …},\n{"candidates": …}]`, pretty-printed),
//! and recorders keep a stream's chunks this way (`[{"type":"start"},…]`).
//!
//! The array is split as it arrives, never parsed whole: each top-level
//! element's bytes are handed on as one payload as soon as its last byte is
//! read, whatever the read boundaries, so that a body of any length is read
//! in the memory of its largest element. Only the structure is followed
//! (nesting depth, strings and their escapes); whether an element is valid
//! JSON is for the adapter to say, as for a line.
//!
//! Elements are numbered by the line they begin on, so that a report says
//! `line N` of the file a user opens. Malformed structure is reported once
//! where it is found, and reading goes on where it sensibly can:
//!
//! - bytes before the opening `[` (an input the replay would not frame so)
//!   are read past up to the first `[`;
//! - a value where `,` or `]` belongs (a missing comma) is read as the next
//!   element;
//! - a byte that can begin no value where an element, `,` or `]` belongs
//!   (a stray `}`, a word) is read past, with what follows it, up to the
//!   next `,`, `]`, `{`, `[` or `"`;
//! - a `,` where an element belongs (`[,` or `,,`) is read past; a `]`
//!   right after a `,` closes the array;
//! - after the closing `]`, a `[` opens another array (two bodies written
//!   one after the other); anything else, and the rest of the input with
//!   it, is read past;
//! - the input ending inside an element, or before the closing `]`, is
//!   reported at the end; a cut element is not handed on.
//!
//! An element longer than the limit is followed to its end without being
//! held, and reported with its length, like an over-long line.
//!
//! The same splitter reads a **JSON document** input: one JSON object
//! pretty-printed over many lines (a chat Gemini CLI saved, `jq .`'s
//! output), or several written one after the other. There is no array
//! around them: each top-level value is one payload, numbered by the line
//! it begins on; a byte between them that begins no value is reported and
//! read past, with what follows it, up to the next `{`, `[` or `"`.

use serde::{Deserialize, Serialize};

use super::framing::BOM;
/// An element buffer grown past this by one huge element is released
/// afterwards, so that one large element does not keep its memory for the
/// rest of the input.
const KEEP_CAPACITY: usize = 1 << 20;

/// What the splitter hands on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// The bytes of one top-level element, which began on line `line`.
    Element { line: u64, json: &'a [u8] },
    /// The structure is not that of an array at line `line`: `reason` says
    /// what was expected and what was found.
    Bad { line: u64, reason: String },
    /// An element longer than the limit, begun on line `line`, `bytes`
    /// long, read past without being held.
    TooLong { line: u64, bytes: u64 },
}

/// Where the splitter is between two elements (or inside one).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Expect {
    /// Before the opening `[`.
    #[default]
    Open,
    /// Reading past bytes that came before any `[`.
    SkipToOpen,
    /// Right after `[`: an element or `]`.
    First,
    /// After an element: `,` or `]`.
    CommaOrClose,
    /// After `,`: an element.
    Element,
    /// Reading past bytes that begin no value, up to the next `,`, `]`, or
    /// byte that begins a structured value.
    Stray,
    /// Inside an element.
    InElement,
    /// After the closing `]`: only whitespace.
    Closed,
    /// Something other than an array followed the closing `]`: the rest
    /// of the input is read past.
    Lost,
    /// A JSON document input, between two top-level values.
    Document,
    /// A JSON document input, reading past bytes that begin no value up to
    /// the next `{`, `[` or `"`.
    DocumentStray,
}

/// The splitter's state between two pieces of input: what a checkpoint of
/// a replay keeps of its framing.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JsonArray {
    expect: Expect,
    /// A JSON document input (values one after the other), not an array.
    #[serde(default)]
    documents: bool,
    /// Bytes of the byte order mark matched at the start of the input.
    bom: u8,
    /// A byte other than the byte order mark's was read.
    started: bool,
    /// `\n` bytes read so far: the current line is one more.
    newlines: u64,
    /// Bytes were read after the last `\n`.
    tail: bool,
    /// The element being read: the line it began on, how deep its brackets
    /// are (0 for a bare scalar), and whether a string (and an escape in
    /// it) is open.
    line: u64,
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// Its bytes so far, when it straddles pieces of input.
    held: Vec<u8>,
    /// Its length so far, once it grew past the limit and is read past.
    skipping: Option<u64>,
    /// The line the last closing `]` was on.
    closed_line: u64,
}

/// Whether `byte` can begin a JSON value.
fn begins_value(byte: u8) -> bool {
    matches!(byte, b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
}

/// Whether `byte` ends a bare scalar (a number, `true`, `false`, `null`).
fn ends_scalar(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n' | b',' | b']' | b'}' | b'[' | b'{' | b'"')
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// A byte as a report names it.
fn shown(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("`{}`", char::from(byte))
    } else {
        format!("byte 0x{byte:02x}")
    }
}

impl JsonArray {
    /// The splitter of a JSON document input: top-level values one after
    /// the other, with no array around them.
    pub(crate) fn documents() -> Self {
        JsonArray { expect: Expect::Document, documents: true, ..JsonArray::default() }
    }

    /// Physical lines read so far, a last one without its `\n` included.
    pub(crate) fn lines(&self) -> u64 {
        self.newlines + u64::from(self.tail)
    }

    /// The line being read.
    fn current_line(&self) -> u64 {
        self.newlines + 1
    }

    /// Reads a piece of input, handing each element it completes (and each
    /// fault of structure it finds) to `out`. `limit` is the longest
    /// element held (`--max-line-bytes`).
    pub(crate) fn feed(&mut self, bytes: &[u8], limit: usize, out: &mut dyn FnMut(Piece<'_>)) {
        let mut at = 0;
        // Where the element being read begins in this piece (0 when it
        // began in an earlier one).
        let mut from = 0;
        while at < bytes.len() {
            if self.expect == Expect::InElement {
                match self.scan(bytes, at) {
                    Some(end) => {
                        self.complete(&bytes[from..end], limit, out);
                        at = end;
                    }
                    None => {
                        self.hold(&bytes[from..], limit);
                        at = bytes.len();
                    }
                }
                continue;
            }
            let byte = bytes[at];
            at += 1;
            if byte == b'\n' {
                self.newlines += 1;
            }
            if let Some(begin) = self.between(byte, out) {
                self.begin(begin);
                from = at - 1;
                if begin != b'{' && begin != b'[' && begin != b'"' {
                    // A bare scalar's first byte is read again by `scan`,
                    // which ends it at its first delimiter.
                    self.depth = 0;
                    at -= 1;
                } else if at == bytes.len() {
                    // The piece ends with the element's first byte.
                    self.hold(&bytes[from..], limit);
                }
            }
        }
        if let Some(last) = bytes.last() {
            self.tail = *last != b'\n';
        }
    }

    /// One byte outside any element: `Some(byte)` when it begins one.
    fn between(&mut self, byte: u8, out: &mut dyn FnMut(Piece<'_>)) -> Option<u8> {
        if !self.started {
            if BOM.get(usize::from(self.bom)) == Some(&byte) {
                self.bom += 1;
                return None;
            }
            self.started = true;
        }
        if is_space(byte) {
            return None;
        }
        let line = self.current_line();
        let mut bad = |reason: String| out(Piece::Bad { line, reason });
        match (self.expect, byte) {
            (Expect::Lost, _) => {}
            (Expect::Open | Expect::SkipToOpen, b'[') => self.expect = Expect::First,
            (Expect::SkipToOpen, _) => {}
            (Expect::Open, _) => {
                self.expect = Expect::SkipToOpen;
                bad(format!("expected `[` to open the array, found {}: read past up to the first `[`", shown(byte)));
            }
            (Expect::First | Expect::CommaOrClose | Expect::Stray, b']') => self.close(line),
            (Expect::Element, b']') => {
                self.close(line);
                bad("expected an element after `,`, found `]`: the array is closed".to_owned());
            }
            (Expect::CommaOrClose | Expect::Stray, b',') => self.expect = Expect::Element,
            (Expect::First | Expect::Element, b',') => {
                bad("expected an element, found `,`: read past".to_owned());
            }
            (Expect::Stray, b'{' | b'[' | b'"') => return Some(byte),
            (Expect::Stray, _) => {}
            (Expect::First | Expect::Element, _) if begins_value(byte) => return Some(byte),
            (Expect::CommaOrClose, _) if begins_value(byte) => {
                bad(format!("expected `,` or `]` after an element, found {}: read as the next element", shown(byte)));
                return Some(byte);
            }
            (Expect::First | Expect::Element | Expect::CommaOrClose, _) => {
                let expected = if self.expect == Expect::CommaOrClose { "`,` or `]`" } else { "an element" };
                self.expect = Expect::Stray;
                bad(format!(
                    "expected {expected}, found {}: read past up to the next `,`, `]`, `{{`, `[` or `\"`",
                    shown(byte)
                ));
            }
            (Expect::Closed, b'[') => {
                self.expect = Expect::First;
                bad(format!(
                    "expected the end of the input after the array closed on line {}, found `[`: read as another array",
                    self.closed_line
                ));
            }
            (Expect::Closed, _) => {
                self.expect = Expect::Lost;
                bad(format!(
                    "expected the end of the input after the array closed on line {}, found {}: the rest of the input is read past",
                    self.closed_line,
                    shown(byte)
                ));
            }
            (Expect::Document, _) if begins_value(byte) => return Some(byte),
            (Expect::DocumentStray, b'{' | b'[' | b'"') => return Some(byte),
            (Expect::DocumentStray, _) => {}
            (Expect::Document, _) => {
                self.expect = Expect::DocumentStray;
                bad(format!(
                    "expected a JSON value, found {}: read past up to the next `{{`, `[` or `\"`",
                    shown(byte)
                ));
            }
            (Expect::InElement, _) => {}
        }
        None
    }

    fn close(&mut self, line: u64) {
        self.expect = Expect::Closed;
        self.closed_line = line;
    }

    /// An element begins with `byte`, on the current line.
    fn begin(&mut self, byte: u8) {
        self.expect = Expect::InElement;
        self.line = self.current_line();
        self.depth = u64::from(byte == b'{' || byte == b'[');
        self.in_string = byte == b'"';
        self.escaped = false;
    }

    /// Follows the element being read from `at`: where it ends in `bytes`
    /// (just past its last byte), or `None` when it goes on past them.
    fn scan(&mut self, bytes: &[u8], mut at: usize) -> Option<usize> {
        while at < bytes.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    self.newlines += u64::from(bytes[at] == b'\n');
                    at += 1;
                    continue;
                }
                // Strings are most of an event's bytes: jump to what ends
                // or escapes them.
                at += memchr::memchr3(b'"', b'\\', b'\n', &bytes[at..])?;
                match bytes[at] {
                    b'"' => self.in_string = false,
                    b'\\' => self.escaped = true,
                    _ => self.newlines += 1,
                }
                at += 1;
                if !self.in_string && self.depth == 0 {
                    return Some(at);
                }
                continue;
            }
            let byte = bytes[at];
            if self.depth == 0 {
                // A bare scalar ends before its first delimiter.
                if ends_scalar(byte) {
                    return Some(at);
                }
                at += 1;
                continue;
            }
            at += 1;
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth = self.depth.saturating_add(1),
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(at);
                    }
                }
                b'\n' => self.newlines += 1,
                _ => {}
            }
        }
        None
    }

    /// Keeps the part of the element read so far, or only its length once
    /// it is past the limit.
    fn hold(&mut self, part: &[u8], limit: usize) {
        if let Some(skipped) = self.skipping.as_mut() {
            *skipped += part.len() as u64;
        } else if self.held.len() + part.len() > limit {
            self.skipping = Some((self.held.len() + part.len()) as u64);
            self.held = Vec::new();
        } else {
            self.held.extend_from_slice(part);
        }
    }

    /// The element ends with `last` (its bytes in this piece): handed on,
    /// or reported when it is past the limit.
    fn complete(&mut self, last: &[u8], limit: usize, out: &mut dyn FnMut(Piece<'_>)) {
        self.expect = if self.documents { Expect::Document } else { Expect::CommaOrClose };
        let line = self.line;
        if let Some(skipped) = self.skipping.take() {
            return out(Piece::TooLong { line, bytes: skipped + last.len() as u64 });
        }
        let length = self.held.len() + last.len();
        if length > limit {
            self.held.clear();
            return out(Piece::TooLong { line, bytes: length as u64 });
        }
        if self.held.is_empty() {
            return out(Piece::Element { line, json: last });
        }
        let mut held = std::mem::take(&mut self.held);
        held.extend_from_slice(last);
        out(Piece::Element { line, json: &held });
        held.clear();
        if held.capacity() <= KEEP_CAPACITY {
            self.held = held;
        }
    }

    /// The input ended: a bare scalar it ends is handed on; an element cut
    /// short, or an array not closed, is reported.
    pub(crate) fn end(&mut self, limit: usize, out: &mut dyn FnMut(Piece<'_>)) {
        let line = self.current_line();
        if self.expect == Expect::InElement && self.depth == 0 && !self.in_string {
            self.complete(&[], limit, out);
        }
        let reason = match self.expect {
            Expect::Open
            | Expect::SkipToOpen
            | Expect::Closed
            | Expect::Lost
            | Expect::Document
            | Expect::DocumentStray => return,
            Expect::InElement => {
                let read = self.skipping.unwrap_or(self.held.len() as u64);
                format!(
                    "the input ended {read} bytes into the element that began on line {}: it is not read",
                    self.line
                )
            }
            Expect::First | Expect::CommaOrClose | Expect::Element | Expect::Stray => {
                "the input ended before the array's closing `]`".to_owned()
            }
        };
        self.expect = Expect::Closed;
        self.held = Vec::new();
        self.skipping = None;
        out(Piece::Bad { line, reason });
    }
}

/// What the first bytes of a text input say about its framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detected {
    /// Not yet: the bytes so far could begin either.
    Undecided,
    /// A JSON array body.
    Array,
    /// A JSON document: a `{` alone on the first line.
    Document,
    /// JSON lines or SSE.
    Lines,
}

/// How far [`Detect`] has read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Whitespace only.
    #[default]
    Nothing,
    /// A `[`, and the rest of its line so far.
    FirstLine,
    /// A `{`, and only whitespace after it on its line so far.
    Brace,
    /// A `[` closed by its `]` on the same line, and whitespace since.
    Closed,
}

/// Tells a JSON array body from lines by the first bytes of a text input.
///
/// An input whose first byte other than whitespace (after a byte order
/// mark) is `[` is a JSON array body, with one exception: a JSON-lines
/// file whose first line is an array (a JSON-RPC batch, say). So an array
/// that closes on the line it opened on, and is followed by anything but
/// whitespace, makes the input lines. Deciding so may take the whole first
/// line, and what follows it up to its next byte other than whitespace:
/// at most `limit` bytes, past which the input is an array (such a line
/// would be read past as too long anyway, and an array's elements can
/// still be read).
///
/// An input whose first byte other than whitespace is `{` is a JSON
/// document when that `{` is alone on its line, as every pretty-printer
/// writes an object (`jq`, `JSON.stringify(v, null, 2)`, Python's
/// `json.dump(v, indent=2)`), and JSON lines otherwise: a JSON line holds
/// more than a brace, even one cut short or with its braces unbalanced,
/// whose bad line is then reported alone rather than taking the lines
/// after it into one document.
///
/// The reading is incremental: each call goes on from where the last one
/// stopped, so that a head held while undecided is read once in all.
#[derive(Debug, Default)]
pub(crate) struct Detect {
    /// Bytes of the head read.
    at: usize,
    seen: Seen,
    depth: u64,
    in_string: bool,
    escaped: bool,
}

impl Detect {
    /// Reads on through `head` (every byte of the input so far, a longer
    /// one each call), `ended` when there is no more.
    pub(crate) fn read(&mut self, head: &[u8], ended: bool, limit: usize) -> Detected {
        if self.at == 0 && self.seen == Seen::Nothing {
            if head.starts_with(BOM) {
                self.at = BOM.len();
            } else if !head.is_empty() && BOM.starts_with(head) && !ended {
                return Detected::Undecided;
            }
        }
        for &byte in head.get(self.at..).unwrap_or_default() {
            self.at += 1;
            match self.seen {
                Seen::Nothing if is_space(byte) => {}
                Seen::Nothing if byte == b'[' => {
                    self.seen = Seen::FirstLine;
                    self.depth = 1;
                }
                Seen::Nothing if byte == b'{' => self.seen = Seen::Brace,
                Seen::Brace if byte == b'\n' => return Detected::Document,
                Seen::Brace if is_space(byte) => {}
                Seen::Brace => return Detected::Lines,
                Seen::Nothing => return Detected::Lines,
                // A line break before the array closes: not one JSON line.
                Seen::FirstLine if byte == b'\n' => return Detected::Array,
                Seen::FirstLine if self.escaped => self.escaped = false,
                Seen::FirstLine if self.in_string => match byte {
                    b'"' => self.in_string = false,
                    b'\\' => self.escaped = true,
                    _ => {}
                },
                Seen::FirstLine => match byte {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth = self.depth.saturating_add(1),
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.seen = Seen::Closed;
                        }
                    }
                    _ => {}
                },
                Seen::Closed if is_space(byte) => {}
                Seen::Closed => return Detected::Lines,
            }
            // Past the limit at this byte, wherever the pieces were cut.
            if self.at > limit {
                return self.at_the_end();
            }
        }
        if ended {
            self.at_the_end()
        } else {
            Detected::Undecided
        }
    }

    /// The answer when no more is read: whitespace only, or a lone `{`,
    /// is lines; an array not yet followed by anything is an array body.
    fn at_the_end(&self) -> Detected {
        if matches!(self.seen, Seen::Nothing | Seen::Brace) {
            Detected::Lines
        } else {
            Detected::Array
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece read from `pieces`, as text.
    fn split(pieces: &[&[u8]], limit: usize) -> Vec<String> {
        split_by(&mut JsonArray::default(), pieces, limit)
    }

    /// Every piece `array` reads from `pieces`, as text.
    fn split_by(array: &mut JsonArray, pieces: &[&[u8]], limit: usize) -> Vec<String> {
        let mut seen = Vec::new();
        let mut out = |piece: Piece<'_>| {
            seen.push(match piece {
                Piece::Element { line, json } => format!("{line} {}", String::from_utf8_lossy(json)),
                Piece::Bad { line, reason } => format!("{line} bad: {reason}"),
                Piece::TooLong { line, bytes } => format!("{line} too long: {bytes}"),
            })
        };
        for piece in pieces {
            array.feed(piece, limit, &mut out);
        }
        array.end(limit, &mut out);
        seen
    }

    fn whole(input: &str) -> Vec<String> {
        split(&[input.as_bytes()], 1 << 20)
    }

    #[test]
    fn elements_are_split_with_their_lines() {
        let input = "\u{feff}[\n  {\"a\": \"x,]}\\\"\"},\n  [1, {\"b\": 2}],\n  \"s\\\\\", 12 ,true\n]\n";
        assert_eq!(whole(input), ["2 {\"a\": \"x,]}\\\"\"}", "3 [1, {\"b\": 2}]", "4 \"s\\\\\"", "4 12", "4 true"]);
        assert_eq!(whole("[]"), Vec::<String>::new());
        assert_eq!(whole(""), Vec::<String>::new());
        assert_eq!(whole(" \n "), Vec::<String>::new());
    }

    #[test]
    fn any_cut_gives_the_same_pieces() {
        let input = "[{\"a\":\"\\u00e9\\\\\"},\n{\"b\":[1,2]}, 3,\n\"x\" ,x {\"c\":1}]\n[{\"d\":0}] y";
        let expected = whole(input);
        assert_eq!(expected.len(), 9, "{expected:?}");
        let bytes = input.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(split(&[&bytes[..cut], &bytes[cut..]], 1 << 20), expected, "cut at {cut}");
        }
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(split(&ones, 1 << 20), expected);
    }

    #[test]
    fn each_fault_is_reported_once_and_reading_goes_on() {
        assert_eq!(
            whole("[{\"a\":1}\n{\"b\":2}]"),
            [
                "1 {\"a\":1}",
                "2 bad: expected `,` or `]` after an element, found `{`: read as the next element",
                "2 {\"b\":2}"
            ]
        );
        assert_eq!(
            whole("[{\"a\":1},\n}} x, {\"b\":2}]"),
            [
                "1 {\"a\":1}",
                "2 bad: expected an element, found `}`: read past up to the next `,`, `]`, `{`, `[` or `\"`",
                "2 {\"b\":2}"
            ]
        );
        assert_eq!(
            whole("[{\"a\":1} }{\"b\":2}]"),
            [
                "1 {\"a\":1}",
                "1 bad: expected `,` or `]`, found `}`: read past up to the next `,`, `]`, `{`, `[` or `\"`",
                "1 {\"b\":2}"
            ]
        );
        assert_eq!(
            whole("[,{\"a\":1},,]"),
            [
                "1 bad: expected an element, found `,`: read past",
                "1 {\"a\":1}",
                "1 bad: expected an element, found `,`: read past",
                "1 bad: expected an element after `,`, found `]`: the array is closed"
            ]
        );
        assert_eq!(
            whole("[{\"a\":1},\n{\"b\":"),
            ["1 {\"a\":1}", "2 bad: the input ended 5 bytes into the element that began on line 2: it is not read"]
        );
        assert_eq!(whole("[{\"a\":1},\n"), ["1 {\"a\":1}", "2 bad: the input ended before the array's closing `]`"]);
        assert_eq!(whole("[1"), ["1 1", "1 bad: the input ended before the array's closing `]`"]);
        assert_eq!(
            whole("[\n{\"a\":1}\n]\n{\"b\":2}\n{\"c\":3}\n"),
            [
                "2 {\"a\":1}",
                "4 bad: expected the end of the input after the array closed on line 3, found `{`: the rest of the input is read past"
            ]
        );
        assert_eq!(
            whole("[\n{\"a\":1}]\n[{\"b\":2}]"),
            [
                "2 {\"a\":1}",
                "3 bad: expected the end of the input after the array closed on line 2, found `[`: read as another array",
                "3 {\"b\":2}"
            ]
        );
        assert_eq!(
            whole("data: {}\n[{\"a\":1}]"),
            ["1 bad: expected `[` to open the array, found `d`: read past up to the first `[`", "2 {\"a\":1}"]
        );
    }

    #[test]
    fn an_element_past_the_limit_is_read_past() {
        let big = format!("{{\"t\":\"{}\"}}", "x".repeat(100));
        let input = format!("[{{\"a\":1}},\n{big},\n{{\"c\":3}}]");
        let expected = ["1 {\"a\":1}".to_owned(), format!("2 too long: {}", big.len()), "3 {\"c\":3}".to_owned()];
        assert_eq!(split(&[input.as_bytes()], 50), expected);
        let pieces: Vec<&[u8]> = input.as_bytes().chunks(7).collect();
        let mut array = JsonArray::default();
        for piece in &pieces {
            array.feed(piece, 50, &mut |_| {});
            assert!(array.held.capacity() <= 64, "never holds more than the limit");
        }
        assert_eq!(split(&pieces, 50), expected);
    }

    #[test]
    fn documents_are_split_with_their_lines() {
        let documents = |input: &str| {
            let mut splitter = JsonArray::documents();
            let pieces: Vec<&[u8]> = input.as_bytes().chunks(3).collect();
            let seen = split_by(&mut splitter, &pieces, 30);
            (seen, splitter.lines())
        };
        let (seen, lines) = documents("\u{feff}{\n  \"a\": \"}\\\"\"\n}\n{\"b\": [1]}\n");
        assert_eq!(seen, ["1 {\n  \"a\": \"}\\\"\"\n}", "4 {\"b\": [1]}"]);
        assert_eq!(lines, 4);
        let (seen, _) = documents("{\n}\n, x {\"c\":1}\n{\"d\":");
        assert_eq!(
            seen,
            [
                "1 {\n}",
                "3 bad: expected a JSON value, found `,`: read past up to the next `{`, `[` or `\"`",
                "3 {\"c\":1}",
                "4 bad: the input ended 5 bytes into the element that began on line 4: it is not read"
            ]
        );
        let (seen, _) = documents(&format!("{{\"t\":\"{}\"}}\n{{}}", "x".repeat(40)));
        assert_eq!(seen, ["1 too long: 48", "2 {}"]);
    }

    #[test]
    fn lines_are_counted() {
        let mut array = JsonArray::default();
        array.feed(b"[\n{}\n", 100, &mut |_| {});
        assert_eq!(array.lines(), 2);
        array.feed(b"]", 100, &mut |_| {});
        assert_eq!(array.lines(), 3);
    }

    fn detect(head: &str, ended: bool) -> Detected {
        Detect::default().read(head.as_bytes(), ended, 1 << 20)
    }

    #[test]
    fn an_array_is_told_from_lines() {
        assert_eq!(detect("{\"a\":1}", false), Detected::Lines, "one JSON line");
        assert_eq!(detect("{\"a\":{\"b\":", false), Detected::Lines, "a JSON line cut short");
        assert_eq!(detect("\u{feff}\n{ \r\n  \"a\": 1\n}\n", false), Detected::Document, "pretty-printed");
        assert_eq!(detect(" { \t", false), Detected::Undecided, "the brace's line goes on");
        assert_eq!(detect("{", true), Detected::Lines, "a lone brace ends the input");
        assert_eq!(detect("data: [", false), Detected::Lines);
        assert_eq!(detect("\u{feff} \n[\n", false), Detected::Array, "pretty-printed");
        assert_eq!(detect("[{\"a\":\"]\"}", false), Detected::Undecided, "the first line goes on");
        assert_eq!(detect("[{\"a\":\"]\"}", true), Detected::Array, "the input ends inside it");
        assert_eq!(detect("[{\"a\":1},{\"b\":2}]\n", false), Detected::Undecided, "one line so far");
        assert_eq!(detect("[{\"a\":1},{\"b\":2}]\n \n", true), Detected::Array, "a one-line array");
        assert_eq!(detect("[{\"a\":1}]\n{\"b\":2}\n", false), Detected::Lines, "a JSON line that is an array");
        assert_eq!(detect("[1] x", false), Detected::Lines);
        assert_eq!(detect("", true), Detected::Lines);
        assert_eq!(Detect::default().read(b"\xEF", false, 100), Detected::Undecided, "a BOM's first byte");
        assert_eq!(Detect::default().read(b"[{\"a\":1}", false, 4), Detected::Array, "past the limit");
        assert_eq!(Detect::default().read(b"      ", false, 4), Detected::Lines, "past the limit");
        // Read on from where it stopped, to the same answer.
        let mut detect = Detect::default();
        let head = b"[{\"a\":\"\\\"]\"}]  \n{}";
        let answers: Vec<Detected> = (1..=head.len()).map(|n| detect.read(&head[..n], false, 100)).collect();
        let first_lines = answers.iter().position(|a| *a == Detected::Lines);
        assert_eq!(first_lines, Some(head.len() - 2), "decided at the `{{` of line 2: {answers:?}");
        assert!(answers[..head.len() - 2].iter().all(|a| *a == Detected::Undecided), "{answers:?}");
        // The limit decides at the same byte, however the head grew.
        for limit in 0..head.len() + 2 {
            let whole = Detect::default().read(head, true, limit);
            let mut detect = Detect::default();
            let by_byte = (1..=head.len())
                .map(|n| detect.read(&head[..n], n == head.len(), limit))
                .find(|a| *a != Detected::Undecided);
            assert_eq!(by_byte, Some(whole), "limit {limit}");
        }
    }
}
