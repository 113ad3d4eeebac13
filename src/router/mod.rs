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
#[cfg(feature = "sqlite")]
mod sqlite_store;
mod store;

use appearances::Appearances;
#[cfg(feature = "sqlite")]
pub use sqlite_store::SqliteStore;
pub use store::{CheckpointStore, DirectoryStore, MemoryStore, StoreError};

use crate::adapters::CallSink;
use crate::builder::RoundBuilder;
use crate::call::Call;
use crate::hash::{HashMap, HashSet};
use crate::machine::{Checkpoint, CheckpointError};
use crate::model::{AnomalyKind, FinishReason};
use crate::session::Session;

/// Makes the session of a name: called on a session's first call, and
/// again when an evicted session comes back (its state is then restored
/// into the new one). Any `Fn(Option<&str>) -> S` closure, boxed, is one
/// ([`Router::new`]); a driver of its own sessions may name its own type
/// ([`Router::with_maker`]).
pub trait MakeSession<S> {
    /// The new session of `name`.
    fn make(&self, name: Option<&str>) -> S;
}

/// A boxed closure, what [`Router::new`] takes.
pub type MakeFn<S> = Box<dyn Fn(Option<&str>) -> S + Send + Sync>;

impl<S> MakeSession<S> for MakeFn<S> {
    fn make(&self, name: Option<&str>) -> S {
        self(name)
    }
}

/// A named session kept open.
struct Open<S> {
    name: Box<str>,
    session: S,
    /// The router's call count at this session's last call.
    last_call: u64,
}

/// Where a session is held.
#[derive(Clone, Copy)]
enum At {
    Unnamed,
    Slot(usize),
}

/// Sessions by name, one [`Session`] each (a [`RoundBuilder`] unless said
/// otherwise), made by `M`; see the [module docs](self).
pub struct Router<S: Session = RoundBuilder, M: MakeSession<S> = MakeFn<S>> {
    make: M,
    /// Handed to every session with its calls.
    context: S::Context,
    /// Open named sessions; a slot freed by eviction or closing is reused.
    slots: Vec<Option<Open<S>>>,
    free: Vec<usize>,
    by_name: HashMap<Box<str>, usize>,
    unnamed: Option<S>,
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
    /// Sessions whose checkpoint in the store is stale (they were restored
    /// from it, and it could not be removed): removed once more when the
    /// session ends, and never restored, so that a later session of that
    /// name does not start from it; a new save makes it current again.
    stale: HashSet<Box<str>>,
}

impl<S: Session, M: MakeSession<S>> std::fmt::Debug for Router<S, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("open_sessions", &self.open_sessions())
            .field("sessions", &self.order.len())
            .finish_non_exhaustive()
    }
}

impl<S: Session> Router<S> {
    /// A router making each session with `make`, keeping every session
    /// open.
    pub fn new(make: impl Fn(Option<&str>) -> S + Send + Sync + 'static) -> Router<S> {
        Router::with_maker(Box::new(make))
    }
}

impl<S: Session, M: MakeSession<S>> Router<S, M> {
    /// A router making each session with `make`, keeping every session
    /// open.
    pub fn with_maker(make: M) -> Router<S, M> {
        Router {
            make,
            context: S::Context::default(),
            slots: Vec::new(),
            free: Vec::new(),
            by_name: HashMap::default(),
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
    /// batches keeps the cost per call constant. A store chosen at run time
    /// is a `Box<dyn CheckpointStore>`.
    pub fn evict_beyond(mut self, keep: usize, store: impl CheckpointStore + 'static) -> Router<S, M> {
        self.eviction = Some(Eviction { keep: keep.max(1), store: Box::new(store), stale: Default::default() });
        self
    }

    /// What the router hands its sessions with every call: for bare
    /// machines, the clock reading to set and the output to take.
    pub fn context(&self) -> &S::Context {
        &self.context
    }

    /// The context, to set the clock or take the output.
    pub fn context_mut(&mut self) -> &mut S::Context {
        &mut self.context
    }

    /// Sessions seen and not closed or finished (open or evicted).
    pub fn sessions(&self) -> usize {
        self.order.len()
    }

    /// Sessions held in memory.
    pub fn open_sessions(&self) -> usize {
        self.by_name.len() + usize::from(self.unnamed.is_some())
    }

    /// Applies one call to its session.
    pub fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        let at = self.locate(session);
        match at {
            At::Unnamed => {
                if let Some(open) = self.unnamed.as_mut() {
                    open.call(call, &mut self.context);
                }
            }
            At::Slot(at) => {
                if let Some(open) = self.slots[at].as_mut() {
                    open.session.call(call, &mut self.context);
                }
            }
        }
    }

    /// The session of a name, made on first sight, restored if it was
    /// evicted.
    pub fn session(&mut self, session: Option<&str>) -> &mut S {
        match self.locate(session) {
            At::Unnamed => self.unnamed.as_mut().expect("located: the unnamed session is open"),
            At::Slot(at) => &mut self.slots[at].as_mut().expect("located: an open slot").session,
        }
    }

    /// Where a session is held, made on first sight, restored if it was
    /// evicted; counts a call.
    fn locate(&mut self, session: Option<&str>) -> At {
        self.calls += 1;
        let Some(name) = session else {
            if self.unnamed.is_none() {
                self.order.push(None);
                self.unnamed = Some(self.make.make(None));
            }
            return At::Unnamed;
        };
        let at = match self.last.filter(|&at| self.slots[at].as_ref().is_some_and(|open| &*open.name == name)) {
            Some(at) => at,
            None => match self.by_name.get(name) {
                Some(&at) => at,
                None => self.open_session(name),
            },
        };
        self.last = Some(at);
        if let Some(open) = self.slots[at].as_mut() {
            open.last_call = self.calls;
        }
        At::Slot(at)
    }

    /// Opens a named session, restored from the store if it was evicted,
    /// else new; evicts idle sessions first when too many are open. Returns
    /// its slot. A checkpoint leaves the store only once its session is
    /// open again.
    fn open_session(&mut self, name: &str) -> usize {
        self.evict_if_full();
        let mut session = self.make.make(Some(name));
        match self.eviction.as_mut() {
            Some(eviction) if eviction.stale.contains(name) => {
                // What the store holds is older than the session that ended:
                // this is a new session of that name.
                if eviction.store.remove(name).is_ok() {
                    eviction.stale.remove(name);
                }
                self.order.push(Some(name));
            }
            Some(eviction) => {
                let restored = match eviction.store.load(name) {
                    Ok(Some(bytes)) => Some(
                        Checkpoint::from_json(&bytes)
                            .and_then(|c| session.restore(c))
                            .map_err(|error| format!("its checkpoint could not be restored ({error})")),
                    ),
                    Ok(None) => None,
                    Err(error) => Some(Err(format!("{error} ({})", error.source))),
                };
                match restored {
                    None => self.order.push(Some(name)),
                    Some(result) => {
                        // The session is open again: what the store holds is
                        // stale from now on, and goes (or is marked so).
                        if eviction.store.remove(name).is_err() {
                            eviction.stale.insert(name.into());
                        }
                        if let Err(why) = result {
                            let detail = format!("session {name:?}: {why}; it starts anew");
                            let call = Call::Anomaly { kind: AnomalyKind::RestoreFailed, id: None, detail: &detail };
                            session.call(call, &mut self.context);
                        }
                    }
                }
            }
            None => self.order.push(Some(name)),
        }
        let open = Open { name: name.into(), session, last_call: self.calls };
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
    /// once `keep` are open. A session is dropped only once its checkpoint
    /// is saved: one that cannot be saved stays open, and nothing is lost.
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
            let Ok(checkpoint) = open.session.checkpoint() else { continue };
            if eviction.store.save(&open.name, &checkpoint.to_json()).is_ok() {
                eviction.stale.remove(&open.name);
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
    /// state.
    ///
    /// # Errors
    ///
    /// [`CheckpointError`] when a session's state cannot be saved, or an
    /// evicted one cannot be read back.
    pub fn checkpoint_sessions(&mut self) -> Result<Vec<Checkpoint>, CheckpointError> {
        let names: Vec<Option<String>> = self.order.iter().map(|name| name.map(str::to_owned)).collect();
        let mut checkpoints = Vec::with_capacity(names.len());
        for name in names {
            let open = match name.as_deref() {
                None => self.unnamed.as_ref(),
                Some(name) => self.by_name.get(name).and_then(|&at| self.slots[at].as_ref()).map(|open| &open.session),
            };
            if let Some(session) = open {
                checkpoints.push(session.checkpoint()?);
                continue;
            }
            let (Some(name), Some(eviction)) = (name.as_deref(), self.eviction.as_mut()) else {
                return Err(CheckpointError::Inconsistent("a session is neither open nor evicted".into()));
            };
            let bytes = eviction
                .store
                .load(name)
                .map_err(CheckpointError::Store)?
                .ok_or_else(|| CheckpointError::Inconsistent(format!("session {name:?} is not in the store")))?;
            checkpoints.push(Checkpoint::from_json(&bytes)?);
        }
        Ok(checkpoints)
    }

    /// Opens a session from each checkpoint, in order, on a router that has
    /// none yet ([`checkpoint_sessions`](Self::checkpoint_sessions)).
    ///
    /// # Errors
    ///
    /// [`CheckpointError`] when the router has sessions already, a session
    /// comes twice, or a checkpoint does not fit.
    pub fn restore_sessions(&mut self, checkpoints: Vec<Checkpoint>) -> Result<(), CheckpointError> {
        if self.order.len() > 0 {
            return Err(CheckpointError::Inconsistent("sessions restored into a router that has some".into()));
        }
        let mut seen = HashSet::default();
        for checkpoint in checkpoints {
            let name = checkpoint.session().map(str::to_owned);
            if !seen.insert(name.clone()) {
                return Err(CheckpointError::Inconsistent(format!("session {name:?} twice")));
            }
            self.session(name.as_deref()).restore(checkpoint)?;
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
        let at = self.locate(session);
        // Opening it again (from the store) must not count it anew.
        if self.order.len() > known {
            self.order.remove(session);
        }
        match at {
            At::Unnamed => {
                if let Some(mut open) = self.unnamed.take() {
                    open.finish_if_running(reason, &mut self.context);
                }
            }
            At::Slot(at) => {
                if let Some(open) = self.slots[at].as_mut() {
                    open.session.finish_if_running(reason, &mut self.context);
                }
                self.drop_slot(at);
            }
        }
        if let (Some(name), Some(eviction)) = (session, self.eviction.as_mut()) {
            if eviction.stale.remove(name) && eviction.store.remove(name).is_err() {
                eviction.stale.insert(name.into());
            }
        }
    }
}

/// Adapters address their calls to the router's sessions.
impl<S: Session, M: MakeSession<S>> CallSink for Router<S, M> {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        Router::call(self, session, call);
    }
}
