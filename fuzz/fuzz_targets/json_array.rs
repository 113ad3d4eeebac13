//! The JSON array framing on arbitrary bytes after a `[`: no panic; the
//! output is the same whole, cut in two, or checkpointed at the cut and
//! restored; and a body that is a valid JSON array is read as exactly its
//! elements, one payload each, with no fault reported, however long.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup::adapters::InputFormat;
use roundup::{ReplayCheckpoint, ReplayOptions, Replayer};
use serde_json::value::RawValue;

fn whole(body: &[u8], options: &ReplayOptions) -> (Vec<u8>, roundup::ReplayStats) {
    let mut out = Vec::new();
    let stats = roundup::replay(body, &mut out, options, &mut ()).expect("in memory");
    (out, stats)
}

fn cut(body: &[u8], at: usize, options: &ReplayOptions, restore: bool) -> Vec<u8> {
    let mut first = Replayer::new(options).expect("no directory to make");
    first.feed(&body[..at], &mut ());
    let mut out = Vec::new();
    first.take_output(&mut out);
    let mut second = if restore {
        let saved = first.checkpoint().expect("records keep no state").to_json();
        let mut second = Replayer::new(options).expect("no directory to make");
        second.restore(ReplayCheckpoint::from_json(&saved).expect("a saved checkpoint reads")).expect("and restores");
        second
    } else {
        first
    };
    second.feed(&body[at..], &mut ());
    second.finish(&mut ());
    second.take_output(&mut out);
    out
}

fuzz_target!(|input: &[u8]| {
    let mut body = b"[".to_vec();
    body.extend_from_slice(input);
    let at = usize::from(input.first().copied().unwrap_or(0)) * body.len() / 256;
    let ops = InputFormat::named("ops").expect("ops is registered");
    for options in [ReplayOptions::new(), ReplayOptions::new().from(ops).max_line_bytes(64)] {
        let (out, stats) = whole(&body, &options);
        for line in out.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
            serde_json::from_slice::<serde_json::Value>(line).expect("every output line is JSON");
        }
        assert_eq!(cut(&body, at, &options, false), out, "cut at {at}");
        assert_eq!(cut(&body, at, &options, true), out, "checkpointed at {at}");
        if let Ok(elements) = serde_json::from_slice::<Vec<&RawValue>>(&body) {
            if options.from.is_some() {
                assert_eq!(stats.payloads, elements.len() as u64, "one payload per element");
            }
        }
    }
});
