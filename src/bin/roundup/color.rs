//! Colour for `--pretty` on a terminal: keys, strings, numbers and the
//! literals of indented JSON each in a colour of their own (ANSI escapes),
//! the way `jq` shows JSON to a person.

use std::io::{self, Write};

const KEY: &[u8] = b"\x1b[34;1m";
const STRING: &[u8] = b"\x1b[32m";
const NUMBER: &[u8] = b"\x1b[36m";
const LITERAL: &[u8] = b"\x1b[35m";
const RESET: &[u8] = b"\x1b[0m";

/// Writes `json` (valid JSON, as serde_json writes it) with its tokens
/// coloured; the bytes between the escapes are `json`'s own.
pub fn write_painted(out: &mut impl Write, json: &[u8]) -> io::Result<()> {
    let mut at = 0;
    while at < json.len() {
        let byte = json[at];
        let (colour, end) = match byte {
            b'"' => {
                let end = string_end(json, at);
                let key = json[end..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':');
                (if key { KEY } else { STRING }, end)
            }
            b'-' | b'0'..=b'9' => (NUMBER, token_end(json, at)),
            b't' | b'f' | b'n' => (LITERAL, token_end(json, at)),
            _ => {
                let end = json[at..].iter().position(|b| matches!(b, b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'));
                let end = end.map_or(json.len(), |n| at + n.max(1));
                out.write_all(&json[at..end])?;
                at = end;
                continue;
            }
        };
        out.write_all(colour)?;
        out.write_all(&json[at..end])?;
        out.write_all(RESET)?;
        at = end;
    }
    Ok(())
}

/// The end (exclusive) of the string that begins at `start`, past its
/// closing quote; escapes are skipped over.
fn string_end(json: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < json.len() {
        match json[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    json.len()
}

/// The end of a number or a literal: the next byte that cannot be in one.
fn token_end(json: &[u8], start: usize) -> usize {
    json[start..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')))
        .map_or(json.len(), |n| start + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn painted(json: &str) -> String {
        let mut out = Vec::new();
        write_painted(&mut out, json.as_bytes()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_token_has_its_colour_and_the_text_is_kept() {
        let json =
            "{\n  \"type\": \"round\",\n  \"n\": -1.5e3,\n  \"ok\": true,\n  \"x\": null,\n  \"q\": \"a \\\" : b\"\n}";
        let out = painted(json);
        assert!(out.contains("\x1b[34;1m\"type\"\x1b[0m: \x1b[32m\"round\"\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[36m-1.5e3\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[35mtrue\x1b[0m") && out.contains("\x1b[35mnull\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[32m\"a \\\" : b\"\x1b[0m"), "an escaped quote does not end a string: {out:?}");
        let plain = out.replace("\x1b[34;1m", "").replace("\x1b[32m", "").replace("\x1b[36m", "");
        let plain = plain.replace("\x1b[35m", "").replace("\x1b[0m", "");
        assert_eq!(plain, json);
    }
}
