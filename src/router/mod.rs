//! A session router: many sessions, one [`RoundBuilder`] each, made on first
//! sight, and (with a [`CheckpointStore`]) idle sessions evicted as
//! checkpoints and restored, unseen by the caller, on their next call.
//!
//! What a server aggregating thousands of sessions for days needs, and what
//! `roundup replay` runs: the memory follows the sessions kept open, not
//! all the sessions ever seen.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use roundup::{Call, Router, SinkRecord, RoundBuilder};
//! use roundup::router::MemoryStore;
//!
//! let rounds = Arc::new(Mutex::new(Vec::new()));
//! let store = Arc::clone(&rounds);
//! let mut router = Router::new(move |session| {
//!     let store = Arc::clone(&store);
//!     let builder = RoundBuilder::new().retain_rounds(false);
//!     let builder = match session { Some(name) => builder.with_session(name), None => builder };
//!     builder.with_sink(move |record| {
//!         if let SinkRecord::Round(round) = record {
//!             store.lock().unwrap().push((round.session.clone(), round.message.clone()));
//!         }
//!     })
//! })
//! .evict_beyond(1, MemoryStore::default());
//!
//! router.call(Some("a"), Call::Message { text: "one" });
//! router.call(Some("b"), Call::Message { text: "two" }); // "a" is evicted to the store
//! router.call(Some("a"), Call::Message { text: " more" }); // and restored
//! router.finish_all(roundup::FinishReason::Interrupted);
//! let rounds = rounds.lock().unwrap();
//! assert_eq!(*rounds, [(Some("a".into()), "one more".into()), (Some("b".into()), "two".into())]);
//! ```

mod appearances;
mod store;

use std::collections::HashMap;

use appearances::Appearances;
pub use store::{CheckpointStore, DirectoryStore, MemoryStore};

use crate::adapters::CallSink;
use crate::builder::RoundBuilder;
use crate::call::Call;
use crate::handler::StreamHandler;
use crate::machine::{Checkpoint, CheckpointError};
use crate::model::{AnomalyKind, FinishReason};

/// Makes the builder of a session (with its sink, UI handler and clock):
/// called on a session's first call, and again when an evicted session
/// comes back (its state is then restored into the new builder).
pub type MakeBuilder = dyn Fn(Option<&str>) -> RoundBuilder + Send + Sync;

/// A named session kept open.
struct Open {
    name: Box<str>,
    builder: RoundBuilder,
    /// The router's call count at this session's last call.
    last_call: u64,
}

/// Sessions by name, one builder each; see the [module docs](self).
pub struct Router {
    make: Box<MakeBuilder>,
    /// Open named sessions; a slot freed by eviction or closing is reused.
    slots: Vec<Option<Open>>,
    free: Vec<usize>,
    by_name: HashMap<Box<str>, usize>,
    unnamed: Option<RoundBuilder>,
    /// Every session not closed, in order of first appearance (end of input
    /// finishes them in that order, SPEC §6).
    order: Appearances,
    /// The slot of the previous call's session: calls of one session
    /// usually come in runs, and comparing a name is cheaper than hashing.
    last: Option<usize>,
    eviction: Option<Eviction>,
    calls: u64,
}

struct Eviction {
    keep: usize,
    store: Box<dyn CheckpointStore>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("open_sessions", &self.open_sessions())
            .field("sessions", &self.order.len())
            .finish_non_exhaustive()
    }
}

impl Router {
    /// A router making each session's builder with `make`, keeping every
    /// session open.
    pub fn new(make: impl Fn(Option<&str>) -> RoundBuilder + Send + Sync + 'static) -> Router {
        Router {
            make: Box::new(make),
            slots: Vec::new(),
            free: Vec::new(),
            by_name: HashMap::new(),
            unnamed: None,
            order: Appearances::default(),
            last: None,
            eviction: None,
            calls: 0,
        }
    }

    /// Keeps at most `keep` named sessions open: when one more must open,
    /// the least recently called half of them is saved to `store` as
    /// checkpoints and dropped, each restored on its next call. Evicting in
    /// batches keeps the cost per call constant.
    pub fn evict_beyond(self, keep: usize, store: impl CheckpointStore + 'static) -> Router {
        self.evict_beyond_boxed(keep, Box::new(store))
    }

    /// [`evict_beyond`](Self::evict_beyond) with a store chosen at run time.
    pub fn evict_beyond_boxed(mut self, keep: usize, store: Box<dyn CheckpointStore>) -> Router {
        self.eviction = Some(Eviction { keep: keep.max(1), store });
        self
    }

    /// Sessions seen and not closed or finished (open or evicted).
    pub fn sessions(&self) -> usize {
        self.order.len()
    }

    /// Sessions held in memory.
    pub fn open_sessions(&self) -> usize {
        self.by_name.len() + usize::from(self.unnamed.is_some())
    }

    /// Applies one call to its session's builder.
    pub fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        self.builder(session).call(call);
    }

    /// The builder of a session, made on first sight, restored if it was
    /// evicted.
    pub fn builder(&mut self, session: Option<&str>) -> &RoundBuilder {
        self.calls += 1;
        let Some(name) = session else {
            return match &mut self.unnamed {
                Some(builder) => builder,
                slot @ None => {
                    self.order.push(None);
                    slot.insert((self.make)(None))
                }
            };
        };
        let at = match self.last.filter(|&at| self.slots[at].as_ref().is_some_and(|open| &*open.name == name)) {
            Some(at) => at,
            None => match self.by_name.get(name) {
                Some(&at) => at,
                None => self.open_session(name),
            },
        };
        self.last = Some(at);
        let calls = self.calls;
        let open = self.slots[at].as_mut().expect("an index of by_name or last is an open slot");
        open.last_call = calls;
        &open.builder
    }

    /// Opens a named session, restored from the store if it was evicted,
    /// else new; evicts idle sessions first when too many are open. Returns
    /// its slot.
    fn open_session(&mut self, name: &str) -> usize {
        self.evict_if_full();
        let builder = (self.make)(Some(name));
        match self.eviction.as_mut().map(|e| e.store.take(name)) {
            Some(Ok(Some(bytes))) => {
                if let Err(error) = Checkpoint::from_json(&bytes).and_then(|c| builder.restore(c)) {
                    let detail =
                        format!("session {name:?}: its checkpoint could not be restored ({error}); it starts anew");
                    builder.anomaly(AnomalyKind::RestoreFailed, None, &detail);
                }
            }
            Some(Err(error)) => {
                let detail = format!("session {name:?}: its checkpoint could not be read ({error}); it starts anew");
                builder.anomaly(AnomalyKind::RestoreFailed, None, &detail);
            }
            Some(Ok(None)) | None => self.order.push(Some(name)),
        }
        let open = Open { name: name.into(), builder, last_call: self.calls };
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = Some(open);
                at
            }
            None => {
                self.slots.push(Some(open));
                self.slots.len() - 1
            }
        };
        self.by_name.insert(name.into(), at);
        at
    }

    /// Saves and drops the least recently called half of the open sessions
    /// once `keep` are open. A session whose checkpoint cannot be saved
    /// stays open: nothing is lost.
    fn evict_if_full(&mut self) {
        let Some(keep) = self.eviction.as_ref().map(|e| e.keep) else { return };
        if self.by_name.len() < keep {
            return;
        }
        let mut by_age: Vec<(u64, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(at, open)| open.as_ref().map(|open| (open.last_call, at)))
            .collect();
        by_age.sort_unstable();
        for (_, at) in by_age.into_iter().take(keep.div_ceil(2)) {
            let (Some(open), Some(eviction)) = (&self.slots[at], self.eviction.as_mut()) else { continue };
            if eviction.store.save(&open.name, &open.builder.checkpoint().to_json()).is_ok() {
                self.drop_slot(at);
            }
        }
    }

    fn drop_slot(&mut self, at: usize) {
        if let Some(open) = self.slots[at].take() {
            self.by_name.remove(&open.name);
            self.free.push(at);
        }
        if self.last == Some(at) {
            self.last = None;
        }
    }

    /// The checkpoint of every session not closed, in order of first
    /// appearance (evicted ones read from the store, and left there): with
    /// [`restore_sessions`](Self::restore_sessions), the router's whole
    /// state. A session whose evicted checkpoint cannot be read is an error.
    pub(crate) fn checkpoint_sessions(&mut self) -> Result<Vec<Checkpoint>, CheckpointError> {
        let names: Vec<Option<String>> = self.order.iter().map(|name| name.map(str::to_owned)).collect();
        let mut checkpoints = Vec::with_capacity(names.len());
        for name in names {
            let open = match name.as_deref() {
                None => self.unnamed.as_ref(),
                Some(name) => self.by_name.get(name).and_then(|&at| self.slots[at].as_ref()).map(|open| &open.builder),
            };
            if let Some(builder) = open {
                checkpoints.push(builder.checkpoint());
                continue;
            }
            let (Some(name), Some(eviction)) = (name.as_deref(), self.eviction.as_mut()) else {
                return Err(CheckpointError::Inconsistent("a session is neither open nor evicted".into()));
            };
            let bytes = eviction
                .store
                .take(name)
                .map_err(|e| CheckpointError::Inconsistent(format!("session {name:?}: {e}")))?
                .ok_or_else(|| CheckpointError::Inconsistent(format!("session {name:?} is not in the store")))?;
            let checkpoint = Checkpoint::from_json(&bytes);
            // Left where it was: taking a checkpoint changes nothing.
            let saved = eviction.store.save(name, &bytes);
            checkpoints.push(checkpoint?);
            saved.map_err(|e| CheckpointError::Inconsistent(format!("session {name:?}: {e}")))?;
        }
        Ok(checkpoints)
    }

    /// Opens a session from each checkpoint, in order, on a router that has
    /// none yet ([`checkpoint_sessions`](Self::checkpoint_sessions)).
    pub(crate) fn restore_sessions(&mut self, checkpoints: Vec<Checkpoint>) -> Result<(), CheckpointError> {
        if self.order.len() > 0 {
            return Err(CheckpointError::Inconsistent("sessions restored into a router that has some".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for checkpoint in checkpoints {
            let name = checkpoint.session().map(str::to_owned);
            if !seen.insert(name.clone()) {
                return Err(CheckpointError::Inconsistent(format!("session {name:?} twice")));
            }
            self.builder(name.as_deref()).restore(checkpoint)?;
        }
        Ok(())
    }

    /// Finishes a session's run if it is running, and forgets the session
    /// (a later call of that name starts a new session, from run 0).
    pub fn close(&mut self, session: Option<&str>, reason: FinishReason) {
        if !self.order.remove(session) {
            return;
        }
        self.finish_and_forget(session, reason);
    }

    /// End of input: every session's open run finishes, in order of first
    /// appearance (SPEC §6), evicted ones restored one at a time; the
    /// sessions are then forgotten. Returns how many there were.
    pub fn finish_all(&mut self, reason: FinishReason) -> usize {
        let mut finished = 0;
        while self.finish_first(reason) {
            finished += 1;
        }
        finished
    }

    /// Finishes the run of the session seen first (restored if evicted) and
    /// forgets the session; `false` when no session is left. For a caller
    /// that writes output out between sessions, as a replay does so that
    /// the end of a million sessions is not held in memory.
    pub fn finish_first(&mut self, reason: FinishReason) -> bool {
        let Some(session) = self.order.pop_first() else { return false };
        self.finish_and_forget(session.as_deref(), reason);
        true
    }

    /// Finishes a session no longer in `order`, and drops it.
    fn finish_and_forget(&mut self, session: Option<&str>, reason: FinishReason) {
        let known = self.order.len();
        self.builder(session).finish_if_running(reason);
        // Opening it again (from the store) must not count it anew.
        if self.order.len() > known {
            self.order.remove(session);
        }
        match session {
            None => self.unnamed = None,
            Some(name) => {
                if let Some(&at) = self.by_name.get(name) {
                    self.drop_slot(at);
                }
            }
        }
    }
}

/// Adapters address their calls to the router's sessions.
impl CallSink for Router {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        Router::call(self, session, call);
    }
}
