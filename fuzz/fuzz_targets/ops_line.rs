//! The fast path of the ops reader decodes every line exactly as serde
//! does, on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roundup::OpsLine;

fn decode(parsed: Result<OpsLine<'_>, roundup::BadLine>) -> String {
    match parsed {
        Ok(l) => format!("{:?} {:?} {:?}", l.session(), l.at_ms(), l.call()),
        Err(e) => format!("error {e:?}"),
    }
}

fuzz_target!(|line: &[u8]| {
    assert_eq!(decode(OpsLine::parse(line)), decode(OpsLine::parse_through_serde(line)));
});
