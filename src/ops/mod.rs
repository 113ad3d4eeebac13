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

mod scan;

#[cfg(test)]
mod fast_path_tests;

use crate::bad_line::{describe_json_error, BadLine};
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// A JSON value as far as validation needs it: strings are kept (borrowed
/// when they have no escapes), numbers classified, the rest only named.
#[derive(Debug, Clone, PartialEq)]
enum Field<'a> {
    Str(Cow<'a, str>),
    UInt(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array,
    /// Boxed: a map is several times the size of the other values, and
    /// every field of a line is one of these.
    Object(Box<Meta>),
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

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor<'a>(std::marker::PhantomData<Field<'a>>);
        impl<'de: 'a, 'a> Visitor<'de> for FieldVisitor<'a> {
            type Value = Field<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Field::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Field::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Field::Str(Cow::Owned(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Field::UInt(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(if v >= 0 { Field::UInt(v as u64) } else { Field::Int(v) })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Field::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Field::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Field::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Field::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                // Kept whole: an object is the value of `meta`.
                let mut object = Meta::new();
                while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                    object.insert(key, value);
                }
                Ok(Field::Object(Box::new(object)))
            }
        }
        deserializer.deserialize_any(FieldVisitor(std::marker::PhantomData))
    }
}

/// The fields an ops line may have; anything else is ignored. `null` reads
/// as absent.
#[derive(Debug, Default, PartialEq)]
struct Fields<'a> {
    op: Option<Field<'a>>,
    session: Option<Field<'a>>,
    at_ms: Option<Field<'a>>,
    text: Option<Field<'a>>,
    id: Option<Field<'a>>,
    title: Option<Field<'a>>,
    content: Option<Field<'a>>,
    status: Option<Field<'a>>,
    args: Option<Field<'a>>,
    total: Option<Field<'a>>,
    reason: Option<Field<'a>>,
    kind: Option<Field<'a>>,
    detail: Option<Field<'a>>,
    meta: Option<Field<'a>>,
    replace: Option<Field<'a>>,
    name: Option<Field<'a>>,
}

/// The known field names, recognised without allocating.
const FIELD_NAMES: [&str; 16] = [
    "op", "session", "at_ms", "text", "id", "title", "content", "status", "args", "total", "reason", "kind", "detail",
    "meta", "replace", "name",
];

/// A key of an ops line: the index of a known field, or none.
struct Key(Option<usize>);

impl Key {
    fn of(name: &str) -> Key {
        // A match compiles to a switch on the length, then one comparison.
        Key(Some(match name {
            "op" => 0,
            "session" => 1,
            "at_ms" => 2,
            "text" => 3,
            "id" => 4,
            "title" => 5,
            "content" => 6,
            "status" => 7,
            "args" => 8,
            "total" => 9,
            "reason" => 10,
            "kind" => 11,
            "detail" => 12,
            "meta" => 13,
            "replace" => 14,
            "name" => 15,
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
    fn slot(&mut self, index: usize) -> Option<&mut Option<Field<'a>>> {
        Some(match index {
            0 => &mut self.op,
            1 => &mut self.session,
            2 => &mut self.at_ms,
            3 => &mut self.text,
            4 => &mut self.id,
            5 => &mut self.title,
            6 => &mut self.content,
            7 => &mut self.status,
            8 => &mut self.args,
            9 => &mut self.total,
            10 => &mut self.reason,
            11 => &mut self.kind,
            12 => &mut self.detail,
            13 => &mut self.meta,
            14 => &mut self.replace,
            15 => &mut self.name,
            _ => return None,
        })
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
                let mut seen = 0u16;
                while let Some(Key(index)) = map.next_key::<Key>()? {
                    let Some(index) = index else {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    };
                    if seen & (1 << index) != 0 {
                        return Err(de::Error::duplicate_field(FIELD_NAMES[index]));
                    }
                    seen |= 1 << index;
                    let value = map.next_value::<Field<'a>>()?;
                    if let Some(slot) = fields.slot(index) {
                        *slot = Some(value).filter(|v| *v != Field::Null);
                    }
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
    session: Option<Field<'a>>,
    #[serde(borrow)]
    at_ms: Option<Field<'a>>,
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
        Self::parse_with(line, true)
    }

    /// [`parse`](Self::parse) without the fast path for flat objects: every
    /// line goes through serde. For differential tests of the fast path
    /// (unit tests and the `ops_line` fuzz target, built with
    /// `--cfg fuzzing`).
    #[cfg(any(test, fuzzing))]
    pub fn parse_through_serde(line: &'a [u8]) -> Result<Self, BadLine> {
        Self::parse_with(line, false)
    }

    /// Whether `line` takes the fast path. For tests of the fast path.
    #[cfg(any(test, fuzzing))]
    pub fn takes_fast_path(line: &[u8]) -> bool {
        let line = trim_line_end(line);
        std::str::from_utf8(line).is_ok_and(|text| scan::scan(text, &mut Fields::default()))
    }

    fn parse_with(line: &'a [u8], fast: bool) -> Result<Self, BadLine> {
        let line = trim_line_end(line);
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            let reason = match serde_json::from_slice::<Field<'_>>(line) {
                Ok(value) => format!("expected a JSON object, found {}", value.type_name()),
                Err(error) => describe_json_error(&error),
            };
            return Err(BadLine { reason, session: None, at_ms: None });
        }
        // Validating the whole line at once is much faster than validating
        // each string as it is decoded; an invalid line then goes through
        // the slower per-string path, which names the column.
        let text = std::str::from_utf8(line);
        let mut parsed = OpsLine { fields: Fields::default(), line };
        // The fast path fills the fields in place: moving them (400 bytes)
        // costs more than scanning a short line.
        if let (Ok(text), true) = (text, fast) {
            if scan::scan(text, &mut parsed.fields) {
                return Ok(parsed);
            }
        }
        let decoded = match text {
            Ok(text) => serde_json::from_str::<Fields<'a>>(text),
            Err(_) => serde_json::from_slice::<Fields<'a>>(line),
        };
        match decoded {
            Ok(fields) => {
                parsed.fields = fields;
                Ok(parsed)
            }
            Err(error) => {
                let envelope = serde_json::from_slice::<Envelope<'_>>(line).unwrap_or_default();
                let reason = describe_json_error(&error);
                Err(BadLine {
                    reason,
                    session: envelope.session.as_ref().and_then(string),
                    at_ms: envelope.at_ms.as_ref().and_then(Field::as_clock),
                })
            }
        }
    }

    /// The line's session, when it is a string.
    pub fn session(&self) -> Option<&str> {
        match &self.fields.session {
            Some(Field::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The line's clock reading, when `at_ms` is a number.
    pub fn at_ms(&self) -> Option<u64> {
        self.fields.at_ms.as_ref().and_then(Field::as_clock)
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
        optional_str("session", &f.session)?;
        if let Some(at_ms) = &f.at_ms {
            if at_ms.as_clock().is_none() {
                return Err(wrong_type("at_ms", "a number", at_ms));
            }
        }
        let op = required_str("op", &f.op)?;
        Ok(Some(match op {
            "message" => Call::Message { text: required_str("text", &f.text)? },
            "thought" => Call::Thought { text: required_str("text", &f.text)? },
            "tool_call" => Call::ToolCall {
                id: required_str("id", &f.id)?,
                title: optional_str("title", &f.title)?.unwrap_or_default(),
                name: optional_str("name", &f.name)?.unwrap_or_default(),
            },
            "tool_update" => {
                let id = required_str("id", &f.id)?;
                let status = required_str("status", &f.status)?;
                let status = ToolCallStatus::parse(status)
                    .ok_or_else(|| out_of_enum("status", "pending, in_progress, completed, failed", status))?;
                let content = optional_str("content", &f.content)?.unwrap_or_default();
                Call::ToolUpdate { id, content, status }
            }
            "args_snapshot" => {
                Call::ArgsSnapshot { id: required_str("id", &f.id)?, args: required_str("args", &f.args)? }
            }
            "tool_output" => Call::ToolOutput {
                id: required_str("id", &f.id)?,
                content: required_str("content", &f.content)?,
                replace: match &f.replace {
                    None => false,
                    Some(Field::Bool(replace)) => *replace,
                    Some(other) => return Err(wrong_type("replace", "a boolean", other)),
                },
            },
            "token_usage" => match &f.total {
                Some(Field::UInt(total)) => Call::TokenUsage { total: *total },
                Some(other) => return Err(wrong_type("total", "a non-negative integer", other)),
                None => return Err(missing("total")),
            },
            "start" => Call::Start,
            "finish" => {
                let reason = required_str("reason", &f.reason)?;
                let reason =
                    FinishReason::parse(reason).ok_or_else(|| out_of_enum("reason", FinishReason::NAMES, reason))?;
                Call::Finish { reason }
            }
            "tool_meta" => Call::ToolMeta { id: required_str("id", &f.id)?, meta: required_object("meta", &f.meta)? },
            "run_meta" => Call::RunMeta { meta: required_object("meta", &f.meta)? },
            "round_meta" => Call::RoundMeta { meta: required_object("meta", &f.meta)? },
            "anomaly" => {
                let kind = required_str("kind", &f.kind)?;
                let kind = AnomalyKind::parse(kind).ok_or_else(|| out_of_enum("kind", "an anomaly kind", kind))?;
                Call::Anomaly {
                    kind,
                    id: optional_str("id", &f.id)?,
                    detail: optional_str("detail", &f.detail)?.unwrap_or_default(),
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

fn string(field: &Field<'_>) -> Option<String> {
    match field {
        Field::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

fn required_object<'f>(name: &str, field: &'f Option<Field<'_>>) -> Result<&'f Meta, String> {
    match field {
        None => Err(missing(name)),
        Some(Field::Object(object)) => Ok(object),
        Some(other) => Err(wrong_type(name, "an object", other)),
    }
}

fn required_str<'f>(name: &str, field: &'f Option<Field<'_>>) -> Result<&'f str, String> {
    optional_str(name, field)?.ok_or_else(|| missing(name))
}

fn optional_str<'f>(name: &str, field: &'f Option<Field<'_>>) -> Result<Option<&'f str>, String> {
    match field {
        None => Ok(None),
        Some(Field::Str(s)) => Ok(Some(s)),
        Some(other) => Err(wrong_type(name, "a string", other)),
    }
}

fn missing(name: &str) -> String {
    format!("missing field `{name}`")
}

fn wrong_type(name: &str, expected: &str, found: &Field<'_>) -> String {
    format!("field `{name}`: expected {expected}, found {}", found.type_name())
}

fn out_of_enum(name: &str, allowed: &str, found: &str) -> String {
    let shown: String = found.chars().take(64).collect();
    format!("field `{name}`: expected one of {allowed}, found {shown:?}")
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
        assert!(reason(b"{\"op\":\"message\",\"text\":\"\xff\"}").starts_with("not valid JSON: invalid unicode"));
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
