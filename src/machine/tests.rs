//! One test (at least) per rule of SPEC §2 and precise point of §6, on the
//! pure machine: plain values in, plain values out.

use super::*;
use crate::model::ToolCallStatus::{Completed, Failed, InProgress, Pending};
use crate::output::Output;
use crate::sink::SinkRecord;

/// A record as an owned value, for comparisons.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
enum Rec {
    Round(Round),
    Stitch(Stitch),
    Anomaly(Anomaly),
    Meta(MetaPatch),
    Summary(Summary),
}

/// Drives a machine and keeps everything it produced.
struct Harness {
    machine: RoundMachine,
    out: Outputs,
    now: u64,
    records: Vec<Rec>,
    ui: Vec<String>,
    /// Per call: the kinds of its outputs in order (`R`ecord or `U`i).
    shapes: Vec<String>,
}

impl Harness {
    fn new() -> Self {
        Self::with(MachineOptions::default())
    }

    fn with(options: MachineOptions) -> Self {
        Harness {
            machine: RoundMachine::new(options),
            out: Outputs::new(),
            now: 0,
            records: Vec::new(),
            ui: Vec::new(),
            shapes: Vec::new(),
        }
    }

    fn at(&mut self, now: u64) -> &mut Self {
        self.now = now;
        self
    }

    fn call(&mut self, call: Call<'_>) -> &mut Self {
        self.machine.handle(call, self.now, &mut self.out);
        let mut shape = String::new();
        for output in self.out.iter() {
            match output {
                Output::Record(record) => {
                    shape.push('R');
                    self.records.push(match record {
                        SinkRecord::Round(r) => Rec::Round(r.clone()),
                        SinkRecord::Stitch(s) => Rec::Stitch(s.clone()),
                        SinkRecord::Anomaly(a) => Rec::Anomaly(a.clone()),
                        SinkRecord::Meta(m) => Rec::Meta(m.clone()),
                        SinkRecord::Summary(s) => Rec::Summary(s.clone()),
                    });
                }
                Output::Ui(event) => {
                    shape.push('U');
                    self.ui.push(ui_text(&event));
                }
            }
        }
        self.shapes.push(shape);
        self.out.clear();
        self
    }

    fn message(&mut self, text: &str) -> &mut Self {
        self.call(Call::Message { text })
    }
    fn thought(&mut self, text: &str) -> &mut Self {
        self.call(Call::Thought { text })
    }
    fn tool(&mut self, id: &str, title: &str) -> &mut Self {
        self.call(Call::ToolCall { id, title, name: "" })
    }
    fn update(&mut self, id: &str, content: &str, status: ToolCallStatus) -> &mut Self {
        self.call(Call::ToolUpdate { id, content, status })
    }
    fn done(&mut self, id: &str, content: &str) -> &mut Self {
        self.update(id, content, Completed)
    }
    fn snapshot(&mut self, id: &str, args: &str) -> &mut Self {
        self.call(Call::ArgsSnapshot { id, args })
    }
    fn finish(&mut self, reason: FinishReason) -> &mut Self {
        self.call(Call::Finish { reason })
    }
    fn start(&mut self) -> &mut Self {
        self.call(Call::Start)
    }

    fn rounds(&self) -> Vec<&Round> {
        self.records.iter().filter_map(|r| if let Rec::Round(r) = r { Some(r) } else { None }).collect()
    }
    fn anomalies(&self) -> Vec<&Anomaly> {
        self.records.iter().filter_map(|r| if let Rec::Anomaly(a) = r { Some(a) } else { None }).collect()
    }
    fn stitches(&self) -> Vec<&Stitch> {
        self.records.iter().filter_map(|r| if let Rec::Stitch(s) = r { Some(s) } else { None }).collect()
    }
    fn kinds(&self) -> Vec<AnomalyKind> {
        self.anomalies().iter().map(|a| a.kind).collect()
    }
    fn summaries(&self) -> Vec<&Summary> {
        self.records.iter().filter_map(|r| if let Rec::Summary(s) = r { Some(s) } else { None }).collect()
    }
    fn output(&mut self, id: &str, content: &str, replace: bool) -> &mut Self {
        self.call(Call::ToolOutput { id, content, replace })
    }
}

use crate::model::ToolCallStatus;

fn ui_text(event: &UiEvent<'_>) -> String {
    let json = serde_json::to_value(event).unwrap();
    let name = json["event"].as_str().unwrap().to_owned();
    match event {
        UiEvent::MessageDelta { text } | UiEvent::ThoughtDelta { text } => format!("{name}:{text}"),
        UiEvent::ToolCallStart { id, .. }
        | UiEvent::ToolCallEnd { id }
        | UiEvent::ToolCallTitle { id, .. }
        | UiEvent::ToolCallArgs { id, .. }
        | UiEvent::ToolCallOutput { id, .. }
        | UiEvent::ToolCallResult { id, .. }
        | UiEvent::ToolCallInterrupted { id, .. }
        | UiEvent::ToolCallStitched { id, .. } => format!("{name}:{id}"),
        _ => name,
    }
}

fn results(round: &Round) -> Vec<ToolResult> {
    round.tool_calls.iter().map(|c| c.result.clone()).collect()
}

fn completed(content: &str) -> ToolResult {
    ToolResult::Completed { content: content.into() }
}

fn placeholder(reason: PlaceholderReason) -> ToolResult {
    ToolResult::placeholder(reason)
}

// Rule 1 ------------------------------------------------------------------

#[test]
fn rule1_empty_fragments_change_nothing_and_emit_nothing() {
    let mut h = Harness::new();
    h.message("").thought("");
    assert!(h.records.is_empty() && h.ui.is_empty());
    // Not even a round with tool calls is closed by an empty fragment.
    h.tool("a", "x").message("").thought("");
    assert!(h.rounds().is_empty());
    h.done("a", "A");
    assert_eq!(h.rounds().len(), 1);
    assert_eq!(h.rounds()[0].closed_by, ClosedBy::ToolsDone);
}

#[test]
fn rule1_a_run_of_empty_fragments_is_still_pristine_for_start() {
    let mut h = Harness::new();
    h.message("").start();
    assert_eq!(h.machine.run(), 0);
}

// Rule 2 ------------------------------------------------------------------

#[test]
fn rule2_text_after_a_tool_call_closes_the_round_with_superseded_placeholders() {
    let mut h = Harness::new();
    h.message("Run both.").tool("a", "x").tool("b", "y").done("a", "A").thought("Hmm");
    let rounds = h.rounds();
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0].closed_by, ClosedBy::NextChunk);
    assert_eq!(results(rounds[0]), [completed("A"), placeholder(PlaceholderReason::Superseded)]);
    // The fragment starts the next round.
    h.finish(FinishReason::Interrupted);
    let last = *h.rounds().last().unwrap();
    assert_eq!((last.index, last.thought.as_str(), last.message.as_str()), (1, "Hmm", ""));
}

#[test]
fn rule2_text_alone_never_closes_a_round() {
    let mut h = Harness::new();
    h.message("a").thought("b").message("c");
    assert!(h.rounds().is_empty());
}

// Rule 3 ------------------------------------------------------------------

#[test]
fn rule3_the_last_result_closes_the_round_not_an_earlier_one() {
    let mut h = Harness::new();
    h.tool("a", "x").tool("b", "y").done("a", "A");
    assert!(h.rounds().is_empty(), "b is still pending");
    h.update("b", "B", Failed);
    assert_eq!(h.rounds().len(), 1);
    assert_eq!(h.rounds()[0].closed_by, ClosedBy::ToolsDone);
    assert_eq!(results(h.rounds()[0])[1], ToolResult::Failed { content: "B".into() });
}

#[test]
fn rule3_a_call_declared_after_others_finished_keeps_the_round_open() {
    let mut h = Harness::new();
    h.tool("a", "x").tool("b", "y").done("a", "A").tool("c", "z").done("b", "B");
    assert!(h.rounds().is_empty(), "c is still pending");
    h.done("c", "C");
    assert_eq!(h.rounds()[0].tool_calls.len(), 3);
}

// Rule 4 ------------------------------------------------------------------

#[test]
fn rule4_finish_closes_with_the_reason_as_placeholder() {
    let mut h = Harness::new();
    h.tool("a", "x").tool("b", "y").done("b", "B").finish(FinishReason::Canceled);
    let round = h.rounds()[0];
    assert_eq!(round.closed_by, ClosedBy::Finish);
    assert_eq!(results(round), [placeholder(PlaceholderReason::Canceled), completed("B")]);
    assert_eq!(h.machine.summary().placeholders.canceled, 1);
}

#[test]
fn rule4_finish_with_nothing_open_emits_nothing() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A").finish(FinishReason::Interrupted);
    assert_eq!(h.rounds().len(), 1);
    assert!(h.machine.is_finished());
}

#[test]
fn rule4_every_call_after_finish_is_an_anomaly_until_start() {
    let mut h = Harness::new();
    h.message("a").finish(FinishReason::Canceled);
    h.message("b")
        .message("")
        .thought("t")
        .tool("x", "bash")
        .update("x", "d", InProgress)
        .done("x", "r")
        .snapshot("x", "{}")
        .call(Call::TokenUsage { total: 5 })
        .finish(FinishReason::Interrupted);
    let anomalies = h.anomalies();
    assert_eq!(anomalies.len(), 9);
    assert!(anomalies.iter().all(|a| a.kind == AnomalyKind::AfterFinish && a.run == 0));
    let details: Vec<&str> = anomalies.iter().map(|a| a.detail.as_str()).collect();
    assert_eq!(
        details,
        [
            "message",
            "message",
            "thought",
            "tool_call",
            "tool_update",
            "tool_update",
            "args_snapshot",
            "token_usage",
            "finish"
        ]
    );
    // Nothing is lost: the dropped payloads are kept.
    assert_eq!(anomalies[0].content.as_deref(), Some("b"));
    assert_eq!(anomalies[1].content, None);
    assert_eq!(anomalies[5].status, Some(TerminalStatus::Completed));
    assert_eq!(anomalies[5].content.as_deref(), Some("r"));
    assert_eq!(anomalies[7].content.as_deref(), Some("5"));
    assert_eq!(h.rounds().len(), 1, "nothing changed");
    // The summary was written at the finish: what follows is not counted.
    assert_eq!(h.machine.summary().anomalies, 0);
    assert_eq!(h.summaries().len(), 1, "one summary, at the finish");
    assert_eq!(h.machine.summary().last_token_usage, None);
}

#[test]
fn rule4_start_begins_a_new_run_counted_from_zero() {
    let mut h = Harness::new();
    h.message("one").finish(FinishReason::Canceled).start().message("two").start().message("three");
    h.finish(FinishReason::Interrupted);
    let ids: Vec<(u64, u64, &str)> = h.rounds().iter().map(|r| (r.run, r.index, r.message.as_str())).collect();
    assert_eq!(ids, [(0, 0, "one"), (1, 0, "two"), (2, 0, "three")]);
    // `start` over the unfinished run 1 finished it as interrupted.
    assert_eq!(h.rounds()[1].closed_by, ClosedBy::Finish);
    let summaries: Vec<u64> = h.machine.summaries().map(|s| s.run).collect();
    assert_eq!(summaries, [0, 1, 2]);
}

#[test]
fn rule4_start_over_an_unfinished_run_gives_interrupted_placeholders() {
    let mut h = Harness::new();
    h.tool("a", "x").start();
    assert_eq!(results(h.rounds()[0]), [placeholder(PlaceholderReason::Interrupted)]);
    assert_eq!(h.machine.run(), 1);
}

#[test]
fn rule4_start_on_a_run_that_saw_nothing_does_not_add_a_run() {
    let mut h = Harness::new();
    h.start().start();
    assert_eq!(h.machine.run(), 0);
    assert_eq!(h.machine.summaries().count(), 1);
    // A token gauge is something: the next start makes a new run.
    h.call(Call::TokenUsage { total: 1 }).start();
    assert_eq!(h.machine.run(), 1);
}

// Rule 5 ------------------------------------------------------------------

#[test]
fn rule5_an_empty_round_is_never_emitted() {
    let mut h = Harness::new();
    h.call(Call::TokenUsage { total: 10 }).finish(FinishReason::Canceled).start().finish(FinishReason::Interrupted);
    assert!(h.rounds().is_empty());
    assert!(h.machine.summaries().all(|s| s.rounds == 0));
}

// Rule 6 ------------------------------------------------------------------

#[test]
fn rule6_text_and_reasoning_accumulate_separately_in_arrival_order() {
    let mut h = Harness::new();
    h.thought("Think ").thought("hard.").message("Answer").thought(" more").message("!");
    h.finish(FinishReason::Interrupted);
    let round = h.rounds()[0];
    assert_eq!((round.message.as_str(), round.thought.as_str()), ("Answer!", "Think hard. more"));
}

#[test]
fn rule6_results_in_any_order_land_in_declaration_order() {
    let mut h = Harness::new();
    h.tool("a", "read").tool("b", "grep").tool("c", "ls");
    h.done("c", "C").update("a", "A", Failed).done("b", "B");
    let round = h.rounds()[0];
    let ids: Vec<&str> = round.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(results(round), [ToolResult::Failed { content: "A".into() }, completed("B"), completed("C")]);
}

// Rule 7 ------------------------------------------------------------------

#[test]
fn rule7_redeclaring_is_an_upsert_and_only_a_non_empty_title_replaces() {
    let mut h = Harness::new();
    h.tool("a", "").tool("a", "bash").update("a", "{}", InProgress).tool("a", "").done("a", "ok");
    let round = h.rounds()[0];
    assert_eq!(round.tool_calls.len(), 1);
    assert_eq!((round.tool_calls[0].title.as_str(), round.tool_calls[0].arguments.as_str()), ("bash", "{}"));
    assert!(h.ui.contains(&"tool_call_title:a".to_owned()));
    assert_eq!(h.ui.iter().filter(|e| e.starts_with("tool_call_start")).count(), 1);
}

#[test]
fn rule7_an_id_of_a_closed_round_declares_a_new_call() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "1").tool("a", "x").done("a", "2");
    let rounds = h.rounds();
    assert_eq!(rounds.len(), 2);
    assert_eq!(results(rounds[1]), [completed("2")]);
    assert!(h.anomalies().is_empty());
}

// Rule 8 ------------------------------------------------------------------

#[test]
fn rule8_deltas_append_and_snapshots_replace() {
    let mut h = Harness::new();
    h.tool("t", "edit").snapshot("t", "{\"p\":\"a\"}").snapshot("t", "{\"p\":\"ab\"}").update("t", "x", Pending);
    h.snapshot("t", "{\"p\":\"abc\"}").update("t", "!", InProgress).update("t", "", InProgress);
    h.done("t", "ok");
    assert_eq!(h.rounds()[0].tool_calls[0].arguments, "{\"p\":\"abc\"}!");
    let args: Vec<&String> = h.ui.iter().filter(|e| e.starts_with("tool_call_args")).collect();
    assert_eq!(args.len(), 5, "the empty delta emits nothing: {:?}", h.ui);
}

#[test]
fn rule8_arguments_for_an_unknown_id_are_reported_with_what_was_dropped() {
    let mut h = Harness::new();
    h.tool("a", "x").update("zz", "frag", InProgress).snapshot("yy", "{}").update("ww", "", Pending);
    let anomalies = h.anomalies();
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall; 3]);
    let dropped: Vec<(Option<&str>, &str)> = anomalies.iter().map(|a| (a.id.as_deref(), a.detail.as_str())).collect();
    assert_eq!(dropped, [(Some("zz"), "frag"), (Some("yy"), "{}"), (Some("ww"), "")]);
}

#[test]
fn rule8_arguments_for_a_call_of_a_closed_round_are_unknown() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A").update("a", "late args", InProgress);
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall]);
}

// Rule 9 ------------------------------------------------------------------

#[test]
fn rule9_a_late_terminal_stitches_the_retained_round() {
    let mut h = Harness::new();
    h.at(10).tool("a", "x").at(20).message("Next").at(30).update("a", "exit 1", Failed);
    let stitch = h.stitches()[0].clone();
    assert_eq!((stitch.run, stitch.round, stitch.id.as_str(), stitch.finished_at_ms), (0, 0, "a", 30));
    assert_eq!(stitch.result, ToolResult::Failed { content: "exit 1".into() });
    let retained = &h.machine.rounds()[0].tool_calls[0];
    assert_eq!(retained.result, stitch.result);
    assert_eq!(retained.finished_at_ms, 30);
    // The round as first persisted kept its placeholder: the stitch is the patch.
    assert!(h.rounds()[0].tool_calls[0].result.is_placeholder());
    let summary = h.machine.summary();
    assert_eq!((summary.stitches, summary.placeholders.superseded, summary.failed_tool_calls), (1, 0, 1));
}

#[test]
fn rule9_only_the_first_late_terminal_stitches() {
    let mut h = Harness::new();
    h.tool("a", "x").message("Next").done("a", "late").done("a", "again");
    assert_eq!(h.stitches().len(), 1);
    assert_eq!(h.kinds(), [AnomalyKind::DuplicateTerminal]);
    assert_eq!(h.anomalies()[0].detail, "again");
}

#[test]
fn rule9_the_oldest_unstitched_placeholder_is_stitched_first() {
    let mut h = Harness::new();
    h.tool("a", "x").message("one").tool("a", "x").message("two");
    h.done("a", "first").done("a", "second").done("a", "third");
    let rounds: Vec<u64> = h.stitches().iter().map(|s| s.round).collect();
    assert_eq!(rounds, [0, 1]);
    assert_eq!(h.kinds(), [AnomalyKind::DuplicateTerminal]);
    assert_eq!(h.machine.rounds()[1].tool_calls[0].result, completed("second"));
}

#[test]
fn rule9_a_stitch_is_delivered_even_when_rounds_are_not_retained() {
    let mut h = Harness::with(MachineOptions { retain_rounds: false, ..MachineOptions::default() });
    h.tool("a", "x").message("Next").done("a", "late");
    assert!(h.machine.rounds().is_empty());
    assert_eq!(h.stitches().len(), 1);
    assert_eq!(h.machine.summary().stitches, 1);
    assert_eq!(h.machine.summary().placeholders.total(), 0);
}

#[test]
fn rule9_a_stitch_after_take_rounds_patches_nothing_but_is_delivered() {
    let mut h = Harness::new();
    h.tool("a", "x").message("Next");
    let taken = h.machine.take_rounds();
    assert_eq!(taken.len(), 1);
    h.done("a", "late");
    assert_eq!(h.stitches().len(), 1);
    assert!(h.machine.rounds().is_empty());
}

// Rule 10 -----------------------------------------------------------------

#[test]
fn rule10_the_first_real_result_wins() {
    let mut h = Harness::new();
    h.tool("a", "x").tool("b", "y").done("a", "first").update("a", "second", Failed).done("b", "B");
    assert_eq!(results(h.rounds()[0])[0], completed("first"));
    let anomaly = h.anomalies()[0];
    assert_eq!(anomaly.kind, AnomalyKind::DuplicateTerminal);
    assert_eq!((anomaly.status, anomaly.detail.as_str()), (Some(TerminalStatus::Failed), "second"));
}

#[test]
fn rule10_a_terminal_for_an_undeclared_id_keeps_its_content() {
    let mut h = Harness::new();
    h.message("Hi").done("ghost", "output");
    let anomaly = h.anomalies()[0];
    assert_eq!(anomaly.kind, AnomalyKind::UndeclaredTerminal);
    assert_eq!((anomaly.id.as_deref(), anomaly.detail.as_str()), (Some("ghost"), "output"));
    assert_eq!(anomaly.status, Some(TerminalStatus::Completed));
}

#[test]
fn rule10_a_duplicate_after_the_round_closed_is_still_a_duplicate() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A").message("next").done("a", "again");
    assert_eq!(h.kinds(), [AnomalyKind::DuplicateTerminal]);
}

// §6 precise points ---------------------------------------------------------

#[test]
fn spec6_id_checks_come_first_even_for_empty_content() {
    let mut h = Harness::new();
    h.update("nope", "", InProgress);
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall]);
}

#[test]
fn spec6_an_open_result_less_call_takes_the_terminal_before_a_stitch() {
    let mut h = Harness::new();
    h.tool("a", "x").message("next").tool("a", "x").done("a", "R");
    assert!(h.stitches().is_empty());
    assert_eq!(results(h.rounds()[1]), [completed("R")]);
    // The older placeholder can still be stitched by the next one.
    h.done("a", "late");
    assert_eq!(h.stitches()[0].round, 0);
}

#[test]
fn spec6_a_stitch_never_crosses_runs() {
    let mut h = Harness::new();
    h.tool("a", "x").message("one").finish(FinishReason::Canceled).start().message("two").done("a", "ghost");
    assert!(h.stitches().is_empty());
    let anomaly = h.anomalies()[0];
    assert_eq!((anomaly.kind, anomaly.run), (AnomalyKind::UndeclaredTerminal, 1));
}

#[test]
fn spec6_a_duplicate_is_per_run() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A").finish(FinishReason::Canceled).start().done("a", "again");
    assert_eq!(h.kinds(), [AnomalyKind::UndeclaredTerminal]);
}

#[test]
fn spec6_empty_id_is_valid() {
    let mut h = Harness::new();
    h.tool("", "x").update("", "{}", InProgress).done("", "ok");
    assert_eq!(h.rounds()[0].tool_calls[0].id, "");
    assert!(h.anomalies().is_empty());
}

// Rule 12: timing -----------------------------------------------------------

#[test]
fn rule12_timing_follows_the_clock_readings_of_the_calls() {
    let mut h = Harness::new();
    h.at(100).call(Call::TokenUsage { total: 1 }); // not content
    h.at(150).message("a").at(200).tool("t", "x").at(250).tool("t", "renamed").tool("u", "y");
    h.at(300).done("u", "U").at(400).done("t", "T");
    let round = h.rounds()[0];
    assert_eq!((round.started_at_ms, round.finished_at_ms), (150, 400));
    let t = &round.tool_calls[0];
    assert_eq!((t.started_at_ms, t.finished_at_ms), (200, 400), "an upsert does not move started_at_ms");
    let u = &round.tool_calls[1];
    assert_eq!((u.started_at_ms, u.finished_at_ms), (250, 300));
}

#[test]
fn rule12_a_placeholder_finishes_at_the_close() {
    let mut h = Harness::new();
    h.at(10).tool("t", "x").at(70).finish(FinishReason::Canceled);
    let call = &h.rounds()[0].tool_calls[0];
    assert_eq!((call.started_at_ms, call.finished_at_ms), (10, 70));
}

// Summary -----------------------------------------------------------------

#[test]
fn summary_counts_the_final_rounds() {
    let mut h = Harness::new();
    h.message("hé").thought("☃").tool("a", "x").tool("b", "y").update("b", "B", Failed).message("next");
    h.tool("c", "z").call(Call::TokenUsage { total: 250 }).call(Call::TokenUsage { total: 240 });
    h.done("ghost", "?").finish(FinishReason::Canceled);
    let s = h.machine.summary().clone();
    assert_eq!((s.rounds, s.tool_calls, s.failed_tool_calls, s.stitches, s.anomalies), (2, 3, 1, 0, 1));
    assert_eq!(s.placeholders, crate::model::PlaceholderCounts { superseded: 1, canceled: 1, ..Default::default() });
    assert_eq!((s.message_bytes, s.thought_bytes), (3 + 4, 3));
    assert_eq!(s.last_token_usage, Some(240), "a gauge, not a sum");
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["placeholders"], serde_json::json!({"superseded": 1, "canceled": 1}));
}

#[test]
fn external_anomalies_are_delivered_and_counted_until_the_finish() {
    let mut h = Harness::new();
    h.call(Call::Anomaly { kind: AnomalyKind::BadLine, id: None, detail: "line 1: nope" });
    h.finish(FinishReason::Canceled);
    h.call(Call::Anomaly { kind: AnomalyKind::BadLine, id: None, detail: "line 3: nope" });
    assert_eq!(h.kinds(), [AnomalyKind::BadLine, AnomalyKind::BadLine]);
    assert_eq!(h.anomalies()[1].run, 0, "it carries the finished run's number");
    assert_eq!(h.machine.summary().anomalies, 1, "counted up to the finish only");
    assert_eq!(h.summaries()[0].anomalies, 1);
}

// UI events and ordering ------------------------------------------------------

#[test]
fn ui_starts_and_ends_pair_across_kinds_and_closes() {
    let mut h = Harness::new();
    h.thought("t").message("m").tool("a", "x").update("a", "{", InProgress).message("next");
    h.finish(FinishReason::Interrupted);
    assert_eq!(
        h.ui,
        [
            "run_start",
            "thought_start",
            "thought_delta:t",
            "thought_end",
            "message_start",
            "message_delta:m",
            "message_end",
            "tool_call_start:a",
            "tool_call_args:a",
            "tool_call_interrupted:a",
            "round_end",
            "message_start",
            "message_delta:next",
            "message_end",
            "round_end",
            "run_end",
        ]
    );
}

#[test]
fn ui_a_result_is_followed_by_its_end() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A");
    assert_eq!(h.ui, ["run_start", "tool_call_start:a", "tool_call_result:a", "tool_call_end:a", "round_end"]);
}

#[test]
fn rule11_a_closed_round_comes_before_the_ui_events_of_its_call() {
    let mut h = Harness::new();
    h.tool("a", "x").done("a", "A");
    assert_eq!(h.shapes.last().unwrap(), "RUUU");
    h.tool("b", "y").message("next");
    assert_eq!(h.shapes.last().unwrap(), "RUUUU", "round, interrupted, round_end, start, delta");
}

#[test]
fn ui_events_are_not_produced_when_off() {
    let mut h = Harness::with(MachineOptions { ui_events: false, ..MachineOptions::default() });
    h.message("m").tool("a", "x").done("a", "A");
    assert!(h.ui.is_empty());
    assert_eq!(h.rounds().len(), 1);
}

#[test]
fn reset_starts_a_new_session() {
    let mut h = Harness::new();
    h.message("a").finish(FinishReason::Canceled);
    h.machine.reset();
    assert!(h.machine.rounds().is_empty());
    assert!(!h.machine.is_finished());
    h.message("b").finish(FinishReason::Canceled);
    assert_eq!(h.rounds().last().unwrap().index, 0);
}

#[test]
fn session_names_are_written_into_every_record() {
    let mut h = Harness::with(MachineOptions { session: Some("s1".into()), ..MachineOptions::default() });
    h.tool("a", "x").message("m").done("a", "A").done("ghost", "?");
    assert!(h.rounds().iter().all(|r| r.session.as_deref() == Some("s1")));
    assert_eq!(h.stitches()[0].session.as_deref(), Some("s1"));
    assert_eq!(h.anomalies()[0].session.as_deref(), Some("s1"));
    assert_eq!(h.machine.summary().session.as_deref(), Some("s1"));
}

// Metadata ------------------------------------------------------------------

fn meta(json: serde_json::Value) -> Meta {
    match json {
        serde_json::Value::Object(map) => map,
        _ => unreachable!(),
    }
}

#[test]
fn tool_meta_merges_into_the_open_call() {
    let mut h = Harness::new();
    let (kind, locations) = (meta(serde_json::json!({"kind": "edit"})), meta(serde_json::json!({"locations": [1]})));
    h.tool("a", "x").call(Call::ToolMeta { id: "a", meta: &kind }).call(Call::ToolMeta { id: "a", meta: &locations });
    let replaced = meta(serde_json::json!({"kind": "read"}));
    h.call(Call::ToolMeta { id: "a", meta: &replaced }).done("a", "A");
    assert_eq!(h.rounds()[0].tool_calls[0].meta, meta(serde_json::json!({"kind": "read", "locations": [1]})));
    assert!(h.ui.iter().all(|e| !e.contains("meta")), "no UI event for metadata");
}

#[test]
fn tool_meta_after_the_round_closed_patches_it() {
    let mut h = Harness::new();
    let diff = meta(serde_json::json!({"diff": "+1"}));
    h.tool("a", "x").done("a", "A").message("next").call(Call::ToolMeta { id: "a", meta: &diff });
    let patch = h.records.iter().find_map(|r| if let Rec::Meta(p) = r { Some(p.clone()) } else { None }).unwrap();
    assert_eq!((patch.run, patch.round, patch.id.as_str(), &patch.meta), (0, 0, "a", &diff));
    assert_eq!(h.machine.rounds()[0].tool_calls[0].meta, diff, "the retained round is patched");
    assert!(h.anomalies().is_empty());
}

#[test]
fn tool_meta_for_an_unknown_id_keeps_what_it_carried() {
    let mut h = Harness::new();
    let stray = meta(serde_json::json!({"kind": "edit"}));
    h.call(Call::ToolMeta { id: "zz", meta: &stray });
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall]);
    assert_eq!(h.anomalies()[0].detail, r#"{"kind":"edit"}"#);
    // A closed call of an earlier run is unknown too.
    h.tool("b", "x")
        .done("b", "B")
        .finish(FinishReason::Canceled)
        .start()
        .call(Call::ToolMeta { id: "b", meta: &stray });
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall; 2]);
}

#[test]
fn run_meta_goes_into_the_summary_and_refuses_summary_fields() {
    let mut h = Harness::new();
    let stats = meta(serde_json::json!({"stop_reason": "end_turn", "rounds": 99}));
    h.call(Call::RunMeta { meta: &stats });
    let summary = h.machine.summary().clone();
    assert_eq!(summary.meta, meta(serde_json::json!({"stop_reason": "end_turn"})));
    assert_eq!(summary.rounds, 0);
    assert_eq!(h.kinds(), [AnomalyKind::BadMeta]);
    assert_eq!(h.anomalies()[0].detail, "key `rounds` names a summary field; value: 99");
    let line = serde_json::to_value(&summary).unwrap();
    assert_eq!(line["stop_reason"], "end_turn");
    // Metadata makes a run non-empty: `start` then begins a new one.
    h.start();
    assert_eq!(h.machine.run(), 1);
}

// Rule 13: live tool output ------------------------------------------------

#[test]
fn rule13_output_appends_replaces_and_is_the_empty_terminal_result() {
    let mut h = Harness::new();
    h.tool("a", "bash").snapshot("a", "{}");
    h.output("a", "10%", false).output("a", "50%", true).output("a", "", false).output("a", " done", false);
    assert!(h.rounds().is_empty(), "output never closes a round");
    h.done("a", "");
    let call = &h.rounds()[0].tool_calls[0];
    assert_eq!(call.result, completed("50% done"));
    assert_eq!(call.arguments, "{}", "output never touches the arguments");
}

#[test]
fn rule13_terminal_content_wins_over_output() {
    let mut h = Harness::new();
    h.tool("a", "bash").output("a", "partial", false).done("a", "final");
    assert_eq!(h.rounds()[0].tool_calls[0].result, completed("final"));
}

#[test]
fn rule13_output_for_a_call_without_a_result_in_the_open_round_is_unknown() {
    let mut h = Harness::new();
    h.tool("a", "x").tool("b", "y").output("ghost", "lost", false).done("a", "A").output("a", "after", false);
    h.output("a", "", false);
    assert_eq!(h.kinds(), [AnomalyKind::UnknownToolCall; 3], "the id check comes first, even for empty output");
    let details: Vec<&str> = h.anomalies().iter().map(|a| a.detail.as_str()).collect();
    assert_eq!(details, ["lost", "after", ""]);
}

#[test]
fn rule13_placeholders_keep_the_output_and_a_stitch_takes_it() {
    let mut h = Harness::new();
    h.tool("a", "bash").output("a", "line 1\n", false).tool("b", "read").message("next");
    let results = results(h.rounds()[0]);
    assert_eq!(results[0].placeholder_output(), Some("line 1\n"));
    assert_eq!(results[1], placeholder(PlaceholderReason::Superseded), "no output: none kept");
    h.done("a", "");
    assert_eq!(h.stitches()[0].result, completed("line 1\n"));
    h.finish(FinishReason::Canceled);
    assert_eq!(h.machine.summary().stitches, 1);
}

#[test]
fn rule13_the_output_is_the_ui_event_of_the_result() {
    let mut h = Harness::new();
    h.tool("a", "bash").output("a", "x", false).done("a", "");
    assert_eq!(
        h.ui,
        ["run_start", "tool_call_start:a", "tool_call_output:a", "tool_call_result:a", "tool_call_end:a", "round_end"]
    );
}

// Summaries at each finish (SPEC §6) ---------------------------------------

#[test]
fn a_summary_is_written_at_each_finish_after_the_round_it_closes() {
    let mut h = Harness::new();
    h.message("one").finish(FinishReason::Canceled).start().message("two").start().message("three");
    let runs: Vec<u64> = h.summaries().iter().map(|s| s.run).collect();
    assert_eq!(runs, [0, 1], "a finish and a start over an unfinished run each write one");
    let kinds: Vec<&str> = h
        .records
        .iter()
        .map(|r| match r {
            Rec::Round(_) => "round",
            Rec::Summary(_) => "summary",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["round", "summary", "round", "summary"]);
    assert_eq!(h.summaries()[1].message_bytes, 3);
}

/// The end of a stream that said nothing: the summary SPEC §6 asks for,
/// and nothing for a live view (an explicit `finish` is told, above).
#[test]
fn a_stream_that_said_nothing_ends_with_its_summary_and_no_run_events() {
    let mut machine = RoundMachine::default();
    let mut out = Outputs::new();
    machine.handle(Call::Message { text: "" }, 0, &mut out);
    assert!(machine.finish_if_running(FinishReason::Interrupted, 5, &mut out));
    let kinds: Vec<&str> = out
        .iter()
        .map(|o| match o {
            Output::Record(SinkRecord::Summary(_)) => "summary",
            Output::Record(_) => "record",
            Output::Ui(_) => "ui",
        })
        .collect();
    assert_eq!(kinds, ["summary"]);
    // A stream that said something is told its end.
    let mut machine = RoundMachine::default();
    let mut out = Outputs::new();
    machine.handle(Call::Message { text: "Hi" }, 0, &mut out);
    out.clear();
    machine.finish_if_running(FinishReason::Interrupted, 5, &mut out);
    assert!(out.iter().any(|o| matches!(o, Output::Ui(UiEvent::RunEnd { .. }))));
}

#[test]
fn a_run_that_saw_nothing_still_gets_its_summary_and_its_run_events() {
    let mut h = Harness::new();
    h.message("");
    assert!(h.ui.is_empty(), "an empty fragment emits nothing, not even run_start");
    h.finish(FinishReason::Interrupted);
    assert_eq!(h.summaries().len(), 1);
    assert_eq!(h.ui, ["run_start", "run_end"]);
}

#[test]
fn run_events_pair_and_number_the_runs() {
    let mut h = Harness::new();
    h.message("a").finish(FinishReason::Canceled).start().start().message("b").finish(FinishReason::Interrupted);
    let runs: Vec<String> = h.ui.iter().filter(|e| e.starts_with("run_")).cloned().collect();
    assert_eq!(runs, ["run_start", "run_end", "run_start", "run_end"]);
    assert_eq!(h.summaries().iter().map(|s| s.run).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn round_meta_accumulates_arrays_and_replaces_other_values() {
    let mut h = Harness::new();
    let first = meta(serde_json::json!({"ids": ["m1"], "model": "a"}));
    let second = meta(serde_json::json!({"ids": ["m1", "m2"], "model": "b"}));
    h.call(Call::Message { text: "Hi" });
    h.call(Call::RoundMeta { meta: &first });
    h.call(Call::RoundMeta { meta: &second });
    h.call(Call::Finish { reason: FinishReason::Interrupted });
    assert_eq!(
        serde_json::Value::Object(h.rounds()[0].meta.clone()),
        serde_json::json!({"ids": ["m1", "m2"], "model": "b"})
    );
}

/// Round metadata said about a round that never got content (a model call
/// refused before any text) is not lost: the run's summary keeps it, and a
/// key that names a summary field is refused as any run metadata is.
#[test]
fn round_meta_without_a_round_goes_to_the_run() {
    let mut h = Harness::new();
    h.message("Hi").tool("t1", "bash").done("t1", "ok");
    let refused = meta(serde_json::json!({"stop_reason": "refusal", "rounds": 7}));
    h.call(Call::RoundMeta { meta: &refused });
    h.finish(FinishReason::Interrupted);
    assert_eq!(h.rounds().len(), 1);
    assert!(h.rounds()[0].meta.is_empty(), "the closed round had its own");
    let summary = h.summaries()[0];
    assert_eq!(summary.meta.get("stop_reason"), Some(&serde_json::json!("refusal")));
    assert_eq!(summary.rounds, 1, "a summary field is not overwritten");
    assert_eq!(h.kinds(), [AnomalyKind::BadMeta]);
}
