//! What the adapters share: reading native events, reporting what they
//! cannot translate, and keeping what they carry as metadata. (Decoding
//! into views borrowed from the line is `borrowed.rs`.)

use std::borrow::Cow;

use serde_json::Value;

use super::borrowed::{json_value, string_body, Raw};
use super::CallSink;
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, Meta};

/// An adapter's state as a value ([`Adapter::save`](super::Adapter::save)).
pub(crate) fn save_state(state: &impl serde::Serialize) -> Option<Value> {
    // The states hold strings, numbers, maps and JSON values, which
    // serialise; one that did not would be refused (`None`), never saved
    // as something else.
    serde_json::to_value(state).ok()
}

/// Replaces `state` with the one `value` holds
/// ([`Adapter::restore`](super::Adapter::restore)); unchanged on error.
pub(crate) fn restore_state<T: serde::de::DeserializeOwned>(
    state: &mut T,
    value: Value,
) -> Result<(), crate::CheckpointError> {
    *state = serde_json::from_value(value).map_err(crate::CheckpointError::Corrupt)?;
    Ok(())
}

/// The `[DONE]` that ends an SSE stream in OpenAI's convention, which
/// gateways and proxies also append to other providers' streams: not an
/// event, and nothing to report.
pub(crate) fn is_done_marker(payload: &[u8]) -> bool {
    payload.trim_ascii() == b"[DONE]"
}

/// Parses a payload into a JSON value; the [`BadLine`] when it is not JSON.
pub(crate) fn parse_event(payload: &[u8]) -> Result<Value, BadLine> {
    let text = super::borrowed::utf8(payload)?;
    serde_json::from_str(text).map_err(|error| BadLine::json(&error))
}

/// Reports what an adapter cannot translate as an anomaly that keeps what
/// it saw.
pub(crate) fn report(calls: &mut dyn CallSink, session: Option<&str>, kind: AnomalyKind, detail: &str) {
    calls.call(session, Call::Anomaly { kind, id: None, detail });
}

/// Metadata with one key.
pub(crate) fn one(key: &str, value: Value) -> Meta {
    let mut meta = Meta::new();
    meta.insert(key.to_owned(), value);
    meta
}

/// `{key: [item]}`, the round metadata of one item of a list given an item
/// at a time, made again for every item: the map, its key and its list are
/// kept and the item replaces the last one, where a map, a key and a list
/// were allocated (and dropped) an item.
#[derive(Debug, Default)]
pub(crate) struct ItemMeta(Meta);

impl ItemMeta {
    /// `{key: [item]}`.
    pub(crate) fn of(&mut self, key: &str, item: Value) -> &Meta {
        let alone = self.0.len() == 1;
        match self.0.get_mut(key) {
            Some(Value::Array(items)) if alone => {
                items.clear();
                items.push(item);
            }
            _ => {
                self.0.clear();
                self.0.insert(key.to_owned(), Value::Array(vec![item]));
            }
        }
        &self.0
    }

    /// `{key: [{name: value, ...}]}`, the item an object of `fields`
    /// (names and raw JSON values, in order). When the last item had the
    /// same names, its values are overwritten in place, a string's text
    /// into the string that held the last one: a stream of items of one
    /// shape allocates nothing once the first is made.
    pub(crate) fn object(&mut self, key: &str, fields: &[(&str, &str)]) -> &Meta {
        let alone = self.0.len() == 1;
        if let (true, Some(Value::Array(items))) = (alone, self.0.get_mut(key)) {
            if let [Value::Object(item)] = items.as_mut_slice() {
                fill_fields(item, fields);
                return &self.0;
            }
        }
        let mut item = Meta::new();
        fill_fields(&mut item, fields);
        self.of(key, Value::Object(item))
    }
}

/// A field's value as [`fill_fields`] takes it: raw JSON read once
/// already, or a string's text already decoded (for another use too).
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldValue<'a> {
    Raw(&'a str),
    Text(&'a str),
}

impl<'a> From<&'a str> for FieldValue<'a> {
    fn from(raw: &'a str) -> Self {
        FieldValue::Raw(raw)
    }
}

impl<'a> From<Raw<'a>> for FieldValue<'a> {
    fn from(raw: Raw<'a>) -> Self {
        FieldValue::Raw(raw.get())
    }
}

/// Makes `object` the object of `fields` (names and values, in order): when
/// it has the same names, its values are overwritten in place
/// ([`overwrite`]); otherwise it is made again.
pub(crate) fn fill_fields<'f, F: Copy + Into<FieldValue<'f>>>(object: &mut Meta, fields: &[(&str, F)]) {
    let same = object.len() == fields.len() && object.keys().zip(fields).all(|(held, (name, _))| held == name);
    if same {
        for ((_, value), (_, field)) in object.iter_mut().zip(fields) {
            match (*field).into() {
                FieldValue::Raw(raw) => overwrite(value, raw),
                FieldValue::Text(text) => match value {
                    Value::String(held) => {
                        held.clear();
                        held.push_str(text);
                    }
                    other => *other = Value::String(text.to_owned()),
                },
            }
        }
        return;
    }
    object.clear();
    object.extend(fields.iter().map(|(name, field)| {
        let value = match (*field).into() {
            FieldValue::Raw(raw) => json_value(raw),
            FieldValue::Text(text) => Value::String(text.to_owned()),
        };
        ((*name).to_owned(), value)
    }));
}

/// Makes `value` the value of `raw` (JSON text read once already), in
/// place where it can: a string's text into the string held, a count into
/// the number held, an object's members into those of an object that has
/// the same keys in the same order; anything else is replaced. An item of
/// metadata made again for every event then allocates nothing when it has
/// the shape of the one before.
fn overwrite(value: &mut Value, raw: &str) {
    let in_place = match value {
        Value::String(text) => string_body(raw).and_then(|body| {
            text.clear();
            crate::json_scan::unescape_into(body, text)
        }),
        Value::Number(number) => crate::json_scan::Value::whole(raw, |value| {
            let (count, end) = value.count()?;
            *number = count.into();
            Some(end)
        }),
        Value::Object(members) if raw.starts_with('{') => {
            let mut held = members.iter_mut();
            let read = crate::json_scan::Value::whole_checked(raw, |object| {
                object.object(|key, member| {
                    let (name, value) = held.next()?;
                    if name != key {
                        return None;
                    }
                    let (text, end) = member.raw()?;
                    overwrite(value, text);
                    Some(end)
                })
            });
            // Every member held was overwritten, and no more came.
            read.filter(|()| held.next().is_none())
        }
        _ => None,
    };
    if in_place.is_none() {
        *value = json_value(raw);
    }
}

/// The value at a path of object keys. `Value::pointer` would do, but it
/// allocates for every key it unescapes, on every event.
pub(crate) fn at_path<'v>(value: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().try_fold(value, |value, key| value.get(key))
}

/// A JSON value as text, the way protocols mean it when they put a value
/// where text goes (arguments): a string is its own text, anything else is
/// its JSON.
pub(crate) fn json_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    }
}

/// An identifier as text: a string as it is, a number or a boolean as its
/// JSON text (a tool id sent as a number is still that call's id), nothing,
/// `null` or a structure as none (empty).
pub(crate) fn id_text(value: Option<&Value>) -> Cow<'_, str> {
    match value {
        Some(Value::String(text)) => Cow::Borrowed(text),
        Some(value @ (Value::Number(_) | Value::Bool(_))) => Cow::Owned(value.to_string()),
        _ => Cow::Borrowed(""),
    }
}

/// A text field of an event: its string, or empty when absent or `null`;
/// `Err` with the value when it is something else (rich content an adapter
/// cannot read as text), for the caller to report rather than drop.
pub(crate) fn text_field<'v>(event: &'v Value, field: &str) -> Result<&'v str, &'v Value> {
    match event.get(field) {
        Some(Value::String(text)) => Ok(text),
        None | Some(Value::Null) => Ok(""),
        Some(other) => Err(other),
    }
}

/// Tool output as text: like [`json_text`], but `null` or nothing is no
/// output at all.
pub(crate) fn output_text(value: Option<&Value>) -> Cow<'_, str> {
    match value {
        Some(Value::Null) | None => Cow::Borrowed(""),
        Some(value) => json_text(value),
    }
}

/// Counts of events that carry nothing for rounds, by kind, kept in the
/// run's summary under one key so that their occurrence is not lost.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct EventCounts(Meta);

impl EventCounts {
    /// Counts one more `kind`, and hands the run metadata that now carries
    /// every count under `key` to `calls`.
    pub(crate) fn count(&mut self, key: &str, kind: &str, session: Option<&str>, calls: &mut dyn CallSink) {
        let count = self.0.get(kind).and_then(Value::as_u64).unwrap_or(0);
        self.0.insert(kind.to_owned(), count.saturating_add(1).into());
        let meta = one(key, Value::Object(self.0.clone()));
        calls.call(session, Call::RunMeta { meta: &meta });
    }
}

/// An RFC 3339 timestamp (`2026-09-23T12:32:07.496787Z`, or with a `±HH:MM`
/// offset) as unix milliseconds; `None` before the epoch or when it does
/// not parse.
pub(crate) fn rfc3339_ms(text: &str) -> Option<u64> {
    parts_ms(rfc3339_parts(text)?)
}

/// Seconds and nanoseconds since the epoch as unix milliseconds; `None`
/// before the epoch.
pub(crate) fn parts_ms((seconds, nanos): (i64, u32)) -> Option<u64> {
    // In 64 bits: a 128-bit division is a library call, and every stamped
    // event's time goes through here.
    u64::try_from(seconds.checked_mul(1000)?.checked_add(i64::from(nanos / 1_000_000))?).ok()
}

/// Seconds and nanoseconds since the epoch as nanoseconds.
pub(crate) fn parts_ns((seconds, nanos): (i64, u32)) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanos)
}

/// An RFC 3339 timestamp as whole seconds since the unix epoch and the
/// nanoseconds of the second.
pub(crate) fn rfc3339_parts(text: &str) -> Option<(i64, u32)> {
    let b = text.as_bytes();
    let (nanos, offset) = rfc3339_tail(b)?;
    Some((civil_seconds(b.get(..19)?)? - offset, nanos))
}

/// RFC 3339 times read with the last one's date and time of day kept: a
/// stream stamps its events many to a second, so most times differ from
/// the one before only after the seconds, and the calendar arithmetic is
/// done once a second rather than once an event.
#[derive(Debug, Default, Clone)]
pub(crate) struct Rfc3339Memo {
    /// The first 19 bytes of the last time read (`YYYY-MM-DDTHH:MM:SS`),
    /// and their seconds since the epoch.
    last: Option<([u8; 19], i64)>,
}

impl Rfc3339Memo {
    /// [`rfc3339_parts`] of `text`.
    pub(crate) fn parts(&mut self, text: &str) -> Option<(i64, u32)> {
        let b = text.as_bytes();
        let (nanos, offset) = rfc3339_tail(b)?;
        let prefix: [u8; 19] = b.get(..19)?.try_into().ok()?;
        let seconds = match self.last {
            Some((last, seconds)) if last == prefix => seconds,
            _ => {
                let seconds = civil_seconds(&prefix)?;
                self.last = Some((prefix, seconds));
                seconds
            }
        };
        Some((seconds - offset, nanos))
    }
}

/// Reads `digits` as a decimal number; `None` when one is not a digit.
fn decimal(digits: &[u8]) -> Option<i64> {
    let mut n = 0i64;
    for &c in digits {
        let digit = c.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n * 10 + i64::from(digit);
    }
    Some(n)
}

/// `YYYY-MM-DDTHH:MM:SS` as seconds since the epoch, as if in UTC.
fn civil_seconds(b: &[u8]) -> Option<i64> {
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (decimal(&b[0..4])?, decimal(&b[5..7])?, decimal(&b[8..10])?);
    let (hour, minute, second) = (decimal(&b[11..13])?, decimal(&b[14..16])?, decimal(&b[17..19])?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// What follows the seconds of an RFC 3339 time (its fraction, then `Z`
/// or an offset): the nanoseconds, and the offset in seconds.
fn rfc3339_tail(b: &[u8]) -> Option<(u32, i64)> {
    let mut at = 19;
    let mut nanos: u32 = 0;
    if b.get(at) == Some(&b'.') {
        let fraction = b.get(at + 1..)?;
        let digits = fraction.iter().position(|c| !c.is_ascii_digit()).unwrap_or(fraction.len());
        if digits == 0 {
            return None;
        }
        let kept = digits.min(9);
        let value = u32::try_from(decimal(&fraction[..kept])?).ok()?;
        nanos = value * 10u32.pow(9 - kept as u32);
        at += 1 + digits;
    }
    let minutes = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let minutes = decimal(&b[at + 1..at + 3])? * 60 + decimal(&b[at + 4..at + 6])?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    Some((nanos, minutes * 60))
}

/// Standard base64 (RFC 4648, with or without padding), as protocols wrap
/// payloads (Bedrock's `InvokeModelWithResponseStream` chunks): the bytes
/// `text` encodes; `None` when it is not base64.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    let (mut bits, mut count) = (0u32, 0u32);
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    // A lone sixth of a byte is not an encoding of anything.
    (count < 6).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_rfc3339(text: &str) -> Option<i128> {
        rfc3339_parts(text).map(parts_ns)
    }

    #[test]
    fn an_item_object_is_the_object_of_its_fields_whatever_came_before() {
        let mut item = ItemMeta::default();
        let items: [&[(&str, &str)]; 14] = [
            &[("id", r#""g0""#), ("model", r#""m""#)],
            &[("id", r#""g10""#), ("model", r#""m\u00e9""#)],
            &[("id", "7"), ("model", r#""m""#)],
            &[("id", r#""g2""#)],
            &[("model", r#""m""#), ("id", r#""g3""#), ("tokens", r#"{"total":3}"#)],
            &[("model", r#""n""#), ("id", r#""g4""#), ("tokens", "null")],
            // Nested objects overwritten in place, or made again when
            // their shape changes.
            &[("id", r#""g5""#), ("tokens", r#"{"input":1,"total":3,"list":[1]}"#)],
            &[("id", r#""g6""#), ("tokens", r#"{"input":18446744073709551615,"total":-3,"list":[2,3]}"#)],
            &[("id", r#""g7""#), ("tokens", r#"{"input":1.5,"total":0,"list":"x"}"#)],
            &[("id", r#""g8""#), ("tokens", r#"{"total":1,"input":2,"list":null}"#)],
            &[("id", r#""g9""#), ("tokens", r#"{"total":1,"input":2,"input":3}"#)],
            &[("id", r#""g9""#), ("tokens", r#"{"total":1,"input":2,"list":{"a":{"b":"c"}}}"#)],
            &[("id", r#""g9""#), ("tokens", r#"{"total":1,"input":2,"list":{"a":{"b":"d\n"}}}"#)],
            &[("id", r#""g9""#), ("tokens", r#"{"total":1}"#)],
        ];
        for fields in items {
            let fresh: Meta = fields.iter().map(|(name, raw)| ((*name).to_owned(), json_value(raw))).collect();
            let expected = one("k", Value::Array(vec![Value::Object(fresh)]));
            assert_eq!(item.object("k", fields), &expected, "{fields:?}");
            let keys: Vec<&str> = item.0["k"][0].as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, fields.iter().map(|(name, _)| *name).collect::<Vec<_>>(), "in the fields' order");
        }
    }

    #[test]
    fn timestamps_parse_to_nanoseconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-09-23T12:32:07.496787Z"), Some(1_790_166_727_496_787_000));
        assert_eq!(parse_rfc3339("2026-09-23T14:32:07.5+02:00"), Some(1_790_166_727_500_000_000));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400_000_000_000));
        assert_eq!(rfc3339_ms("2026-09-23T12:32:07.496787Z"), Some(1_790_166_727_496));
        assert_eq!(rfc3339_ms("2026-09-23T14:32:07.5+02:00"), Some(1_790_166_727_500));
        assert_eq!(rfc3339_ms("1969-12-31T23:59:59.999Z"), None, "before the epoch");
        assert_eq!(rfc3339_ms("2026-09-23T12:32:07.123456789123Z"), Some(1_790_166_727_123), "digits past the ninth");
        for bad in ["<now>", "2026-09-23", "2026-13-01T00:00:00Z", "2026-09-23T12:32:07.Z", "2026-09-23T12:32:07"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn values_read_as_text() {
        assert_eq!(json_text(&Value::from("a")), "a");
        assert_eq!(json_text(&Value::Null), "null");
        assert_eq!(output_text(Some(&Value::Null)), "");
        assert_eq!(output_text(None), "");
        assert_eq!(output_text(Some(&serde_json::json!({"k": [1]}))), r#"{"k":[1]}"#);
        assert_eq!(rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1_500));
        assert_eq!(rfc3339_ms("1969-12-31T23:59:59Z"), None);
    }

    #[test]
    fn decodes_what_rfc_4648_encodes() {
        for (text, bytes) in [
            ("", &b""[..]),
            ("Zg==", b"f"),
            ("Zm8=", b"fo"),
            ("Zm9v", b"foo"),
            ("Zm9vYg", b"foob"),
            ("Zm9vYmE=", b"fooba"),
            ("Zm9vYmFy", b"foobar"),
            ("+/8=", &[0xfb, 0xff][..]),
        ] {
            assert_eq!(base64_decode(text).as_deref(), Some(bytes), "{text}");
        }
        assert_eq!(base64_decode("Zm9v!"), None);
        assert_eq!(base64_decode("Z"), None, "a lone character encodes no byte");
    }
}
