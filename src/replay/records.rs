//! A replay's records as values: what a program that reads the rounds of
//! a recording wants, typed, without writing JSON and parsing it again.

use std::collections::VecDeque;
use std::io::{self, Read};

use super::{ReplayError, ReplayOptions, Replayer};
use crate::wire::OutputLine;

/// How much input one read takes.
const READ_AT_ONCE: usize = 64 << 10;

/// The records of a replay of `input`, as [`OutputLine`] values, in the
/// order `roundup replay` writes them: each as soon as the input that
/// closes it is read (a round when it closes, a stitch, an anomaly, a
/// run's summary), then, at the end of the input, the rounds and summaries
/// of the runs still open.
///
/// `options` says how to read (`from`, `max_line_bytes`, eviction); its
/// output formats are not written.
///
/// # Errors
///
/// [`ReplayError::EvictDir`] when the directory for evicted sessions cannot
/// be made. A read error is an item of the iterator, which then ends.
///
/// ```
/// use roundup::OutputLine;
///
/// let acp = br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"List"}]}}
/// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Looking."}}}}
/// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","status":"pending"}}}
/// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"a.txt"}}]}}}
/// {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
/// "#;
/// let mut rounds = Vec::new();
/// for record in roundup::records(&acp[..], &roundup::ReplayOptions::new()).unwrap() {
///     match record.unwrap() {
///         OutputLine::Round(round) => rounds.push(round),
///         OutputLine::Summary(summary) => assert_eq!(summary.rounds, 1),
///         other => panic!("{other:?}"),
///     }
/// }
/// assert_eq!(rounds[0].message, "Looking.");
/// assert_eq!(rounds[0].tool_calls[0].result.content(), Some("a.txt"));
/// ```
pub fn records<R: Read>(input: R, options: &ReplayOptions) -> Result<Records<R>, ReplayError> {
    let replayer = Replayer::values_only(options)?;
    Ok(Records { input, replayer, ready: VecDeque::new(), buffer: vec![0; READ_AT_ONCE], state: State::Reading })
}

/// The iterator of [`records`].
#[derive(Debug)]
pub struct Records<R> {
    input: R,
    replayer: Replayer,
    ready: VecDeque<OutputLine>,
    buffer: Vec<u8>,
    state: State,
}

/// Where the replay of a [`Records`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    /// The input ended: the open runs are finished one at a time.
    Finishing,
    Done,
}

impl<R> Records<R> {
    /// What was read so far ([`ReplayStats`](crate::ReplayStats)).
    pub fn stats(&self) -> &crate::ReplayStats {
        self.replayer.stats()
    }

    /// Moves what the replay kept as values into the queue.
    fn collect(&mut self) {
        let mut values = Vec::new();
        self.replayer.take_records(&mut values);
        self.ready.extend(values);
        self.replayer.discard_output();
    }
}

impl<R: Read> Iterator for Records<R> {
    type Item = io::Result<OutputLine>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Some(Ok(record));
            }
            match self.state {
                State::Reading => match self.input.read(&mut self.buffer) {
                    Ok(0) => {
                        self.replayer.end_input(&mut ());
                        self.state = State::Finishing;
                    }
                    Ok(read) => {
                        let Some(piece) = self.buffer.get(..read) else {
                            // A reader that claims more than the buffer holds.
                            self.state = State::Done;
                            return Some(Err(io::Error::other(
                                "the reader returned more bytes than it was given room for",
                            )));
                        };
                        self.replayer.feed(piece, &mut ());
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        self.state = State::Done;
                        return Some(Err(error));
                    }
                },
                State::Finishing => {
                    if !self.replayer.finish_next() {
                        self.state = State::Done;
                    }
                }
                State::Done => return None,
            }
            self.collect();
        }
    }
}
