//! Input framing: raw JSON lines, or SSE events whose `data:` lines carry
//! the payload.

/// The UTF-8 byte order mark some editors put at the start of a file: not
/// part of the input's first line, element or payload.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

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
}
