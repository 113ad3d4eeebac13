//! Lines in, payloads out: the framing of a text input (JSON lines, or SSE
//! events whose `data:` lines carry the payload) for a caller that has the
//! lines and drives an adapter itself.

use super::framing::{frame, Framed, BOM};

/// What a line completes: a payload for an adapter, or an SSE event that
/// grew past the limit, read past and not held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// The bytes of one JSON value, from the line numbered `line` (an SSE
    /// event's first `data:` line).
    Data {
        /// The line the payload begins on, from 1.
        line: u64,
        /// The payload.
        bytes: &'a [u8],
    },
    /// An SSE event longer than the limit, beginning on line `line`: `bytes`
    /// long, not held.
    TooLong {
        /// The line the event begins on, from 1.
        line: u64,
        /// Its length so far.
        bytes: u64,
    },
}

/// Turns the lines of a text input into payloads: a JSON line is a payload
/// of its own; the `data:` lines of an SSE event are joined (with `\n`, as
/// SSE says) into one, complete at the blank line or field that ends the
/// event; `event:`, `id:`, `retry:` and comment lines carry nothing.
///
/// An adapter reads payloads, not lines: fed an SSE body line by line, it
/// would find no JSON in `data: {...}`. This is the framing the replay uses,
/// for a caller that reads its own lines (a socket, a subprocess's stdout)
/// and drives an adapter directly.
///
/// ```
/// use roundup::adapters::{Adapter, InputFormat};
/// use roundup::{Call, LineFramer, Payload};
///
/// let body = "event: message\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude\",\"usage\":{\"input_tokens\":3}}}\n\n\
///             data: {\"type\":\"content_block_delta\",\"index\":0,\
///             \"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n";
/// let mut adapter = InputFormat::named("anthropic").unwrap().adapter();
/// let mut framer = LineFramer::new();
/// let mut ops = Vec::new();
/// let mut sink = |_: Option<&str>, call: Call<'_>| ops.push(call.op_name().to_owned());
/// for line in body.lines() {
///     framer.line(line.as_bytes(), &mut |payload| {
///         if let Payload::Data { bytes, .. } = payload {
///             adapter.translate(bytes, &mut sink).unwrap();
///         }
///     });
/// }
/// framer.finish(&mut |_| {});
/// assert!(ops.contains(&"message".to_owned()), "{ops:?}");
/// ```
#[derive(Debug, Clone)]
pub struct LineFramer {
    /// The SSE event being gathered, and the line it began on.
    pub(crate) event: Vec<u8>,
    pub(crate) event_line: u64,
    /// The event grew past the limit: its length so far.
    pub(crate) event_oversized: Option<u64>,
    /// Lines read so far.
    lines: u64,
    max_bytes: usize,
}

impl Default for LineFramer {
    fn default() -> Self {
        LineFramer::new()
    }
}

impl LineFramer {
    /// A framer for SSE events of at most [`DEFAULT_MAX_LINE_BYTES`](crate::DEFAULT_MAX_LINE_BYTES),
    /// the replay's default limit on a line.
    pub fn new() -> Self {
        LineFramer {
            event: Vec::new(),
            event_line: 0,
            event_oversized: None,
            lines: 0,
            max_bytes: super::DEFAULT_MAX_LINE_BYTES,
        }
    }

    /// The longest SSE event held whole; a longer one is read past and
    /// reported as [`Payload::TooLong`].
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Reads the next line (with or without its `\n` or `\r\n`), handing
    /// `each` the payloads it completes: none, one, or two (a JSON line
    /// right after an unfinished SSE event ends that event, then is one).
    pub fn line(&mut self, line: &[u8], each: &mut dyn FnMut(Payload<'_>)) {
        self.lines += 1;
        self.numbered(self.lines, line, each);
    }

    /// The input ended: the SSE event still being gathered, if any.
    pub fn finish(&mut self, each: &mut dyn FnMut(Payload<'_>)) {
        if let Some(bytes) = self.event_oversized.take() {
            return each(Payload::TooLong { line: self.event_line, bytes });
        }
        if self.event.is_empty() {
            return;
        }
        each(Payload::Data { line: self.event_line, bytes: &self.event });
        self.event.clear();
    }

    /// [`line`](LineFramer::line) for a caller that numbers lines itself
    /// (the replay counts lines that never reach the framer: those read
    /// past as too long).
    pub(crate) fn numbered(&mut self, number: u64, bytes: &[u8], each: &mut dyn FnMut(Payload<'_>)) {
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = if number == 1 { line.strip_prefix(BOM).unwrap_or(line) } else { line };
        match frame(line) {
            Framed::Data(data) => {
                if let Some(oversized) = self.event_oversized.as_mut() {
                    *oversized += data.len() as u64 + 1;
                    return;
                }
                if self.event.is_empty() {
                    self.event_line = number;
                } else {
                    self.event.push(b'\n');
                }
                if self.event.len() + data.len() > self.max_bytes {
                    self.event_oversized = Some((self.event.len() + data.len()) as u64);
                    self.event = Vec::new();
                    return;
                }
                self.event.extend_from_slice(data);
            }
            Framed::Blank | Framed::Field => self.finish(each),
            Framed::Line(payload) => {
                self.finish(each);
                each(Payload::Data { line: number, bytes: payload });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payloads(framer: &mut LineFramer, lines: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        let mut each = |payload: Payload<'_>| {
            out.push(match payload {
                Payload::Data { line, bytes } => format!("{line}:{}", String::from_utf8_lossy(bytes)),
                Payload::TooLong { line, bytes } => format!("{line}:too long ({bytes})"),
            })
        };
        for line in lines {
            framer.line(line.as_bytes(), &mut each);
        }
        framer.finish(&mut each);
        out
    }

    #[test]
    fn sse_events_and_json_lines_become_payloads() {
        let lines = [
            "\u{feff}{\"a\":1}\r\n",
            "event: x",
            "data: {\"b\":",
            "data: 2}",
            "",
            ": keep-alive",
            "data:{\"c\":3}",
            "{\"d\":4}",
            "data: {\"e\":5}",
        ];
        assert_eq!(
            payloads(&mut LineFramer::new(), &lines),
            ["1:{\"a\":1}", "3:{\"b\":\n2}", "7:{\"c\":3}", "8:{\"d\":4}", "9:{\"e\":5}"]
        );
    }

    #[test]
    fn an_event_past_the_limit_is_reported_not_held() {
        let mut framer = LineFramer::new().max_bytes(8);
        let lines = ["data: 0123", "data: 45678", "data: 9", "", "data: {}", ""];
        assert_eq!(payloads(&mut framer, &lines), ["1:too long (12)", "5:{}"]);
        assert!(framer.event.capacity() <= 8, "the long event is not kept");
    }
}
