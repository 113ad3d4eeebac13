//! Arbitrary bytes restored as a checkpoint: a clear error or a machine that
//! keeps working, never a panic; and what a restored machine saves restores
//! again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup::{Call, Checkpoint, FinishReason, Outputs, RoundMachine, ToolCallStatus};

fuzz_target!(|bytes: &[u8]| {
    let Ok(checkpoint) = Checkpoint::from_json(bytes) else { return };
    let mut machine = RoundMachine::default();
    if machine.restore(checkpoint).is_err() {
        return;
    }
    let saved = machine.checkpoint().to_json();
    let mut again = RoundMachine::default();
    again.restore(Checkpoint::from_json(&saved).expect("a saved checkpoint reads")).expect("and restores");
    assert_eq!(again.checkpoint().to_json(), saved, "restore then save is the identity");
    let mut out = Outputs::new();
    for id in ["a", "b", ""] {
        machine.handle(Call::ToolOutput { id, content: "o", replace: false }, 1, &mut out);
        machine.handle(Call::ToolUpdate { id, content: "", status: ToolCallStatus::Completed }, 2, &mut out);
        machine.handle(Call::Message { text: "m" }, 3, &mut out);
    }
    machine.handle(Call::Finish { reason: FinishReason::Canceled }, 4, &mut out);
    machine.handle(Call::Start, 5, &mut out);
});
