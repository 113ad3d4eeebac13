//! Arbitrary bytes restored as a replay's checkpoint (the adapter's state
//! included: a worker restores what another wrote): a clear error, or a
//! replay that reads on in every format without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup::{ReplayCheckpoint, ReplayOptions, Replayer};

/// One event of each format, so that whatever format the checkpoint names,
/// its adapter reads events against the restored state.
const EVENTS: &[&[u8]] = &[
    br#"{"op":"tool_update","id":"t","content":"x","status":"completed"}"#,
    br#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}"#,
    br#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
    br#"{"type":"tool_result","op_id":"o","call_id":"t","ok":true,"v":1,"at":"1970-01-01T00:00:01Z"}"#,
    br#"{"type":"tool_call_end","tool_call_id":"t","result":"r"}"#,
    br#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{"}}]}}]}"#,
    br#"{"type":"response.function_call_arguments.delta","output_index":3,"delta":"x"}"#,
    br#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
    br#"{"type":"content_block_stop","index":2}"#,
    br#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
    br#"{"type":"result","subtype":"success"}"#,
    br#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","status":"completed"}}"#,
    br#"{"type":"turn.completed","usage":{"input_tokens":1}}"#,
];

fuzz_target!(|bytes: &[u8]| {
    let Ok(checkpoint) = ReplayCheckpoint::from_json(bytes) else { return };
    let mut replayer = Replayer::new(&ReplayOptions::new()).expect("no directory to make");
    if replayer.restore(checkpoint).is_err() {
        return;
    }
    for event in EVENTS {
        replayer.feed_payload(event, &mut ());
    }
    let saved = replayer.checkpoint().expect("records keep no state").to_json();
    let mut again = Replayer::new(&ReplayOptions::new()).expect("no directory to make");
    again.restore(ReplayCheckpoint::from_json(&saved).expect("a saved checkpoint reads")).expect("and restores");
    replayer.finish(&mut ());
    let mut out = Vec::new();
    replayer.take_output(&mut out);
});
