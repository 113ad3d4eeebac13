//! `NativeRouter`: many sessions, one builder each, made on first sight;
//! optionally fed a protocol's events through an adapter of the registry.

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::{External, Uint8Array};
use napi_derive::napi;
use parking_lot::Mutex;
use roundup::adapters::{Adapter, InputFormat};
use roundup::router::{DirectoryStore, MemoryStore};
use roundup::{OpsLine, Router as Inner};

use crate::outbox::{new_builder, Outbox};
use crate::session::NativeSession;
use crate::{error, guarded, input_format, reason};

/// A router and what its calls need, shared with its sessions.
pub struct Shared {
    pub router: Mutex<Inner>,
    adapter: Mutex<Option<Box<dyn Adapter>>>,
    pub outbox: Arc<Outbox>,
}

/// Calls an adapter makes, applied to the router's sessions.
struct Apply<'a>(&'a mut Inner);

impl roundup::adapters::CallSink for Apply<'_> {
    fn call(&mut self, session: Option<&str>, call: roundup::Call<'_>) {
        self.0.call(session, call);
    }
}

/// Many sessions, one builder each.
pub struct NativeRouter {
    shared: Arc<Shared>,
    format: Option<&'static InputFormat>,
}

/// A router's options.
#[napi(object)]
pub struct RouterOptions {
    /// The input format `feed` reads.
    pub from: Option<String>,
    /// Records are delivered.
    pub records: bool,
    /// UI events are delivered.
    pub ui: bool,
    /// Sessions keep their closed rounds.
    pub retain_rounds: bool,
    /// Keep at most this many sessions in memory.
    pub max_sessions: Option<u32>,
    /// Evict into files of this directory.
    pub evict_dir: Option<String>,
}

impl NativeRouter {
    pub fn new(options: RouterOptions) -> napi::Result<NativeRouter> {
        let format = options.from.as_deref().map(input_format).transpose()?;
        let outbox = Arc::new(Outbox::default());
        let make = Arc::clone(&outbox);
        let (records, ui, retain) = (options.records, options.ui, options.retain_rounds);
        let mut router = Inner::new(move |name| new_builder(name, &make, records, ui, retain));
        match (options.max_sessions, options.evict_dir) {
            (Some(0), _) => return Err(error("BAD_ARGUMENT", "maxSessions must be at least 1")),
            (Some(keep), Some(dir)) => {
                let dir = PathBuf::from(dir);
                let store =
                    DirectoryStore::new(&dir).map_err(|e| error("IO", format!("evictDir {}: {e}", dir.display())))?;
                router = router.evict_beyond(keep as usize, store);
            }
            (Some(keep), None) => router = router.evict_beyond(keep as usize, MemoryStore::default()),
            (None, Some(_)) => return Err(error("BAD_ARGUMENT", "evictDir needs maxSessions")),
            (None, None) => {}
        }
        let adapter = Mutex::new(format.map(InputFormat::adapter));
        Ok(NativeRouter { shared: Arc::new(Shared { router: Mutex::new(router), adapter, outbox }), format })
    }

    /// The input format `feed` reads, if one was given.
    pub fn from(&self) -> Option<String> {
        self.format.map(|f| f.name().to_owned())
    }

    /// The session of that name (`null`: the session without a name), made
    /// on its first call.
    pub fn session(&self, name: Option<String>) -> NativeSession {
        NativeSession::routed(Arc::clone(&self.shared), name)
    }

    /// What was delivered and not yet taken.
    pub fn take(&self) -> Option<String> {
        self.shared.outbox.take()
    }

    /// The UI handler wants no more events.
    pub fn stop_ui(&self) {
        self.shared.outbox.stop_ui();
    }

    /// One call as its ops JSONL object's text; its `session` key
    /// addresses it.
    pub fn call(&self, op: String) -> napi::Result<Option<String>> {
        let line = OpsLine::parse(op.as_bytes()).map_err(|bad| error("BAD_OP", bad.reason))?;
        if let Some(call) = line.call().map_err(|bad| error("BAD_OP", bad.reason))? {
            guarded(|| self.shared.router.lock().call(line.session(), call))?;
        }
        Ok(self.shared.outbox.take())
    }

    /// One event of the router's input format, as its JSON text (bytes).
    /// An event that cannot be read is an error and changes nothing.
    pub fn feed(&self, event: Uint8Array) -> napi::Result<Option<String>> {
        self.feed_bytes(&event)
    }

    /// `feed`, with the event's JSON as a string.
    pub fn feed_text(&self, event: String) -> napi::Result<Option<String>> {
        self.feed_bytes(event.as_bytes())
    }

    /// Closes a session: its open run finishes and the session is forgotten.
    pub fn close(&self, name: Option<String>, reason_name: String) -> napi::Result<Option<String>> {
        let reason = reason(&reason_name)?;
        guarded(|| self.shared.router.lock().close(name.as_deref(), reason))?;
        Ok(self.shared.outbox.take())
    }

    /// End of the stream: the adapter hands over what it still holds, then
    /// every session's open run finishes, in order of first appearance.
    /// Returns how many sessions there were (then `take` the output).
    pub fn finish_all(&self, reason_name: String) -> napi::Result<u32> {
        let reason = reason(&reason_name)?;
        let sessions = guarded(|| {
            let mut router = self.shared.router.lock();
            if let Some(adapter) = self.shared.adapter.lock().as_mut() {
                adapter.end(&mut Apply(&mut router));
            }
            router.finish_all(reason)
        })?;
        Ok(u32::try_from(sessions).unwrap_or(u32::MAX))
    }

    /// Sessions seen and not closed (open or evicted).
    pub fn sessions(&self) -> u32 {
        u32::try_from(self.shared.router.lock().sessions()).unwrap_or(u32::MAX)
    }

    /// Sessions held in memory (the others are evicted as checkpoints).
    pub fn open_sessions(&self) -> u32 {
        u32::try_from(self.shared.router.lock().open_sessions()).unwrap_or(u32::MAX)
    }
}

impl NativeRouter {
    fn feed_bytes(&self, bytes: &[u8]) -> napi::Result<Option<String>> {
        let Some(format) = self.format else {
            return Err(error("BAD_ARGUMENT", "feed needs an input format: new Router({ from: ... })"));
        };
        let result = guarded(|| {
            let mut router = self.shared.router.lock();
            match self.shared.adapter.lock().as_mut() {
                Some(adapter) => adapter.translate(bytes, &mut Apply(&mut router)),
                None => Ok(()),
            }
        })?;
        // An event that cannot be read changes nothing; anything still
        // queued is taken by the package's next `take`.
        result.map_err(|bad| error("BAD_EVENT", format!("{} event: {}", format.name(), bad.reason)))?;
        Ok(self.shared.outbox.take())
    }
}

// The functions the package calls: each takes the object as an External,
// which Node-API hands over faster than a class instance.

/// `NativeRouter::new`.
#[napi]
pub fn router_new(options: RouterOptions) -> napi::Result<External<NativeRouter>> {
    NativeRouter::new(options).map(External::new)
}

/// The input format `feed` reads, if one was given.
#[napi]
pub fn router_from(this: &External<NativeRouter>) -> Option<String> {
    this.from()
}

/// The session of that name (`null`: the session without a name), made
/// on its first call.
#[napi]
pub fn router_session(this: &External<NativeRouter>, name: Option<String>) -> External<NativeSession> {
    External::new(this.session(name))
}

/// What was delivered and not yet taken.
#[napi]
pub fn router_take(this: &External<NativeRouter>) -> Option<String> {
    this.take()
}

/// The UI handler wants no more events.
#[napi]
pub fn router_stop_ui(this: &External<NativeRouter>) {
    this.stop_ui()
}

/// One call as its ops JSONL object's text; its `session` key
/// addresses it.
#[napi]
pub fn router_call(this: &External<NativeRouter>, op: String) -> napi::Result<Option<String>> {
    this.call(op)
}

/// One event of the router's input format, as its JSON text (bytes).
/// An event that cannot be read is an error and changes nothing.
#[napi]
pub fn router_feed(this: &External<NativeRouter>, event: Uint8Array) -> napi::Result<Option<String>> {
    this.feed(event)
}

/// `feed`, with the event's JSON as a string.
#[napi]
pub fn router_feed_text(this: &External<NativeRouter>, event: String) -> napi::Result<Option<String>> {
    this.feed_text(event)
}

/// Closes a session: its open run finishes and the session is forgotten.
#[napi]
pub fn router_close(
    this: &External<NativeRouter>,
    name: Option<String>,
    reason_name: String,
) -> napi::Result<Option<String>> {
    this.close(name, reason_name)
}

/// End of the stream: the adapter hands over what it still holds, then
/// every session's open run finishes, in order of first appearance.
/// Returns how many sessions there were (then `take` the output).
#[napi]
pub fn router_finish_all(this: &External<NativeRouter>, reason_name: String) -> napi::Result<u32> {
    this.finish_all(reason_name)
}

/// Sessions seen and not closed (open or evicted).
#[napi]
pub fn router_sessions(this: &External<NativeRouter>) -> u32 {
    this.sessions()
}

/// Sessions held in memory (the others are evicted as checkpoints).
#[napi]
pub fn router_open_sessions(this: &External<NativeRouter>) -> u32 {
    this.open_sessions()
}
