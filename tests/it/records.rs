//! A replay's records as values (`roundup::records`): the same records as
//! the JSON lines `roundup replay` writes, each as soon as its input is read.

use std::io::{self, Read};

use roundup::{records, OutputLine, ReplayOptions};
use roundup_testkit::capture::replay_lines;
use serde_json::Value;

#[test]
fn every_vector_and_fixture_gives_the_records_the_replay_writes() {
    let options = ReplayOptions::new();
    let inputs = roundup_testkit::inputs();
    assert!(inputs.len() > 100, "the inputs are found: {}", inputs.len());
    for (name, bytes) in inputs {
        let (lines, _) = replay_lines(&bytes, &options);
        let values: Vec<Value> = records(&bytes[..], &options)
            .unwrap()
            .map(|record| serde_json::to_value(record.unwrap()).unwrap())
            .collect();
        assert_eq!(values, lines, "{name}");
    }
}

/// Hands out its input a few bytes at a time, counting the reads.
struct Trickle<'a> {
    rest: &'a [u8],
    reads: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        let n = self.rest.len().min(out.len()).min(16);
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

#[test]
fn a_record_comes_as_soon_as_the_input_that_closes_it_is_read() {
    let input = b"{\"op\":\"message\",\"text\":\"first\"}\n{\"op\":\"message\",\"text\":\"x\",\"session\":\"b\"}\n\
        {\"op\":\"finish\",\"reason\":\"completed\"}\n{\"op\":\"tool_call\",\"id\":\"t\",\"title\":\"ls\",\"session\":\"b\"}\n\
        {\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"ok\",\"status\":\"completed\",\"session\":\"b\"}\n";
    let mut trickle = Trickle { rest: input, reads: 0 };
    let mut iter = records(&mut trickle, &ReplayOptions::new()).unwrap();
    let first = iter.next().unwrap().unwrap();
    assert!(matches!(&first, OutputLine::Round(round) if round.message == "first"), "{first:?}");
    drop(iter);
    assert!(trickle.rest.len() > 100, "read no further than the finish: {} bytes left", trickle.rest.len());
}

/// Fails after its first read.
struct Broken(bool);

impl Read for Broken {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if std::mem::replace(&mut self.0, true) {
            return Err(io::Error::other("the disk went away"));
        }
        let line = b"{\"op\":\"message\",\"text\":\"Hi\"}\n";
        out[..line.len()].copy_from_slice(line);
        Ok(line.len())
    }
}

#[test]
fn a_read_error_is_an_item_and_ends_the_records() {
    let items: Vec<io::Result<OutputLine>> = records(Broken(false), &ReplayOptions::new()).unwrap().collect();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].as_ref().unwrap_err().to_string(), "the disk went away");
}
