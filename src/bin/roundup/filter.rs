//! What the command line does to the output on its way out: keep only some
//! sessions (`--session`) or record types (`--type`), and indent each value
//! (`--pretty`, coloured on a terminal). Applied to the finished lines, so the library's output is
//! the same bytes with or without them.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Deserialize;

use crate::color::write_painted;

/// Which output values to keep, and how to lay them out.
#[derive(Debug, Default)]
pub struct Filter {
    /// Sessions to keep (`None`: the session without a name); empty: all.
    pub sessions: Vec<Option<String>>,
    /// Record types to keep; empty: all.
    pub types: Vec<String>,
    /// Indent each value.
    pub pretty: bool,
    /// Colour the indented values (a person reads them on a terminal).
    pub color: bool,
}

impl Filter {
    /// Whether the filter changes anything (if not, output goes straight
    /// out).
    pub fn is_active(&self) -> bool {
        !self.sessions.is_empty() || !self.types.is_empty() || self.pretty
    }

    fn keeps(&self, head: &Head<'_>) -> bool {
        let session = head.session.as_deref().or(head.thread.as_deref());
        let session_ok = self.sessions.is_empty() || self.sessions.iter().any(|s| s.as_deref() == session);
        let type_ok =
            self.types.is_empty() || head.kind.as_deref().is_some_and(|kind| self.types.iter().any(|t| t == kind));
        session_ok && type_ok
    }
}

/// The fields of an output value a filter looks at.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session: Option<Cow<'a, str>>,
    /// AG-UI names its thread so (one per session).
    #[serde(rename = "threadId", borrow, default)]
    thread: Option<Cow<'a, str>>,
}

/// A writer that applies a [`Filter`] to each complete line written to it:
/// a JSON line, or an SSE event (`data: ...` and its blank line).
pub struct Filtered<W: Write> {
    out: W,
    filter: Filter,
    line: Vec<u8>,
    /// The last `data:` line was kept: so is the blank line that ends its
    /// event.
    kept_event: bool,
}

impl<W: Write> Filtered<W> {
    pub fn new(out: W, filter: Filter) -> Self {
        Filtered { out, filter, line: Vec::new(), kept_event: false }
    }

    fn line(&mut self, line: &[u8]) -> io::Result<()> {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if body.is_empty() {
            if std::mem::take(&mut self.kept_event) {
                self.out.write_all(line)?;
            }
            return Ok(());
        }
        let (prefix, json) = match body.strip_prefix(b"data: ") {
            Some(json) => (&b"data: "[..], json),
            None => (&b""[..], body),
        };
        // A value that is not JSON (it cannot be one of roundup's) is kept.
        let keep = serde_json::from_slice::<Head<'_>>(json).map_or(true, |head| self.filter.keeps(&head));
        self.kept_event = keep && !prefix.is_empty();
        if !keep {
            return Ok(());
        }
        if self.filter.pretty {
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(json) {
                self.out.write_all(prefix)?;
                if self.filter.color {
                    write_painted(&mut self.out, &serde_json::to_vec_pretty(&value)?)?;
                } else {
                    serde_json::to_writer_pretty(&mut self.out, &value)?;
                }
                return self.out.write_all(b"\n");
            }
        }
        self.out.write_all(line)
    }
}

impl<W: Write> Write for Filtered<W> {
    fn write(&mut self, mut bytes: &[u8]) -> io::Result<usize> {
        let written = bytes.len();
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = bytes.split_at(end + 1);
            if self.line.is_empty() {
                self.line(head)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                let result = self.line(&line);
                line.clear();
                self.line = line;
                result?;
            }
            bytes = rest;
        }
        self.line.extend_from_slice(bytes);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(filter: Filter, input: &str) -> String {
        let mut out = Filtered::new(Vec::new(), filter);
        // Written in pieces that split lines, as a buffered writer does.
        for piece in input.as_bytes().chunks(7) {
            out.write_all(piece).unwrap();
        }
        String::from_utf8(out.out).unwrap()
    }

    const RECORDS: &str = "{\"type\":\"round\",\"session\":\"a\",\"run\":0}\n\
                           {\"type\":\"round\",\"run\":0}\n\
                           {\"type\":\"summary\",\"session\":\"a\",\"run\":0}\n";

    #[test]
    fn sessions_and_types_are_kept_or_left_out() {
        let only_a = Filter { sessions: vec![Some("a".into())], ..Filter::default() };
        assert_eq!(
            filtered(only_a, RECORDS),
            "{\"type\":\"round\",\"session\":\"a\",\"run\":0}\n{\"type\":\"summary\",\"session\":\"a\",\"run\":0}\n"
        );
        let unnamed = Filter { sessions: vec![None], ..Filter::default() };
        assert_eq!(filtered(unnamed, RECORDS), "{\"type\":\"round\",\"run\":0}\n");
        let summaries = Filter { types: vec!["summary".into()], ..Filter::default() };
        assert_eq!(filtered(summaries, RECORDS), "{\"type\":\"summary\",\"session\":\"a\",\"run\":0}\n");
    }

    #[test]
    fn sse_events_are_kept_whole() {
        let sse = "data: {\"type\":\"round\",\"session\":\"a\"}\n\ndata: {\"type\":\"round\",\"session\":\"b\"}\n\n";
        let only_b = Filter { sessions: vec![Some("b".into())], ..Filter::default() };
        assert_eq!(filtered(only_b, sse), "data: {\"type\":\"round\",\"session\":\"b\"}\n\n");
    }

    #[test]
    fn pretty_indents_and_keeps_the_key_order() {
        let pretty = Filter { pretty: true, ..Filter::default() };
        assert_eq!(
            filtered(pretty, "{\"type\":\"round\",\"a\":[1]}\n"),
            "{\n  \"type\": \"round\",\n  \"a\": [\n    1\n  ]\n}\n"
        );
    }
}
