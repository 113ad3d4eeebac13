//! Properties over random call sequences (see `common/generate.rs` for the
//! adversarial bias), and the comparison with the naive reference model.

use std::collections::HashMap;

use proptest::prelude::*;
use roundup::{
    Checkpoint, FinishReason, MachineOptions, ManualClock, Outputs, Recorder, RoundBuilder, RoundMachine, StreamHandler,
};
use roundup_testkit::capture::{options, output_json, parse_output, replay_lines, Log};
use roundup_testkit::generate::{jsonl, session_steps, steps, Op, Step};
use roundup_testkit::invariants::{check_nothing_lost, check_rounds, check_ui, check_ui_per_session, Fed};
use roundup_testkit::reference::Reference;
use serde_json::Value;

/// Cases per property; `PROPTEST_CASES` overrides it.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(cases);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

fn replay(steps: &[Step], emit: &str) -> Vec<Value> {
    replay_lines(jsonl(steps).as_bytes(), &options("ops", emit)).0
}

fn reference(steps: &[Step]) -> Vec<Value> {
    let mut model = Reference::default();
    let mut now = 0;
    for step in steps {
        now = step.at;
        model.apply(step.session, step.call(), now);
    }
    model.end(now);
    model.lines
}

/// Whether each step is applied in a running run (not after `finish`).
fn running_flags(steps: &[Step]) -> Vec<bool> {
    let mut finished: HashMap<Option<&str>, bool> = HashMap::new();
    steps
        .iter()
        .map(|step| {
            let state = finished.entry(step.session).or_default();
            let running = !*state || step.op == Op::Start;
            match step.op {
                Op::Finish(_) if !*state => *state = true,
                Op::Start => *state = false,
                _ => {}
            }
            running
        })
        .collect()
}

proptest! {
    #![proptest_config(config(512))]

    /// The real builder (through the whole replay path, sessions
    /// interleaved) produces exactly the reference model's output.
    #[test]
    fn replay_matches_the_reference_model(steps in session_steps(60)) {
        let actual = replay(&steps, "records");
        let expected = reference(&steps);
        prop_assert_eq!(actual.len(), expected.len(), "{}", jsonl(&steps));
        for (a, e) in actual.iter().zip(&expected) {
            prop_assert_eq!(a, e, "{}", jsonl(&steps));
        }
    }

    /// Every tool call of every closed round has exactly one result, and
    /// placeholders say what closed the round.
    #[test]
    fn every_tool_call_has_exactly_one_result(steps in session_steps(60)) {
        let lines = replay(&steps, "records");
        if let Err(e) = check_rounds(&lines) {
            prop_assert!(false, "{}\n{}", e, jsonl(&steps));
        }
    }

    /// Nothing is lost: all text fed in is in the rounds (or, after
    /// `finish`, in the anomaly reporting it), and every terminal's content
    /// is in exactly one place: a result, a stitch or an anomaly.
    #[test]
    fn nothing_is_lost(steps in session_steps(60)) {
        let lines = replay(&steps, "records");
        let fed: Vec<Fed> = steps.iter().filter_map(|s| Fed::of(s.session, &s.call())).collect();
        prop_assert_eq!(&fed, &Fed::from_jsonl(jsonl(&steps).as_bytes()));
        // The same calls as a JSON array body and as a pretty-printed
        // document feed the same, as the replay frames them.
        let values: Vec<Value> = jsonl(&steps).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let array = serde_json::to_vec_pretty(&values).unwrap();
        let document: String = values.iter().map(|v| serde_json::to_string_pretty(v).unwrap() + "\n").collect();
        for framed in [array, document.into_bytes(), jsonl(&steps).into_bytes()] {
            prop_assert_eq!(Some(fed.clone()), Fed::from_input(&framed));
        }
        if let Err(e) = check_nothing_lost(&fed, &lines) {
            prop_assert!(false, "{}\n{}", e, jsonl(&steps));
        }
        // Contents are unique here, so "exactly one place" is literal.
        prop_assert!(steps.iter().filter(|s| s.is_terminal()).count() == fed.iter().filter(|f| matches!(f, Fed::Terminal(..))).count());
    }

    /// The self-locking builder delivers exactly what the pure machine
    /// produces, records and UI events alike.
    #[test]
    fn the_builder_delivers_what_the_machine_produces(steps in steps(80)) {
        let clock = ManualClock::new(0);
        let log = Log::default();
        let builder = log.attach(RoundBuilder::new().with_clock(clock.clone()));
        let mut machine = RoundMachine::new(MachineOptions::default());
        let mut out = Outputs::new();
        for step in &steps {
            clock.set(step.at);
            builder.call(step.call());
            machine.handle(step.call(), step.at, &mut out);
        }
        let expected: Vec<Value> = out.iter().map(output_json).collect();
        prop_assert_eq!(log.values(), expected);
        prop_assert_eq!(builder.rounds(), machine.rounds().to_vec());
        prop_assert_eq!(builder.summaries(), machine.summaries().cloned().collect::<Vec<_>>());
    }

    /// Checkpoints (SPEC rule 14): for every split point, restoring the
    /// checkpoint of the prefix (through its JSON, into a fresh machine)
    /// then feeding the rest gives exactly the records and UI events of the
    /// uninterrupted run, and the same state at the end.
    #[test]
    fn restore_then_the_rest_equals_the_uninterrupted_run(steps in steps(60)) {
        let options = MachineOptions::default().session("s");
        let mut whole = RoundMachine::new(options.clone());
        let mut out = Outputs::new();
        let mut expected = Vec::new();
        for step in &steps {
            whole.handle(step.call(), step.at, &mut out);
            expected.extend(out.iter().map(output_json));
            out.clear();
        }
        for split in 0..=steps.len() {
            let mut first = RoundMachine::new(options.clone());
            let mut got = Vec::new();
            for step in &steps[..split] {
                first.handle(step.call(), step.at, &mut out);
                got.extend(out.iter().map(output_json));
                out.clear();
            }
            let saved = first.checkpoint().to_json();
            let mut second = RoundMachine::new(MachineOptions::default());
            second.restore(Checkpoint::from_json(&saved).unwrap()).unwrap();
            for step in &steps[split..] {
                second.handle(step.call(), step.at, &mut out);
                got.extend(out.iter().map(output_json));
                out.clear();
            }
            prop_assert_eq!(&got, &expected, "split at {}", split);
            // The same state is the same bytes.
            prop_assert_eq!(second.checkpoint().to_json(), whole.checkpoint().to_json(), "state at the end");
        }
    }

    /// A router keeping one or two sessions in memory, the rest evicted as
    /// checkpoints, gives the output of one keeping them all.
    #[test]
    fn eviction_changes_no_output(steps in session_steps(60), keep in 1usize..3) {
        let input = jsonl(&steps);
        let plain = replay_lines(input.as_bytes(), &options("ops", "records")).0;
        let evicted = replay_lines(input.as_bytes(), &options("ops", "records").evict(keep, None)).0;
        prop_assert_eq!(evicted, plain);
    }

    /// Restoring arbitrary bytes as a checkpoint is an error or a machine
    /// that works; never a panic.
    #[test]
    fn any_bytes_restore_to_an_error_or_a_working_machine(bytes in prop::collection::vec(any::<u8>(), 0..200), steps in steps(20)) {
        if let Ok(checkpoint) = Checkpoint::from_json(&bytes) {
            let mut machine = RoundMachine::default();
            if machine.restore(checkpoint).is_ok() {
                let mut out = Outputs::new();
                for step in &steps {
                    machine.handle(step.call(), step.at, &mut out);
                }
            }
        }
    }

    /// When the machine says a call needs no clock reading, any reading
    /// gives the same output and the same state (the builder relies on it to
    /// skip the clock on the hot path).
    #[test]
    fn calls_that_need_no_clock_ignore_it(steps in steps(80)) {
        let (mut exact, mut skipping) = (RoundMachine::default(), RoundMachine::default());
        let (mut out_exact, mut out_skipping) = (Outputs::new(), Outputs::new());
        for step in &steps {
            let now = if skipping.needs_clock(&step.call()) { step.at } else { u64::MAX - step.at };
            exact.handle(step.call(), step.at, &mut out_exact);
            skipping.handle(step.call(), now, &mut out_skipping);
        }
        let json = |out: &Outputs| out.iter().map(output_json).collect::<Vec<_>>();
        prop_assert_eq!(json(&out_exact), json(&out_skipping));
        prop_assert_eq!(exact.rounds(), skipping.rounds());
    }

    /// Splitting the same text at other boundaries gives the same rounds.
    #[test]
    fn rechunking_does_not_change_the_rounds(steps in steps(60), cuts in prop::collection::vec(0usize..8, 60)) {
        let running = running_flags(&steps);
        let mut rechunked = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let text = match &step.op { Op::Message(t) | Op::Thought(t) if running[i] => t, _ => { rechunked.push(step.clone()); continue } };
            let chars: Vec<char> = text.chars().collect();
            let cut = cuts.get(i).copied().unwrap_or(0).min(chars.len());
            for piece in [&chars[..cut], &chars[cut..]] {
                let piece: String = piece.iter().collect();
                let op = if matches!(step.op, Op::Message(_)) { Op::Message(piece) } else { Op::Thought(piece) };
                rechunked.push(Step { op, ..step.clone() });
            }
        }
        prop_assert_eq!(replay(&steps, "records"), replay(&rechunked, "records"));
    }

    /// Recording a live stream and replaying the recording gives the output
    /// the live builder delivered.
    #[test]
    fn record_then_replay_is_identical(steps in steps(60)) {
        let clock = ManualClock::new(0);
        let log = Log::default();
        let builder = log.attach(RoundBuilder::new().with_clock(clock.clone()));
        let recorder = Recorder::new(Vec::new()).with_clock(clock.clone());
        for step in &steps {
            clock.set(step.at);
            builder.call(step.call());
            recorder.call(step.call());
        }
        builder.finish_if_running(FinishReason::Interrupted);
        // Summaries reach the sink at each finish, like every other record.
        let live: Vec<Value> = log.values().into_iter().filter(|v| v.get("type").is_some()).collect();
        let recorded = recorder.finish_writing().unwrap();
        let replayed = roundup_testkit::capture::replay_ops(&recorded);
        prop_assert_eq!(parse_output(replayed.as_bytes()), live);
    }

    /// UI events are well formed for every session of any input.
    #[test]
    fn ui_events_are_well_formed(steps in session_steps(60)) {
        let events = replay(&steps, "ui");
        if let Err(e) = check_ui_per_session(&events) {
            prop_assert!(false, "{}\n{}", e, jsonl(&steps));
        }
    }
}

/// The UI checker must be able to fail, or the property proves nothing.
#[test]
fn the_ui_checker_rejects_malformed_streams() {
    // Each stream is wrapped in one run.
    let ev = |s: &str| -> Vec<Value> {
        let run = format!("{{\"event\":\"run_start\",\"run\":0}}\n{s}\n{{\"event\":\"run_end\",\"run\":0}}");
        run.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let bare = |s: &str| -> Vec<Value> { s.lines().map(|l| serde_json::from_str(l).unwrap()).collect() };
    assert!(check_ui(&bare(r#"{"event":"message_start"}"#)).is_err(), "outside a run");
    assert!(check_ui(&bare(r#"{"event":"run_start","run":0}"#)).is_err(), "a run left open");
    assert!(check_ui(&ev(r#"{"event":"run_start","run":1}"#)).is_err(), "a run inside a run");
    assert!(check_ui(&ev(r#"{"event":"tool_call_output","id":"a","content":"x","replace":false}"#)).is_err());
    assert!(check_ui(&ev(r#"{"event":"message_delta","text":"a"}"#)).is_err());
    assert!(check_ui(&ev("{\"event\":\"message_start\"}\n{\"event\":\"thought_end\"}")).is_err());
    assert!(check_ui(&ev(r#"{"event":"tool_call_start","id":"a","title":""}"#)).is_err());
    assert!(check_ui(&ev("{\"event\":\"tool_call_start\",\"id\":\"a\",\"title\":\"\"}\n{\"event\":\"round_end\"}"))
        .is_err());
    assert!(check_ui(&ev("{\"event\":\"message_start\"}\n{\"event\":\"message_end\"}")).is_ok());
}

/// The reference model is itself checked against the conformance vectors,
/// so that agreeing with it means something.
#[test]
fn the_reference_model_passes_the_conformance_vectors() {
    let checked = roundup_testkit::check_all(|vector| {
        let mut model = Reference::default();
        let mut now = 0;
        for op in &vector.ops {
            let line = serde_json::to_vec(op).unwrap();
            // An op this build cannot read yet (a pending vector's) is
            // left out: the vector then fails, as a pending one must.
            let Ok(parsed) = roundup::OpsLine::parse(&line) else { continue };
            now = parsed.at_ms().unwrap_or(now);
            if let Ok(Some(call)) = parsed.call() {
                model.apply(parsed.session(), call, now);
            }
        }
        model.end(now);
        model.lines.iter().map(|l| format!("{l}\n")).collect()
    });
    checked.unwrap();
}
