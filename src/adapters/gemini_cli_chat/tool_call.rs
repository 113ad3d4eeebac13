//! What a Gemini CLI chat tool call holds, read from its message: its
//! fields raw (the last of a key written twice, as a map keeps it) and what
//! its inline `result` comes to. A call's output is most of a chat's bytes
//! and sits five levels down (`result[].functionResponse.response.output`);
//! the scanner reads the `toolCalls` list in one pass, going down into
//! each result as it meets it, where reading each level as a field list
//! went over the output once a level. Where the scanner gives up (a key
//! with an escape), the calls are read field list by field list, the
//! serde way: one [`ToolCall`] either way, and one translation of it.

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::adapters::borrowed::{raw_string, scan_raw, Fields, ListOr, Raw, Scan};
use crate::adapters::printed::printed;
use crate::json_scan;

/// One tool call of a message.
#[derive(Debug, Default)]
pub(super) struct ToolCall<'a> {
    /// The call as sent (for a report that quotes it).
    pub(super) raw: Option<Raw<'a>>,
    pub(super) id: Option<Raw<'a>>,
    pub(super) name: Option<Raw<'a>>,
    pub(super) display_name: Option<Raw<'a>>,
    pub(super) args: Option<Raw<'a>>,
    pub(super) status: Option<Raw<'a>>,
    pub(super) timestamp: Option<Raw<'a>>,
    pub(super) result_display: Option<Raw<'a>>,
    pub(super) description: Option<Raw<'a>>,
    /// What its `result` comes to; `None` without one.
    result: Option<Outcome<'a>>,
}

/// A call's `result`: a string is its own text; a list of parts, or one
/// part, gives each part's text; any other value gives none.
#[derive(Debug)]
enum Outcome<'a> {
    Text(Raw<'a>),
    Parts(SmallVec<[Part<'a>; 1]>),
}

/// What one part of a result gives.
#[derive(Debug, Clone, Copy)]
enum Part<'a> {
    /// A `functionResponse`'s `output` (or, without one, its `error`): a
    /// string is its text, another value its JSON.
    Output(Raw<'a>),
    /// A `functionResponse`'s `response` with neither (or a `null` one):
    /// its JSON.
    Response(Raw<'a>),
    /// A part's `text`, a string.
    Text(Raw<'a>),
    Nothing,
}

/// A `functionResponse`'s `response`, and its `output` and `error` when it
/// is an object.
#[derive(Debug, Clone, Copy)]
struct Response<'a> {
    raw: Raw<'a>,
    output: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
}

impl<'a> Part<'a> {
    /// What a part gives: the `response` of its `functionResponse` (an
    /// object's, the last of each key), else its `text` when a string.
    fn of(response: Option<Response<'a>>, text: Option<Raw<'a>>) -> Part<'a> {
        match response {
            Some(response) => match response.output.or(response.error) {
                Some(value) if value.get() != "null" => Part::Output(value),
                _ if response.raw.get() != "null" => Part::Response(response.raw),
                _ => Part::Nothing,
            },
            None => match text {
                Some(text) if text.get().starts_with('"') => Part::Text(text),
                _ => Part::Nothing,
            },
        }
    }
}

/// A message's `toolCalls` (its JSON text as the message was read): each
/// item's call (an item that is not an object has no fields); none when
/// it is not a list.
pub(super) fn tool_calls(json: Raw<'_>) -> SmallVec<[ToolCall<'_>; 2]> {
    let mut calls = SmallVec::new();
    if !json.get().starts_with('[') {
        return calls;
    }
    if scan_raw(json, |list| scan_list(list, &mut calls)) {
        return calls;
    }
    raw_list(json).into_iter().map(ToolCall::from_fields).collect()
}

/// The calls of a list, read in one pass through the scanner; where the
/// list ends, or `None` to leave it to the field lists.
fn scan_list<'a>(list: json_scan::Value<'a>, calls: &mut SmallVec<[ToolCall<'a>; 2]>) -> Option<usize> {
    calls.clear();
    list.array(|item| {
        let mut call = ToolCall::default();
        let end = if item.is_object() { call.scan_in(item)? } else { item.skip()? };
        call.raw = Some(Raw::checked(item.text_to(end)?));
        calls.push(call);
        Some(end)
    })
}

impl<'a> ToolCall<'a> {
    /// The field that keeps `key`'s value raw; `None` for a key not kept
    /// (`result` is read, not kept).
    fn field(&mut self, key: &str) -> Option<&mut Option<Raw<'a>>> {
        Some(match key {
            "id" => &mut self.id,
            "name" => &mut self.name,
            "displayName" => &mut self.display_name,
            "args" => &mut self.args,
            "status" => &mut self.status,
            "timestamp" => &mut self.timestamp,
            "resultDisplay" => &mut self.result_display,
            "description" => &mut self.description,
            _ => return None,
        })
    }

    /// Reads an object's fields through the scanner, going down into its
    /// `result`; where it ends.
    fn scan_in(&mut self, value: json_scan::Value<'a>) -> Option<usize> {
        value.object(|key, value| {
            if key == "result" {
                let (outcome, end) = scan_outcome(value)?;
                self.result = Some(outcome);
                return Some(end);
            }
            match self.field(key) {
                Some(field) => {
                    let (text, end) = value.raw()?;
                    *field = Some(Raw::checked(text));
                    Some(end)
                }
                None => value.skip(),
            }
        })
    }

    /// A call read as a field list, a level at a time (serde's reading
    /// where the scanner gives up).
    fn from_fields(raw: Raw<'a>) -> ToolCall<'a> {
        let fields = object_fields(raw);
        let mut call = ToolCall { raw: Some(raw), ..ToolCall::default() };
        for (key, value) in &fields.0 {
            if let Some(field) = call.field(key) {
                *field = Some(*value);
            }
        }
        call.result = fields.get("result").map(|result| match result.get().as_bytes().first() {
            Some(b'"') => Outcome::Text(result),
            Some(b'[') => Outcome::Parts(raw_list(result).into_iter().map(part_of_fields).collect()),
            Some(b'{') => Outcome::Parts(smallvec::smallvec![part_of_fields(result)]),
            _ => Outcome::Parts(SmallVec::new()),
        });
        call
    }

    /// Whether the result's text is the `resultDisplay`'s: the one string
    /// it is made of has the display's JSON text (a shell command's display
    /// is its output), or the result holds none and falls back to the
    /// display. The text is then decoded once for both.
    pub(super) fn display_is_result(&self) -> bool {
        let Some(display) = self.result_display.filter(|display| display.get().starts_with('"')) else {
            return false;
        };
        let source = match &self.result {
            Some(Outcome::Text(text)) => Some(*text),
            Some(Outcome::Parts(parts)) => {
                let mut giving = parts.iter().filter(|part| !matches!(part, Part::Nothing));
                match (giving.next(), giving.next()) {
                    (Some(Part::Output(output)), None) => Some(*output),
                    (None, None) => Some(display),
                    _ => None,
                }
            }
            None => Some(display),
        };
        source.is_some_and(|source| source.get() == display.get())
    }

    /// The result as text: each part's text joined by lines, a string
    /// result itself; the `resultDisplay` when the result holds none.
    pub(super) fn result_text(&self) -> String {
        let mut texts: SmallVec<[Cow<'_, str>; 2]> = SmallVec::new();
        match &self.result {
            Some(Outcome::Text(text)) => return text_of(*text).into_owned(),
            Some(Outcome::Parts(parts)) => {
                for part in parts {
                    match *part {
                        Part::Output(value) => texts.push(text_of(value)),
                        Part::Response(response) => texts.push(printed(response.get())),
                        Part::Text(text) => texts.extend(raw_string(text)),
                        Part::Nothing => {}
                    }
                }
            }
            None => {}
        }
        if texts.is_empty() {
            if let Some(display) = self.result_display.filter(|display| display.get() != "null") {
                return text_of(display).into_owned();
            }
        }
        texts.join("\n")
    }
}

/// A `result` read through the scanner, and where it ends.
fn scan_outcome(value: json_scan::Value<'_>) -> Option<(Outcome<'_>, usize)> {
    match value.first_byte() {
        Some(b'"') => {
            let (text, end) = value.raw()?;
            Some((Outcome::Text(Raw::checked(text)), end))
        }
        Some(b'[') => {
            let mut parts = SmallVec::new();
            let end = value.array(|part| {
                let (read, end) = scan_part(part)?;
                parts.push(read);
                Some(end)
            })?;
            Some((Outcome::Parts(parts), end))
        }
        Some(b'{') => {
            let (part, end) = scan_part(value)?;
            Some((Outcome::Parts(smallvec::smallvec![part]), end))
        }
        _ => Some((Outcome::Parts(SmallVec::new()), value.skip()?)),
    }
}

/// One part of a result read through the scanner, and where it ends.
fn scan_part(part: json_scan::Value<'_>) -> Option<(Part<'_>, usize)> {
    if !part.is_object() {
        return Some((Part::Nothing, part.skip()?));
    }
    let (mut response, mut text) = (None, None);
    let end = part.object(|key, value| match key {
        "functionResponse" => {
            response = None;
            if !value.is_object() {
                return value.skip();
            }
            value.object(|key, value| {
                if key != "response" {
                    return value.skip();
                }
                let (read, end) = scan_response(value)?;
                response = Some(read);
                Some(end)
            })
        }
        "text" => {
            let (raw, end) = value.raw()?;
            text = Some(Raw::checked(raw));
            Some(end)
        }
        _ => value.skip(),
    })?;
    Some((Part::of(response, text), end))
}

/// A `response` read through the scanner (an object's `output` and
/// `error`), and where it ends.
fn scan_response(value: json_scan::Value<'_>) -> Option<(Response<'_>, usize)> {
    let (mut output, mut error) = (None, None);
    let end = if value.is_object() {
        value.object(|key, value| {
            let field = match key {
                "output" => &mut output,
                "error" => &mut error,
                _ => return value.skip(),
            };
            let (raw, end) = value.raw()?;
            *field = Some(Raw::checked(raw));
            Some(end)
        })?
    } else {
        value.skip()?
    };
    let raw = Raw::checked(value.text_to(end)?);
    Some((Response { raw, output, error }, end))
}

/// One part of a result read as field lists.
fn part_of_fields(part: Raw<'_>) -> Part<'_> {
    let fields = object_fields(part);
    let response = fields.get("functionResponse").and_then(|call| object_fields(call).get("response"));
    let response = response.map(|raw| {
        let fields = object_fields(raw);
        Response { raw, output: fields.get("output"), error: fields.get("error") }
    });
    Part::of(response, fields.get("text"))
}

/// A value put where text goes: a string is its own text, anything else
/// its JSON, printed as a value is.
pub(super) fn text_of(raw: Raw<'_>) -> Cow<'_, str> {
    raw_string(raw).unwrap_or_else(|| printed(raw.get()))
}

/// The items of a list, raw; none for any other value.
fn raw_list(raw: Raw<'_>) -> SmallVec<[Raw<'_>; 1]> {
    let mut read = None;
    let scanned = scan_raw(raw, |value| {
        let (list, end) = ListOr::scan(value)?;
        read = Some(list);
        Some(end)
    });
    if !scanned {
        read = serde_json::from_str::<ListOr<'_>>(raw.get()).ok();
    }
    match read {
        Some(ListOr::List(items)) => items,
        _ => SmallVec::new(),
    }
}

/// The fields of an object, raw (a key written twice counts with its last
/// value, as a map keeps it); none for any other value.
fn object_fields(raw: Raw<'_>) -> Fields<'_> {
    let mut fields = Fields::default();
    if !raw.get().starts_with('{') || Fields::read_raw(raw, &mut fields).is_err() {
        return Fields::default();
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call as a test compares it: its result's text, its id and its
    /// text as sent.
    type Seen = (String, Option<String>, Option<String>);

    /// Both readings of a list of calls.
    fn both(json: &str) -> [Vec<Seen>; 2] {
        let read = |calls: SmallVec<[ToolCall<'_>; 2]>| {
            calls
                .iter()
                .map(|call| {
                    (call.result_text(), call.id.map(|id| id.get().to_owned()), call.raw.map(|r| r.get().to_owned()))
                })
                .collect::<Vec<_>>()
        };
        let scanned = read(tool_calls(Raw::of(json)));
        let by_fields = read(raw_list(Raw::of(json)).into_iter().map(ToolCall::from_fields).collect());
        [scanned, by_fields]
    }

    #[test]
    fn a_result_is_read_alike_in_one_pass_and_by_field_lists() {
        let lists = [
            r#"[{"id":"a","result":[{"functionResponse":{"id":"a","response":{"output":"line 1\nline 2"}}}]}]"#,
            r#"[{"id":"b","result":"plain","resultDisplay":"shown"}]"#,
            r#"[{"id":"c","result":{"functionResponse":{"response":{"error":"bad"}}}}]"#,
            r#"[{"id":"d","result":[{"text":"t"},{"functionResponse":{"response":{"output":null,"x":1}}},{"functionResponse":{"response":"s"}},{"functionResponse":{"response":null}},{"functionResponse":[1]},7,{"text":3}]}]"#,
            r#"[{"id":"e","result":[],"resultDisplay":{"diff":[1,2.5]}}]"#,
            r#"[{"id":"f","result":[{"functionResponse":{"response":{"output":{"n":[true,null]},"error":"e"}}}]}]"#,
            r#"[{"id":"g","result":5,"resultDisplay":null}]"#,
            r#"[{"id":"h","result":"first","result":[{"text":"last"}]}]"#,
            r#"[{"id":"i","result":[{"functionResponse":{"response":{"output":"o"}},"functionResponse":{"id":"x"}},{"text":"a","text":"b"}]}]"#,
            r#"[{"id":"j","result":[{"functionResponse":{"response":{"output":"o1","output":"o2"}}}]}]"#,
            r#"[1,"x",null,{"id":"k"}]"#,
            r#"[ { "id" : "l" , "result" : [ { "functionResponse" : { "response" : { "output" : "spaced" } } } ] } ]"#,
        ];
        let want = [
            "line 1\nline 2",
            "plain",
            "bad",
            "t\n{\"output\":null,\"x\":1}\n\"s\"",
            "{\"diff\":[1,2.5]}",
            "{\"n\":[true,null]}",
            "",
            "last",
            "b",
            "o2",
        ];
        for (at, list) in lists.iter().enumerate() {
            let [scanned, by_fields] = both(list);
            assert_eq!(scanned, by_fields, "{list}");
            if let Some(want) = want.get(at) {
                assert_eq!(scanned[0].0, *want, "{list}");
            }
        }
        // The calls as sent, each whole.
        let [scanned, _] = both(r#"[1,"x",null,{"id":"k"}]"#);
        let raws: Vec<_> = scanned.iter().map(|(_, _, raw)| raw.clone().unwrap_or_default()).collect();
        assert_eq!(raws, ["1", "\"x\"", "null", r#"{"id":"k"}"#]);
    }

    #[test]
    fn a_key_with_an_escape_is_read_by_field_lists() {
        let list = r#"[{"id":"a","res\u0075lt":"escaped key","result":"kept"}]"#;
        let [scanned, by_fields] = both(list);
        assert_eq!(scanned, by_fields);
        assert_eq!(scanned[0].0, "kept");
    }

    #[test]
    fn what_is_not_a_list_has_no_calls() {
        for json in [r#"{"id":"a"}"#, r#""calls""#, "3", "null"] {
            assert!(tool_calls(Raw::of(json)).is_empty(), "{json}");
        }
    }
}
