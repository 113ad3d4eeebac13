//! The Codex rollout adapter: the session logs OpenAI Codex writes to
//! `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one
//! `{"timestamp","type","payload"}` envelope a line.
//!
//! The file is one session, named by its `session_meta` id. A user prompt
//! begins a run (the prompt is kept as run metadata, `codex_prompt`); the
//! model's requests are its rounds. Content is read from the `response_item`
//! records only: the `event_msg` records `user_message`, `agent_message`
//! and `agent_reasoning` repeat the same text for a UI, and reading both
//! would double it. A function call's arguments are its JSON string as
//! sent, a custom tool's its raw input (an `apply_patch` body); a result
//! is paired with its call by `call_id`, whatever shape its output has (a
//! string, the `{output, metadata}` JSON string of older shells, a list of
//! content items).
//!
//! Usage is in `token_count` events only, and Codex re-emits them with an
//! unchanged cumulative total: a request is counted when the total moves,
//! with the size its `last_token_usage` gives (never every event's
//! `last_token_usage`, which roughly doubles the sum). The counted request's
//! usage is round metadata (`codex_usage`, the native breakdown, where
//! `cached_input_tokens` is part of `input_tokens` and
//! `reasoning_output_tokens` part of `output_tokens`), its size the token
//! gauge, and the run's sum is run metadata (`codex_run_usage`).
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut rollout = InputFormat::named("codex-rollout").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"timestamp":"2026-01-02T03:04:05Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"List files"}]}}"#,
//!     r#"{"timestamp":"2026-01-02T03:04:06Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#,
//!     r#"{"timestamp":"2026-01-02T03:04:07Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.txt"}}"#,
//! ] {
//!     rollout.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, r#"{"command":["ls"]}"#);
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{opt_cow, raw_text, raw_value, utf8, view_of};
use super::run_lists::RunLists;
use super::support::{one, report, rfc3339_ms};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::HashSet;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};
use smallvec::SmallVec;

/// The record kinds of a rollout line's envelope.
const RECORDS: [&str; 5] = ["session_meta", "turn_context", "response_item", "event_msg", "compacted"];

/// The registry row of Codex session rollouts.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let rollout = &roundup::adapters::codex_rollout::FORMAT;
/// let line = br#"{"timestamp":"2026-01-02T03:04:05Z","type":"session_meta","payload":{"id":"s1"}}"#;
/// assert_eq!(InputFormat::detect(line), rollout);
/// // Codex's `exec --json` lines are the `codex` format's.
/// assert_eq!(InputFormat::detect(br#"{"type":"turn.started"}"#).name(), "codex");
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "codex-rollout",
    about: "Codex session rollouts (~/.codex/sessions
rollout-*.jsonl: session_meta,
turn_context, response_item, event_msg);
a prompt is a run, a model request a
round; the session_meta id is the session",
    detect: |event: &Map<String, Value>| {
        // The envelope: a record kind of a rollout and an object payload
        // (`exec --json` lines have neither).
        event.get("type").and_then(Value::as_str).is_some_and(|kind| RECORDS.contains(&kind))
            && event.get("payload").is_some_and(Value::is_object)
    },
    adapter: || Box::<CodexRolloutAdapter>::default(),
};

/// Translates Codex rollout lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CodexRolloutAdapter {
    /// The first `session_meta` id, fixed once a run began.
    session: Option<String>,
    /// Where a message's or a reasoning's text is gathered (reused: not
    /// state).
    #[serde(skip)]
    text: String,
    /// A run this adapter began is open (not finished).
    open: bool,
    /// A run was begun: the session can no longer change.
    begun: bool,
    /// Run metadata said before its run began (the session's metadata,
    /// context messages, the turn's id): given to the next run.
    pending: Meta,
    /// Metadata the run gathers as lists (context messages, compactions,
    /// later `session_meta` records), by key.
    lists: RunLists,
    /// Tool calls of the open run without their output yet.
    #[serde(serialize_with = "crate::pairs::sorted_set")]
    waiting: HashSet<Box<str>>,
    /// The last content of the run was an assistant message, with no call
    /// waiting: the turn was answered (the end of a turn in files that do
    /// not write `task_complete`).
    answered: bool,
    /// What the last text of the round was (`true`: a message), to
    /// separate two whole texts of one kind that follow each other.
    last_text: Option<bool>,
    /// The latest `turn_context` model.
    model: String,
    /// The last cumulative `total_token_usage` seen: a `token_count` that
    /// repeats it is not a new request.
    last_total: Option<Value>,
    /// The open run's counted usage, field by field.
    run_usage: BTreeMap<String, u64>,
    /// The open run's counted requests.
    requests: u64,
    /// Hosted tool items (web search, image generation) that carry no
    /// call id get one made up from this count.
    hosted: u64,
}

/// A line: its record kind, time and payload's fields, read in one pass
/// and in place.
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Cow<'a, str>,
    timestamp: Option<Cow<'a, str>>,
    payload: Option<Payload<'a>>,
}

read_in_place!(Line {
    "type" => kind as CowStr (required),
    "timestamp" => timestamp as OptCow,
    "payload" => payload in place,
});

/// A line with its payload raw, for the records kept whole and for a line
/// whose payload is no object (or has a field of a type no view takes).
#[derive(Debug, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<Raw<'a>>,
}

/// A line whose payload is kept whole (the session's metadata, context,
/// compactions, hosted tools' items): read again for it, which only these
/// rare records pay, where every line would pay for holding it raw.
#[derive(Debug, Clone, Copy)]
struct Whole<'a>(&'a str);

impl Whole<'_> {
    /// The payload as a value, when the line has one.
    fn payload(self) -> Option<Value> {
        let line = serde_json::from_str::<Envelope<'_>>(self.0).ok()?;
        line.payload.map(raw_value)
    }

    /// The payload as a value; the line was read with a payload, so it has
    /// one (else the line itself is kept, as text).
    fn value(self) -> Value {
        self.payload().unwrap_or_else(|| Value::String(self.0.to_owned()))
    }

    /// The payload's JSON as sent.
    fn json(self) -> String {
        match serde_json::from_str::<Envelope<'_>>(self.0) {
            Ok(Envelope { payload: Some(raw), .. }) => raw.get().to_owned(),
            _ => self.0.to_owned(),
        }
    }
}

/// A payload's fields, borrowed: one view for every record kind, each
/// field kept raw (a value of an unexpected type then never makes the
/// line unreadable; it is read where it is used).
#[derive(Debug, Default)]
struct Payload<'a> {
    kind: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    call_id: Option<Cow<'a, str>>,
    role: Option<Raw<'a>>,
    content: Option<Raw<'a>>,
    summary: Option<Raw<'a>>,
    encrypted_content: Option<Raw<'a>>,
    phase: Option<Raw<'a>>,
    name: Option<Raw<'a>>,
    namespace: Option<Raw<'a>>,
    arguments: Option<Raw<'a>>,
    input: Option<Raw<'a>>,
    action: Option<Raw<'a>>,
    output: Option<Raw<'a>>,
    tools: Option<Raw<'a>>,
    status: Option<Raw<'a>>,
    model: Option<Raw<'a>>,
    info: Option<Raw<'a>>,
    rate_limits: Option<Raw<'a>>,
    turn_id: Option<Raw<'a>>,
    reason: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    message: Option<Raw<'a>>,
    thread_name: Option<Raw<'a>>,
    model_context_window: Option<Raw<'a>>,
}

read_in_place!(Payload {
    "type" => kind as OptCow,
    "id" => id as ScalarText,
    "call_id" => call_id as ScalarText,
    "role" => role,
    "content" => content,
    "summary" => summary,
    "encrypted_content" => encrypted_content,
    "phase" => phase,
    "name" => name,
    "namespace" => namespace,
    "arguments" => arguments,
    "input" => input,
    "action" => action,
    "output" => output,
    "tools" => tools,
    "status" => status,
    "model" => model,
    "info" => info,
    "rate_limits" => rate_limits,
    "turn_id" => turn_id,
    "reason" => reason,
    "error" => error,
    "message" => message,
    "thread_name" => thread_name,
    "model_context_window" => model_context_window,
});

/// A `token_count`'s `info`.
#[derive(Debug, Deserialize)]
struct TokenInfo<'a> {
    #[serde(borrow, default)]
    total_token_usage: Option<Raw<'a>>,
    #[serde(borrow, default)]
    last_token_usage: Option<Raw<'a>>,
    #[serde(borrow, default)]
    model: Option<Raw<'a>>,
    #[serde(borrow, default)]
    model_context_window: Option<Raw<'a>>,
}

/// The `event_msg` kinds that repeat what a `response_item` says (the
/// prompt, the answer, the reasoning summary, a tool's begin and end) or
/// show progress a round does not hold: read, and nothing more to do.
const ECHOES: [&str; 24] = [
    "user_message",
    "agent_message",
    "agent_message_delta",
    "agent_reasoning",
    "agent_reasoning_delta",
    "agent_reasoning_raw_content",
    "agent_reasoning_raw_content_delta",
    "agent_reasoning_section_break",
    "exec_command_begin",
    "exec_command_output_delta",
    "exec_command_end",
    "patch_apply_begin",
    "patch_apply_end",
    "mcp_tool_call_begin",
    "mcp_tool_call_end",
    "web_search_begin",
    "web_search_end",
    "image_generation_begin",
    "image_generation_end",
    "view_image_tool_call",
    "context_compacted",
    "item_started",
    "item_completed",
    "turn_diff",
];

/// Opening tags of the user-role items Codex writes as context for the
/// model (the environment, AGENTS.md instructions, a note that a turn was
/// aborted): context, not a prompt.
const CONTEXT_TAGS: [&str; 6] = [
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<turn_aborted>",
    "<subagent_notification>",
];

impl Adapter for CodexRolloutAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        // One pass reads the envelope and its payload's fields. A line
        // whose payload is no object (or has a field of a type no view
        // takes) is read again for its envelope alone.
        let mut line = Line::default();
        let (kind, timestamp, item) = match Line::read_into(text, &mut line) {
            Ok(()) => (line.kind, line.timestamp, line.payload),
            Err(_) => {
                let line: Envelope<'_> = serde_json::from_str(text).map_err(|error| BadLine::json(&error))?;
                (line.kind, line.timestamp, None)
            }
        };
        if let Some(at_ms) = timestamp.as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
        }
        let kind = kind.as_ref();
        let whole = Whole(text);
        let Some(item) = item.filter(|_| RECORDS.contains(&kind)) else {
            // A record kind this adapter does not know (or a payload that
            // is no object): kept whole.
            if kind == "world_state" {
                if let Some(world) = whole.payload() {
                    self.run_meta("codex_world_state", world, calls);
                    return Ok(());
                }
            }
            self.unknown(payload, calls);
            return Ok(());
        };
        match kind {
            "session_meta" => self.session_meta(&item, whole, calls),
            "turn_context" => {
                if let Some(model) = item.model.filter(|m| m.get() != "null").map(raw_text) {
                    model.as_ref().clone_into(&mut self.model);
                }
                self.run_meta("codex_turn_context", whole.value(), calls);
            }
            "compacted" => self.push("codex_compacted", whole.value(), calls),
            "response_item" => {
                if !self.response_item(&item, whole, calls) {
                    self.unknown(payload, calls);
                }
            }
            _ => {
                if !self.event(&item, calls) {
                    self.unknown(payload, calls);
                }
            }
        }
        Ok(())
    }

    /// A file that ends on an answered turn with no `task_complete` (the
    /// files of older versions) completed that turn. Metadata said after
    /// the last run (context, a compaction) is a run of its own rather than
    /// lost.
    fn end(&mut self, calls: &mut dyn CallSink) {
        if self.open && self.answered && self.waiting.is_empty() {
            self.finish(FinishReason::Completed, calls);
        }
        if !self.pending.is_empty() {
            self.begin(calls);
        }
        if self.open {
            // Left running: the end of input finishes it.
            self.give_lists(calls);
        }
    }
}

impl CodexRolloutAdapter {
    fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// A line that means nothing here: anomaly `unknown_event`, keeping it.
    fn unknown(&self, payload: &[u8], calls: &mut dyn CallSink) {
        let detail = format!("codex-rollout: unknown record: {}", String::from_utf8_lossy(payload));
        report(calls, self.session(), AnomalyKind::UnknownEvent, &detail);
    }

    /// Run metadata: to the open run, else kept for the next one.
    fn run_meta(&mut self, key: &str, value: Value, calls: &mut dyn CallSink) {
        if self.open {
            calls.call(self.session(), Call::RunMeta { meta: &one(key, value) });
        } else {
            self.pending.insert(key.to_owned(), value);
        }
    }

    /// One more item of a list the run gathers: the list is given at its
    /// first item, and whole as the run ends (`run_lists`).
    fn push(&mut self, key: &str, value: Value, calls: &mut dyn CallSink) {
        let Some(first) = self.lists.push(key, value) else { return };
        for (key, list) in first {
            self.run_meta(&key, list, calls);
        }
    }

    /// The open run's lists, whole, as it ends.
    fn give_lists(&mut self, calls: &mut dyn CallSink) {
        if let Some(meta) = self.lists.end_run() {
            calls.call(self.session(), Call::RunMeta { meta: &meta });
        }
    }

    /// Ends the open run.
    fn finish(&mut self, reason: FinishReason, calls: &mut dyn CallSink) {
        if std::mem::take(&mut self.open) {
            // The run's lists are given whole and start empty: with no
            // run open, the lists are those of the metadata waiting for
            // the next one.
            self.give_lists(calls);
            calls.call(self.session(), Call::Finish { reason });
        }
        self.waiting.clear();
        self.answered = false;
        self.last_text = None;
    }

    /// A new turn begins: the open run ends, completed if its turn was
    /// answered, else interrupted (its calls got no output).
    fn end_turn(&mut self, calls: &mut dyn CallSink) {
        if self.open {
            let answered = self.answered && self.waiting.is_empty();
            self.finish(if answered { FinishReason::Completed } else { FinishReason::Interrupted }, calls);
        }
    }

    /// Begins a run, with the metadata said before it.
    fn begin(&mut self, calls: &mut dyn CallSink) {
        self.end_turn(calls);
        self.begun = true;
        self.open = true;
        self.run_usage.clear();
        self.requests = 0;
        calls.call(self.session(), Call::Start);
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            calls.call(self.session(), Call::RunMeta { meta: &pending });
        }
    }

    /// Content with no run open (a file that starts mid-turn, a turn
    /// whose prompt is not in the file) begins one.
    fn ensure_open(&mut self, calls: &mut dyn CallSink) {
        if !self.open {
            self.begin(calls);
        }
    }

    fn session_meta(&mut self, item: &Payload<'_>, whole: Whole<'_>, calls: &mut dyn CallSink) {
        if self.session.is_none() && !self.begun {
            self.session = item.id.as_deref().map(str::to_owned);
        }
        // Forks and sub-agents repeat their parents' records: every one is
        // kept, the first names the session.
        self.push("codex_session_meta", whole.value(), calls);
    }

    /// A `response_item`; `false` for an item type this adapter does not
    /// know.
    fn response_item(&mut self, item: &Payload<'_>, whole: Whole<'_>, calls: &mut dyn CallSink) -> bool {
        let kind = item.kind.as_deref().unwrap_or("");
        match kind {
            "message" => self.message(item, whole, calls),
            "reasoning" => self.reasoning(item, calls),
            "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call" => {
                let id = item.call_id.as_deref().or(item.id.as_deref()).unwrap_or("");
                let name = match kind {
                    "local_shell_call" => Cow::Borrowed("local_shell"),
                    "tool_search_call" => Cow::Borrowed("tool_search"),
                    _ => item.name.map(raw_text).unwrap_or_default(),
                };
                let arguments = match kind {
                    "function_call" | "tool_search_call" => item.arguments,
                    "custom_tool_call" => item.input,
                    _ => item.action,
                };
                self.tool_call(id, &name, arguments, calls);
                if let Some(namespace) = item.namespace.filter(|n| n.get() != "null") {
                    calls.call(
                        self.session(),
                        Call::ToolMeta { id, meta: &one("codex_namespace", raw_value(namespace)) },
                    );
                }
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" | "tool_search_output" => {
                let id = item.call_id.as_deref().unwrap_or("");
                self.result(id, item, calls);
            }
            "web_search_call" | "image_generation_call" => {
                // Hosted tools: the call and its result are one item.
                self.hosted = self.hosted.wrapping_add(1);
                let made_up;
                let id = match item.id.as_deref().or(item.call_id.as_deref()) {
                    Some(id) => id,
                    None => {
                        made_up = format!("{kind}-{}", self.hosted);
                        &made_up
                    }
                };
                let name = kind.trim_end_matches("_call");
                let arguments = if kind == "web_search_call" { item.action } else { None };
                self.tool_call(id, name, arguments, calls);
                let failed = item.status.map(raw_text).is_some_and(|status| status == "failed");
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                self.waiting.remove(id);
                calls.call(self.session(), Call::ToolUpdate { id, content: &whole.json(), status });
            }
            // The inter-agent messages of a collaboration: what another
            // agent said, context of this one.
            "agent_message" => self.push("codex_context", whole.value(), calls),
            // An undo checkpoint, and the encrypted summary that replaces
            // history on compaction: state, kept with the run.
            "ghost_snapshot" | "compaction" | "compaction_summary" => {
                self.push("codex_compacted", whole.value(), calls)
            }
            _ => return false,
        }
        true
    }

    fn message(&mut self, item: &Payload<'_>, whole: Whole<'_>, calls: &mut dyn CallSink) {
        let role = item.role.map(raw_text).unwrap_or_default();
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let others = content_text_into(item.content, &mut text);
        match role.as_ref() {
            "assistant" => {
                self.ensure_open(calls);
                // Whole messages that follow each other in a round are
                // paragraphs, not fragments of one.
                if self.last_text.replace(true) == Some(true) && !text.is_empty() {
                    text.insert_str(0, "\n\n");
                }
                calls.call(self.session(), Call::Message { text: &text });
                if let Some(phase) = item.phase.filter(|p| p.get() != "null") {
                    calls.call(self.session(), Call::RoundMeta { meta: &one("codex_phase", raw_value(phase)) });
                }
                if !others.is_empty() {
                    calls.call(self.session(), Call::RoundMeta { meta: &one("codex_content", Value::Array(others)) });
                }
                self.answered = self.waiting.is_empty();
            }
            "user" if !is_context(&text) => {
                self.begin(calls);
                calls.call(self.session(), Call::RunMeta { meta: &one("codex_prompt", Value::String(text.clone())) });
                if !others.is_empty() {
                    let meta = one("codex_prompt_attachments", Value::Array(others));
                    calls.call(self.session(), Call::RunMeta { meta: &meta });
                }
            }
            // Developer and system instructions, the environment, AGENTS.md.
            _ => self.push("codex_context", whole.value(), calls),
        }
        self.text = text;
    }

    fn reasoning(&mut self, item: &Payload<'_>, calls: &mut dyn CallSink) {
        self.ensure_open(calls);
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        content_text_into(item.summary, &mut text);
        if text.is_empty() {
            content_text_into(item.content, &mut text);
        }
        if self.last_text.replace(false) == Some(false) && !text.is_empty() {
            text.insert_str(0, "\n\n");
        }
        calls.call(self.session(), Call::Thought { text: &text });
        self.text = text;
        // Opaque, but what lets the model's reasoning be sent back.
        if let Some(encrypted) = item.encrypted_content.filter(|e| e.get() != "null") {
            let meta = one("codex_encrypted_reasoning", Value::Array(vec![raw_value(encrypted)]));
            calls.call(self.session(), Call::RoundMeta { meta: &meta });
        }
        self.answered = false;
    }

    fn tool_call(&mut self, id: &str, name: &str, arguments: Option<Raw<'_>>, calls: &mut dyn CallSink) {
        self.ensure_open(calls);
        calls.call(self.session(), Call::ToolCall { id, title: name, name });
        if let Some(arguments) = arguments.filter(|a| a.get() != "null") {
            calls.call(self.session(), Call::ArgsSnapshot { id, args: &raw_text(arguments) });
        }
        self.waiting.insert(id.into());
        self.answered = false;
        self.last_text = None;
    }

    /// A tool's output, paired by `call_id`.
    fn result(&mut self, id: &str, item: &Payload<'_>, calls: &mut dyn CallSink) {
        self.ensure_open(calls);
        let output = item.output.filter(|o| o.get() != "null").or(item.tools);
        let (content, metadata, failed) = output.map_or((String::new(), None, false), output_text);
        if let Some(metadata) = metadata {
            calls.call(self.session(), Call::ToolMeta { id, meta: &one("codex_output_metadata", metadata) });
        }
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        calls.call(self.session(), Call::ToolUpdate { id, content: &content, status });
        self.waiting.remove(id);
        self.last_text = None;
    }

    /// An `event_msg`; `false` for an event this adapter does not know.
    fn event(&mut self, item: &Payload<'_>, calls: &mut dyn CallSink) -> bool {
        let kind = item.kind.as_deref().unwrap_or("");
        match kind {
            "token_count" => self.token_count(item, calls),
            "task_started" => {
                // A new turn: the one before it is over.
                self.end_turn(calls);
                if let Some(turn) = item.turn_id {
                    self.run_meta("codex_turn_id", raw_value(turn), calls);
                }
                if let Some(window) = item.model_context_window {
                    self.run_meta("codex_model_context_window", raw_value(window), calls);
                }
            }
            "task_complete" => {
                let error = item.error.filter(|e| e.get() != "null");
                if let Some(error) = error {
                    let detail = format!("codex-rollout: task_complete: {}", error.get());
                    report(calls, self.session(), AnomalyKind::ProtocolError, &detail);
                }
                self.finish(if error.is_some() { FinishReason::Failed } else { FinishReason::Completed }, calls);
            }
            "turn_aborted" => {
                if let Some(reason) = item.reason {
                    self.run_meta("codex_abort_reason", raw_value(reason), calls);
                }
                self.finish(FinishReason::Canceled, calls);
            }
            "error" | "stream_error" => {
                let message = item.message.map(raw_text).unwrap_or_default();
                report(calls, self.session(), AnomalyKind::ProtocolError, &format!("codex-rollout: {kind}: {message}"));
            }
            "thread_name_updated" => {
                if let Some(name) = item.thread_name {
                    self.run_meta("codex_thread_name", raw_value(name), calls);
                }
            }
            kind if ECHOES.contains(&kind) || kind.starts_with("collab_") || kind.starts_with("dynamic_tool_call") => {}
            _ => return false,
        }
        true
    }

    /// A `token_count`: a request is counted when the cumulative total
    /// moves (Codex re-emits the last one unchanged); `info: null` is a
    /// rate-limit refresh.
    fn token_count(&mut self, item: &Payload<'_>, calls: &mut dyn CallSink) {
        let info =
            item.info.filter(|i| i.get() != "null").and_then(|i| serde_json::from_str::<TokenInfo<'_>>(i.get()).ok());
        let Some(info) = info else {
            if let Some(limits) = item.rate_limits.filter(|l| l.get() != "null") {
                self.run_meta("codex_rate_limits", raw_value(limits), calls);
            }
            return;
        };
        let total = info.total_token_usage.map(raw_value);
        if total.is_some() && total == self.last_total {
            return;
        }
        // The request's size: its own figures, else what the total moved.
        let last = match (info.last_token_usage.map(raw_value), &total, &self.last_total) {
            (Some(last), _, _) => last,
            (None, Some(Value::Object(now)), before) => {
                let before = before.as_ref().and_then(Value::as_object);
                let delta = now.iter().filter_map(|(key, value)| {
                    let was = before.and_then(|b| b.get(key)).and_then(Value::as_u64).unwrap_or(0);
                    value.as_u64().map(|now| (key.clone(), Value::from(now.saturating_sub(was))))
                });
                Value::Object(delta.collect())
            }
            _ => return,
        };
        if total.is_some() {
            self.last_total.clone_from(&total);
        }
        self.ensure_open(calls);
        let field = |name: &str| last.get(name).and_then(Value::as_u64);
        let size = field("total_tokens")
            .unwrap_or_else(|| field("input_tokens").unwrap_or(0).saturating_add(field("output_tokens").unwrap_or(0)));
        let model = info.model.map(raw_value).unwrap_or_else(|| Value::String(self.model.clone()));
        let mut round = one("codex_usage", last.clone());
        if model.as_str() != Some("") {
            round.insert("codex_model".into(), model);
        }
        calls.call(self.session(), Call::RoundMeta { meta: &round });
        calls.call(self.session(), Call::TokenUsage { total: size });
        if let Some(fields) = last.as_object() {
            for (key, value) in fields {
                if let Some(n) = value.as_u64() {
                    let sum = self.run_usage.entry(key.clone()).or_default();
                    *sum = sum.saturating_add(n);
                }
            }
        }
        self.requests = self.requests.saturating_add(1);
        let mut run = Meta::new();
        let usage = self.run_usage.iter().map(|(key, n)| (key.clone(), Value::from(*n)));
        run.insert("codex_run_usage".into(), Value::Object(usage.collect()));
        run.insert("codex_requests".into(), Value::from(self.requests));
        if let Some(total) = total {
            run.insert("codex_total_token_usage".into(), total);
        }
        if let Some(window) = info.model_context_window.filter(|w| w.get() != "null") {
            run.insert("codex_model_context_window".into(), raw_value(window));
        }
        if let Some(limits) = item.rate_limits.filter(|l| l.get() != "null") {
            run.insert("codex_rate_limits".into(), raw_value(limits));
        }
        calls.call(self.session(), Call::RunMeta { meta: &run });
    }
}

/// Whether a user-role text is context Codex wrote for the model.
fn is_context(text: &str) -> bool {
    let text = text.trim_start();
    CONTEXT_TAGS.iter().any(|tag| text.starts_with(tag))
}

/// The text of a list of content items (`input_text`, `output_text`,
/// `summary_text`, `reasoning_text`), joined as paragraphs, and the items
/// that are not text (images), kept as they came. A bare string is its own
/// text.
fn content_text(content: Option<Raw<'_>>) -> (String, Vec<Value>) {
    let mut text = String::new();
    let others = content_text_into(content, &mut text);
    (text, others)
}

/// [`content_text`] into `text` (an empty buffer, reused).
fn content_text_into(content: Option<Raw<'_>>, text: &mut String) -> Vec<Value> {
    let Some(content) = content.filter(|c| c.get() != "null") else { return Vec::new() };
    // Most lists hold text items only: read in one pass. A list with any
    // other item is read again, item by item, to keep those whole.
    if let Some(parts) = view_of::<SmallVec<[Part<'_>; 2]>>(content) {
        if parts.iter().all(|part| part.text().is_some()) {
            for part in parts.iter().filter_map(Part::text) {
                paragraph(text, part);
            }
            return Vec::new();
        }
    }
    let Some(items) = view_of::<Vec<Raw<'_>>>(content) else {
        text.push_str(&raw_text(content));
        return Vec::new();
    };
    let mut others = Vec::new();
    for item in items {
        match item_text(item) {
            Some(part) => paragraph(text, &part),
            None => others.push(raw_value(item)),
        }
    }
    others
}

/// Adds `part` to `text` as a paragraph of its own (after a blank line,
/// unless `text` is empty).
fn paragraph(text: &mut String, part: &str) {
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(part);
}

/// A content item's type and text.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, rename = "type", deserialize_with = "opt_cow", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "opt_cow", default)]
    text: Option<Cow<'a, str>>,
}

impl Part<'_> {
    /// The item's text, when it is a text item.
    fn text(&self) -> Option<&str> {
        let textual = matches!(
            self.kind.as_deref(),
            Some("input_text" | "output_text" | "summary_text" | "reasoning_text" | "text" | "refusal")
        );
        self.text.as_deref().filter(|_| textual)
    }
}

/// A content item's text, when it is a text item.
fn item_text(item: Raw<'_>) -> Option<String> {
    serde_json::from_str::<Part<'_>>(item.get()).ok()?.text().map(str::to_owned)
}

/// A tool's output as result text, with the metadata it carried and
/// whether it says the tool failed. A string is its text, unless it is the
/// `{"output", "metadata"}` JSON of older shells (a non-zero `exit_code`
/// is a failure); a list of text items is their text; anything else is its
/// JSON as sent.
fn output_text(output: Raw<'_>) -> (String, Option<Value>, bool) {
    #[derive(Deserialize)]
    struct Wrapped<'a> {
        #[serde(borrow)]
        output: Cow<'a, str>,
        #[serde(default)]
        metadata: Option<Value>,
    }
    /// An older payload: `{"content", "success"}`.
    #[derive(Deserialize)]
    struct Payload<'a> {
        #[serde(borrow)]
        content: Cow<'a, str>,
        #[serde(default)]
        success: Option<bool>,
    }
    let json = output.get();
    if json.starts_with('"') {
        let text = raw_text(output);
        if text.starts_with('{') {
            if let Ok(wrapped) = serde_json::from_str::<Wrapped<'_>>(&text) {
                let exit = wrapped.metadata.as_ref().and_then(|m| m.get("exit_code")).and_then(Value::as_i64);
                return (wrapped.output.into_owned(), wrapped.metadata, exit.is_some_and(|code| code != 0));
            }
        }
        return (text.into_owned(), None, false);
    }
    if json.starts_with('[') {
        let (text, others) = content_text(Some(output));
        if others.is_empty() {
            return (text, None, false);
        }
        return (json.to_owned(), None, false);
    }
    if json.starts_with('{') {
        if let Some(text) = item_text(output) {
            return (text, None, false);
        }
        if let Ok(payload) = serde_json::from_str::<Payload<'_>>(json) {
            return (payload.content.into_owned(), None, payload.success == Some(false));
        }
    }
    (json.to_owned(), None, false)
}
