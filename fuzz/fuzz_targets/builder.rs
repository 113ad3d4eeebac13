//! The builder on arbitrary call sequences: it delivers exactly what the
//! pure machine produces, and the output invariants hold.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use roundup::{
    Call, FinishReason, MachineOptions, ManualClock, Outputs, RoundBuilder, RoundMachine, StreamHandler, ToolCallStatus,
};
use roundup_testkit::capture::{output_json, Log};
use roundup_testkit::invariants;
use serde_json::Value;

#[derive(Debug, Arbitrary)]
enum Op {
    Message(String),
    Thought(String),
    ToolCall(u8, String, String),
    Update(u8, String, u8),
    Snapshot(u8, String),
    Output(u8, String, bool),
    Usage(u64),
    Start,
    Finish(bool),
}

#[derive(Debug, Arbitrary)]
struct Step {
    at: u16,
    op: Op,
}

const IDS: [&str; 4] = ["a", "b", "c", ""];
const STATUSES: [ToolCallStatus; 4] =
    [ToolCallStatus::Pending, ToolCallStatus::InProgress, ToolCallStatus::Completed, ToolCallStatus::Failed];

impl Step {
    fn call(&self) -> Call<'_> {
        let id = |n: &u8| IDS[*n as usize % IDS.len()];
        match &self.op {
            Op::Message(text) => Call::Message { text },
            Op::Thought(text) => Call::Thought { text },
            Op::ToolCall(n, title, name) => Call::ToolCall { id: id(n), title, name },
            Op::Update(n, content, s) => {
                Call::ToolUpdate { id: id(n), content, status: STATUSES[*s as usize % STATUSES.len()] }
            }
            Op::Snapshot(n, args) => Call::ArgsSnapshot { id: id(n), args },
            Op::Output(n, content, replace) => Call::ToolOutput { id: id(n), content, replace: *replace },
            Op::Usage(total) => Call::TokenUsage { total: *total },
            Op::Start => Call::Start,
            Op::Finish(canceled) => {
                Call::Finish { reason: if *canceled { FinishReason::Canceled } else { FinishReason::Interrupted } }
            }
        }
    }
}

fuzz_target!(|steps: Vec<Step>| {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let builder = log.attach(RoundBuilder::new().with_clock(clock.clone()));
    let mut machine = RoundMachine::new(MachineOptions::default());
    let mut out = Outputs::new();
    for step in &steps {
        clock.set(u64::from(step.at));
        builder.call(step.call());
        machine.handle(step.call(), u64::from(step.at), &mut out);
    }
    builder.finish_if_running(FinishReason::Interrupted);
    machine.finish_if_running(FinishReason::Interrupted, clock_now(&clock), &mut out);

    let delivered = log.values();
    let produced: Vec<Value> = out.iter().map(output_json).collect();
    assert_eq!(delivered, produced, "the builder delivers what the machine produces");

    let (ui, records): (Vec<Value>, Vec<Value>) = delivered.into_iter().partition(|v| v.get("event").is_some());
    invariants::check_ui(&ui).unwrap();
    invariants::check_rounds(&records).unwrap();
    let fed: Vec<invariants::Fed> = steps.iter().filter_map(|s| invariants::Fed::of(None, &s.call())).collect();
    invariants::check_nothing_lost(&fed, &records).unwrap();
});

fn clock_now(clock: &ManualClock) -> u64 {
    use roundup::Clock;
    clock.now_ms()
}
