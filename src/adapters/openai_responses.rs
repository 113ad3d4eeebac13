//! The OpenAI Responses adapter: `response.*` stream events (SSE, or one
//! event per line), and the host's `function_call_output` items between
//! responses in a recorded agent loop.
//!
//! A response is one model call. Output items are keyed by their
//! `output_index` within the response (some gateways rotate `item_id` on
//! every event), tool calls by their `call_id` (what results name).
//! Arguments are final at their `.done` event, which replaces what the
//! deltas built; `output_text.done` repeats the text and is not appended.
//! Hosted tools (web search, file search, code interpreter, MCP, shell)
//! have their result in the stream.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut responses = InputFormat::named("openai-responses").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"response.created","response":{"id":"resp_1","model":"gpt"}}"#,
//!     r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ls","arguments":""}}"#,
//!     r#"{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{\"p\":"}"#,
//!     r#"{"type":"response.function_call_arguments.done","output_index":0,"item_id":"fc_1","arguments":"{\"p\":\".\"}"}"#,
//!     r#"{"type":"function_call_output","call_id":"call_1","output":"a.txt"}"#,
//! ] {
//!     responses.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, r#"{"p":"."}"#);
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{opt_cow, raw_text, raw_text_in, raw_value, scalar_text, utf8};
use super::support::{is_done_marker, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of OpenAI Responses streams.
///
/// ```
/// let responses = &roundup::adapters::openai_responses::FORMAT;
/// let event = br#"{"type":"response.created","response":{"id":"resp_1"}}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(event), responses);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "openai-responses",
    about: "OpenAI Responses stream events, with
the host's function_call_output items
between responses; one session",
    detect: |event: &Map<String, Value>| {
        event.get("type").and_then(Value::as_str).is_some_and(|kind| {
            kind.starts_with("response.") || kind == "function_call_output" || kind == "custom_tool_call_output"
        })
    },
    adapter: || Box::<OpenAiResponsesAdapter>::default(),
};

/// Translates Responses stream events into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OpenAiResponsesAdapter {
    /// The response being read: its id and model.
    response: String,
    model: String,
    /// Tool calls (and their output items) by `output_index` within the
    /// response.
    tools: SmallVec<[(u64, String); 4]>,
    /// The latest call of each item type, for an output item that names
    /// no `call_id` (`tool_search_output` after its `tool_search_call`).
    latest: SmallVec<[(String, String); 2]>,
    /// The reasoning summary part being streamed, to separate parts.
    summary_part: Option<(u64, u64)>,
    /// An `error` event was reported: the `response.failed` that follows
    /// ends the run without a second anomaly (or the end of input does).
    failed: bool,
    /// The response being read declared a call the host runs: its end is
    /// not the turn's (the host answers, then calls again).
    #[serde(default)]
    host_calls: bool,
    /// A response ended the run: the next response, or the host's next
    /// message, begins the next.
    #[serde(default)]
    finished: bool,
    /// Where an escaped text fragment is decoded (reused: not state).
    #[serde(skip)]
    scratch: String,
}

/// Read in place ([`read_in_place!`]).
#[derive(Debug, Default)]
struct Event<'a> {
    kind: Cow<'a, str>,
    output_index: Option<u64>,
    summary_index: Option<u64>,
    delta: Option<Raw<'a>>,
    arguments: Option<Cow<'a, str>>,
    input: Option<Cow<'a, str>>,
    item: Option<Raw<'a>>,
    response: Option<Response<'a>>,
    annotation: Option<Raw<'a>>,
    /// `error`: the error, or its fields at the top.
    error: Option<Raw<'a>>,
    message: Option<Cow<'a, str>>,
    code: Option<Raw<'a>>,
    /// A host item: `function_call_output` and its kin.
    call_id: Option<Cow<'a, str>>,
    output: Option<Raw<'a>>,
    role: Option<Cow<'a, str>>,
    content: Option<Raw<'a>>,
}

read_in_place!(Event {
    "type" => kind as CowStr (required),
    "output_index" => output_index,
    "summary_index" => summary_index,
    "delta" => delta,
    "arguments" => arguments as OptCow,
    "input" => input as OptCow,
    "item" => item,
    "response" => response in place,
    "annotation" => annotation,
    "error" => error,
    "message" => message as OptCow,
    "code" => code,
    "call_id" => call_id as ScalarText,
    "output" => output,
    "role" => role as OptCow,
    "content" => content,
});

#[derive(Debug, Default)]
struct Response<'a> {
    id: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    status: Option<Cow<'a, str>>,
    usage: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    incomplete_details: Option<Raw<'a>>,
}

read_in_place!(Response {
    "id" => id as OptCow,
    "model" => model as OptCow,
    "status" => status as OptCow,
    "usage" => usage,
    "error" => error,
    "incomplete_details" => incomplete_details,
});

/// An output item.
#[derive(Debug, Deserialize)]
struct Item<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "scalar_text")]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Raw<'a>>,
    #[serde(borrow, default)]
    input: Option<Raw<'a>>,
    #[serde(borrow, default)]
    action: Option<Raw<'a>>,
    #[serde(borrow, default)]
    operation: Option<Raw<'a>>,
    #[serde(borrow, default)]
    code: Option<Raw<'a>>,
    #[serde(borrow, default)]
    output: Option<Raw<'a>>,
    #[serde(borrow, default)]
    error: Option<Raw<'a>>,
}

/// Items that are tool calls: their result comes from the host.
/// (A tool search's or a shell's result is an output item of its own.)
const CLIENT_TOOLS: [&str; 7] = [
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "tool_search_call",
    "computer_call",
];
/// Items that are tool calls whose result is the item itself, when done.
const HOSTED_TOOLS: [&str; 5] =
    ["web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"];
/// Items that are a result for an earlier call (by `call_id`).
const RESULTS: [&str; 6] = [
    "function_call_output",
    "custom_tool_call_output",
    "shell_call_output",
    "tool_search_output",
    "local_shell_call_output",
    "computer_call_output",
];
/// The streamed argument deltas, by event type.
const ARGUMENT_DELTAS: [&str; 6] = [
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
    "response.mcp_call_arguments.delta",
    "response.shell_call_command.delta",
    "response.apply_patch_call_operation_diff.delta",
    "response.code_interpreter_call_code.delta",
];

impl Adapter for OpenAiResponsesAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        if is_done_marker(payload) {
            return Ok(());
        }
        let mut event = Event::default();
        Event::read_into(utf8(payload)?, &mut event).map_err(|error| BadLine::json(&error))?;
        // A user message begins a run of its own (below); a response
        // after one that ended the turn begins the next.
        let begins = event.kind == "response.created";
        if self.finished && begins {
            self.finished = false;
            calls.call(None, Call::Start);
        }
        if !self.event(&event, calls) {
            let detail = format!("openai-responses: unknown event: {}", String::from_utf8_lossy(payload));
            report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
        Ok(())
    }

    /// An `error` with no `response.failed` after it still ends the run.
    fn end(&mut self, calls: &mut dyn CallSink) {
        if std::mem::take(&mut self.failed) {
            calls.call(None, Call::Finish { reason: FinishReason::Failed });
        }
    }
}

impl OpenAiResponsesAdapter {
    /// One event; `false` when it is not one the adapter knows.
    fn event(&mut self, event: &Event<'_>, calls: &mut dyn CallSink) -> bool {
        let kind = event.kind.as_ref();
        match kind {
            "response.created" | "response.in_progress" => {
                let Some(response) = &event.response else { return true };
                let id = response.id.as_deref().unwrap_or("");
                if id != self.response {
                    self.response = id.to_owned();
                    self.model = response.model.as_deref().unwrap_or("").to_owned();
                    self.tools.clear();
                    self.summary_part = None;
                    self.failed = false;
                    self.host_calls = false;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                calls.call(None, Call::Message { text: delta_text(event, &mut self.scratch) });
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let part = (event.output_index.unwrap_or(0), event.summary_index.unwrap_or(0));
                if self.summary_part.is_some_and(|last| last != part) {
                    calls.call(None, Call::Thought { text: "\n\n" });
                }
                self.summary_part = Some(part);
                calls.call(None, Call::Thought { text: delta_text(event, &mut self.scratch) });
            }
            "response.output_item.added" => return self.item(event, false, calls),
            "response.output_item.done" => return self.item(event, true, calls),
            "response.function_call_arguments.done" | "response.mcp_call_arguments.done" => {
                self.snapshot(event.output_index, event.arguments.as_deref(), calls);
            }
            "response.custom_tool_call_input.done" => self.snapshot(event.output_index, event.input.as_deref(), calls),
            kind if ARGUMENT_DELTAS.contains(&kind) => {
                let Some(id) = self.tool(event.output_index) else {
                    let detail = format!(
                        "openai-responses: {kind} for output {:?}, which is no tool call: {}",
                        event.output_index,
                        event.delta.map_or("null", Raw::get)
                    );
                    report(calls, None, AnomalyKind::UnknownToolCall, &detail);
                    return true;
                };
                let id = id.to_owned();
                let delta = delta_text(event, &mut self.scratch);
                calls.call(None, Call::ToolUpdate { id: &id, content: delta, status: ToolCallStatus::InProgress });
            }
            "response.shell_call_output_content.delta" | "response.code_interpreter_call_output.delta" => {
                // Live output of a hosted tool, into the call it belongs to.
                let Some(id) = self.tool(event.output_index) else { return false };
                let id = id.to_owned();
                calls.call(
                    None,
                    Call::ToolOutput { id: &id, content: delta_text(event, &mut self.scratch), replace: false },
                );
            }
            "response.output_text.annotation.added" => {
                let annotation = event.annotation.map(raw_value).unwrap_or(Value::Null);
                calls.call(None, Call::RoundMeta { meta: &one("openai_annotations", Value::Array(vec![annotation])) });
            }
            "response.completed" | "response.incomplete" | "response.failed" => self.response_end(event, calls),
            "error" => {
                let detail = match event.error {
                    Some(error) => format!("openai-responses: error: {}", error.get()),
                    None => format!(
                        "openai-responses: error {}: {}",
                        event.code.map_or("null", Raw::get),
                        event.message.as_deref().unwrap_or("")
                    ),
                };
                report(calls, None, AnomalyKind::ProtocolError, &detail);
                self.failed = true;
            }
            kind if RESULTS.contains(&kind) => {
                let id = event.call_id.as_deref().unwrap_or("");
                let output = event.output.map(raw_text).unwrap_or_default();
                calls.call(None, Call::ToolUpdate { id, content: &output, status: ToolCallStatus::Completed });
            }
            "message" if event.role.as_deref() == Some("user") => {
                self.finished = false;
                calls.call(None, Call::Start);
                let content = event.content.map(raw_value).unwrap_or(Value::Null);
                calls.call(None, Call::RunMeta { meta: &one("openai_user_message", content) });
            }
            // What repeats what the deltas said (`output_text.done`), or
            // marks progress with nothing for a round (a part added, a
            // hosted tool searching).
            kind if kind.starts_with("response.")
                && [".done", ".added", ".in_progress", ".searching", ".generating", ".interpreting", ".completed"]
                    .iter()
                    .any(|suffix| kind.ends_with(suffix)) => {}
            _ => return false,
        }
        true
    }

    /// An output item added (`done: false`) or done.
    fn item(&mut self, event: &Event<'_>, done: bool, calls: &mut dyn CallSink) -> bool {
        let Some(raw) = event.item else { return false };
        let Ok(item) = serde_json::from_str::<Item<'_>>(raw.get()) else {
            report(calls, None, AnomalyKind::UnknownContent, &format!("openai-responses: output item: {}", raw.get()));
            return true;
        };
        let kind = item.kind.as_ref();
        let named = item.call_id.as_deref().or(item.id.as_deref()).unwrap_or("");
        let id = match (item.call_id.as_deref(), kind.strip_suffix("_output")) {
            // An output that names no call answers the latest call of its
            // kind.
            (None, Some(call_kind)) => self
                .latest
                .iter()
                .find(|(latest_kind, _)| latest_kind.strip_suffix("_call") == Some(call_kind))
                .map_or(named, |(_, id)| id.as_str()),
            _ => named,
        };
        let id = &id.to_owned();
        let client = CLIENT_TOOLS.contains(&kind);
        let hosted = HOSTED_TOOLS.contains(&kind);
        if client || hosted {
            if self.tool(event.output_index) != Some(id) {
                let title = item.name.as_deref().unwrap_or(kind);
                calls.call(None, Call::ToolCall { id, title, name: title });
                self.host_calls |= client;
                let mut meta = Meta::new();
                meta.insert("openai_item_type".into(), Value::from(kind));
                if let Some(item_id) = item.id.as_deref().filter(|item_id| *item_id != id) {
                    meta.insert("openai_item_id".into(), Value::from(item_id));
                }
                calls.call(None, Call::ToolMeta { id, meta: &meta });
                self.remember(event.output_index, id);
                self.latest.retain(|(latest_kind, _)| latest_kind != kind);
                self.latest.push((kind.to_owned(), id.clone()));
            }
            if !done {
                return true;
            }
            let arguments = item.arguments.or(item.input).or(item.action).or(item.operation).or(item.code);
            if let Some(arguments) = arguments {
                calls.call(None, Call::ArgsSnapshot { id, args: &raw_text(arguments) });
            }
            if hosted {
                let failed = item.error.is_some_and(|e| e.get() != "null")
                    || matches!(item.status.as_deref(), Some("failed" | "incomplete"));
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                calls.call(None, Call::ToolUpdate { id, content: raw.get(), status });
            }
            return true;
        }
        if RESULTS.contains(&kind) {
            if !done {
                self.remember(event.output_index, id);
            } else {
                // The output, or (a tool search's `tools`) the item.
                let output = item.output.map_or(Cow::Borrowed(raw.get()), raw_text);
                let failed = matches!(item.status.as_deref(), Some("failed" | "incomplete"));
                let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                calls.call(None, Call::ToolUpdate { id, content: &output, status });
            }
            return true;
        }
        match kind {
            // Text streams through its deltas.
            "message" => {}
            // A reasoning item is sent back with the next request (its
            // `encrypted_content`): kept whole.
            "reasoning" if done => {
                let meta = one("openai_reasoning_items", Value::Array(vec![raw_value(raw)]));
                calls.call(None, Call::RoundMeta { meta: &meta });
            }
            "reasoning" => {}
            _ if done => {
                report(
                    calls,
                    None,
                    AnomalyKind::UnknownContent,
                    &format!("openai-responses: output item: {}", raw.get()),
                );
            }
            _ => {}
        }
        true
    }

    /// The arguments of the call at `output_index`, final.
    fn snapshot(&mut self, output_index: Option<u64>, arguments: Option<&str>, calls: &mut dyn CallSink) {
        let Some(args) = arguments else { return };
        match self.tool(output_index) {
            Some(id) => {
                let id = id.to_owned();
                calls.call(None, Call::ArgsSnapshot { id: &id, args });
            }
            None => {
                let detail = format!(
                    "openai-responses: final arguments for output {output_index:?}, which is no tool call: {args}"
                );
                report(calls, None, AnomalyKind::UnknownToolCall, &detail);
            }
        }
    }

    fn remember(&mut self, output_index: Option<u64>, id: &str) {
        let index = output_index.unwrap_or(u64::MAX);
        self.tools.retain(|(i, _)| *i != index);
        self.tools.push((index, id.to_owned()));
    }

    fn tool(&self, output_index: Option<u64>) -> Option<&str> {
        let index = output_index.unwrap_or(u64::MAX);
        self.tools.iter().find(|(i, _)| *i == index).map(|(_, id)| id.as_str())
    }

    /// `response.completed`, `.incomplete` or `.failed`: usage, what the
    /// response was, and for the last two an anomaly and the run's end.
    fn response_end(&mut self, event: &Event<'_>, calls: &mut dyn CallSink) {
        let mut meta = Meta::new();
        let response = event.response.as_ref();
        let id = response.and_then(|r| r.id.as_deref()).unwrap_or(&self.response);
        let model = response.and_then(|r| r.model.as_deref()).unwrap_or(&self.model);
        for (key, value) in [("openai_response_id", id), ("openai_model", model)] {
            if !value.is_empty() {
                meta.insert(key.into(), Value::from(value));
            }
        }
        if let Some(status) = response.and_then(|r| r.status.as_deref()) {
            meta.insert("openai_status".into(), Value::from(status));
        }
        if let Some(usage) = response.and_then(|r| r.usage).filter(|u| u.get() != "null") {
            let usage = raw_value(usage);
            let field = |name: &str| usage.get(name).and_then(Value::as_u64);
            if let Some(total) =
                field("total_tokens").or_else(|| Some(field("input_tokens")?.saturating_add(field("output_tokens")?)))
            {
                calls.call(None, Call::TokenUsage { total });
            }
            meta.insert("openai_usage".into(), usage);
        }
        // Why a response was cut short.
        let errors = [
            ("openai_error", response.and_then(|r| r.error)),
            ("openai_incomplete_details", response.and_then(|r| r.incomplete_details)),
        ];
        for (key, value) in errors {
            if let Some(value) = value.filter(|v| v.get() != "null") {
                meta.insert(key.into(), raw_value(value));
            }
        }
        // A response that failed before any output makes no round: the
        // machine keeps round metadata without a round in the run's.
        calls.call(None, Call::RoundMeta { meta: &meta });
        if event.kind == "response.completed" {
            // A response that asked the host for nothing ended the turn: the
            // run ends at once (a live view sees it when the model ends it,
            // not at the end of the stream). One with calls for the host
            // goes on with their results and the next response.
            if !self.host_calls {
                calls.call(None, Call::Finish { reason: FinishReason::Completed });
                self.finished = true;
            }
            return;
        }
        let why = response.and_then(|r| r.error.or(r.incomplete_details)).map_or("null", Raw::get);
        if !self.failed {
            report(calls, None, AnomalyKind::ProtocolError, &format!("openai-responses: {}: {why}", event.kind));
        }
        // Failed on an error; incomplete (a limit reached, a filter) cut
        // short.
        let reason = if event.kind == "response.incomplete" && !self.failed {
            FinishReason::Interrupted
        } else {
            FinishReason::Failed
        };
        calls.call(None, Call::Finish { reason });
        self.failed = false;
        self.finished = true;
    }
}

/// An event's `delta` as text (a string, or the JSON of an object), an
/// escaped string decoded into `scratch`.
fn delta_text<'s>(event: &Event<'s>, scratch: &'s mut String) -> &'s str {
    event.delta.map_or("", |delta| raw_text_in(delta, scratch))
}
