//! Every adapter reads its views through the scanner first
//! ([`crate::json_scan`]) and through serde where the scanner gives up. The
//! two readings must give the same output, byte for byte, on every input:
//! here on every recorded fixture, and on fixture lines mangled at random
//! and read by every adapter. The adapters' fuzz targets compare them on
//! arbitrary bytes.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::{by_serde_alone, InputFormat, REGISTRY};
use crate::{replay, ReplayOptions};

/// Each fixture folder's files and the format that reads them.
const FOLDERS: [(&str, &str); 18] = [
    ("acp", "acp"),
    ("ai-sdk", "ai-sdk"),
    ("anthropic-messages", "anthropic"),
    ("bedrock", "bedrock"),
    ("claude-stream-json", "claude-code"),
    ("claude-transcript", "claude-transcript"),
    ("codex-exec-json", "codex"),
    ("codex-rollout", "codex-rollout"),
    ("deepwork", "deepwork"),
    ("gemini", "gemini"),
    ("gemini-cli", "gemini-cli"),
    ("gemini-cli-chat", "gemini-cli-chat"),
    ("mistral", "mistral"),
    ("ollama", "ollama"),
    ("openai-chat", "openai-chat"),
    ("openai-responses", "openai-responses"),
    ("opencode", "opencode"),
    ("uagent", "uagent"),
];

fn fixtures(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext != "md"))
        .collect();
    files.sort();
    files
}

/// What a replay of `input` as `format` writes, with what it counts.
fn replayed(input: &[u8], format: &str) -> String {
    let format = InputFormat::named(format).unwrap();
    let options = ReplayOptions::new().from(format);
    let mut output = Vec::new();
    match replay(input, &mut output, &options, &mut ()) {
        Ok(stats) => format!("{}\n{stats:?}", String::from_utf8_lossy(&output)),
        Err(error) => format!("{}\nerror {error}", String::from_utf8_lossy(&output)),
    }
}

fn assert_same_with_and_without_the_scanner(input: &[u8], format: &str, what: &str) {
    let scanned = replayed(input, format);
    let serde = by_serde_alone(|| replayed(input, format));
    assert!(scanned == serde, "{what} as {format}: the scanner's reading\n{scanned}\nserde's\n{serde}");
}

#[test]
fn every_fixture_reads_the_same_with_and_without_the_scanner() {
    let mut files = 0;
    for (folder, format) in FOLDERS {
        for path in fixtures(folder) {
            let input = std::fs::read(&path).unwrap();
            assert_same_with_and_without_the_scanner(&input, format, &path.display().to_string());
            files += 1;
        }
    }
    assert!(files >= 100, "{files} fixtures");
}

/// Every line of every fixture, with the format that reads it, for the
/// mangled lines below.
fn fixture_lines() -> &'static [(String, &'static str)] {
    static LINES: std::sync::OnceLock<Vec<(String, &'static str)>> = std::sync::OnceLock::new();
    LINES.get_or_init(read_fixture_lines)
}

fn read_fixture_lines() -> Vec<(String, &'static str)> {
    let mut lines = Vec::new();
    for (folder, format) in FOLDERS {
        for path in fixtures(folder) {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            lines.extend(text.lines().filter(|line| line.len() > 1).map(|line| (line.to_owned(), format)));
        }
    }
    lines
}

/// One change to a line: a byte taken out, one put in, a stretch of the
/// line written again elsewhere (a key repeated, a value nested), or a
/// member's value replaced by an odd one.
#[derive(Debug, Clone)]
enum Change {
    Remove(usize),
    Insert(usize, u8),
    Copy(usize, usize, usize),
    Replace(usize, &'static str),
    Repeat(usize),
}

/// Values at the edge of what JSON allows, or just past it.
const ODD_VALUES: [&str; 36] = [
    "01",
    "-",
    "-0",
    "-01",
    "1.",
    ".5",
    "1e",
    "1e+",
    "1E-7",
    "1e400",
    "-1.5e3",
    "18446744073709551616",
    "-9223372036854775809",
    "tru",
    "nul",
    "fals",
    "truex",
    "null",
    "true",
    "7",
    "0",
    "\"\\x\"",
    "\"\\ud800\"",
    "\"\\udc00\\ud800\"",
    "\"\\u12\"",
    "\"a\u{1}b\"",
    "\"\\u00e9\\ud83d\\ude00\"",
    "[1,]",
    "[,1]",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{}",
    "[]",
    "x",
    "\"\"",
    "[[[[{}]]]]",
];

fn change() -> impl Strategy<Value = Change> {
    let byte = prop::sample::select(b"{}[],:\"\\ 0-9.eEtnfaul\\u\n\tx".to_vec());
    prop_oneof![
        1 => any::<usize>().prop_map(Change::Remove),
        1 => (any::<usize>(), byte).prop_map(|(at, byte)| Change::Insert(at, byte)),
        1 => (any::<usize>(), 0..40usize, any::<usize>()).prop_map(|(from, len, to)| Change::Copy(from, len, to)),
        4 => (any::<usize>(), prop::sample::select(ODD_VALUES.to_vec())).prop_map(|(at, value)| Change::Replace(at, value)),
        1 => any::<usize>().prop_map(Change::Repeat),
    ]
}

fn mangle(line: &str, changes: &[Change]) -> Vec<u8> {
    let mut bytes = line.as_bytes().to_vec();
    for change in changes {
        let len = bytes.len().max(1);
        match *change {
            Change::Remove(at) => {
                if !bytes.is_empty() {
                    bytes.remove(at % len);
                }
            }
            Change::Insert(at, byte) => bytes.insert(at % (len + 1), byte),
            Change::Copy(from, n, to) => {
                let from = from % len;
                let piece: Vec<u8> = bytes.iter().skip(from).take(n).copied().collect();
                let to = to % (bytes.len() + 1);
                bytes.splice(to..to, piece);
            }
            Change::Replace(nth, value) => {
                if let Some((_, start, end)) = member(&bytes, nth) {
                    bytes.splice(start..end, value.bytes());
                }
            }
            Change::Repeat(nth) => {
                if let Some((key, _, end)) = member(&bytes, nth) {
                    let mut again = vec![b','];
                    again.extend_from_slice(&bytes[key..end]);
                    bytes.splice(end..end, again);
                }
            }
        }
    }
    bytes
}

/// One of the line's members, found by its colon: where its key starts,
/// and where its value starts and ends, as far as serde reads a value (a
/// line already mangled may have none there).
fn member(bytes: &[u8], nth: usize) -> Option<(usize, usize, usize)> {
    let colons: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| **b == b':').map(|(at, _)| at).collect();
    let colon = *colons.get(nth % colons.len().max(1))?;
    let key = bytes[..colon].iter().rposition(|b| matches!(b, b'{' | b','))? + 1;
    let start = crate::json_scan::skip_space(bytes, colon + 1);
    let mut values = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<serde::de::IgnoredAny>();
    values.next()?.ok()?;
    Some((key, start, start + values.byte_offset()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn mangled_lines_read_the_same_with_and_without_the_scanner(
        line in any::<prop::sample::Index>(),
        other_format in prop::option::weighted(0.2, any::<prop::sample::Index>()),
        changes in prop::collection::vec(change(), 0..4),
    ) {
        let lines = fixture_lines();
        let (line, own_format) = &lines[line.index(lines.len())];
        // Mostly its own format; some lines read by another adapter.
        let formats: Vec<&str> = REGISTRY.iter().map(|format| format.name()).collect();
        let format = other_format.map_or(*own_format, |other| formats[other.index(formats.len())]);
        let input = mangle(line, &changes);
        assert_same_with_and_without_the_scanner(&input, format, &String::from_utf8_lossy(&input));
    }
}
