//! Input formats, their detection, and SSE framing.

use serde_json::Value;

/// The format of a replay's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Decided from the first event (see [`Format::detect`]).
    #[default]
    Auto,
    /// Ops JSONL (SPEC §3).
    Ops,
    /// Agent Client Protocol traffic (JSON-RPC lines or bare
    /// `SessionNotification`s).
    Acp,
    /// uagent `--stream` JSONL (schema v1, and the `uah` superset).
    Uagent,
    /// deepwork `Event`s, or deepwork transcripts.
    Deepwork,
}

/// The event types of uagent `--stream` JSONL, by which it is detected.
const UAGENT_EVENTS: [&str; 14] = [
    "run_started",
    "run_finished",
    "user_message",
    "control_input",
    "turn_started",
    "model_responded",
    "tool_called",
    "tool_started",
    "tool_finished",
    "assistant_message",
    "reasoning",
    "text_delta",
    "reasoning_delta",
    "runner_error",
];

impl Format {
    /// Parses a format name (`auto`, `ops`, `acp`).
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "auto" => Format::Auto,
            "ops" => Format::Ops,
            "acp" => Format::Acp,
            "uagent" => Format::Uagent,
            "deepwork" => Format::Deepwork,
            _ => return None,
        })
    }

    /// The names [`parse`](Format::parse) knows.
    pub const NAMES: &'static str = "auto, ops, acp, uagent, deepwork";

    /// The format of an input whose first event is `first`: ops when it has
    /// an `op`, ACP when it is JSON-RPC or a `SessionNotification`, uagent
    /// when its `type` is a uagent event, deepwork when it has a `kind` (an
    /// Event) or is a deepwork transcript line, else ops (whose reader then
    /// says what is wrong with each line).
    ///
    /// ```
    /// use roundup::Format;
    /// assert_eq!(Format::detect(br#"{"op":"message","text":"Hi"}"#), Format::Ops);
    /// assert_eq!(Format::detect(br#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#), Format::Acp);
    /// ```
    pub fn detect(first: &[u8]) -> Format {
        let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(first) else {
            return Format::Ops;
        };
        if object.contains_key("op") {
            Format::Ops
        } else if object.contains_key("jsonrpc") || (object.contains_key("sessionId") && object.contains_key("update"))
        {
            Format::Acp
        } else if object.get("type").and_then(Value::as_str).is_some_and(|t| UAGENT_EVENTS.contains(&t)) {
            Format::Uagent
        } else if object.get("kind").is_some_and(Value::is_string)
            || object.contains_key("workstream")
            || object.contains_key("deepworkSessionId")
        {
            Format::Deepwork
        } else {
            Format::Ops
        }
    }
}

/// One physical line, as SSE framing sees it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed<'a> {
    /// Blank: ends an SSE event.
    Blank,
    /// `data: ...`: a piece of an SSE event's payload.
    Data(&'a [u8]),
    /// Another SSE field (`event:`, `id:`, `retry:`) or a comment (`:`).
    Field,
    /// A line that is not SSE: a payload of its own.
    Line(&'a [u8]),
}

/// Classifies a line (without its terminator) for SSE framing.
pub(crate) fn frame(line: &[u8]) -> Framed<'_> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Framed::Blank;
    }
    if let Some(data) = line.strip_prefix(b"data:") {
        return Framed::Data(data.strip_prefix(b" ").unwrap_or(data));
    }
    let field = [&b"event:"[..], b"id:", b"retry:", b":"].iter().any(|prefix| line.starts_with(prefix));
    if field {
        Framed::Field
    } else {
        Framed::Line(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_lines_are_classified() {
        assert_eq!(frame(b"data: {\"a\":1}"), Framed::Data(b"{\"a\":1}"));
        assert_eq!(frame(b"data:{}"), Framed::Data(b"{}"));
        assert_eq!(frame(b"event: update"), Framed::Field);
        assert_eq!(frame(b": keep-alive"), Framed::Field);
        assert_eq!(frame(b"  \r"), Framed::Blank);
        assert_eq!(frame(b"{\"op\":\"start\"}"), Framed::Line(b"{\"op\":\"start\"}"));
    }

    #[test]
    fn formats_are_detected_from_the_first_event() {
        assert_eq!(Format::detect(br#"{"sessionId":"s","update":{}}"#), Format::Acp);
        assert_eq!(Format::detect(b"not json"), Format::Ops);
        assert_eq!(Format::parse("acp"), Some(Format::Acp));
        assert_eq!(Format::parse("xml"), None);
    }
}
