//! `NativeSession`: one session, fed with the `StreamHandler` calls; a
//! builder of its own, or a session of a [`NativeRouter`](crate::router::NativeRouter).

use std::error::Error as _;
use std::sync::Arc;

use napi::bindgen_prelude::{External, Uint8Array};
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

impl NativeSession {
    /// A builder of its own.
    pub fn new(session: Option<String>, records: bool, ui: bool, retain_rounds: bool) -> NativeSession {
        let outbox = Arc::new(Outbox::default());
        let builder = new_builder(session.as_deref(), &outbox, records, ui, retain_rounds);
        NativeSession { target: Target::Own { builder: Box::new(builder), outbox }, name: session }
    }

    /// The session's name; `null` for the session without one.
    pub fn session(&self) -> Option<String> {
        self.name.clone()
    }

    /// What was delivered and not yet taken.
    pub fn take(&self) -> Option<String> {
        self.outbox().take()
    }

    /// The UI handler wants no more events.
    pub fn stop_ui(&self) {
        self.outbox().stop_ui();
    }

    pub fn message(&self, text: String) -> napi::Result<Option<String>> {
        self.apply(Call::Message { text: &text })
    }

    pub fn thought(&self, text: String) -> napi::Result<Option<String>> {
        self.apply(Call::Thought { text: &text })
    }

    pub fn tool_call(&self, id: String, title: Option<String>, name: Option<String>) -> napi::Result<Option<String>> {
        let (title, name) = (title.as_deref().unwrap_or(""), name.as_deref().unwrap_or(""));
        self.apply(Call::ToolCall { id: &id, title, name })
    }

    pub fn tool_update(&self, id: String, content: String, status_name: String) -> napi::Result<Option<String>> {
        let status = status(&status_name)?;
        self.apply(Call::ToolUpdate { id: &id, content: &content, status })
    }

    pub fn args_delta(&self, id: String, delta: String) -> napi::Result<Option<String>> {
        self.apply(Call::ToolUpdate { id: &id, content: &delta, status: ToolCallStatus::InProgress })
    }

    pub fn args_snapshot(&self, id: String, args: String) -> napi::Result<Option<String>> {
        self.apply(Call::ArgsSnapshot { id: &id, args: &args })
    }

    pub fn tool_result(&self, id: String, content: String, failed: bool) -> napi::Result<Option<String>> {
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        self.apply(Call::ToolUpdate { id: &id, content: &content, status })
    }

    pub fn tool_output(&self, id: String, content: String, replace: bool) -> napi::Result<Option<String>> {
        self.apply(Call::ToolOutput { id: &id, content: &content, replace })
    }

    pub fn token_usage(&self, total: f64) -> napi::Result<Option<String>> {
        if !(total.is_finite() && total >= 0.0 && total.fract() == 0.0 && total <= 9_007_199_254_740_991.0) {
            return Err(error("BAD_ARGUMENT", format!("token usage {total} is not a whole number of tokens")));
        }
        // A safe integer, checked above.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let total = total as u64;
        self.apply(Call::TokenUsage { total })
    }

    pub fn start(&self) -> napi::Result<Option<String>> {
        self.apply(Call::Start)
    }

    pub fn finish(&self, reason_name: String) -> napi::Result<Option<String>> {
        let reason = reason(&reason_name)?;
        self.apply(Call::Finish { reason })
    }

    pub fn tool_meta(&self, id: String, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::ToolMeta { id: &id, meta: &meta })
    }

    pub fn run_meta(&self, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::RunMeta { meta: &meta })
    }

    pub fn round_meta(&self, meta: String) -> napi::Result<Option<String>> {
        let meta = meta_of(&meta)?;
        self.apply(Call::RoundMeta { meta: &meta })
    }

    pub fn anomaly(&self, kind: String, detail: String, id: Option<String>) -> napi::Result<Option<String>> {
        let kind = anomaly(&kind)?;
        self.apply(Call::Anomaly { kind, id: id.as_deref(), detail: &detail })
    }

    /// One call as its ops JSONL object's text (SPEC §3); a `session` key
    /// in it is ignored here.
    pub fn call(&self, op: String) -> napi::Result<Option<String>> {
        let line = OpsLine::parse(op.as_bytes()).map_err(|bad| error("BAD_OP", bad.reason))?;
        match line.call().map_err(|bad| error("BAD_OP", bad.reason))? {
            Some(call) => self.apply(call),
            None => Ok(None),
        }
    }

    /// Finishes the open run, if one is open.
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
    pub fn open_round(&self) -> Option<String> {
        self.with_builder(|builder| builder.open_round().and_then(|round| serde_json::to_string(&round).ok()))
    }

    /// The current run's summary record, as JSON.
    pub fn summary(&self) -> String {
        self.with_builder(|builder| {
            let mut line = Vec::new();
            write_summary(&mut line, &builder.summary());
            String::from_utf8_lossy(&line).into_owned()
        })
    }

    /// The run being built or last finished, counted from 0.
    pub fn run(&self) -> f64 {
        // Runs are counted one by one: far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let run = self.with_builder(Builder::run) as f64;
        run
    }

    /// Whether the current run has finished.
    pub fn finished(&self) -> bool {
        self.with_builder(Builder::is_finished)
    }

    /// The session's state as bytes (SPEC rule 14).
    pub fn checkpoint(&self, history: bool) -> Uint8Array {
        let bytes = self.with_builder(|builder| {
            if history { builder.checkpoint_with_history() } else { builder.checkpoint() }.to_json()
        });
        Uint8Array::from(bytes)
    }

    /// Continues from a checkpoint's bytes; an error (and no change) when
    /// they are not a checkpoint this build reads.
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

// The functions the package calls: each takes the object as an External,
// which Node-API hands over faster than a class instance.

/// A builder of its own.
#[napi]
pub fn session_new(session: Option<String>, records: bool, ui: bool, retain_rounds: bool) -> External<NativeSession> {
    External::new(NativeSession::new(session, records, ui, retain_rounds))
}

/// The session's name; `null` for the session without one.
#[napi]
pub fn session_session(this: &External<NativeSession>) -> Option<String> {
    this.session()
}

/// What was delivered and not yet taken.
#[napi]
pub fn session_take(this: &External<NativeSession>) -> Option<String> {
    this.take()
}

/// The UI handler wants no more events.
#[napi]
pub fn session_stop_ui(this: &External<NativeSession>) {
    this.stop_ui()
}

/// `NativeSession::message`.
#[napi]
pub fn session_message(this: &External<NativeSession>, text: String) -> napi::Result<Option<String>> {
    this.message(text)
}

/// `NativeSession::thought`.
#[napi]
pub fn session_thought(this: &External<NativeSession>, text: String) -> napi::Result<Option<String>> {
    this.thought(text)
}

/// `NativeSession::tool_call`.
#[napi]
pub fn session_tool_call(
    this: &External<NativeSession>,
    id: String,
    title: Option<String>,
    name: Option<String>,
) -> napi::Result<Option<String>> {
    this.tool_call(id, title, name)
}

/// `NativeSession::tool_update`.
#[napi]
pub fn session_tool_update(
    this: &External<NativeSession>,
    id: String,
    content: String,
    status_name: String,
) -> napi::Result<Option<String>> {
    this.tool_update(id, content, status_name)
}

/// `NativeSession::args_delta`.
#[napi]
pub fn session_args_delta(this: &External<NativeSession>, id: String, delta: String) -> napi::Result<Option<String>> {
    this.args_delta(id, delta)
}

/// `NativeSession::args_snapshot`.
#[napi]
pub fn session_args_snapshot(this: &External<NativeSession>, id: String, args: String) -> napi::Result<Option<String>> {
    this.args_snapshot(id, args)
}

/// `NativeSession::tool_result`.
#[napi]
pub fn session_tool_result(
    this: &External<NativeSession>,
    id: String,
    content: String,
    failed: bool,
) -> napi::Result<Option<String>> {
    this.tool_result(id, content, failed)
}

/// `NativeSession::tool_output`.
#[napi]
pub fn session_tool_output(
    this: &External<NativeSession>,
    id: String,
    content: String,
    replace: bool,
) -> napi::Result<Option<String>> {
    this.tool_output(id, content, replace)
}

/// `NativeSession::token_usage`.
#[napi]
pub fn session_token_usage(this: &External<NativeSession>, total: f64) -> napi::Result<Option<String>> {
    this.token_usage(total)
}

/// `NativeSession::start`.
#[napi]
pub fn session_start(this: &External<NativeSession>) -> napi::Result<Option<String>> {
    this.start()
}

/// `NativeSession::finish`.
#[napi]
pub fn session_finish(this: &External<NativeSession>, reason_name: String) -> napi::Result<Option<String>> {
    this.finish(reason_name)
}

/// `NativeSession::tool_meta`.
#[napi]
pub fn session_tool_meta(this: &External<NativeSession>, id: String, meta: String) -> napi::Result<Option<String>> {
    this.tool_meta(id, meta)
}

/// `NativeSession::run_meta`.
#[napi]
pub fn session_run_meta(this: &External<NativeSession>, meta: String) -> napi::Result<Option<String>> {
    this.run_meta(meta)
}

/// `NativeSession::round_meta`.
#[napi]
pub fn session_round_meta(this: &External<NativeSession>, meta: String) -> napi::Result<Option<String>> {
    this.round_meta(meta)
}

/// `NativeSession::anomaly`.
#[napi]
pub fn session_anomaly(
    this: &External<NativeSession>,
    kind: String,
    detail: String,
    id: Option<String>,
) -> napi::Result<Option<String>> {
    this.anomaly(kind, detail, id)
}

/// One call as its ops JSONL object's text (SPEC §3); a `session` key
/// in it is ignored here.
#[napi]
pub fn session_call(this: &External<NativeSession>, op: String) -> napi::Result<Option<String>> {
    this.call(op)
}

/// Finishes the open run, if one is open.
#[napi]
pub fn session_finish_if_running(this: &External<NativeSession>, reason_name: String) -> napi::Result<Option<String>> {
    this.finish_if_running(reason_name)
}

/// The rounds closed so far (with history on), as a JSON array of
/// `round` records.
#[napi]
pub fn session_rounds(this: &External<NativeSession>) -> String {
    this.rounds()
}

/// The round being built, as JSON; `null` when no round is open.
#[napi]
pub fn session_open_round(this: &External<NativeSession>) -> Option<String> {
    this.open_round()
}

/// The current run's summary record, as JSON.
#[napi]
pub fn session_summary(this: &External<NativeSession>) -> String {
    this.summary()
}

/// The run being built or last finished, counted from 0.
#[napi]
pub fn session_run(this: &External<NativeSession>) -> f64 {
    this.run()
}

/// Whether the current run has finished.
#[napi]
pub fn session_finished(this: &External<NativeSession>) -> bool {
    this.finished()
}

/// The session's state as bytes (SPEC rule 14).
#[napi]
pub fn session_checkpoint(this: &External<NativeSession>, history: bool) -> Uint8Array {
    this.checkpoint(history)
}

/// Continues from a checkpoint's bytes; an error (and no change) when
/// they are not a checkpoint this build reads.
#[napi]
pub fn session_restore(this: &External<NativeSession>, checkpoint: Uint8Array) -> napi::Result<()> {
    this.restore(checkpoint)
}
