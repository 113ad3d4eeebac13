//! The gemini-cli-chat adapter on arbitrary bytes: see `adapter_check.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "adapter_check.rs"]
mod adapter_check;

fuzz_target!(|input: &[u8]| adapter_check::check(input, "gemini-cli-chat"));
