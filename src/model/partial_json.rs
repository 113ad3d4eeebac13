//! Arguments while they stream: a JSON document cut anywhere, read as the
//! value it is becoming.
//!
//! Peers show a tool call's arguments as they arrive (a file path before
//! the file's content has streamed); the arguments are then an unfinished
//! document. [`partial_json`] closes it at the cut: an open string ends
//! where the text ends, open arrays and objects close, a key whose value
//! has not begun is left out, a literal cut short is completed (`tr` is
//! `true`), a number keeps the digits it has. Read on demand, not per chunk:
//! one pass over the text and one parse.

use serde_json::Value;

/// The value a JSON document cut at the end of `text` is becoming; `None`
/// when nothing of a value has arrived (empty or blank text) or the text is
/// not the start of a JSON document. On a whole document it is what
/// `serde_json` reads.
///
/// ```
/// use roundup::partial_json;
/// use serde_json::json;
///
/// assert_eq!(partial_json(r#"{"path":"src/ma"#), Some(json!({"path": "src/ma"})));
/// assert_eq!(partial_json(r#"{"path":"a.rs","lines":[1,2"#), Some(json!({"path": "a.rs", "lines": [1, 2]})));
/// assert_eq!(partial_json(r#"{"path":"a.rs","dry"#), Some(json!({"path": "a.rs"})));
/// assert_eq!(partial_json(r#"{"force":tr"#), Some(json!({"force": true})));
/// assert_eq!(partial_json(r#"{"cmd":"ls"}"#), Some(json!({"cmd": "ls"})));
/// assert_eq!(partial_json(""), None);
/// ```
pub fn partial_json(text: &str) -> Option<Value> {
    let repaired = close_at_cut(text)?;
    serde_json::from_str(&repaired).ok()
}

/// What an open container expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (an array's element, an object's value, the document).
    Value,
    /// A key, or the end (an object after `{` or `,`).
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the end, after a complete member or element.
    Next,
}

/// `text` cut back to its last complete token and closed; `None` when
/// there is no value or the text is not JSON.
fn close_at_cut(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // Open containers: `b'{'` or `b'['`, with what each expects, and where
    // the text can be cut so that the container is well formed.
    let mut stack: Vec<(u8, Expect, usize)> = Vec::new();
    let mut top = Expect::Value;
    // Where the text may be cut and closed, and how to close what is open.
    let mut safe = 0;
    let mut at = 0;
    let mut started = false;
    while at < bytes.len() {
        let b = bytes[at];
        if b.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        let expect = stack.last().map_or(top, |s| s.1);
        match (b, expect) {
            (b'{' | b'[', Expect::Value) => {
                started = true;
                stack.push((b, if b == b'{' { Expect::Key } else { Expect::Value }, at + 1));
                at += 1;
                safe = at;
            }
            (b'}', Expect::Key | Expect::Next) | (b']', Expect::Value | Expect::Next) => {
                let (open, _, _) = stack.pop()?;
                if (open == b'{') != (b == b'}') {
                    return None;
                }
                at += 1;
                complete(&mut stack, &mut top);
                safe = at;
            }
            (b',', Expect::Next) => {
                let entry = stack.last_mut()?;
                entry.1 = if entry.0 == b'{' { Expect::Key } else { Expect::Value };
                // Cut before the comma: a dangling one is not JSON.
                at += 1;
            }
            (b':', Expect::Colon) => {
                stack.last_mut()?.1 = Expect::Value;
                at += 1;
            }
            (b'"', Expect::Value | Expect::Key) => {
                started = true;
                let end = string_end(bytes, at + 1);
                let Some(end) = end else {
                    // Cut inside: a value string closes at the cut (less
                    // any escape cut in half); a key is left out.
                    if expect == Expect::Value {
                        let kept = cut_escape(text, at + 1);
                        return Some(format!("{}\"{}", &text[..kept], closing(&stack)));
                    }
                    return Some(format!("{}{}", &text[..safe], closing(&stack)));
                };
                at = end;
                if expect == Expect::Key {
                    stack.last_mut()?.1 = Expect::Colon;
                } else {
                    complete(&mut stack, &mut top);
                    safe = at;
                }
            }
            (b't' | b'f' | b'n', Expect::Value) => {
                started = true;
                let word: &[u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                let have = bytes[at..].iter().zip(word).take_while(|(a, b)| a == b).count();
                if at + have == bytes.len() {
                    return Some(format!("{}{}{}", &text[..at], std::str::from_utf8(word).ok()?, closing(&stack)));
                }
                if have < word.len() {
                    return None;
                }
                at += word.len();
                complete(&mut stack, &mut top);
                safe = at;
            }
            (b'-' | b'0'..=b'9', Expect::Value) => {
                started = true;
                let len = bytes[at..]
                    .iter()
                    .take_while(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                if at + len == bytes.len() {
                    // Cut inside the number: keep its longest prefix that
                    // reads as a number.
                    let number = &text[at..];
                    let kept = (1..=number.len())
                        .rev()
                        .find(|&n| number.get(..n).is_some_and(|n| n.parse::<f64>().is_ok() && !n.ends_with('.')))
                        .map_or(0, |n| n);
                    if kept == 0 {
                        return Some(format!("{}{}", &text[..safe], closing(&stack)));
                    }
                    return Some(format!("{}{}", &text[..at + kept], closing(&stack)));
                }
                at += len;
                complete(&mut stack, &mut top);
                safe = at;
            }
            _ => return None,
        }
        if stack.is_empty() && top == Expect::Next {
            // One whole document: what follows is serde's to judge.
            return Some(text.to_owned());
        }
    }
    if !started {
        return None;
    }
    Some(format!("{}{}", &text[..safe], closing(&stack)))
}

/// A value ended: its container expects `,` or its end.
fn complete(stack: &mut [(u8, Expect, usize)], top: &mut Expect) {
    match stack.last_mut() {
        Some(entry) => entry.1 = Expect::Next,
        None => *top = Expect::Next,
    }
}

/// The index after the closing quote of the string whose content starts at
/// `from`; `None` when the text ends first.
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return Some(at + 1),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    None
}

/// The end of a string's content cut at the end of `text`, less an escape
/// cut in half (`\`, `\u12`).
fn cut_escape(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    let mut last_whole = from;
    while at < bytes.len() {
        let step = match bytes[at] {
            b'\\' if bytes.get(at + 1) == Some(&b'u') => 6,
            b'\\' => 2,
            _ => 1,
        };
        if at + step > bytes.len() {
            break;
        }
        at += step;
        last_whole = at;
    }
    // A lone high surrogate escape at the cut would not parse either.
    let kept = &text[from..last_whole];
    if let Some(tail) = kept.get(kept.len().saturating_sub(6)..) {
        if tail.starts_with("\\u") && u16::from_str_radix(&tail[2..], 16).is_ok_and(|u| (0xd800..0xdc00).contains(&u)) {
            return last_whole - 6;
        }
    }
    last_whole
}

/// The brackets that close what is open, innermost first.
fn closing(stack: &[(u8, Expect, usize)]) -> String {
    stack.iter().rev().map(|(open, _, _)| if *open == b'{' { '}' } else { ']' }).collect()
}
