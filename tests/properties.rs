//! Properties over random call sequences (see `common/generate.rs` for the
//! adversarial bias), and the comparison with the naive reference model.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::generate::{jsonl, session_steps, steps, Op, Step};
use common::reference::Reference;
use proptest::prelude::*;
use roundup::{
    Emit, FinishReason, MachineOptions, ManualClock, Output, Outputs, Recorder, RoundBuilder, RoundMachine, SinkRecord,
    StreamHandler, UiEvent, UiFlow,
};
use serde_json::Value;

/// Cases per property; `PROPTEST_CASES` overrides it.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, ..ProptestConfig::default() }
}

fn parse_lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn replay(steps: &[Step], emit: Emit) -> Vec<Value> {
    let mut out = Vec::new();
    roundup::replay_ops(jsonl(steps).as_bytes(), &mut out, emit, &mut ()).unwrap();
    parse_lines(&out)
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

fn record_json(record: SinkRecord<'_>) -> Value {
    let mut line = Vec::new();
    roundup::write_record(&mut line, record);
    serde_json::from_slice(&line).unwrap()
}

fn output_json(output: Output<'_>) -> Value {
    match output {
        Output::Record(record) => record_json(record),
        Output::Ui(event) => serde_json::to_value(event).unwrap(),
    }
}

/// A builder logging everything it delivers, in order.
fn logging_builder(clock: &ManualClock) -> (RoundBuilder, Arc<Mutex<Vec<Value>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (sink_log, ui_log) = (Arc::clone(&log), Arc::clone(&log));
    let builder = RoundBuilder::new()
        .with_clock(clock.clone())
        .with_sink(move |r: SinkRecord<'_>| sink_log.lock().unwrap().push(record_json(r)))
        .with_ui(move |e: &UiEvent<'_>| {
            ui_log.lock().unwrap().push(serde_json::to_value(e).unwrap());
            UiFlow::Continue
        });
    (builder, log)
}

/// UI events are well formed: text starts and ends pair, deltas only
/// inside their pair, every tool call start gets exactly one end or
/// interrupted, a round ends with nothing open, and nothing is left open
/// at the end of the run.
fn check_ui(events: &[Value]) -> Result<(), String> {
    let mut text: Option<&str> = None;
    let mut open_calls: Vec<String> = Vec::new();
    let mut round_calls: Vec<String> = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let name = event["event"].as_str().unwrap();
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        let fail = |why: &str| Err(format!("event {i} ({event}): {why}"));
        match name {
            "message_start" | "thought_start" => {
                if text.is_some() {
                    return fail("start while a text stream is open");
                }
                text = Some(&name[..name.len() - 6]);
            }
            "message_delta" | "thought_delta" | "message_end" | "thought_end" => {
                let kind = name.split('_').next().unwrap();
                if text != Some(kind) {
                    return fail("delta or end outside its start/end pair");
                }
                if name.ends_with("_end") {
                    text = None;
                }
            }
            "tool_call_start" => {
                if text.is_some() {
                    return fail("tool call starts inside a text stream");
                }
                if open_calls.contains(&id) || round_calls.contains(&id) {
                    return fail("second start for an id of this round");
                }
                open_calls.push(id.clone());
                round_calls.push(id);
            }
            "tool_call_result" => {
                if !open_calls.contains(&id) {
                    return fail("result for a call that is not open");
                }
            }
            "tool_call_end" | "tool_call_interrupted" => {
                let Some(at) = open_calls.iter().position(|c| *c == id) else {
                    return fail("end for a call that is not open");
                };
                open_calls.remove(at);
            }
            "tool_call_args" | "tool_call_title" => {
                if !round_calls.contains(&id) {
                    return fail("arguments or title for a call of no open round");
                }
            }
            "round_end" => {
                if text.is_some() || !open_calls.is_empty() {
                    return fail("round ends with something open");
                }
                round_calls.clear();
            }
            "tool_call_stitched" | "token_usage" => {}
            other => return fail(&format!("unknown event {other}")),
        }
    }
    if text.is_some() || !open_calls.is_empty() {
        return Err("something is still open after the run finished".into());
    }
    Ok(())
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
        let actual = replay(&steps, Emit::Records);
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
        let lines = replay(&steps, Emit::Records);
        let mut calls = 0;
        for round in lines.iter().filter(|l| l["type"] == "round") {
            let tool_calls = round["tool_calls"].as_array().unwrap();
            let mut ids: Vec<&str> = tool_calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
            ids.sort();
            ids.dedup();
            prop_assert_eq!(ids.len(), tool_calls.len(), "an id twice in one round: {}", round);
            for call in tool_calls {
                let result = &call["result"];
                match (result["status"].as_str().unwrap(), round["closed_by"].as_str().unwrap()) {
                    ("completed" | "failed", _) => prop_assert!(result["content"].is_string()),
                    ("placeholder", "next_chunk") => prop_assert_eq!(&result["reason"], "superseded"),
                    ("placeholder", "finish") => prop_assert!(result["reason"] == "canceled" || result["reason"] == "interrupted"),
                    other => prop_assert!(false, "impossible result {:?} in {}", other, round),
                }
            }
            calls += tool_calls.len() as u64;
        }
        let summed: u64 = lines.iter().filter(|l| l["type"] == "summary").map(|s| s["tool_calls"].as_u64().unwrap()).sum();
        prop_assert_eq!(calls, summed);
    }

    /// Nothing is lost: all text fed in is in the rounds (or, after
    /// `finish`, in the anomaly reporting it), and every terminal's content
    /// is in exactly one place: a result, a stitch or an anomaly.
    #[test]
    fn nothing_is_lost(steps in session_steps(60)) {
        let lines = replay(&steps, Emit::Records);
        for session in [None, Some("s1"), Some("s2")] {
            let mine = |l: &&Value| l["session"].as_str() == session;
            for (op, field) in [("message", "message"), ("thought", "thought")] {
                let fed: String = steps.iter().filter(|s| s.session == session).filter_map(|s| match &s.op {
                    Op::Message(t) if op == "message" => Some(t.as_str()),
                    Op::Thought(t) if op == "thought" => Some(t.as_str()),
                    _ => None,
                }).collect();
                let out: String = lines.iter().filter(mine).filter_map(|l| match l["type"].as_str() {
                    Some("round") => l[field].as_str(),
                    Some("anomaly") if l["kind"] == "after_finish" && l["detail"] == op => l["content"].as_str(),
                    _ => None,
                }).collect();
                prop_assert_eq!(fed, out);
            }
        }
        let mut places: HashMap<String, usize> = HashMap::new();
        for line in &lines {
            let mut found = |v: &Value| if let Some(s) = v.as_str() { *places.entry(s.to_owned()).or_default() += 1 };
            match line["type"].as_str().unwrap() {
                "round" => line["tool_calls"].as_array().unwrap().iter().for_each(|c| found(&c["result"]["content"])),
                "stitch" => found(&line["result"]["content"]),
                "anomaly" => { found(&line["detail"]); found(&line["content"]); }
                _ => {}
            }
        }
        for step in steps.iter().filter(|s| s.is_terminal()) {
            let Op::Update(_, content, _) = &step.op else { unreachable!() };
            prop_assert_eq!(places.get(content).copied(), Some(1), "terminal {:?}", content);
        }
    }

    /// The self-locking builder delivers exactly what the pure machine
    /// produces, records and UI events alike.
    #[test]
    fn the_builder_delivers_what_the_machine_produces(steps in steps(80)) {
        let clock = ManualClock::new(0);
        let (builder, log) = logging_builder(&clock);
        let mut machine = RoundMachine::new(MachineOptions::default());
        let mut out = Outputs::new();
        for step in &steps {
            clock.set(step.at);
            step.call().apply(&builder);
            machine.handle(step.call(), step.at, &mut out);
        }
        let expected: Vec<Value> = out.iter().map(output_json).collect();
        prop_assert_eq!(&*log.lock().unwrap(), &expected);
        prop_assert_eq!(builder.rounds(), machine.rounds().to_vec());
        prop_assert_eq!(builder.summaries(), machine.summaries().cloned().collect::<Vec<_>>());
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
        prop_assert_eq!(replay(&steps, Emit::Records), replay(&rechunked, Emit::Records));
    }

    /// Recording a live stream and replaying the recording gives the output
    /// the live builder delivered.
    #[test]
    fn record_then_replay_is_identical(steps in steps(60)) {
        let clock = ManualClock::new(0);
        let (builder, log) = logging_builder(&clock);
        let recorder = Recorder::new(Vec::new()).with_clock(clock.clone());
        for step in &steps {
            clock.set(step.at);
            step.call().apply(&builder);
            step.call().apply(&recorder);
        }
        builder.finish_if_running(FinishReason::Interrupted);
        let mut live: Vec<Value> = log.lock().unwrap().iter().filter(|v| v.get("type").is_some()).cloned().collect();
        live.extend(builder.summaries().iter().map(|s| {
            let mut v = serde_json::json!({"type": "summary"});
            v.as_object_mut().unwrap().append(serde_json::to_value(s).unwrap().as_object_mut().unwrap());
            v
        }));
        let recorded = recorder.finish_writing().unwrap();
        let mut replayed = Vec::new();
        roundup::replay_ops(&recorded[..], &mut replayed, Emit::Records, &mut ()).unwrap();
        prop_assert_eq!(parse_lines(&replayed), live);
    }

    /// UI events are well formed for every session of any input.
    #[test]
    fn ui_events_are_well_formed(steps in session_steps(60)) {
        let events = replay(&steps, Emit::Ui);
        for session in [None, Some("s1"), Some("s2")] {
            let mine: Vec<Value> = events.iter().filter(|e| e["session"].as_str() == session).cloned().collect();
            if let Err(e) = check_ui(&mine) {
                prop_assert!(false, "{}\n{}", e, jsonl(&steps));
            }
        }
    }
}

/// The UI checker must be able to fail, or the property proves nothing.
#[test]
fn the_ui_checker_rejects_malformed_streams() {
    let ev = |s: &str| -> Vec<Value> { s.lines().map(|l| serde_json::from_str(l).unwrap()).collect() };
    assert!(check_ui(&ev(r#"{"event":"message_delta","text":"a"}"#)).is_err());
    assert!(check_ui(&ev("{\"event\":\"message_start\"}\n{\"event\":\"thought_end\"}")).is_err());
    assert!(check_ui(&ev(r#"{"event":"tool_call_start","id":"a","title":""}"#)).is_err());
    assert!(check_ui(&ev("{\"event\":\"tool_call_start\",\"id\":\"a\",\"title\":\"\"}\n{\"event\":\"round_end\"}")).is_err());
    assert!(check_ui(&ev("{\"event\":\"message_start\"}\n{\"event\":\"message_end\"}")).is_ok());
}

/// The reference model is itself checked against the conformance vectors,
/// so that agreeing with it means something.
#[test]
fn the_reference_model_passes_the_conformance_vectors() {
    for vector in common::vectors() {
        let mut model = Reference::default();
        let mut now = 0;
        for op in &vector.ops {
            let line = serde_json::to_vec(op).unwrap();
            let parsed = roundup::OpsLine::parse(&line).unwrap();
            now = parsed.at_ms().unwrap_or(now);
            if let Some(call) = parsed.call().unwrap() {
                model.apply(parsed.session(), call, now);
            }
        }
        model.end(now);
        let text: String = model.lines.iter().map(|l| format!("{l}\n")).collect();
        common::check_output(&vector, &text).unwrap_or_else(|e| panic!("{}: {e}", vector.name));
    }
}
