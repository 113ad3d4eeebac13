//! Binary framing: AWS `application/vnd.amazon.eventstream`, the body of a
//! Bedrock `ConverseStream` response (and of other AWS event streams).
//!
//! A frame is a 12-byte prelude (total length and headers length, 4 bytes
//! each, big-endian, then the CRC32 of those 8 bytes), the headers, the
//! payload and the CRC32 of everything before it. Frames are reassembled by
//! their length prefix, whatever the read boundaries (a transport chunk may
//! hold half a frame, or two).
//!
//! Each frame is handed on as the JSON object the AWS SDKs log for it,
//! `{"<event type>": <payload>}` (`:event-type` for an event,
//! `:exception-type` for an exception), so that one adapter reads a
//! recording made by an SDK and a raw HTTP body alike, and the event's
//! name, which only the headers carry, travels with its body.
//!
//! A frame whose message CRC fails is reported and read past by its
//! declared length (the prelude said where the next one starts). A prelude
//! whose own CRC fails leaves no boundary to trust: that is reported once,
//! and the rest of the input is not read rather than guessed at.

use serde::{Deserialize, Serialize};

/// The prelude: total length, headers length, their CRC32.
pub(crate) const PRELUDE: usize = 12;
/// The smallest frame: a prelude and a message CRC, nothing between.
const SMALLEST: usize = PRELUDE + 4;
/// The format's own limit on a frame: 16 MiB (a frame's first byte is
/// therefore 0, or 1 for the largest; text never starts so).
const LARGEST: u32 = 16 << 20;

/// What the first bytes of an input say about its framing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Fewer bytes than a prelude, that could still begin one.
    Undecided,
    /// A valid prelude: the input is an event stream.
    EventStream,
    /// Not an event stream: lines.
    Text,
}

/// Whether `head`, the first bytes of an input, begin an event stream: a
/// prelude whose CRC holds and whose lengths make a frame. A first byte
/// that no frame of the format's size has decides at once, so that a text
/// input is never held back waiting for twelve bytes.
pub(crate) fn sniff(head: &[u8]) -> Sniffed {
    match head.first() {
        None => Sniffed::Undecided,
        Some(first) if u32::from(*first) > LARGEST >> 24 => Sniffed::Text,
        Some(_) if head.len() < PRELUDE => Sniffed::Undecided,
        Some(_) => match prelude(head) {
            Ok((total, _)) if total <= LARGEST as usize => Sniffed::EventStream,
            _ => Sniffed::Text,
        },
    }
}

/// The lengths a prelude declares (total, headers), or why it cannot be
/// trusted. `bytes` holds at least [`PRELUDE`] bytes.
fn prelude(bytes: &[u8]) -> Result<(usize, usize), String> {
    let (Some(total), Some(headers), Some(crc)) = (be32(bytes, 0), be32(bytes, 4), be32(bytes, 8)) else {
        return Err("a prelude shorter than 12 bytes".to_owned());
    };
    let computed = bytes.get(..8).map_or(0, crc32fast::hash);
    if computed != crc {
        return Err(format!("prelude CRC32 {crc:08x}, computed {computed:08x}"));
    }
    let (total, headers) = (total as usize, headers as usize);
    if total < SMALLEST || headers > total - SMALLEST {
        return Err(format!("a prelude that declares {total} bytes with {headers} bytes of headers"));
    }
    Ok((total, headers))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let four: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(four))
}

/// One frame read, handed to the replay.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A frame that decoded: `{"<event type>": <payload>}`.
    Event { number: u64, json: &'a [u8] },
    /// A frame that cannot be read (`reason` says where and why).
    Bad { number: u64, reason: String },
    /// A frame longer than the limit, read past without being held.
    TooLong { number: u64, bytes: u64 },
}

/// The decoder's state between two pieces of input.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EventStream {
    /// The frame being gathered (its prelude first).
    held: Vec<u8>,
    /// Frames begun so far: the number of the one being read.
    frames: u64,
    /// Where (in bytes from the start of the input) the frame being read
    /// begins.
    at: u64,
    /// Bytes still to read past of a frame longer than the limit.
    skip: u64,
    /// A prelude could not be trusted: the rest of the input is not read.
    lost: bool,
    /// The JSON handed on, reused from frame to frame.
    #[serde(skip)]
    json: Vec<u8>,
}

impl EventStream {
    /// Reads a piece of input, handing each frame it completes to `out`.
    /// `limit` is the largest frame held (`--max-line-bytes`).
    pub(crate) fn feed(&mut self, mut bytes: &[u8], limit: usize, out: &mut dyn FnMut(Frame<'_>)) {
        while !bytes.is_empty() {
            if self.lost {
                return;
            }
            if self.skip > 0 {
                let n = usize::try_from(self.skip).map_or(bytes.len(), |skip| skip.min(bytes.len()));
                self.skip -= n as u64;
                bytes = &bytes[n..];
                continue;
            }
            // A whole frame in the piece, none held: read where it lies.
            if self.held.is_empty() && bytes.len() >= PRELUDE {
                if let Ok((total, headers)) = prelude(bytes) {
                    if total <= bytes.len() && total <= limit {
                        self.frames += 1;
                        let (frame, rest) = bytes.split_at(total);
                        self.frame(frame, headers, out);
                        self.at += total as u64;
                        bytes = rest;
                        continue;
                    }
                }
            }
            if self.held.len() < PRELUDE {
                let n = (PRELUDE - self.held.len()).min(bytes.len());
                self.held.extend_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                if self.held.len() < PRELUDE {
                    return;
                }
                self.frames += 1;
                match prelude(&self.held) {
                    Err(reason) => {
                        self.lost = true;
                        self.held = Vec::new();
                        let reason = format!(
                            "at byte {}: {reason}: the frames' boundaries are lost, the rest of the input is not read",
                            self.at
                        );
                        return out(Frame::Bad { number: self.frames, reason });
                    }
                    Ok((total, _)) if total > limit => {
                        self.skip = (total - PRELUDE) as u64;
                        self.at += total as u64;
                        self.held.clear();
                        out(Frame::TooLong { number: self.frames, bytes: total as u64 });
                        continue;
                    }
                    Ok(_) => {}
                }
            }
            let Ok((total, headers)) = prelude(&self.held) else { return };
            let n = (total - self.held.len()).min(bytes.len());
            self.held.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.held.len() == total {
                let held = std::mem::take(&mut self.held);
                self.frame(&held, headers, out);
                self.held = held;
                self.held.clear();
                self.at += total as u64;
            }
        }
    }

    /// The input ended: a frame cut short is reported.
    pub(crate) fn end(&mut self, out: &mut dyn FnMut(Frame<'_>)) {
        if self.held.is_empty() || self.lost {
            return;
        }
        let declared = prelude(&self.held).map(|(total, _)| format!(" of {total} bytes")).unwrap_or_default();
        if self.held.len() < PRELUDE {
            self.frames += 1;
        }
        let reason = format!("at byte {}: the input ended {} bytes into a frame{declared}", self.at, self.held.len());
        self.held = Vec::new();
        out(Frame::Bad { number: self.frames, reason });
    }

    /// One whole frame, its prelude checked: its message CRC, its headers,
    /// then its event as JSON.
    fn frame(&mut self, frame: &[u8], headers: usize, out: &mut dyn FnMut(Frame<'_>)) {
        let number = self.frames;
        let (body, crc) = frame.split_at(frame.len() - 4);
        let declared = be32(crc, 0).unwrap_or(0);
        let computed = crc32fast::hash(body);
        if declared != computed {
            let reason = format!(
                "at byte {}: message CRC32 {declared:08x}, computed {computed:08x}: the frame is read past",
                self.at
            );
            return out(Frame::Bad { number, reason });
        }
        let (head, payload) = body[PRELUDE..].split_at(headers);
        let named = match Headers::read(head) {
            Ok(named) => named,
            Err(reason) => {
                return out(Frame::Bad { number, reason: format!("at byte {}: headers: {reason}", self.at) })
            }
        };
        self.json.clear();
        let name = match named.message_type.unwrap_or("event") {
            "event" => named.event_type,
            "exception" => Some(named.exception_type.unwrap_or("exception")),
            // A protocol error: its code and message are headers, and the
            // code names an exception as an exception frame's type does.
            "error" => Some(named.error_code.unwrap_or("error")),
            other => {
                let reason = format!("at byte {}: a frame of message type {other:?}", self.at);
                return out(Frame::Bad { number, reason });
            }
        };
        let Some(name) = name else {
            let reason = format!("at byte {}: an event frame with no :event-type header", self.at);
            return out(Frame::Bad { number, reason });
        };
        self.json.push(b'{');
        push_json_string(&mut self.json, name);
        self.json.push(b':');
        if named.message_type == Some("error") {
            self.json.extend_from_slice(b"{\"message\":");
            push_json_string(&mut self.json, named.error_message.unwrap_or(""));
            self.json.push(b'}');
        } else if payload.iter().all(u8::is_ascii_whitespace) {
            self.json.extend_from_slice(b"{}");
        } else {
            self.json.extend_from_slice(payload);
        }
        self.json.push(b'}');
        out(Frame::Event { number, json: &self.json });
    }
}

fn push_json_string(out: &mut Vec<u8>, text: &str) {
    // A string always serialises.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// The headers a frame's event is named by (the others are read past).
#[derive(Debug, Default)]
struct Headers<'a> {
    message_type: Option<&'a str>,
    event_type: Option<&'a str>,
    exception_type: Option<&'a str>,
    error_code: Option<&'a str>,
    error_message: Option<&'a str>,
}

impl<'a> Headers<'a> {
    /// Reads every header: a 1-byte name length, the name, a 1-byte value
    /// type, the value (its size set by the type, or a 2-byte length for
    /// byte arrays and strings).
    fn read(mut bytes: &'a [u8]) -> Result<Headers<'a>, String> {
        let mut named = Headers::default();
        while let Some((&length, rest)) = bytes.split_first() {
            let name = rest.get(..usize::from(length)).ok_or("a header name past the headers' end")?;
            let (&kind, rest) = rest[name.len()..].split_first().ok_or("a header with no value type")?;
            let size = match kind {
                0 | 1 => 0,
                2 => 1,
                3 => 2,
                4 => 4,
                5 | 8 => 8,
                9 => 16,
                6 | 7 => {
                    let two: [u8; 2] = rest
                        .get(..2)
                        .and_then(|b| b.try_into().ok())
                        .ok_or("a header value length past the headers' end")?;
                    2 + usize::from(u16::from_be_bytes(two))
                }
                other => return Err(format!("a header of value type {other}, which the format does not have")),
            };
            let value = rest.get(..size).ok_or("a header value past the headers' end")?;
            bytes = &rest[size..];
            if kind != 7 {
                continue;
            }
            let slot = match name {
                b":message-type" => &mut named.message_type,
                b":event-type" => &mut named.event_type,
                b":exception-type" => &mut named.exception_type,
                b":error-code" => &mut named.error_code,
                b":error-message" => &mut named.error_message,
                _ => continue,
            };
            let text = std::str::from_utf8(&value[2..])
                .map_err(|_| format!("header {} is not UTF-8", String::from_utf8_lossy(name)))?;
            *slot = Some(text);
        }
        Ok(named)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A frame of `headers` (name, string value) and `payload`, CRCs right.
    pub(crate) fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut head = Vec::new();
        for (name, value) in headers {
            head.push(name.len() as u8);
            head.extend_from_slice(name.as_bytes());
            head.push(7);
            head.extend_from_slice(&(value.len() as u16).to_be_bytes());
            head.extend_from_slice(value.as_bytes());
        }
        let total = PRELUDE + head.len() + payload.len() + 4;
        let mut out = Vec::new();
        out.extend_from_slice(&(total as u32).to_be_bytes());
        out.extend_from_slice(&(head.len() as u32).to_be_bytes());
        out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(payload);
        out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
        out
    }

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        frame(
            &[(":message-type", "event"), (":event-type", kind), (":content-type", "application/json")],
            payload.as_bytes(),
        )
    }

    /// Every frame read from `input` fed in `pieces`, as text.
    fn read(pieces: &[&[u8]], limit: usize) -> Vec<String> {
        let mut decoder = EventStream::default();
        let mut seen = Vec::new();
        let mut out = |frame: Frame<'_>| {
            seen.push(match frame {
                Frame::Event { number, json } => format!("{number} {}", String::from_utf8_lossy(json)),
                Frame::Bad { number, reason } => format!("{number} bad: {reason}"),
                Frame::TooLong { number, bytes } => format!("{number} too long: {bytes}"),
            })
        };
        for piece in pieces {
            decoder.feed(piece, limit, &mut out);
        }
        decoder.end(&mut out);
        seen
    }

    #[test]
    fn frames_are_named_by_their_event_type() {
        let input = [event("messageStart", r#"{"p":"ab","role":"assistant"}"#), event("messageStop", "")].concat();
        assert_eq!(
            read(&[&input], 1 << 20),
            [r#"1 {"messageStart":{"p":"ab","role":"assistant"}}"#, r#"2 {"messageStop":{}}"#]
        );
    }

    #[test]
    fn exceptions_and_errors_are_named_by_their_type() {
        let exception = frame(
            &[(":message-type", "exception"), (":exception-type", "throttlingException")],
            br#"{"message":"slow down"}"#,
        );
        let error = frame(
            &[(":message-type", "error"), (":error-code", "InternalFailure"), (":error-message", "a \"b\"")],
            b"",
        );
        assert_eq!(
            read(&[&[exception, error].concat()], 1 << 20),
            [r#"1 {"throttlingException":{"message":"slow down"}}"#, r#"2 {"InternalFailure":{"message":"a \"b\""}}"#]
        );
    }

    #[test]
    fn every_header_type_is_read_past() {
        let mut head = Vec::new();
        for (kind, value) in [
            (0u8, &[][..]),
            (1, &[]),
            (2, &[7]),
            (3, &[0, 1]),
            (4, &[0, 0, 0, 1]),
            (5, &[0; 8]),
            (6, &[0, 3, 1, 2, 3]),
            (8, &[0; 8]),
            (9, &[0; 16]),
        ] {
            head.extend_from_slice(&[2, b'h', b'0' + kind, kind]);
            head.extend_from_slice(value);
        }
        let named = Headers::read(&head).map(|h| h.event_type);
        assert_eq!(named, Ok(None));
        head.extend_from_slice(&[11, b':', b'e', b'v', b'e', b'n', b't', b'-', b't', b'y', b'p', b'e', 7, 0, 1, b'x']);
        assert_eq!(Headers::read(&head).map(|h| h.event_type), Ok(Some("x")));
        assert_eq!(
            Headers::read(&[1, b'a', 10]).map(|h| h.event_type),
            Err("a header of value type 10, which the format does not have".to_owned())
        );
        assert!(Headers::read(&[1, b'a', 7, 0, 9, b'x']).is_err(), "a value past the end");
        assert!(Headers::read(&[5, b'a']).is_err(), "a name past the end");
    }

    #[test]
    fn any_cut_gives_the_same_frames() {
        let input = [event("a", r#"{"x":1}"#), event("b", r#"{"y":"z"}"#), event("c", "{}")].concat();
        let whole = read(&[&input], 1 << 20);
        assert_eq!(whole.len(), 3);
        for cut in 0..=input.len() {
            assert_eq!(read(&[&input[..cut], &input[cut..]], 1 << 20), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(read(&bytes, 1 << 20), whole);
    }

    #[test]
    fn a_bad_message_crc_skips_one_frame() {
        let mut second = event("b", r#"{"y":1}"#);
        let last = second.len() - 1;
        second[last] ^= 1;
        let input = [event("a", "{}"), second, event("c", "{}")].concat();
        let first_len = event("a", "{}").len();
        let seen = read(&[&input], 1 << 20);
        assert_eq!(seen[0], r#"1 {"a":{}}"#);
        assert!(seen[1].starts_with(&format!("2 bad: at byte {first_len}: message CRC32 ")), "{seen:?}");
        assert_eq!(seen[2], r#"3 {"c":{}}"#);
    }

    #[test]
    fn a_bad_prelude_loses_the_rest() {
        let mut second = event("b", "{}");
        second[9] ^= 1;
        let input = [event("a", "{}"), second, event("c", "{}")].concat();
        let seen = read(&[&input], 1 << 20);
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(
            seen[1].contains("prelude CRC32") && seen[1].ends_with("the rest of the input is not read"),
            "{seen:?}"
        );
    }

    #[test]
    fn a_frame_over_the_limit_is_read_past() {
        let big = event("big", &format!(r#"{{"t":"{}"}}"#, "x".repeat(200)));
        let input = [event("a", "{}"), big.clone(), event("c", "{}")].concat();
        let expected = [r#"1 {"a":{}}"#.to_owned(), format!("2 too long: {}", big.len()), r#"3 {"c":{}}"#.to_owned()];
        assert_eq!(read(&[&input], 100), expected);
        let bytes: Vec<&[u8]> = input.chunks(7).collect();
        assert_eq!(read(&bytes, 100), expected);
    }

    #[test]
    fn a_cut_frame_is_reported_at_the_end() {
        let input = event("a", "{}");
        let seen = read(&[&input[..input.len() - 3]], 1 << 20);
        assert_eq!(
            seen,
            [format!(
                "1 bad: at byte 0: the input ended {} bytes into a frame of {} bytes",
                input.len() - 3,
                input.len()
            )]
        );
    }

    #[test]
    fn text_is_told_from_a_prelude_at_once() {
        assert_eq!(sniff(b"{\"op\""), Sniffed::Text);
        assert_eq!(sniff(b"data: x"), Sniffed::Text);
        assert_eq!(sniff(b""), Sniffed::Undecided);
        assert_eq!(sniff(&[0, 0, 0]), Sniffed::Undecided);
        assert_eq!(sniff(&event("a", "{}")[..PRELUDE]), Sniffed::EventStream);
        assert_eq!(sniff(&[0; PRELUDE]), Sniffed::Text, "a CRC of zero bytes is not zero");
    }
}
