//! The binary protobuf form of a trace line: what OTLP/HTTP's default
//! content type (`application/x-protobuf`) carries, and the one every OTLP
//! receiver takes (some, Arize Phoenix among them, take no JSON).
//!
//! It transcodes a line of the `otlp` formats (an OTLP/JSON
//! `ExportTraceServiceRequest`) field by field, as the `opentelemetry-proto`
//! definitions number them; a field those definitions do not have is an
//! error, never dropped. Written by hand, a hundred lines, where a protobuf
//! crate would bring code generation into the build for four messages.
//! The encoding is checked against the official definitions' own parser on
//! every vector and fixture (`tests/otlp/check.py`).
//!
//! ```
//! use roundup::encoders::otlp::protobuf;
//! use serde_json::json;
//!
//! let line = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
//!     "traceId": "0102030405060708090a0b0c0d0e0f10", "spanId": "0102030405060708",
//!     "name": "chat", "kind": 3, "startTimeUnixNano": "5", "endTimeUnixNano": "9",
//! }]}]}]});
//! let bytes = protobuf::encode(&line).unwrap();
//! // resourceSpans (1) > scopeSpans (2) > spans (2) > traceId (1), 16 bytes
//! assert_eq!(&bytes[..8], &[0x0a, 58, 0x12, 56, 0x12, 54, 0x0a, 16]);
//! assert!(protobuf::encode(&json!({"resourceSpan": []})).is_err());
//! ```

use std::fmt;

use serde_json::{Map, Value};

/// Why a line could not be encoded: the field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtobufError(String);

impl fmt::Display for ProtobufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an OTLP/JSON trace request: {}", self.0)
    }
}

impl std::error::Error for ProtobufError {}

type Result<T> = std::result::Result<T, ProtobufError>;

/// Encodes one OTLP/JSON `ExportTraceServiceRequest` as protobuf.
///
/// # Errors
///
/// [`ProtobufError`] for a field the definitions do not have, a value of
/// the wrong type, an id that is not hex of its length.
pub fn encode(request: &Value) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (key, value) in object(request, "the request")? {
        match key.as_str() {
            "resourceSpans" => repeated(&mut out, 1, value, key, resource_spans)?,
            other => return Err(unknown(other, "ExportTraceServiceRequest")),
        }
    }
    Ok(out)
}

fn resource_spans(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "resourceSpans")? {
        match key.as_str() {
            "resource" => message(out, 1, value, resource)?,
            "scopeSpans" => repeated(out, 2, value, key, scope_spans)?,
            "schemaUrl" => string(out, 3, value, key)?,
            other => return Err(unknown(other, "ResourceSpans")),
        }
    }
    Ok(())
}

fn resource(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "resource")? {
        match key.as_str() {
            "attributes" => repeated(out, 1, value, key, key_value)?,
            "droppedAttributesCount" => varint_field(out, 2, unsigned(value, key)?),
            other => return Err(unknown(other, "Resource")),
        }
    }
    Ok(())
}

fn scope_spans(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "scopeSpans")? {
        match key.as_str() {
            "scope" => message(out, 1, value, scope)?,
            "spans" => repeated(out, 2, value, key, span)?,
            "schemaUrl" => string(out, 3, value, key)?,
            other => return Err(unknown(other, "ScopeSpans")),
        }
    }
    Ok(())
}

fn scope(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "scope")? {
        match key.as_str() {
            "name" => string(out, 1, value, key)?,
            "version" => string(out, 2, value, key)?,
            "attributes" => repeated(out, 3, value, key, key_value)?,
            "droppedAttributesCount" => varint_field(out, 4, unsigned(value, key)?),
            other => return Err(unknown(other, "InstrumentationScope")),
        }
    }
    Ok(())
}

fn span(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "span")? {
        match key.as_str() {
            "traceId" => id(out, 1, value, key, 16)?,
            "spanId" => id(out, 2, value, key, 8)?,
            "traceState" => string(out, 3, value, key)?,
            "parentSpanId" => id(out, 4, value, key, 8)?,
            "name" => string(out, 5, value, key)?,
            "kind" => varint_field(out, 6, unsigned(value, key)?),
            "startTimeUnixNano" => fixed64(out, 7, value, key)?,
            "endTimeUnixNano" => fixed64(out, 8, value, key)?,
            "attributes" => repeated(out, 9, value, key, key_value)?,
            "droppedAttributesCount" => varint_field(out, 10, unsigned(value, key)?),
            "events" => repeated(out, 11, value, key, event)?,
            "droppedEventsCount" => varint_field(out, 12, unsigned(value, key)?),
            "status" => message(out, 15, value, status)?,
            other => return Err(unknown(other, "Span")),
        }
    }
    Ok(())
}

fn event(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "event")? {
        match key.as_str() {
            "timeUnixNano" => fixed64(out, 1, value, key)?,
            "name" => string(out, 2, value, key)?,
            "attributes" => repeated(out, 3, value, key, key_value)?,
            "droppedAttributesCount" => varint_field(out, 4, unsigned(value, key)?),
            other => return Err(unknown(other, "Span.Event")),
        }
    }
    Ok(())
}

fn status(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "status")? {
        match key.as_str() {
            "message" => string(out, 2, value, key)?,
            "code" => varint_field(out, 3, unsigned(value, key)?),
            other => return Err(unknown(other, "Status")),
        }
    }
    Ok(())
}

fn key_value(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "attribute")? {
        match key.as_str() {
            "key" => string(out, 1, value, key)?,
            "value" => message(out, 2, value, any_value)?,
            other => return Err(unknown(other, "KeyValue")),
        }
    }
    Ok(())
}

/// An `AnyValue`: a oneof, so its one field is written even when it holds
/// its type's default (`""`, `0`, `false`): that it is set is the value.
fn any_value(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "value")? {
        match key.as_str() {
            "stringValue" => {
                let text = value.as_str().ok_or_else(|| wrong(key, "a string"))?;
                bytes_field(out, 1, text.as_bytes());
            }
            "boolValue" => {
                let flag = value.as_bool().ok_or_else(|| wrong(key, "a boolean"))?;
                tag(out, 2, 0);
                varint(out, u64::from(flag));
            }
            // int64: a negative value is its two's complement, ten bytes.
            "intValue" => {
                let n = signed(value, key)?;
                tag(out, 3, 0);
                varint(out, n as u64);
            }
            "doubleValue" => {
                let double = value.as_f64().ok_or_else(|| wrong(key, "a number"))?;
                tag(out, 4, 1);
                out.extend_from_slice(&double.to_le_bytes());
            }
            "arrayValue" => message(out, 5, value, array_value)?,
            "kvlistValue" => message(out, 6, value, array_value_of_pairs)?,
            other => return Err(unknown(other, "AnyValue")),
        }
    }
    Ok(())
}

fn array_value(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "arrayValue")? {
        match key.as_str() {
            "values" => repeated(out, 1, value, key, any_value)?,
            other => return Err(unknown(other, "ArrayValue")),
        }
    }
    Ok(())
}

fn array_value_of_pairs(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    for (key, value) in object(value, "kvlistValue")? {
        match key.as_str() {
            "values" => repeated(out, 1, value, key, key_value)?,
            other => return Err(unknown(other, "KeyValueList")),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The wire format.

fn tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A scalar field; proto3 leaves a default (0) out.
fn varint_field(out: &mut Vec<u8>, field: u32, n: u64) {
    if n != 0 {
        tag(out, field, 0);
        varint(out, n);
    }
}

fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn string(out: &mut Vec<u8>, field: u32, value: &Value, key: &str) -> Result<()> {
    let text = value.as_str().ok_or_else(|| wrong(key, "a string"))?;
    if !text.is_empty() {
        bytes_field(out, field, text.as_bytes());
    }
    Ok(())
}

/// A nanosecond time: OTLP/JSON writes the 64-bit integer as a decimal
/// string (a number is taken too).
fn fixed64(out: &mut Vec<u8>, field: u32, value: &Value, key: &str) -> Result<()> {
    let n = unsigned(value, key)?;
    if n != 0 {
        tag(out, field, 1);
        out.extend_from_slice(&n.to_le_bytes());
    }
    Ok(())
}

/// A trace or span id: OTLP/JSON's hex (not protobuf JSON's base64), of
/// exactly `len` bytes; empty is no id.
fn id(out: &mut Vec<u8>, field: u32, value: &Value, key: &str, len: usize) -> Result<()> {
    let hex = value.as_str().ok_or_else(|| wrong(key, "a hex string"))?;
    if hex.is_empty() {
        return Ok(());
    }
    let digit = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
    let raw: Option<Vec<u8>> = (hex.len() == 2 * len)
        .then(|| hex.as_bytes().chunks(2).map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?)).collect())
        .flatten();
    let raw = raw.ok_or_else(|| wrong(key, &format!("{len} bytes of hex")))?;
    bytes_field(out, field, &raw);
    Ok(())
}

fn message(out: &mut Vec<u8>, field: u32, value: &Value, write: fn(&mut Vec<u8>, &Value) -> Result<()>) -> Result<()> {
    let mut inner = Vec::new();
    write(&mut inner, value)?;
    bytes_field(out, field, &inner);
    Ok(())
}

fn repeated(
    out: &mut Vec<u8>,
    field: u32,
    value: &Value,
    key: &str,
    write: fn(&mut Vec<u8>, &Value) -> Result<()>,
) -> Result<()> {
    for item in value.as_array().ok_or_else(|| wrong(key, "an array"))? {
        message(out, field, item, write)?;
    }
    Ok(())
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>> {
    value.as_object().ok_or_else(|| wrong(what, "an object"))
}

fn unsigned(value: &Value, key: &str) -> Result<u64> {
    match value {
        Value::String(text) => text.parse().ok(),
        other => other.as_u64(),
    }
    .ok_or_else(|| wrong(key, "a non-negative integer"))
}

fn signed(value: &Value, key: &str) -> Result<i64> {
    match value {
        Value::String(text) => text.parse().ok(),
        other => other.as_i64(),
    }
    .ok_or_else(|| wrong(key, "an integer"))
}

fn unknown(key: &str, message: &str) -> ProtobufError {
    ProtobufError(format!("{message} has no field {key:?}"))
}

fn wrong(key: &str, expected: &str) -> ProtobufError {
    ProtobufError(format!("{key} is not {expected}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attribute(value: Value) -> Vec<u8> {
        let mut out = Vec::new();
        key_value(&mut out, &json!({"key": "k", "value": value})).unwrap();
        out
    }

    #[test]
    fn values_are_the_wire_format() {
        // key "k" (field 1), then value (field 2) holding the oneof.
        assert_eq!(attribute(json!({"stringValue": "ab"})), [0x0a, 1, b'k', 0x12, 4, 0x0a, 2, b'a', b'b']);
        assert_eq!(attribute(json!({"intValue": "300"})), [0x0a, 1, b'k', 0x12, 3, 0x18, 0xac, 0x02]);
        assert_eq!(
            attribute(json!({"intValue": "0"})),
            [0x0a, 1, b'k', 0x12, 2, 0x18, 0],
            "a oneof's default is written"
        );
        assert_eq!(attribute(json!({"boolValue": true})), [0x0a, 1, b'k', 0x12, 2, 0x10, 1]);
        let negative = attribute(json!({"intValue": "-1"}));
        assert_eq!(negative[5..], [0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        let array = attribute(json!({"arrayValue": {"values": [{"stringValue": "x"}]}}));
        assert_eq!(array[3..], [0x12, 7, 0x2a, 5, 0x0a, 3, 0x0a, 1, b'x']);
    }

    #[test]
    fn times_are_fixed64_and_defaults_are_left_out() {
        let mut out = Vec::new();
        span(&mut out, &json!({"name": "", "kind": 0, "startTimeUnixNano": "0", "endTimeUnixNano": "258"})).unwrap();
        assert_eq!(out, [0x41, 2, 1, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn what_the_definitions_lack_is_refused() {
        let refused =
            |value: Value| encode(&json!({"resourceSpans": [{"scopeSpans": [{"spans": [value]}]}]})).unwrap_err();
        assert!(refused(json!({"spanID": "0102030405060708"})).to_string().contains("Span has no field \"spanID\""));
        assert!(refused(json!({"spanId": "01020304050607"})).to_string().contains("spanId is not 8 bytes of hex"));
        assert!(refused(json!({"spanId": "zz02030405060708"})).to_string().contains("spanId is not 8 bytes of hex"));
        assert!(refused(json!({"startTimeUnixNano": "soon"})).to_string().contains("not a non-negative integer"));
        assert!(refused(json!({"attributes": [{"key": "k", "value": {"bytesValue": "AA=="}}]}))
            .to_string()
            .contains("AnyValue has no field \"bytesValue\""));
    }
}
