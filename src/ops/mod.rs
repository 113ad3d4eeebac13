//! Reading ops JSONL (SPEC §3): one recorded `StreamHandler` call per line.
//!
//! Decoding is lenient where the spec asks for it (unknown ops and unknown
//! fields are ignored, for forward compatibility) and precise where it
//! cannot be: a line that is not JSON, not an object, or whose known fields
//! are missing or of the wrong type is a [`BadLine`] naming the field and
//! what was found. Nothing here panics, whatever the bytes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

pub(crate) mod scan;

#[cfg(test)]
mod fast_path_tests;

use crate::bad_line::{describe_json_error, BadLine};
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// A field's value as a line's decoding needs it: strings kept, numbers
/// classified, the rest only named, an object kept whole (the value of
/// `meta`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Field<'f> {
    Str(&'f str),
    UInt(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array,
    Object(&'f Meta),
    Null,
}

impl Field<'_> {
    fn type_name(&self) -> &'static str {
        match *self {
            Field::Str(_) => "a string",
            Field::UInt(_) | Field::Int(_) => "an integer",
            Field::Float(f) if f.fract() == 0.0 && f.abs() >= 9.2e18 => "an integer out of the 64-bit range",
            Field::Float(_) => "a number with a fraction or an exponent",
            Field::Bool(_) => "a boolean",
            Field::Array => "an array",
            Field::Object(_) => "an object",
            Field::Null => "null",
        }
    }

    /// A clock reading: any number; negative readings clamp to 0 and
    /// fractions are truncated (the clock is in whole milliseconds).
    fn as_clock(&self) -> Option<u64> {
        match *self {
            Field::UInt(n) => Some(n),
            Field::Int(_) => Some(0),
            Field::Float(f) => Some(if f > 0.0 { f as u64 } else { 0 }),
            _ => None,
        }
    }
}

/// A value as decoded, owning what it cannot borrow: a string with
/// escapes, an object.
#[derive(Debug, Clone, PartialEq)]
enum Parsed<'a> {
    Str(Cow<'a, str>),
    UInt(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array,
    Object(Box<Meta>),
    Null,
}

impl Parsed<'_> {
    fn view(&self) -> Field<'_> {
        match self {
            Parsed::Str(s) => Field::Str(s),
            Parsed::UInt(n) => Field::UInt(*n),
            Parsed::Int(n) => Field::Int(*n),
            Parsed::Float(f) => Field::Float(*f),
            Parsed::Bool(b) => Field::Bool(*b),
            Parsed::Array => Field::Array,
            Parsed::Object(object) => Field::Object(object),
            Parsed::Null => Field::Null,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Parsed<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParsedVisitor<'a>(std::marker::PhantomData<Parsed<'a>>);
        impl<'de: 'a, 'a> Visitor<'de> for ParsedVisitor<'a> {
            type Value = Parsed<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Parsed::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Parsed::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Parsed::Str(Cow::Owned(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Parsed::UInt(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(if v >= 0 { Parsed::UInt(v as u64) } else { Parsed::Int(v) })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Parsed::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Parsed::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Parsed::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Parsed::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                // Kept whole: an object is the value of `meta`.
                let mut object = Meta::new();
                while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                    object.insert(key, value);
                }
                Ok(Parsed::Object(Box::new(object)))
            }
        }
        deserializer.deserialize_any(ParsedVisitor(std::marker::PhantomData))
    }
}

/// A stored field: plain data, so that a line's sixteen slots cost nothing
/// to drop; what it owns (a string with escapes, an object) is in the
/// line's [`Fields`], by index.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum Slot<'a> {
    /// Absent, or `null`.
    #[default]
    Absent,
    Str(&'a str),
    /// A decoded string: a range of the line's `decoded` text.
    Decoded(u32, u32),
    UInt(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array,
    Object(u32),
}

/// The known fields an ops line has; anything else is ignored. `null`
/// reads as absent.
#[derive(Debug, Default)]
struct Fields<'a> {
    slots: [Slot<'a>; 16],
    /// The fields met, `null` ones included: a repeated field is an error.
    seen: u16,
    /// The strings that had escapes, decoded, one after another.
    decoded: Buffer<'a>,
    /// The objects, kept whole.
    objects: Vec<Meta>,
}

/// The text of a line's decoded strings: its own, or one lent by a reader
/// of many lines, so that a line with an escape costs no allocation.
#[derive(Debug)]
enum Buffer<'a> {
    Own(String),
    Lent(&'a mut String),
}

impl Default for Buffer<'_> {
    fn default() -> Self {
        Buffer::Own(String::new())
    }
}

impl std::ops::Deref for Buffer<'_> {
    type Target = String;
    fn deref(&self) -> &String {
        match self {
            Buffer::Own(text) => text,
            Buffer::Lent(text) => text,
        }
    }
}

impl std::ops::DerefMut for Buffer<'_> {
    fn deref_mut(&mut self) -> &mut String {
        match self {
            Buffer::Own(text) => text,
            Buffer::Lent(text) => text,
        }
    }
}

const OP: u8 = 0;
const SESSION: u8 = 1;
const AT_MS: u8 = 2;
const TEXT: u8 = 3;
const ID: u8 = 4;
const TITLE: u8 = 5;
const CONTENT: u8 = 6;
const STATUS: u8 = 7;
const ARGS: u8 = 8;
const TOTAL: u8 = 9;
const REASON: u8 = 10;
const KIND: u8 = 11;
const DETAIL: u8 = 12;
const META: u8 = 13;
const REPLACE: u8 = 14;
const NAME: u8 = 15;

/// The known field names, by index.
const FIELD_NAMES: [&str; 16] = [
    "op", "session", "at_ms", "text", "id", "title", "content", "status", "args", "total", "reason", "kind", "detail",
    "meta", "replace", "name",
];

/// A key of an ops line: the index of a known field, or none.
struct Key(Option<u8>);

impl Key {
    fn of(name: &str) -> Key {
        // A match compiles to a switch on the length, then one comparison.
        Key(Some(match name {
            "op" => OP,
            "session" => SESSION,
            "at_ms" => AT_MS,
            "text" => TEXT,
            "id" => ID,
            "title" => TITLE,
            "content" => CONTENT,
            "status" => STATUS,
            "args" => ARGS,
            "total" => TOTAL,
            "reason" => REASON,
            "kind" => KIND,
            "detail" => DETAIL,
            "meta" => META,
            "replace" => REPLACE,
            "name" => NAME,
            _ => return Key(None),
        }))
    }
}

impl Key {
    /// The key whose bytes, little-endian and zero-padded, are `word`: a
    /// key of up to seven bytes matched as one number.
    fn of_word(word: u64) -> Key {
        const fn word_of(name: &str) -> u64 {
            let bytes = name.as_bytes();
            let mut word = 0u64;
            let mut at = bytes.len();
            while at > 0 {
                at -= 1;
                word = (word << 8) | bytes[at] as u64;
            }
            word
        }
        const OP_WORD: u64 = word_of("op");
        const SESSION_WORD: u64 = word_of("session");
        const AT_MS_WORD: u64 = word_of("at_ms");
        const TEXT_WORD: u64 = word_of("text");
        const ID_WORD: u64 = word_of("id");
        const TITLE_WORD: u64 = word_of("title");
        const CONTENT_WORD: u64 = word_of("content");
        const STATUS_WORD: u64 = word_of("status");
        const ARGS_WORD: u64 = word_of("args");
        const TOTAL_WORD: u64 = word_of("total");
        const REASON_WORD: u64 = word_of("reason");
        const KIND_WORD: u64 = word_of("kind");
        const DETAIL_WORD: u64 = word_of("detail");
        const META_WORD: u64 = word_of("meta");
        const REPLACE_WORD: u64 = word_of("replace");
        const NAME_WORD: u64 = word_of("name");
        Key(Some(match word {
            OP_WORD => OP,
            SESSION_WORD => SESSION,
            AT_MS_WORD => AT_MS,
            TEXT_WORD => TEXT,
            ID_WORD => ID,
            TITLE_WORD => TITLE,
            CONTENT_WORD => CONTENT,
            STATUS_WORD => STATUS,
            ARGS_WORD => ARGS,
            TOTAL_WORD => TOTAL,
            REASON_WORD => REASON,
            KIND_WORD => KIND,
            DETAIL_WORD => DETAIL,
            META_WORD => META,
            REPLACE_WORD => REPLACE,
            NAME_WORD => NAME,
            _ => return Key(None),
        }))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key::of(v))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'a> Fields<'a> {
    /// The field of this index, unless absent or `null`.
    fn get(&self, index: u8) -> Option<Field<'_>> {
        Some(match *self.slots.get(usize::from(index))? {
            Slot::Absent => return None,
            Slot::Str(s) => Field::Str(s),
            Slot::Decoded(start, end) => Field::Str(self.decoded.get(start as usize..end as usize)?),
            Slot::UInt(n) => Field::UInt(n),
            Slot::Int(n) => Field::Int(n),
            Slot::Float(f) => Field::Float(f),
            Slot::Bool(b) => Field::Bool(b),
            Slot::Array => Field::Array,
            Slot::Object(at) => Field::Object(self.objects.get(at as usize)?),
        })
    }

    /// Sets a field; `false` when the line had it already.
    #[inline]
    fn set_slot(&mut self, index: u8, slot: Slot<'a>) -> bool {
        let bit = 1u16.checked_shl(u32::from(index)).unwrap_or(0);
        if bit == 0 || self.seen & bit != 0 {
            return false;
        }
        self.seen |= bit;
        if let Some(at) = self.slots.get_mut(usize::from(index)) {
            *at = slot;
        }
        true
    }

    /// Sets a field from a decoded value; `false` when the line had it
    /// already.
    fn set(&mut self, index: u8, value: Parsed<'a>) -> bool {
        if self.seen & 1u16.checked_shl(u32::from(index)).unwrap_or(0) != 0 {
            return false;
        }
        let slot = match value {
            Parsed::Str(Cow::Borrowed(s)) => Slot::Str(s),
            Parsed::Str(Cow::Owned(s)) => {
                let start = self.decoded.len();
                self.decoded.push_str(&s);
                match (u32::try_from(start), u32::try_from(self.decoded.len())) {
                    (Ok(start), Ok(end)) => Slot::Decoded(start, end),
                    _ => return false,
                }
            }
            Parsed::UInt(n) => Slot::UInt(n),
            Parsed::Int(n) => Slot::Int(n),
            Parsed::Float(f) => Slot::Float(f),
            Parsed::Bool(b) => Slot::Bool(b),
            Parsed::Array => Slot::Array,
            Parsed::Object(object) => {
                self.objects.push(*object);
                Slot::Object((self.objects.len() - 1) as u32)
            }
            Parsed::Null => Slot::Absent,
        };
        self.set_slot(index, slot)
    }
}

/// Hand-written rather than derived: one pass over the object straight
/// into the slots, `null` handled without an `Option` layer, unknown keys
/// skipped unread. This is the hot path of every replay.
impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor<'a>(std::marker::PhantomData<Fields<'a>>);
        impl<'de: 'a, 'a> Visitor<'de> for FieldsVisitor<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut fields = Fields::default();
                while let Some(Key(index)) = map.next_key::<Key>()? {
                    let Some(index) = index else {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    };
                    if fields.seen & (1 << index) != 0 {
                        return Err(de::Error::duplicate_field(FIELD_NAMES[usize::from(index)]));
                    }
                    let value = map.next_value::<Parsed<'a>>()?;
                    fields.set(index, value);
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(FieldsVisitor(std::marker::PhantomData))
    }
}

/// Only what a bad line can still tell: its session and clock reading.
#[derive(Debug, Default, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    session: Option<Parsed<'a>>,
    #[serde(borrow)]
    at_ms: Option<Parsed<'a>>,
}

/// One decoded line of ops JSONL.
///
/// ```
/// use roundup::{Call, OpsLine, ToolCallStatus};
///
/// let line = OpsLine::parse(br#"{"op":"tool_update","id":"t1","status":"completed","session":"s","at_ms":5}"#).unwrap();
/// assert_eq!(line.session(), Some("s"));
/// assert_eq!(line.at_ms(), Some(5));
/// assert_eq!(
///     line.call().unwrap(),
///     Some(Call::ToolUpdate { id: "t1", content: "", status: ToolCallStatus::Completed })
/// );
///
/// let bad = OpsLine::parse(br#"{"op":"message","text":5}"#).unwrap().call().unwrap_err();
/// assert_eq!(bad.reason, "field `text`: expected a string, found an integer");
/// ```
#[derive(Debug)]
pub struct OpsLine<'a> {
    fields: Fields<'a>,
    /// The line, without its line end: what an unknown op keeps.
    line: &'a [u8],
}

impl<'a> OpsLine<'a> {
    /// Decodes the JSON of one line. Fails when it is not a JSON object (or
    /// repeats a known field); the error still carries the line's session
    /// and clock reading when they can be read.
    pub fn parse(line: &'a [u8]) -> Result<Self, BadLine> {
        Self::parse_with(line, true, None)
    }

    /// [`parse`](Self::parse), decoding the strings that have escapes into
    /// `scratch` (cleared first) rather than into a buffer of the line's
    /// own: a reader of many lines lends the same one to each, and a line
    /// with an escape then costs no allocation.
    ///
    /// ```
    /// use roundup::{Call, OpsLine};
    /// let mut scratch = String::new();
    /// for text in [r#"a \"quote\""#, r"a\nnewline"] {
    ///     let json = format!(r#"{{"op":"message","text":"{text}"}}"#);
    ///     let line = OpsLine::parse_reusing(json.as_bytes(), &mut scratch).unwrap();
    ///     assert!(matches!(line.call(), Ok(Some(Call::Message { text })) if !text.contains('\\')));
    /// }
    /// ```
    pub fn parse_reusing(line: &'a [u8], scratch: &'a mut String) -> Result<Self, BadLine> {
        scratch.clear();
        Self::parse_with(line, true, Some(scratch))
    }

    /// [`parse`](Self::parse) without the fast path for flat objects: every
    /// line goes through serde. For differential tests of the fast path
    /// (unit tests and the `ops_line` fuzz target, built with
    /// `--cfg fuzzing`).
    #[cfg(any(test, fuzzing))]
    pub fn parse_through_serde(line: &'a [u8]) -> Result<Self, BadLine> {
        Self::parse_with(line, false, None)
    }

    /// Whether `line` takes the fast path. For tests of the fast path.
    #[cfg(any(test, fuzzing))]
    pub fn takes_fast_path(line: &[u8]) -> bool {
        let line = trim_line_end(line);
        std::str::from_utf8(line).is_ok_and(|text| scan::scan(text, &mut Fields::default()))
    }

    fn parse_with(line: &'a [u8], fast: bool, scratch: Option<&'a mut String>) -> Result<Self, BadLine> {
        let (line, text) = object_line(line)?;
        let mut parsed = OpsLine::new(line, scratch);
        parsed.fill(text, fast)?;
        Ok(parsed)
    }

    /// [`parse_reusing`](Self::parse_reusing), handing the line to `then`
    /// where it lies: a decoded line is some 400 bytes of fields, and a
    /// reader of many short lines would spend a measurable share of its time
    /// moving each out of a `Result`.
    pub(crate) fn read<R>(
        line: &'a [u8],
        scratch: &'a mut String,
        then: impl FnOnce(Result<&OpsLine<'a>, BadLine>) -> R,
    ) -> R {
        let (line, text) = match object_line(line) {
            Ok(read) => read,
            Err(error) => return then(Err(error)),
        };
        scratch.clear();
        let mut parsed = OpsLine::new(line, Some(scratch));
        match parsed.fill(text, true) {
            Ok(()) => then(Ok(&parsed)),
            Err(error) => then(Err(error)),
        }
    }

    fn new(line: &'a [u8], scratch: Option<&'a mut String>) -> Self {
        let mut parsed = OpsLine { fields: Fields::default(), line };
        if let Some(scratch) = scratch {
            parsed.fields.decoded = Buffer::Lent(scratch);
        }
        parsed
    }

    /// Decodes the line's fields in place: through the fast path when
    /// `fast` and the line is of its shape, else through serde.
    fn fill(&mut self, text: Result<&'a str, std::str::Utf8Error>, fast: bool) -> Result<(), BadLine> {
        if let (Ok(text), true) = (text, fast) {
            if scan::scan(text, &mut self.fields) {
                return Ok(());
            }
        }
        let line = self.line;
        let decoded = match text {
            Ok(text) => serde_json::from_str::<Fields<'a>>(text).map_err(|error| describe_json_error(&error)),
            // Said as every format says it.
            Err(error) => Err(crate::bad_line::utf8_reason(error)),
        };
        match decoded {
            Ok(fields) => {
                self.fields = fields;
                Ok(())
            }
            Err(reason) => {
                // What a line that is not JSON can still tell, if anything.
                let envelope = serde_json::from_slice::<Envelope<'_>>(line).ok();
                let (session, at_ms) = envelope.map_or((None, None), |e| (e.session, e.at_ms));
                Err(BadLine {
                    reason,
                    session: match session {
                        Some(Parsed::Str(s)) => Some(s.into_owned()),
                        _ => None,
                    },
                    at_ms: at_ms.as_ref().and_then(|at| at.view().as_clock()),
                })
            }
        }
    }

    /// The line's session, when it is a string.
    pub fn session(&self) -> Option<&str> {
        match self.fields.get(SESSION) {
            Some(Field::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The line's clock reading, when `at_ms` is a number.
    pub fn at_ms(&self) -> Option<u64> {
        self.fields.get(AT_MS).and_then(|at| at.as_clock())
    }

    /// The call the line records; `Ok(None)` for an op this version does
    /// not know (ignored, SPEC §3).
    pub fn call(&self) -> Result<Option<Call<'_>>, BadLine> {
        self.decode().map_err(|reason| BadLine {
            reason,
            session: self.session().map(str::to_owned),
            at_ms: self.at_ms(),
        })
    }

    fn decode(&self) -> Result<Option<Call<'_>>, String> {
        let f = &self.fields;
        optional_str("session", f.get(SESSION))?;
        if let Some(at_ms) = f.get(AT_MS) {
            if at_ms.as_clock().is_none() {
                return Err(wrong_type("at_ms", "a number", at_ms));
            }
        }
        let op = required_str("op", f.get(OP))?;
        Ok(Some(match op {
            "message" => Call::Message { text: required_str("text", f.get(TEXT))? },
            "thought" => Call::Thought { text: required_str("text", f.get(TEXT))? },
            "tool_call" => Call::ToolCall {
                id: required_str("id", f.get(ID))?,
                title: optional_str("title", f.get(TITLE))?.unwrap_or_default(),
                name: optional_str("name", f.get(NAME))?.unwrap_or_default(),
            },
            "tool_update" => {
                let id = required_str("id", f.get(ID))?;
                let status = required_str("status", f.get(STATUS))?;
                let status = ToolCallStatus::parse(status)
                    .ok_or_else(|| out_of_enum("status", "pending, in_progress, completed, failed", status))?;
                let content = optional_str("content", f.get(CONTENT))?.unwrap_or_default();
                Call::ToolUpdate { id, content, status }
            }
            "args_snapshot" => {
                Call::ArgsSnapshot { id: required_str("id", f.get(ID))?, args: required_str("args", f.get(ARGS))? }
            }
            "tool_output" => Call::ToolOutput {
                id: required_str("id", f.get(ID))?,
                content: required_str("content", f.get(CONTENT))?,
                replace: match f.get(REPLACE) {
                    None => false,
                    Some(Field::Bool(replace)) => replace,
                    Some(other) => return Err(wrong_type("replace", "a boolean", other)),
                },
            },
            "token_usage" => match f.get(TOTAL) {
                Some(Field::UInt(total)) => Call::TokenUsage { total },
                Some(other) => return Err(wrong_type("total", "a non-negative integer", other)),
                None => return Err(missing("total")),
            },
            "start" => Call::Start,
            "finish" => {
                let reason = required_str("reason", f.get(REASON))?;
                let reason =
                    FinishReason::parse(reason).ok_or_else(|| out_of_enum("reason", FinishReason::NAMES, reason))?;
                Call::Finish { reason }
            }
            "tool_meta" => {
                Call::ToolMeta { id: required_str("id", f.get(ID))?, meta: required_object("meta", f.get(META))? }
            }
            "run_meta" => Call::RunMeta { meta: required_object("meta", f.get(META))? },
            "round_meta" => Call::RoundMeta { meta: required_object("meta", f.get(META))? },
            "anomaly" => {
                let kind = required_str("kind", f.get(KIND))?;
                let kind = AnomalyKind::parse(kind).ok_or_else(|| out_of_enum("kind", "an anomaly kind", kind))?;
                Call::Anomaly {
                    kind,
                    id: optional_str("id", f.get(ID))?,
                    detail: optional_str("detail", f.get(DETAIL))?.unwrap_or_default(),
                }
            }
            _ => Call::Unknown {
                op,
                // A line that parsed as JSON is UTF-8: this cannot fail.
                line: std::str::from_utf8(self.line).map_err(|_| "not valid UTF-8".to_owned())?,
            },
        }))
    }
}

fn required_object<'f>(name: &str, field: Option<Field<'f>>) -> Result<&'f Meta, String> {
    match field {
        None => Err(missing(name)),
        Some(Field::Object(object)) => Ok(object),
        Some(other) => Err(wrong_type(name, "an object", other)),
    }
}

fn required_str<'f>(name: &str, field: Option<Field<'f>>) -> Result<&'f str, String> {
    optional_str(name, field)?.ok_or_else(|| missing(name))
}

fn optional_str<'f>(name: &str, field: Option<Field<'f>>) -> Result<Option<&'f str>, String> {
    match field {
        None => Ok(None),
        Some(Field::Str(s)) => Ok(Some(s)),
        Some(other) => Err(wrong_type(name, "a string", other)),
    }
}

fn missing(name: &str) -> String {
    format!("missing field `{name}`")
}

fn wrong_type(name: &str, expected: &str, found: Field<'_>) -> String {
    format!("field `{name}`: expected {expected}, found {}", found.type_name())
}

fn out_of_enum(name: &str, allowed: &str, found: &str) -> String {
    let shown: String = found.chars().take(64).collect();
    format!("field `{name}`: expected one of {allowed}, found {shown:?}")
}

/// The line without its terminator, if it is a JSON object (its first
/// byte that is not a space is `{`), with its text when it is UTF-8.
/// Validating the whole line at once is much faster than validating each
/// string as it is decoded; a line that is not UTF-8 is a bad line that
/// names the column of the first byte that is not, as every format says it.
#[allow(clippy::type_complexity)]
fn object_line(line: &[u8]) -> Result<(&[u8], Result<&str, std::str::Utf8Error>), BadLine> {
    let line = trim_line_end(line);
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let reason = match serde_json::from_slice::<Parsed<'_>>(line) {
            Ok(value) => format!("expected a JSON object, found {}", value.view().type_name()),
            Err(error) => describe_json_error(&error),
        };
        return Err(BadLine { reason, session: None, at_ms: None });
    }
    Ok((line, crate::utf8::from_utf8(line)))
}

/// The line without its terminator (`\n` or `\r\n`), so that positions
/// in error messages stay on line 1.
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: &str) -> Result<Option<Call<'static>>, String> {
        let line: &'static str = Box::leak(line.to_owned().into_boxed_str());
        let parsed = OpsLine::parse(line.as_bytes()).map_err(|e| e.reason)?;
        let parsed: &'static OpsLine<'static> = Box::leak(Box::new(parsed));
        parsed.call().map_err(|e| e.reason)
    }

    #[test]
    fn every_op_decodes_with_its_fields() {
        let cases: [(&str, Call<'_>); 9] = [
            (r#"{"op":"message","text":"a"}"#, Call::Message { text: "a" }),
            (r#"{"op":"thought","text":"b"}"#, Call::Thought { text: "b" }),
            (r#"{"op":"tool_call","id":"t"}"#, Call::ToolCall { id: "t", title: "", name: "" }),
            (
                r#"{"op":"tool_update","id":"t","status":"pending"}"#,
                Call::ToolUpdate { id: "t", content: "", status: ToolCallStatus::Pending },
            ),
            (r#"{"op":"args_snapshot","id":"","args":"{}"}"#, Call::ArgsSnapshot { id: "", args: "{}" }),
            (r#"{"op":"token_usage","total":18234}"#, Call::TokenUsage { total: 18234 }),
            (r#"{"op":"start"}"#, Call::Start),
            (r#"{"op":"finish","reason":"canceled"}"#, Call::Finish { reason: FinishReason::Canceled }),
            (
                r#"{"op":"anomaly","kind":"bad_line","detail":"x"}"#,
                Call::Anomaly { kind: AnomalyKind::BadLine, id: None, detail: "x" },
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(call(line), Ok(Some(expected)), "{line}");
        }
    }

    #[test]
    fn escaped_strings_are_decoded() {
        assert_eq!(
            call(r#"{"op":"message","text":"\u00e9\n\"q\"\\"}"#),
            Ok(Some(Call::Message { text: "é\n\"q\"\\" }))
        );
    }

    #[test]
    fn unknown_ops_are_kept_and_unknown_fields_ignored() {
        assert_eq!(
            call("{\"op\":\"teleport\",\"to\":\"mars\"}\r\n"),
            Ok(Some(Call::Unknown { op: "teleport", line: r#"{"op":"teleport","to":"mars"}"# }))
        );
        assert_eq!(
            call(r#"{"op":"message","text":"a","extra":{"deep":[1,2]}}"#),
            Ok(Some(Call::Message { text: "a" }))
        );
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let cases = [
            (r#"{"text":"a"}"#, "missing field `op`"),
            (r#"{"op":5}"#, "field `op`: expected a string, found an integer"),
            (r#"{"op":"message"}"#, "missing field `text`"),
            (r#"{"op":"message","text":null}"#, "missing field `text`"),
            (r#"{"op":"thought","text":["a"]}"#, "field `text`: expected a string, found an array"),
            (r#"{"op":"tool_call","title":"x"}"#, "missing field `id`"),
            (r#"{"op":"tool_call","id":"a","title":7}"#, "field `title`: expected a string, found an integer"),
            (r#"{"op":"tool_update","id":"a"}"#, "missing field `status`"),
            (
                r#"{"op":"tool_update","id":"a","status":"done"}"#,
                "field `status`: expected one of pending, in_progress, completed, failed, found \"done\"",
            ),
            (
                r#"{"op":"tool_update","id":"a","status":"completed","content":{}}"#,
                "field `content`: expected a string, found an object",
            ),
            (r#"{"op":"args_snapshot","id":"a"}"#, "missing field `args`"),
            (r#"{"op":"token_usage"}"#, "missing field `total`"),
            (r#"{"op":"token_usage","total":-1}"#, "field `total`: expected a non-negative integer, found an integer"),
            (
                r#"{"op":"token_usage","total":1.5}"#,
                "field `total`: expected a non-negative integer, found a number with a fraction or an exponent",
            ),
            (r#"{"op":"token_usage","total":"5"}"#, "field `total`: expected a non-negative integer, found a string"),
            (
                r#"{"op":"token_usage","total":18446744073709551616}"#,
                "field `total`: expected a non-negative integer, found an integer out of the 64-bit range",
            ),
            (r#"{"op":"finish"}"#, "missing field `reason`"),
            (
                r#"{"op":"finish","reason":"cancelled"}"#,
                "field `reason`: expected one of completed, failed, canceled, interrupted, found \"cancelled\"",
            ),
            (r#"{"op":"start","session":5}"#, "field `session`: expected a string, found an integer"),
            (r#"{"op":"start","at_ms":"5"}"#, "field `at_ms`: expected a number, found a string"),
        ];
        for (line, reason) in cases {
            assert_eq!(call(line), Err(reason.to_owned()), "{line}");
        }
    }

    #[test]
    fn lines_that_are_not_objects_say_so() {
        let reason = |line: &[u8]| OpsLine::parse(line).unwrap_err().reason;
        assert_eq!(reason(b"[1]"), "expected a JSON object, found an array");
        assert_eq!(reason(b"42\n"), "expected a JSON object, found an integer");
        assert_eq!(reason(b"not json"), "not valid JSON: expected ident (column 2)");
        assert_eq!(reason(b"{\"op\":\"message\""), "truncated JSON: EOF while parsing an object (column 15)");
        assert_eq!(reason(b"{\"op\":\"message\",\"op\":\"x\"}"), "duplicate field `op` (column 20)");
        assert_eq!(
            reason(b"{\"op\":\"message\",\"text\":\"\xff\"}"),
            "not UTF-8: an invalid byte sequence at column 25"
        );
        assert!(reason(b"{\"op\":\"message\",\"text\":\"a\0\"}").starts_with("not valid JSON: control character"));
        // Nesting costs no stack: values nobody reads are skipped iteratively.
        for depth in [10_000, 1_000_000] {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            assert_eq!(reason(nested.as_bytes()), "expected a JSON object, found an array");
            let line = format!("{{\"op\":\"message\",\"text\":{nested}}}");
            let error = OpsLine::parse(line.as_bytes()).unwrap().call().unwrap_err();
            assert_eq!(error.reason, "field `text`: expected a string, found an array");
            let unclosed = format!("{{\"op\":\"message\",\"text\":{}", "[".repeat(depth));
            assert!(reason(unclosed.as_bytes()).starts_with("truncated JSON"));
        }
        assert!(reason(b"{\"total\":1e400}").contains("number out of range"));
    }

    #[test]
    fn a_bad_line_keeps_its_session_and_clock_when_readable() {
        let error =
            OpsLine::parse(br#"{"op":"message","text":5,"session":"s","at_ms":9}"#).unwrap().call().unwrap_err();
        assert_eq!((error.session.as_deref(), error.at_ms), (Some("s"), Some(9)));
        let error = OpsLine::parse(br#"{"op":"a","op":"b","session":"s2","at_ms":12.9}"#).unwrap_err();
        assert_eq!((error.session.as_deref(), error.at_ms), (Some("s2"), Some(12)));
        let error = OpsLine::parse(b"[\"session\"]").unwrap_err();
        assert_eq!((error.session, error.at_ms), (None, None));
    }

    #[test]
    fn clock_readings_are_whole_non_negative_milliseconds() {
        let at = |line: &[u8]| OpsLine::parse(line).unwrap().at_ms();
        assert_eq!(at(br#"{"at_ms":5}"#), Some(5));
        assert_eq!(at(br#"{"at_ms":5.7}"#), Some(5));
        assert_eq!(at(br#"{"at_ms":-3}"#), Some(0));
        assert_eq!(at(br#"{"at_ms":1e300}"#), Some(u64::MAX));
        assert_eq!(at(br#"{"at_ms":null}"#), None);
    }
}
