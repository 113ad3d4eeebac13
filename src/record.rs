//! The recorder: capture any live stream as ops JSONL, to replay it later.

use std::io::{self, Write};

use parking_lot::Mutex;
use serde::Serialize;

use crate::call::Call;
use crate::clock::Clock;
use crate::handler::StreamHandler;

/// A [`StreamHandler`](crate::StreamHandler) that writes every call as one ops JSONL line
/// (SPEC §3), so a live stream can be replayed later with
/// `roundup replay --from ops`, or fed to a builder in a test.
///
/// With a clock, each line carries `at_ms`; with a session, `session`.
/// The first write error is kept (later calls are then not written) and
/// returned by [`finish_writing`](Recorder::finish_writing).
///
/// ```
/// use roundup::{ManualClock, Recorder, StreamHandler};
///
/// let recorder = Recorder::new(Vec::new()).with_clock(ManualClock::new(7)).with_session("s1");
/// recorder.message("Hi");
/// let bytes = recorder.finish_writing().unwrap();
/// assert_eq!(
///     String::from_utf8(bytes).unwrap(),
///     "{\"op\":\"message\",\"text\":\"Hi\",\"session\":\"s1\",\"at_ms\":7}\n"
/// );
/// ```
pub struct Recorder<W> {
    state: Mutex<RecorderState<W>>,
    clock: Option<Box<dyn Clock>>,
    session: Option<String>,
}

struct RecorderState<W> {
    writer: W,
    line: Vec<u8>,
    error: Option<io::Error>,
}

impl<W: Write + Send> Recorder<W> {
    /// A recorder writing to `writer`, without `at_ms` or `session`.
    pub fn new(writer: W) -> Self {
        Recorder {
            state: Mutex::new(RecorderState { writer, line: Vec::new(), error: None }),
            clock: None,
            session: None,
        }
    }

    /// Stamps every line with this clock's reading as `at_ms`.
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Some(Box::new(clock));
        self
    }

    /// Writes `session` on every line.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Writes one call: what every [`StreamHandler`] method does.
    fn record(&self, call: Call<'_>) {
        #[derive(Serialize)]
        struct Line<'a> {
            #[serde(flatten)]
            call: Call<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            session: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            at_ms: Option<u64>,
        }
        let mut state = self.state.lock();
        let at_ms = self.clock.as_ref().map(|clock| clock.now_ms());
        let RecorderState { writer, line, error } = &mut *state;
        if error.is_some() {
            return;
        }
        line.clear();
        let encoded = match call {
            // Not an op of the contract: the line as it came.
            Call::Unknown { line: raw, .. } => {
                line.extend_from_slice(raw.as_bytes());
                Ok(())
            }
            call => serde_json::to_writer(&mut *line, &Line { call, session: self.session.as_deref(), at_ms }),
        };
        line.push(b'\n');
        let written = encoded.map_err(io::Error::from).and_then(|()| writer.write_all(line));
        if let Err(e) = written {
            *error = Some(e);
        }
    }

    /// Flushes and hands back the writer, or the first error met.
    pub fn finish_writing(self) -> io::Result<W> {
        let RecorderState { mut writer, error, .. } = self.state.into_inner();
        match error {
            Some(e) => Err(e),
            None => writer.flush().map(|()| writer),
        }
    }
}

impl<W: Write + Send> StreamHandler for Recorder<W> {
    fn call(&self, call: Call<'_>) {
        self.record(call)
    }
}
