//! The sans-I/O replay: however its input is cut into pieces, or handed
//! over payload by payload, it writes what `replay` writes.

use proptest::prelude::*;
use roundup::encoders::OutputFormat;
use roundup::{CheckpointError, ReplayCheckpoint, ReplayOptions, Replayer};
use roundup_testkit::capture::{replay_in_pieces, replay_restored_at};
use roundup_testkit::inputs;

/// Every recorded input of the repository: the fixtures of each format and
/// the vectors as ops JSONL.
fn whole(input: &[u8], options: &ReplayOptions) -> Vec<u8> {
    let mut out = Vec::new();
    roundup::replay(input, &mut out, options, &mut ()).unwrap();
    out
}

#[test]
fn every_input_fed_byte_by_byte_gives_the_output_of_replay() {
    for (name, input) in inputs() {
        let options = ReplayOptions::new();
        let cuts: Vec<usize> = (0..input.len()).collect();
        assert_eq!(
            String::from_utf8(replay_in_pieces(&input, &cuts, &options)).unwrap(),
            String::from_utf8(whole(&input, &options)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn payloads_handed_over_one_by_one_give_the_output_of_replay() {
    for (name, input) in inputs().into_iter().filter(|(name, _)| !name.ends_with(".sse")) {
        for to in ["records", "agui", "ui"] {
            let options = ReplayOptions::new().to(OutputFormat::named(to).unwrap());
            let mut replayer = Replayer::new(&options).unwrap();
            for line in input.split(|&b| b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)) {
                replayer.feed_payload(line, &mut ());
            }
            replayer.finish(&mut ());
            let mut out = Vec::new();
            replayer.take_output(&mut out);
            // Blank lines count as lines for `replay`, not for payloads:
            // only the line numbers of bad lines could differ, and these
            // inputs have no blank line before a bad one.
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(whole(&input, &options)).unwrap(),
                "{name} --emit {to}"
            );
        }
    }
}

#[test]
fn a_payload_over_the_limit_is_reported_not_held() {
    let options = ReplayOptions::new().max_line_bytes(20);
    let mut replayer = Replayer::new(&options).unwrap();
    replayer.feed_payload(br#"{"op":"message","text":"long enough"}"#, &mut ());
    replayer.feed_payload(br#"{"op":"start"}"#, &mut ());
    replayer.finish(&mut ());
    let mut out = Vec::new();
    replayer.take_output(&mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(r#""detail":"line 1: longer than 20 bytes (37 bytes)"#), "{out}");
    assert_eq!((replayer.stats().lines, replayer.stats().bad_lines), (2, 1));
}

/// A replay moved to another process between every two payloads (its
/// checkpoint saved as JSON, restored into a new replay), as a worker that
/// loses and regains a partition after every event would run it.
fn moved_after_every_payload(input: &[u8], options: &ReplayOptions) -> Vec<u8> {
    let mut replayer = Replayer::new(options).unwrap();
    let mut out = Vec::new();
    for line in input.split(|&b| b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)) {
        replayer.feed_payload(line, &mut ());
        replayer.take_output(&mut out);
        let saved = replayer.checkpoint().unwrap().to_json();
        replayer = Replayer::new(options).unwrap();
        replayer.restore(ReplayCheckpoint::from_json(&saved).unwrap()).unwrap();
    }
    replayer.finish(&mut ());
    replayer.take_output(&mut out);
    out
}

#[test]
fn a_replay_moved_between_every_two_payloads_writes_what_the_whole_one_does() {
    for (name, input) in inputs().into_iter().filter(|(name, _)| !name.ends_with(".sse")) {
        for to in roundup::encoders::REGISTRY.iter().map(|format| format.name()) {
            let options = ReplayOptions::new().to(OutputFormat::named(to).unwrap());
            let mut whole_payloads = Replayer::new(&options).unwrap();
            for line in input.split(|&b| b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)) {
                whole_payloads.feed_payload(line, &mut ());
            }
            whole_payloads.finish(&mut ());
            let mut expected = Vec::new();
            whole_payloads.take_output(&mut expected);
            assert_eq!(
                String::from_utf8(moved_after_every_payload(&input, &options)).unwrap(),
                String::from_utf8(expected).unwrap(),
                "{name} --emit {to}"
            );
        }
    }
}

/// Every output format's per-session state goes with its session when the
/// session is evicted: keeping one session in memory (the others saved
/// and restored on every switch) writes what keeping all does.
#[test]
fn evicting_sessions_changes_no_output_of_any_format() {
    let mut compared = 0;
    for (name, input) in inputs() {
        let framing =
            if name.ends_with(".sse") { roundup::encoders::Framing::Sse } else { roundup::encoders::Framing::Lines };
        for format in roundup::encoders::REGISTRY {
            let options = ReplayOptions::new().to(format).framing(framing);
            let mut all = Vec::new();
            roundup::replay(&input[..], &mut all, &options, &mut ()).unwrap();
            let mut one = Vec::new();
            roundup::replay(&input[..], &mut one, &options.clone().evict(1, None), &mut ()).unwrap();
            assert_eq!(
                String::from_utf8(one).unwrap(),
                String::from_utf8(all).unwrap(),
                "{name} --emit {}",
                format.name()
            );
            compared += 1;
        }
    }
    assert!(compared > 500, "{compared} replays compared");
}

/// Several outputs from one pass are each what a pass of their own writes.
#[test]
fn one_pass_writes_every_output_as_its_own_pass_does() {
    for (name, input) in inputs().into_iter().filter(|(name, _)| !name.ends_with(".sse")) {
        let formats = roundup::encoders::REGISTRY;
        let mut options = ReplayOptions::new().to(formats[0]);
        for format in &formats[1..] {
            options = options.also_to(format);
        }
        let mut replayer = Replayer::new(&options).unwrap();
        replayer.feed(&input, &mut ());
        replayer.finish(&mut ());
        for (index, format) in formats.iter().enumerate() {
            let mut together = Vec::new();
            replayer.take_output_of(index, &mut together);
            let mut alone = Vec::new();
            roundup::replay(&input[..], &mut alone, &ReplayOptions::new().to(format), &mut ()).unwrap();
            assert_eq!(
                String::from_utf8(together).unwrap(),
                String::from_utf8(alone).unwrap(),
                "{name} {}",
                format.name()
            );
        }
    }
}

/// The same state is the same bytes: two replays of the same input save
/// the same checkpoint at every point (hash maps and sets, whose order is
/// seeded per map, are written in order), so that a store can tell an
/// unchanged state and a database of checkpoints is the same in every run.
#[test]
fn the_same_state_saves_the_same_checkpoint_bytes() {
    for (name, input) in inputs() {
        for cut in [input.len() / 3, input.len() / 2, input.len()] {
            let saved: Vec<Vec<u8>> = (0..2)
                .map(|_| {
                    let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
                    replayer.feed(&input[..cut], &mut ());
                    replayer.take_output(&mut Vec::new());
                    replayer.checkpoint().unwrap().to_json()
                })
                .collect();
            assert!(saved[0] == saved[1], "{name} at {cut}: {}", String::from_utf8_lossy(&saved[0]));
        }
    }
}

#[test]
fn a_checkpoint_that_does_not_fit_is_a_clear_error() {
    let mut acp =
        Replayer::new(&ReplayOptions::new().from(roundup::adapters::InputFormat::named("acp").unwrap())).unwrap();
    let mut ops = Replayer::new(&ReplayOptions::new()).unwrap();
    ops.feed(b"{\"op\":\"message\",\"text\":\"Hi\"}\n", &mut ());
    let error = acp.restore(ops.checkpoint().unwrap()).unwrap_err();
    assert_eq!(error.to_string(), "the checkpoint is inconsistent: a replay of acp restored from one of ops");
    // Into a replay that has read input already.
    let saved = ops.checkpoint().unwrap();
    let error = ops.restore(saved).unwrap_err();
    assert!(error.to_string().contains("a replay that read input"), "{error}");
    // A corrupt adapter state.
    let mut checkpoint =
        serde_json::to_value(Replayer::new(&ReplayOptions::new()).unwrap().checkpoint().unwrap()).unwrap();
    checkpoint["format"] = "openai-chat".into();
    checkpoint["adapter"] = serde_json::json!({"completion": 5});
    let bytes = serde_json::to_vec(&checkpoint).unwrap();
    let error = Replayer::new(&ReplayOptions::new())
        .unwrap()
        .restore(ReplayCheckpoint::from_json(&bytes).unwrap())
        .unwrap_err();
    assert!(matches!(error, CheckpointError::Corrupt(_)), "{error}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_cut_of_any_input_gives_the_output_of_replay(
        which in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        sse in any::<bool>(),
    ) {
        let inputs = inputs();
        let (name, input) = &inputs[which.index(inputs.len())];
        let options = if sse {
            ReplayOptions::new().framing(roundup::encoders::Framing::Sse)
        } else {
            ReplayOptions::new()
        };
        prop_assert_eq!(replay_in_pieces(input, &cuts, &options), whole(input, &options), "{}", name);
    }

    #[test]
    fn a_replay_checkpointed_at_any_byte_continues_exactly(
        which in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let inputs = inputs();
        let (name, input) = &inputs[which.index(inputs.len())];
        let options = ReplayOptions::new();
        let cut = cut.index(input.len() + 1);
        let out = replay_restored_at(input, cut, &options);
        prop_assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(whole(input, &options)).unwrap(), "{} cut at {}", name, cut);
    }
}

/// Every number and string of an adapter's saved state changed to another
/// value (a checkpoint written by a buggy or hostile worker): restoring it is
/// an error, or a replay that reads every remaining event and writes only
/// well-formed SPEC §4 lines. Never a panic (this found token counts that
/// overflowed: they saturate now).
#[test]
fn an_adapter_state_with_any_value_changed_is_refused_or_read_on() {
    fn leaves(value: &serde_json::Value, path: &mut Vec<String>, into: &mut Vec<Vec<String>>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, item) in map {
                    path.push(key.clone());
                    leaves(item, path, into);
                    path.pop();
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    leaves(item, path, into);
                    path.pop();
                }
            }
            _ => into.push(path.clone()),
        }
    }
    fn at<'v>(value: &'v mut serde_json::Value, path: &[String]) -> &'v mut serde_json::Value {
        path.iter().fold(value, |value, key| match value {
            serde_json::Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
            other => &mut other[key.as_str()],
        })
    }
    let replacements = [
        serde_json::json!(0),
        serde_json::json!(3),
        serde_json::json!(u64::MAX),
        serde_json::json!(""),
        serde_json::json!("x"),
    ];
    let mut tried = 0;
    for (name, input) in inputs().into_iter().filter(|(name, _)| name.ends_with(".jsonl")) {
        let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
        let (head, rest) = lines.split_at(lines.len() / 2);
        let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
        for line in head {
            replayer.feed_payload(line, &mut ());
        }
        let saved = serde_json::to_value(replayer.checkpoint().unwrap()).unwrap();
        let mut paths = Vec::new();
        leaves(&saved["adapter"], &mut vec!["adapter".to_owned()], &mut paths);
        for path in &paths {
            for replacement in &replacements {
                let mut changed = saved.clone();
                *at(&mut changed, path) = replacement.clone();
                let bytes = serde_json::to_vec(&changed).unwrap();
                let mut again = Replayer::new(&ReplayOptions::new()).unwrap();
                let Ok(checkpoint) = ReplayCheckpoint::from_json(&bytes) else { continue };
                if again.restore(checkpoint).is_err() {
                    continue;
                }
                tried += 1;
                for line in rest {
                    again.feed_payload(line, &mut ());
                }
                again.finish(&mut ());
                let mut out = Vec::new();
                again.take_output(&mut out);
                assert_eq!(
                    again.stats().lines,
                    lines.len() as u64,
                    "{name}, {path:?} = {replacement}: every event read"
                );
                for line in String::from_utf8(out).unwrap().lines() {
                    let parsed: Result<roundup::OutputLine, _> = serde_json::from_str(line);
                    assert!(parsed.is_ok(), "{name}, {path:?} = {replacement}: not a SPEC §4 line: {line}");
                }
            }
        }
    }
    assert!(tried > 200, "states changed and restored: {tried}");
}

/// A Gemini CLI chat whose one prompt holds `messages` model messages, each
/// a round with a tool call answered inline: held until the input ends,
/// then translated at once.
fn one_long_prompt(messages: usize) -> Vec<u8> {
    let mut chat = String::from(
        "{\"sessionId\":\"s\",\"projectHash\":\"p\"}\n{\"id\":\"u\",\"type\":\"user\",\"content\":\"go\"}\n",
    );
    let output = "line of output\\n".repeat(20);
    for n in 0..messages {
        chat.push_str(&format!(
            r#"{{"id":"g{n}","type":"gemini","content":"step {n}","toolCalls":[{{"id":"t{n}","name":"run","args":{{"n":{n}}},"status":"success","result":[{{"functionResponse":{{"response":{{"output":"{output}"}}}}}}]}}]}}"#
        ));
        chat.push('\n');
    }
    chat.into_bytes()
}

/// A writer that keeps what it is given, and how much each write was.
#[derive(Default)]
struct Writes {
    bytes: Vec<u8>,
    sizes: Vec<usize>,
}

impl std::io::Write for Writes {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(bytes);
        self.sizes.push(bytes.len());
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A turn held whole and translated at once is written as it is
/// translated: in pieces of about 64 KiB, the same bytes as a replay that
/// takes its output at the end.
#[test]
fn a_long_turn_translated_at_once_is_written_as_it_goes() {
    let chat = one_long_prompt(600);
    let options = ReplayOptions::new().from(roundup::adapters::InputFormat::named("gemini-cli-chat").unwrap());
    let mut replayer = Replayer::new(&options).unwrap();
    replayer.feed(&chat, &mut ());
    replayer.finish(&mut ());
    let mut at_the_end = Vec::new();
    replayer.take_output(&mut at_the_end);
    assert!(at_the_end.len() > 4 * 65_536, "{} bytes: a turn of several pieces", at_the_end.len());

    let mut writes = Writes::default();
    roundup::replay(&chat[..], &mut writes, &options, &mut ()).unwrap();
    assert_eq!(writes.bytes, at_the_end);
    let pieces = writes.sizes.iter().filter(|&&size| (65_536..2 * 65_536).contains(&size)).count();
    assert!(pieces >= 4, "written in pieces as the turn was translated: {:?}", writes.sizes);
    assert!(writes.sizes.iter().all(|&size| size < 2 * 65_536), "never the whole turn at once: {:?}", writes.sizes);
}

/// A writer that fails while a turn is written out: the replay stops with
/// the write's error.
#[test]
fn a_failed_write_while_a_turn_is_written_is_the_replay_error() {
    struct Failing;
    impl std::io::Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let options = ReplayOptions::new().from(roundup::adapters::InputFormat::named("gemini-cli-chat").unwrap());
    let error = roundup::replay(&one_long_prompt(600)[..], Failing, &options, &mut ()).unwrap_err();
    assert!(matches!(error, roundup::ReplayError::Write(_)), "{error:?}");
    let source = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("disk full"));
}
