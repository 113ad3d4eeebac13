//! `NativeSession`: one session, fed with the `StreamHandler` calls; a
//! builder of its own, or a session of a [`NativeRouter`](crate::router::NativeRouter).

use std::error::Error as _;
use std::sync::Arc;

use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;
use roundup::{
    write_record, write_summary, Call, Checkpoint, OpsLine, RoundBuilder as Builder, SinkRecord, StreamHandler,
    ToolCallStatus,
};

use crate::outbox::{new_builder, Outbox};
use crate::router::Shared;
use crate::{anomaly, error, guarded, reason, status};

enum Target {
    Own { builder: Box<Builder>, outbox: Arc<Outbox> },
    Routed { router: Arc<Shared>, name: Option<String> },
}

/// One session's aggregation. Every call returns what it delivered (the
/// text of a JSON array, see `Outbox`), or `null`.
#[napi]
pub struct NativeSession {
    target: Target,
    name: Option<String>,
}

impl NativeSession {
    pub fn routed(router: Arc<Shared>, name: Option<String>) -> NativeSession {
        NativeSession { target: Target::Routed { router, name: name.clone() }, name }
    }

    fn outbox(&self) -> &Outbox {
        match &self.target {
            Target::Own { outbox, .. } => outbox,
            Target::Routed { router, .. } => &router.outbox,
        }
    }

    fn apply(&self, call: Call<'_>) -> napi::Result<Option<String>> {
        guarded(|| match &self.target {
            Target::Own { builder, .. } => builder.call(call),
            Target::Routed { router, name } => router.router.lock().call(name.as_deref(), call),
        })?;
        Ok(self.outbox().take())
    }

    fn with_builder<T>(&self, f: impl FnOnce(&Builder) -> T) -> T {
        match &self.target {
            Target::Own { builder, .. } => f(builder),
            Target::Routed { router, name } => f(router.router.lock().session(name.as_deref())),
        }
    }
}

/// Metadata: a JSON object's text.
fn meta_of(meta: &str) -> napi::Result<roundup::Meta> {
    serde_json::from_str(meta).map_err(|e| error("BAD_ARGUMENT", format!("meta: {e}")))
}

#[napi]
impl NativeSession {
    /// A builder of its own.
    #[napi(constructor)]
    pub fn new(session: Option<String>, records: bool, ui: bool, retain_rounds: bool) -> NativeSession {
        let outbox = Arc::new(Outbox::default());
        let builder = new_builder(session.as_deref(), &outbox, records, ui, retain_rounds);
        NativeSession { target: Target::Own { builder: Box::new(builder), outbox }, name: session }
    }

    /// The session's name; `null` for the session without one.
    #[napi(getter)]
    pub fn session(&self) -> Option<String> {
        self.name.clone()
    }

    /// What was delivered and not yet taken.
    #[napi]
    pub fn take(&self) -> Option<String> {
        self.outbox().take()
    }

    /// The UI handler wants no more events.
    #[napi]
    pub fn stop_ui(&self) {
        self.outbox().stop_ui();
    }

    #[napi]
    pub fn message(&self, text: String) -> napi::Result<Option<String>> {
        self.apply(Call::Message { text: &text })
    }

    #[napi]
    pub fn thought(&self, text: String) -> napi::Result<Option<String>> {
        self.apply(Call::Thought { text: &text })
    }

    #[napi]
    pub fn tool_call(&self, id: String, title: Option<String>, name: Option<String>) -> napi::Result<Option<String>> {
        let (title, name) = (title.as_deref().unwrap_or(""), name.as_deref().unwrap_or(""));
        self.apply(Call::ToolCall { id: &id, title, name })
    }

    #[napi]
    pub fn tool_update(&self, id: String, content: String, status_name: String) -> napi::Result<Option<String>> {
        let status = status(&status_name)?;
        self.apply(Call::ToolUpdate { id: &id, content: &content, status })
    }

    #[napi]
    pub fn args_delta(&self, id: String, delta: String) -> napi::Result<Option<String>> {
        self.apply(Call::ToolUpdate { id: &id, content: &delta, status: ToolCallStatus::InProgress })
    }

    #[napi]
    pub fn args_snapshot(&self, id: String, args: String) -> napi::Result<Option<String>> {
        self.apply(Call::ArgsSnapshot { id: &id, args: &args })
    }

    #[napi]
    pub fn tool_result(&self, id: String, content: String, failed: bool) -> napi::Result<Option<String>> {
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        self.apply(Call::ToolUpdate { id: &id, content: &content, status })
    }

    #[napi]
    pub fn tool_output(&self, id: String, content: String, replace: bool) -> napi::Result<Option<String>> {
        self.apply(Call::ToolOutput { id: &id, content: &content, replace })
    }

    #[napi]
    pub fn token_usage(&self, total: f64) -> napi::Result<Option<String>> {
        if !(total.is_finite() && total >= 0.0 && total.fract() == 0.0 && total <= 9_007_199_254_740_991.0) {
            return Err(error("BAD_ARGUMENT", format!("token usage {total} is not a whole number of tokens")));
        }
        // A safe integer, checked above.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let total = total as u64;
        self.apply(Call::TokenUsage { total })
    }

    #[napi]
    pub fn start(&self) -> napi::Result<Option<String>> {
        self.apply(Call::Start)
    }

    #[napi]
    pub fn finish(&self, reason_name: String) -> napi::Result<Option<String>> {
        let reason = reason(&reason_name)?;
        self.apply(Call::Finish { reason })
    }

    #[napi]
    pub fn tool_meta(&self, id: String, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::ToolMeta { id: &id, meta: &meta })
    }

    #[napi]
    pub fn run_meta(&self, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::RunMeta { meta: &meta })
    }

    #[napi]
    pub fn round_meta(&self, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::RoundMeta { meta: &meta })
    }

    #[napi]
    pub fn anomaly(&self, kind: String, detail: String, id: Option<String>) -> napi::Result<Option<String>> {
        let kind = anomaly(&kind)?;
        self.apply(Call::Anomaly { kind, id: id.as_deref(), detail: &detail })
    }

    /// One call as its ops JSONL object's text (SPEC §3); a `session` key
    /// in it is ignored here.
    #[napi]
    pub fn call(&self, op: String) -> napi::Result<Option<String>> {
        let line = OpsLine::parse(op.as_bytes()).map_err(|bad| error("BAD_OP", bad.reason))?;
        match line.call().map_err(|bad| error("BAD_OP", bad.reason))? {
            Some(call) => self.apply(call),
            None => Ok(None),
        }
    }

    /// Finishes the open run, if one is open.
    #[napi]
    pub fn finish_if_running(&self, reason_name: String) -> napi::Result<Option<String>> {
        let reason = reason(&reason_name)?;
        guarded(|| match &self.target {
            Target::Own { builder, .. } => {
                builder.finish_if_running(reason);
            }
            Target::Routed { router, name } => router.router.lock().close(name.as_deref(), reason),
        })?;
        Ok(self.outbox().take())
    }

    /// The rounds closed so far (with history on), as a JSON array of
    /// `round` records.
    #[napi]
    pub fn rounds(&self) -> String {
        self.with_builder(|builder| {
            let mut text = vec![b'['];
            for (i, round) in builder.rounds().iter().enumerate() {
                if i > 0 {
                    text.push(b',');
                }
                write_record(&mut text, SinkRecord::Round(round));
            }
            text.push(b']');
            String::from_utf8_lossy(&text).into_owned()
        })
    }

    /// The round being built, as JSON; `null` when no round is open.
    #[napi]
    pub fn open_round(&self) -> Option<String> {
        self.with_builder(|builder| builder.open_round().and_then(|round| serde_json::to_string(&round).ok()))
    }

    /// The current run's summary record, as JSON.
    #[napi]
    pub fn summary(&self) -> String {
        self.with_builder(|builder| {
            let mut line = Vec::new();
            write_summary(&mut line, &builder.summary());
            String::from_utf8_lossy(&line).into_owned()
        })
    }

    /// The run being built or last finished, counted from 0.
    #[napi(getter)]
    pub fn run(&self) -> f64 {
        // Runs are counted one by one: far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let run = self.with_builder(Builder::run) as f64;
        run
    }

    /// Whether the current run has finished.
    #[napi(getter)]
    pub fn finished(&self) -> bool {
        self.with_builder(Builder::is_finished)
    }

    /// The session's state as bytes (SPEC rule 14).
    #[napi]
    pub fn checkpoint(&self, history: bool) -> Uint8Array {
        let bytes = self.with_builder(|builder| {
            if history { builder.checkpoint_with_history() } else { builder.checkpoint() }.to_json()
        });
        Uint8Array::from(bytes)
    }

    /// Continues from a checkpoint's bytes; an error (and no change) when
    /// they are not a checkpoint this build reads.
    #[napi]
    pub fn restore(&self, checkpoint: Uint8Array) -> napi::Result<()> {
        let checkpoint = guarded(|| Checkpoint::from_json(&checkpoint))?.map_err(checkpoint_error)?;
        guarded(|| self.with_builder(|builder| builder.restore(checkpoint)))?.map_err(checkpoint_error)
    }
}

pub fn checkpoint_error(e: roundup::CheckpointError) -> napi::Error {
    let mut message = e.to_string();
    if let Some(source) = e.source() {
        message = format!("{message}: {source}");
    }
    error("BAD_CHECKPOINT", message)
}
