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

use roundup::{write_record, Anomaly, AnomalyKind, ReplayCheckpoint, ReplayOptions, Replayer, SinkRecord};

/// One partition's sessions.
pub struct Partition {
    options: ReplayOptions,
    /// Sessions being read.
    live: HashMap<String, Replayer>,
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
}

impl Partition {
    /// A partition whose sessions are replayed with `options` (records out,
    /// as JSON lines).
    pub fn new(options: ReplayOptions) -> Partition {
        Partition { options, live: HashMap::new(), saved: HashMap::new(), changed: BTreeSet::new() }
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
        let replayer = self.replayer(session, &mut made);
        match payload {
            Some(payload) => replayer.feed_payload(payload, &mut ()),
            None => {
                replayer.end_input(&mut ());
                while replayer.finish_next() {}
            }
        }
        let mut bytes = Vec::new();
        replayer.take_output(&mut bytes);
        if payload.is_none() {
            self.live.remove(session);
        }
        made.lines.extend(bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()).map(<[u8]>::to_vec));
        self.changed.insert(session.to_owned());
        made
    }

    /// The session's replay: live, restored from its checkpoint, or new.
    fn replayer(&mut self, session: &str, made: &mut Made) -> &mut Replayer {
        if !self.live.contains_key(session) {
            let replayer = match self.saved.remove(session) {
                Some(bytes) => self.restored(session, &bytes, made),
                None => self.new_replayer(),
            };
            self.live.insert(session.to_owned(), replayer);
        }
        self.live.get_mut(session).expect("inserted above")
    }

    fn new_replayer(&self) -> Replayer {
        // Only an eviction directory can fail, and a worker's options have none.
        Replayer::new(&self.options).expect("a replay without an eviction directory")
    }

    /// A replay restored from a checkpoint; one that cannot be restored
    /// starts anew, and the output says so (`restore_failed`).
    fn restored(&self, session: &str, bytes: &[u8], made: &mut Made) -> Replayer {
        let mut replayer = self.new_replayer();
        let result = ReplayCheckpoint::from_json(bytes).and_then(|checkpoint| replayer.restore(checkpoint));
        let Err(error) = result else { return replayer };
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
        self.new_replayer()
    }

    /// The checkpoints of the sessions changed since the last call, in key
    /// order: `None` for a session that ended.
    pub fn take_checkpoints(&mut self) -> Vec<(String, Option<Vec<u8>>)> {
        let changed = std::mem::take(&mut self.changed);
        changed
            .into_iter()
            .map(|session| {
                let checkpoint = self.live.get_mut(&session).map(|replayer| {
                    // Records keep no encoder state and there is no
                    // eviction: a worker's replay always checkpoints.
                    replayer.checkpoint().expect("a records replay checkpoints").to_json()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(made: &Made) -> Vec<String> {
        made.lines.iter().map(|line| String::from_utf8(line.clone()).unwrap()).collect()
    }

    #[test]
    fn a_session_moved_to_another_partition_object_continues_from_its_checkpoint() {
        let mut first = Partition::new(ReplayOptions::new());
        assert!(first.event("s1", Some(br#"{"op":"message","text":"Hel"}"#)).lines.is_empty());
        first.event("s1", Some(br#"{"op":"tool_call","id":"t","title":"ls"}"#));
        let checkpoints = first.take_checkpoints();
        assert_eq!(checkpoints.len(), 1);
        assert!(first.take_checkpoints().is_empty(), "only what changed since");

        let mut second = Partition::new(ReplayOptions::new());
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
        let mut partition = Partition::new(ReplayOptions::new());
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
    fn a_tombstone_read_back_forgets_the_session() {
        let mut partition = Partition::new(ReplayOptions::new());
        partition.saved("s1".into(), Some(b"{}".to_vec()));
        partition.saved("s1".into(), None);
        assert_eq!(partition.sessions(), 0);
    }
}
