//! A JSON array body (the whole input one JSON array whose elements are
//! the events: Gemini's `streamGenerateContent` without `alt=sse`, a
//! recorder's chunk list) reads to the same output as the same events sent
//! as SSE or JSON lines, however it is laid out or cut; its faults of
//! structure are reported once each, where they are.

use std::process::Command;

use proptest::prelude::*;
use roundup::{ReplayCheckpoint, ReplayOptions, Replayer};
use roundup_testkit::capture::{
    of_type, options, parse_output, replay_in_pieces, replay_lines, replay_raw, replay_restored_at,
};
use roundup_testkit::{fixture_files, repo_root};
use serde_json::Value;

/// The payloads of an SSE body or JSON lines, as sent (every event of
/// these recordings is one `data:` line or one line).
fn payloads(input: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(input)
        .lines()
        .map(|line| line.trim_end_matches('\r'))
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .filter(|line| !line.is_empty() && serde_json::from_str::<Value>(line).is_ok())
        .map(str::to_owned)
        .collect()
}

/// The events as one JSON array on one line.
fn one_line(events: &[String]) -> String {
    format!("[{}]", events.join(","))
}

/// The events as Gemini's body lays them out: one element after another,
/// the brackets and commas on lines of their own, every element indented.
fn laid_out(events: &[String]) -> String {
    let elements: Vec<String> = events.iter().map(|e| format!("  {e}")).collect();
    format!("\u{feff}[\n{}\n]\n", elements.join("\n,\n"))
}

/// Every Gemini fixture that is not already an array body, with its events.
fn gemini_streams() -> Vec<(String, Vec<u8>, Vec<String>)> {
    fixture_files("gemini")
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e != "json"))
        .map(|path| {
            let input = std::fs::read(&path).unwrap();
            let events = payloads(&input);
            (path.file_name().unwrap().to_string_lossy().into_owned(), input, events)
        })
        .collect()
}

fn records(input: &[u8], from: &str) -> (Vec<u8>, roundup::ReplayStats) {
    replay_raw(input, &options(from, "records"))
}

#[test]
fn a_gemini_array_body_reads_as_its_sse_form() {
    let streams = gemini_streams();
    assert_eq!(streams.len(), 11);
    for (name, input, events) in streams {
        assert!(!events.is_empty(), "{name}");
        let (sse, sse_stats) = records(&input, "gemini");
        for (layout, body) in [("one line", one_line(&events)), ("laid out", laid_out(&events))] {
            let (out, stats) = records(body.as_bytes(), "auto");
            assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(sse.clone()).unwrap(), "{name}, {layout}");
            assert_eq!(stats.format.map(|f| f.name()), Some("gemini"), "{name}, {layout}");
            assert_eq!((stats.payloads, stats.bad_lines), (events.len() as u64, sse_stats.bad_lines), "{name}");
        }
    }
}

#[test]
fn a_pretty_printed_array_and_a_one_line_array_give_the_same_output() {
    // Whitespace inside an element is kept where the output keeps the
    // event's own text (a tool call's arguments): these streams have none.
    let path = repo_root().join("tests/fixtures/gemini/vercel-google-text.chunks.jsonl");
    let events: Vec<Value> =
        payloads(&std::fs::read(path).unwrap()).iter().map(|e| serde_json::from_str(e).unwrap()).collect();
    let pretty = serde_json::to_string_pretty(&events).unwrap();
    let compact = serde_json::to_string(&events).unwrap();
    assert!(pretty.lines().count() > 50 && compact.lines().count() == 1);
    let (from_pretty, stats) = records(pretty.as_bytes(), "auto");
    assert_eq!(from_pretty, records(compact.as_bytes(), "auto").0);
    assert_eq!(stats.lines, pretty.lines().count() as u64, "physical lines, as for any text input");
    let rounds = of_type(&parse_output(&from_pretty), "round").len();
    assert_eq!(rounds, 1);
}

#[test]
fn a_body_cut_at_every_byte_or_checkpointed_there_gives_the_same_output() {
    let path = repo_root().join("tests/fixtures/gemini/vercel-google-stream-tool-call-arguments.chunks.jsonl");
    let events = payloads(&std::fs::read(path).unwrap());
    for body in [laid_out(&events), one_line(&events)] {
        let body = body.as_bytes();
        let options = ReplayOptions::new();
        let (whole, _) = replay_raw(body, &options);
        let lines = parse_output(&whole);
        assert_eq!(of_type(&lines, "round")[0]["tool_calls"].as_array().map(Vec::len), Some(2));
        for cut in 0..=body.len() {
            assert_eq!(replay_in_pieces(body, &[cut], &options), whole, "cut at {cut}");
            assert_eq!(replay_restored_at(body, cut, &options), whole, "checkpoint at {cut}");
        }
        let every: Vec<usize> = (0..body.len()).collect();
        assert_eq!(replay_in_pieces(body, &every, &options), whole, "byte by byte");
    }
}

#[test]
fn a_checkpoint_without_the_array_framing_still_loads() {
    // A checkpoint of a build that had no array framing has no such key.
    let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
    replayer.feed(b"{\"op\":\"message\",\"text\":\"a\"}\n", &mut ());
    let mut saved: Value = serde_json::from_slice(&replayer.checkpoint().unwrap().to_json()).unwrap();
    assert!(saved.get("json_array").is_none(), "lines keep no array state");
    saved.as_object_mut().unwrap().remove("json_array");
    let checkpoint = ReplayCheckpoint::from_json(&serde_json::to_vec(&saved).unwrap()).unwrap();
    let mut again = Replayer::new(&ReplayOptions::new()).unwrap();
    again.restore(checkpoint).unwrap();
    again.feed(b"{\"op\":\"message\",\"text\":\"b\"}\n", &mut ());
    again.finish(&mut ());
    let mut out = Vec::new();
    again.take_output(&mut out);
    assert_eq!(of_type(&parse_output(&out), "round")[0]["message"], "ab");
}

/// The `bad_line` anomalies of a replay of `input` as ops, in order.
fn faults(input: &str) -> (Vec<String>, Vec<String>) {
    let (lines, stats) = replay_lines(input.as_bytes(), &options("ops", "records"));
    let details: Vec<String> = of_type(&lines, "anomaly")
        .iter()
        .filter(|a| a["kind"] == "bad_line")
        .map(|a| a["detail"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(stats.bad_lines, details.len() as u64);
    let messages = of_type(&lines, "round").iter().map(|r| r["message"].as_str().unwrap().to_owned()).collect();
    (details, messages)
}

const A: &str = r#"{"op":"message","text":"a"}"#;
const B: &str = r#"{"op":"message","text":"b"}"#;
const FINISH: &str = r#"{"op":"finish","reason":"canceled"}"#;

#[test]
fn each_fault_of_structure_is_reported_once_and_reading_goes_on() {
    let cases: [(String, &[&str], &str); 7] = [
        (
            format!("[\n{A}\n{B},\n{FINISH}]"),
            &["line 3: expected `,` or `]` after an element, found `{`: read as the next element"],
            "ab",
        ),
        (
            format!("[\n{A},\n}} x,\n{B}, {FINISH}]"),
            &["line 3: expected an element, found `}`: read past up to the next `,`, `]`, `{`, `[` or `\"`"],
            "ab",
        ),
        (format!("[\n{A},,\n{B},{FINISH},\n]"), &[
            "line 2: expected an element, found `,`: read past",
            "line 4: expected an element after `,`, found `]`: the array is closed",
        ], "ab"),
        (
            format!("[\n{A},\n{B},\n{FINISH}\n]\n{A}\n"),
            &["line 6: expected the end of the input after the array closed on line 5, found `{`: the rest of the input is read past"],
            "ab",
        ),
        (
            format!("[\n{A}\n]\n[{B}, {FINISH}]"),
            &["line 4: expected the end of the input after the array closed on line 3, found `[`: read as another array"],
            "ab",
        ),
        (
            format!("[\n{A},\n{B},\n{FINISH},\n"),
            &["line 5: the input ended before the array's closing `]`"],
            "ab",
        ),
        (
            format!("[\n{A},\n{B},\n{{\"op\":\"finish\",\n"),
            &["line 5: the input ended 16 bytes into the element that began on line 4: it is not read"],
            "ab",
        ),
    ];
    for (input, expected, message) in cases {
        let (details, messages) = faults(&input);
        assert_eq!(details, expected, "{input}");
        assert_eq!(messages.concat(), message, "{input}");
    }
}

#[test]
fn an_element_past_the_limit_is_read_past_and_reported() {
    let big = format!(r#"{{"op":"message","text":"{}"}}"#, "x".repeat(5_000));
    let input = format!("[\n{A},\n{big},\n{B}\n]\n");
    let options = options("ops", "records").max_line_bytes(1_000);
    let (lines, stats) = replay_lines(input.as_bytes(), &options);
    assert_eq!((stats.payloads, stats.bad_lines, stats.lines), (3, 1, 5));
    let anomaly = of_type(&lines, "anomaly")[0]["detail"].as_str().unwrap().to_owned();
    assert_eq!(
        anomaly,
        format!(
            "line 3: longer than 1000 bytes ({} bytes): read past, not held (--max-line-bytes raises the limit)",
            big.len()
        )
    );
    let messages: String = of_type(&lines, "round").iter().map(|r| r["message"].as_str().unwrap()).collect();
    assert_eq!(messages, "ab");
    let pieces: Vec<usize> = (0..input.len()).step_by(97).collect();
    assert_eq!(replay_in_pieces(input.as_bytes(), &pieces, &options), replay_raw(input.as_bytes(), &options).0);
}

#[test]
fn a_json_line_that_is_an_array_keeps_the_input_lines() {
    // An ACP capture whose first line is a JSON-RPC batch: the array closes
    // on its own line and more lines follow, so the input is JSON lines.
    let batch = r#"[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}]"#;
    let next = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" there"}}}}"#;
    let lines_input = format!("{batch}\n{next}\n");
    let (lines, stats) = replay_lines(lines_input.as_bytes(), &options("acp", "records"));
    assert_eq!((stats.lines, stats.payloads, stats.bad_lines), (2, 2, 0));
    assert_eq!(of_type(&lines, "round")[0]["message"], "Hi there");
    // The same batch alone (whitespace after it) is a JSON array body:
    // its members are the events, to the same output.
    let alone = format!("{batch}\n\n");
    let (lines, stats) = replay_lines(alone.as_bytes(), &options("acp", "records"));
    assert_eq!((stats.lines, stats.payloads, stats.bad_lines), (2, 1, 0));
    assert_eq!(of_type(&lines, "round")[0]["message"], "Hi");
    // An array that goes on past its first line is a body, whatever follows.
    let body = format!("[{A},\n{B}]\n{FINISH}\n");
    let (details, messages) = faults(&body);
    assert_eq!(messages.concat(), "ab");
    assert_eq!(details.len(), 1, "{details:?}");
}

#[test]
fn the_command_line_reads_an_array_body_with_no_from() {
    let file = "tests/fixtures/gemini/js-genai-send-message-stream-with-error.body.json";
    let output = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .current_dir(repo_root())
        .args(["replay", file])
        .output()
        .expect("roundup runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let lines = parse_output(&output.stdout);
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 1, "{lines:?}");
    assert_eq!(anomalies[0]["kind"], "protocol_error");
    // The same error as the body's JSON-lines form reports.
    let error = |detail: &Value| -> Value {
        serde_json::from_str(detail.as_str().unwrap().strip_prefix("gemini: error: ").unwrap()).unwrap()
    };
    let jsonl = std::fs::read(repo_root().join(file.replace(".body.json", ".body.jsonl"))).unwrap();
    let (from_lines, _) = replay_lines(&jsonl, &options("auto", "records"));
    assert_eq!(error(&anomalies[0]["detail"]), error(&of_type(&from_lines, "anomaly")[0]["detail"]));
    assert_eq!(error(&anomalies[0]["detail"])["status"], "NOT_FOUND");
    assert_eq!(of_type(&lines, "summary")[0]["finish_reason"], "failed");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// A body of random events, laid out either way, cut anywhere, reads
    /// as it does whole.
    #[test]
    fn any_cut_of_an_array_body_gives_the_output_of_the_whole(
        texts in prop::collection::vec("[a-z \\\\\"\\]\\[{},\n]{0,6}", 1..8),
        pretty in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut events: Vec<String> = texts
            .iter()
            .map(|t| serde_json::json!({"op": "message", "text": t}).to_string())
            .collect();
        events.push(FINISH.to_owned());
        let body = if pretty { laid_out(&events) } else { one_line(&events) };
        let options = options("auto", "records");
        let (whole, stats) = replay_raw(body.as_bytes(), &options);
        prop_assert_eq!(stats.payloads, events.len() as u64);
        prop_assert_eq!(stats.bad_lines, 0);
        let lines = parse_output(&whole);
        let messages: String = of_type(&lines, "round").iter().filter_map(|r| r["message"].as_str()).collect();
        prop_assert_eq!(messages, texts.concat());
        prop_assert_eq!(replay_in_pieces(body.as_bytes(), &cuts, &options), whole.clone());
        if let Some(cut) = cuts.first() {
            prop_assert_eq!(replay_restored_at(body.as_bytes(), cut % (body.len() + 1), &options), whole);
        }
    }
}
