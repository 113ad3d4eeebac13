//! The sessions of one input partition, with no I/O: events in, output
//! lines and checkpoints out.
//!
//! A record's key is its session. Each session is read as a stream of its
//! own, by a [`Replayer`] (so its output is exactly what `roundup replay`
//! prints for that session's events), and its state between events is the
//! replay's [`ReplayCheckpoint`]. The worker commits, in one transaction,
//! the output of a batch, the checkpoints of the sessions it touched, and
//! the input offsets: this module says what those are.

use std::collections::{BTreeSet, HashMap};

use roundup::{
    write_record, Anomaly, AnomalyKind, CheckpointError, ReplayCheckpoint, ReplayOptions, Replayer, SinkRecord,
};
use serde::{Deserialize, Serialize};

/// The version of a session's checkpoint record this build writes.
/// 2: one replay writes the records and the UI events.
const VERSION: u32 = 2;

/// A session's checkpoint record: its replay, and whether that replay
/// writes the UI events too.
#[derive(Serialize, Deserialize)]
struct Saved {
    version: u32,
    replay: ReplayCheckpoint,
    ui: bool,
}

/// One session's replay: the records as output 0 and, when the worker
/// writes them, the UI events as output 1, from one read of each event.
struct Session {
    replay: Replayer,
}

/// One partition's sessions.
pub struct Partition {
    options: ReplayOptions,
    /// Also write the live UI events (`--emit ui` lines).
    ui: bool,
    /// Sessions being read.
    live: HashMap<String, Session>,
    /// Checkpoints read from the checkpoint topic, for sessions not touched
    /// since: restored on their next event, so that a partition taken over
    /// restores only the sessions that go on.
    saved: HashMap<String, Vec<u8>>,
    /// Sessions changed since the last [`take_checkpoints`](Self::take_checkpoints).
    changed: BTreeSet<String>,
}

/// What one event made.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Made {
    /// The output lines (SPEC §4), in order.
    pub lines: Vec<Vec<u8>>,
    /// The UI event lines, in order (when the partition writes them).
    pub ui_lines: Vec<Vec<u8>>,
}

impl Partition {
    /// A partition whose sessions are replayed with `options` (records out,
    /// as JSON lines), and, with `ui`, for their UI events too.
    pub fn new(options: ReplayOptions, ui: bool) -> Partition {
        Partition { options, ui, live: HashMap::new(), saved: HashMap::new(), changed: BTreeSet::new() }
    }

    /// A checkpoint read back from the checkpoint topic (`None`: the
    /// session ended). Later ones replace earlier ones, as compaction does.
    pub fn saved(&mut self, session: String, checkpoint: Option<Vec<u8>>) {
        self.live.remove(&session);
        match checkpoint {
            Some(bytes) => {
                self.saved.insert(session, bytes);
            }
            None => {
                self.saved.remove(&session);
            }
        }
    }

    /// One event of `session`: its payload, or `None` for the end of the
    /// session's stream (a tombstone), after which its open runs finish and
    /// its state is dropped.
    pub fn event(&mut self, session: &str, payload: Option<&[u8]>) -> Made {
        let mut made = Made::default();
        let ui = self.ui;
        let replay = &mut self.session(session, &mut made).replay;
        match payload {
            Some(payload) => replay.feed_payload(payload, &mut ()),
            None => replay.finish(&mut ()),
        }
        made.lines.extend(lines(replay, 0));
        if ui {
            made.ui_lines.extend(lines(replay, 1));
        }
        if payload.is_none() {
            self.live.remove(session);
        }
        self.changed.insert(session.to_owned());
        made
    }

    /// The session's replays: live, restored from its checkpoint, or new.
    fn session(&mut self, session: &str, made: &mut Made) -> &mut Session {
        if !self.live.contains_key(session) {
            let streams = match self.saved.remove(session) {
                Some(bytes) => self.restored(session, &bytes, made),
                None => self.new_session(),
            };
            self.live.insert(session.to_owned(), streams);
        }
        self.live.get_mut(session).expect("inserted above")
    }

    fn new_session(&self) -> Session {
        let mut options = self.options.clone();
        if self.ui {
            options = options.also_to(&roundup::encoders::ui::FORMAT);
        }
        // Only an eviction directory can fail, and a worker's options have none.
        Session { replay: Replayer::new(&options).expect("a replay without an eviction directory") }
    }

    /// A session restored from a checkpoint; one that cannot be restored
    /// starts anew, and the output says so (`restore_failed`).
    fn restored(&self, session: &str, bytes: &[u8], made: &mut Made) -> Session {
        let mut streams = self.new_session();
        let result = serde_json::from_slice::<Saved>(bytes).map_err(CheckpointError::Corrupt).and_then(|saved| {
            if saved.version != VERSION {
                return Err(CheckpointError::Version { found: u64::from(saved.version), supported: VERSION });
            }
            if saved.ui != self.ui {
                let detail = if saved.ui { "saved with UI events" } else { "saved without UI events" };
                return Err(CheckpointError::Inconsistent(detail.into()));
            }
            streams.replay.restore(saved.replay)
        });
        let Err(error) = result else { return streams };
        let anomaly = Anomaly {
            session: Some(session.to_owned()),
            run: 0,
            kind: AnomalyKind::RestoreFailed,
            id: None,
            status: None,
            detail: format!("session {session:?}: its checkpoint could not be restored ({error}); it starts anew"),
            content: None,
        };
        let mut line = Vec::new();
        write_record(&mut line, SinkRecord::Anomaly(&anomaly));
        made.lines.push(line);
        self.new_session()
    }

    /// The checkpoints of the sessions changed since the last call, in key
    /// order: `None` for a session that ended.
    pub fn take_checkpoints(&mut self) -> Vec<(String, Option<Vec<u8>>)> {
        let changed = std::mem::take(&mut self.changed);
        changed
            .into_iter()
            .map(|session| {
                let ui = self.ui;
                let checkpoint = self.live.get_mut(&session).map(|streams| {
                    // Records and UI events keep no encoder state and there
                    // is no eviction: a worker's replays always checkpoint.
                    let replay = streams.replay.checkpoint().expect("a records and ui replay checkpoints");
                    serde_json::to_vec(&Saved { version: VERSION, replay, ui }).unwrap_or_default()
                });
                (session, checkpoint)
            })
            .collect()
    }

    /// Sessions being read or waiting in a checkpoint.
    pub fn sessions(&self) -> usize {
        self.live.len() + self.saved.len()
    }
}

/// The lines of output `index` a replay wrote since the last call.
fn lines(replayer: &mut Replayer, index: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut bytes = Vec::new();
    replayer.take_output_of(index, &mut bytes);
    let lines: Vec<Vec<u8>> =
        bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()).map(<[u8]>::to_vec).collect();
    lines.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use roundup::encoders::OutputFormat;

    fn lines(made: &Made) -> Vec<String> {
        made.lines.iter().map(|line| String::from_utf8(line.clone()).unwrap()).collect()
    }

    #[test]
    fn a_session_moved_to_another_partition_object_continues_from_its_checkpoint() {
        let mut first = Partition::new(ReplayOptions::new(), false);
        assert!(first.event("s1", Some(br#"{"op":"message","text":"Hel"}"#)).lines.is_empty());
        first.event("s1", Some(br#"{"op":"tool_call","id":"t","title":"ls"}"#));
        let checkpoints = first.take_checkpoints();
        assert_eq!(checkpoints.len(), 1);
        assert!(first.take_checkpoints().is_empty(), "only what changed since");

        let mut second = Partition::new(ReplayOptions::new(), false);
        for (session, checkpoint) in checkpoints {
            second.saved(session, checkpoint);
        }
        let made = second.event("s1", Some(br#"{"op":"tool_update","id":"t","content":"a","status":"completed"}"#));
        let out = lines(&made);
        assert_eq!(out.len(), 1);
        assert!(
            out[0].starts_with(r#"{"type":"round","run":0,"index":0,"closed_by":"tools_done","message":"Hel""#),
            "{out:?}"
        );
        let end = lines(&second.event("s1", None));
        assert!(end[0].starts_with(r#"{"type":"summary""#), "{end:?}");
        assert_eq!(second.take_checkpoints(), [("s1".to_owned(), None)]);
        assert_eq!(second.sessions(), 0);
    }

    #[test]
    fn a_checkpoint_that_cannot_be_restored_is_reported_and_the_session_starts_anew() {
        let mut partition = Partition::new(ReplayOptions::new(), false);
        partition.saved("s1".into(), Some(b"not a checkpoint".to_vec()));
        let out = lines(&partition.event("s1", Some(br#"{"op":"message","text":"Hi"}"#)));
        assert_eq!(out.len(), 1);
        assert!(
            out[0].contains(r#""kind":"restore_failed""#) && out[0].contains("the checkpoint is corrupt"),
            "{out:?}"
        );
        let end = lines(&partition.event("s1", None));
        assert!(end[0].contains(r#""message":"Hi""#), "{end:?}");
    }

    #[test]
    fn the_ui_events_of_a_session_moved_between_every_two_events_are_those_of_replay() {
        let events = [
            &br#"{"op":"thought","text":"hmm"}"#[..],
            br#"{"op":"message","text":"Let me look."}"#,
            br#"{"op":"tool_call","id":"t","title":"ls"}"#,
            br#"{"op":"tool_output","id":"t","content":"a"}"#,
            br#"{"op":"message","text":"Meanwhile."}"#,
            br#"{"op":"tool_update","id":"t","content":"a.txt","status":"completed"}"#,
        ];
        let mut records = Vec::new();
        let mut ui = Vec::new();
        let mut checkpoints = Vec::new();
        for event in events.iter().map(|e| Some(*e)).chain([None]) {
            let mut partition = Partition::new(ReplayOptions::new(), true);
            for (session, checkpoint) in checkpoints.drain(..) {
                partition.saved(session, checkpoint);
            }
            let made = partition.event("s", event);
            records.extend(made.lines.iter().map(|l| String::from_utf8(l.clone()).unwrap()));
            ui.extend(made.ui_lines.iter().map(|l| String::from_utf8(l.clone()).unwrap()));
            checkpoints = partition.take_checkpoints();
        }
        let input = events.join(&b'\n');
        let replayed = |to: &str| {
            let mut out = Vec::new();
            let options = ReplayOptions::new().to(OutputFormat::named(to).unwrap());
            roundup::replay(&input[..], &mut out, &options, &mut ()).unwrap();
            String::from_utf8(out).unwrap().lines().map(str::to_owned).collect::<Vec<_>>()
        };
        assert_eq!(records, replayed("records"));
        assert_eq!(ui, replayed("ui"));
        assert!(ui.iter().any(|l| l.contains("tool_call_output")), "{ui:?}");
    }

    #[test]
    fn a_tombstone_read_back_forgets_the_session() {
        let mut partition = Partition::new(ReplayOptions::new(), false);
        partition.saved("s1".into(), Some(b"{}".to_vec()));
        partition.saved("s1".into(), None);
        assert_eq!(partition.sessions(), 0);
    }
}
