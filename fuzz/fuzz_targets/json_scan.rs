//! The JSON scanner the adapters read their lines with first: on arbitrary
//! text, a value it reads whole serde_json reads too, and a string, a count
//! or an object's members it reads, serde_json reads alike; text checked
//! once is measured alike when read again; a value passed on as text is
//! printed as serde_json prints it; and a string or a value is written as
//! serde_json writes it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    roundup::json_scan_check(text);
    roundup::adapters::check_printed(text);
    roundup::json_write_check(text);
});
