//! The Codex adapter: `codex exec --json` lines (`thread.*`, `turn.*`,
//! `item.*`).
//!
//! A turn is a run. Codex sends no text deltas: an `agent_message` or a
//! `reasoning` item comes whole when it completes. A tool item (a command,
//! an MCP call, a web search, a file change, a collaboration call, the todo
//! list) is a tool call whose arguments are its snapshot and whose result
//! is its completed item; `item.updated` of a command carries its whole
//! output so far (live output that replaces). Real lines can carry the key
//! `"id"` twice (the producer flattens an item that has its own `id`): the
//! last one wins, as the producer meant, and nothing is lost.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut codex = InputFormat::named("codex").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"type":"turn.started"}"#,
//!     r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}"#,
//!     r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a.txt\n","exit_code":0,"status":"completed"}}"#,
//!     r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}"#,
//! ] {
//!     codex.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.tool_calls[0].arguments, "ls");
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt\n"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::borrowed::{raw_at, raw_text, raw_value, utf8, Fields, FieldsOr};
use super::support::{one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::HashSet;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Codex `exec --json` lines.
///
/// ```
/// let codex = &roundup::adapters::codex::FORMAT;
/// assert_eq!(roundup::adapters::InputFormat::detect(br#"{"type":"thread.started","thread_id":"t"}"#), codex);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "codex",
    about: "Codex exec --json lines (thread.*,
turn.*, item.*); a turn is a run; one
session",
    detect: |event: &Map<String, Value>| {
        event
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| kind.starts_with("thread.") || kind.starts_with("turn.") || kind.starts_with("item."))
    },
    adapter: || Box::<CodexAdapter>::default(),
};

/// Translates Codex `exec --json` lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CodexAdapter {
    /// Tool items of the current turn declared and not yet completed (ids
    /// restart on resume): a set, and only the open ones, so that a turn of
    /// thousands of items costs neither a scan per item nor memory per item.
    #[serde(serialize_with = "crate::pairs::sorted_set")]
    declared: HashSet<Box<str>>,
    /// The thread, for the runs that begin in it.
    thread: String,
    /// What the last item of the turn was, to separate two whole messages
    /// (or two reasonings) that follow each other in one round.
    last_text: Option<bool>,
    /// The turn ended: a second `turn.failed` (Codex retries and fails
    /// again with no `turn.started` between) does not end it again.
    ended: bool,
}

/// Read in place ([`read_in_place!`]), its item's fields in the same pass
/// (most lines are items, and an item is most of its line).
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Cow<'a, str>,
    item: Option<FieldsOr<'a>>,
    thread_id: Option<Cow<'a, str>>,
    usage: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    message: Option<Cow<'a, str>>,
}

read_in_place!(Line {
    "type" => kind as CowStr (required),
    "item" => item in place,
    "thread_id" => thread_id as OptCow,
    "usage" => usage,
    "error" => error,
    "message" => message as OptCow,
});

/// A line's item as it was sent, for what keeps it whole (a report, a
/// result with no output of its own): read again, as these are rare.
fn whole_item(line: &str) -> &str {
    raw_at(line, &["item"]).map_or("null", Raw::get)
}

/// An item's fields, borrowed: a list rather than a struct because Codex
/// can send a key twice (a derived struct rejects that); the last wins.
type Item<'a> = Fields<'a>;

/// The tool items, with the field that holds their arguments.
const TOOLS: [(&str, &str); 6] = [
    ("command_execution", "command"),
    ("mcp_tool_call", "arguments"),
    ("web_search", "query"),
    ("file_change", "changes"),
    ("collab_tool_call", "prompt"),
    ("todo_list", "items"),
];

impl Adapter for CodexAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        let mut line = Line::default();
        Line::read_into(text, &mut line).map_err(|error| BadLine::json(&error))?;
        match line.kind.as_ref() {
            "thread.started" => {
                self.thread.clear();
                self.thread.push_str(line.thread_id.as_deref().unwrap_or(""));
            }
            "turn.started" => {
                self.declared.clear();
                self.last_text = None;
                self.ended = false;
                calls.call(None, Call::Start);
                if !self.thread.is_empty() {
                    let thread = Value::from(self.thread.as_str());
                    calls.call(None, Call::RunMeta { meta: &one("codex_thread_id", thread) });
                }
            }
            "turn.completed" => {
                if let Some(usage) = line.usage.map(raw_value) {
                    // The thread's running total, not one call's context.
                    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
                    calls.call(
                        None,
                        Call::TokenUsage { total: field("input_tokens").saturating_add(field("output_tokens")) },
                    );
                    calls.call(None, Call::RunMeta { meta: &one("codex_usage", usage) });
                }
                self.end_turn(FinishReason::Completed, calls);
            }
            "turn.failed" => {
                let error = line.error.map_or("null", Raw::get);
                report(calls, None, AnomalyKind::ProtocolError, &format!("codex: turn.failed: {error}"));
                self.end_turn(FinishReason::Failed, calls);
            }
            "error" => {
                let message =
                    line.message.as_deref().map_or_else(|| line.error.map_or("", Raw::get).into(), Cow::Borrowed);
                report(calls, None, AnomalyKind::ProtocolError, &format!("codex: error: {message}"));
            }
            kind @ ("item.started" | "item.updated" | "item.completed") => match &line.item {
                Some(FieldsOr::Fields(item)) => self.item(kind, item, text, calls),
                None => return Err(BadLine::new(format!("{kind} without an item"))),
                Some(FieldsOr::Other) => {
                    // serde's words for what the item is, read alone.
                    let error = Fields::read_into(whole_item(text), &mut Fields::default()).err();
                    return Err(
                        error.map_or_else(|| BadLine::new("an item that is not an object"), |e| BadLine::json(&e))
                    );
                }
            },
            _ => {
                let detail = format!("codex: unknown event: {}", String::from_utf8_lossy(payload));
                report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        }
        Ok(())
    }
}

impl CodexAdapter {
    fn end_turn(&mut self, reason: FinishReason, calls: &mut dyn CallSink) {
        if !std::mem::replace(&mut self.ended, true) {
            calls.call(None, Call::Finish { reason });
        }
        self.declared.clear();
    }

    /// One item of `line`.
    fn item(&mut self, event: &str, item: &Item<'_>, line: &str, calls: &mut dyn CallSink) {
        let text = |name: &str| item.get(name).map(raw_text);
        let id = text("id").unwrap_or_default();
        let kind = text("type").unwrap_or_default();
        let completed = event == "item.completed";
        self.ended = false;
        match kind.as_ref() {
            "agent_message" | "reasoning" if completed => {
                let message = kind == "agent_message";
                let mut body = text("text").unwrap_or_default();
                // Whole texts that follow each other in a round are
                // paragraphs, not fragments of one.
                if self.last_text.replace(message) == Some(message) && !body.is_empty() {
                    body = Cow::Owned(["\n\n", &body].concat());
                }
                if message {
                    calls.call(None, Call::Message { text: &body });
                    if let Some(phase) = item.get("phase") {
                        calls.call(None, Call::RoundMeta { meta: &one("codex_phase", raw_value(phase)) });
                    }
                } else {
                    calls.call(None, Call::Thought { text: &body });
                }
            }
            "agent_message" | "reasoning" => {}
            "error" => {
                let message = text("message").unwrap_or_default();
                report(calls, None, AnomalyKind::ProtocolError, &format!("codex: error item {id}: {message}"));
            }
            kind => {
                let Some((_, arguments_field)) = TOOLS.iter().find(|(tool, _)| *tool == kind) else {
                    if completed {
                        report(calls, None, AnomalyKind::UnknownContent, &format!("codex: item: {}", whole_item(line)));
                    }
                    return;
                };
                self.last_text = None;
                self.tool(kind, &id, arguments_field, item, event, calls);
                if completed {
                    self.declared.remove(id.as_ref());
                    tool_result(kind, &id, item, line, calls);
                }
            }
        }
    }

    /// A tool item started or updated (or completed with no start):
    /// declared once, its arguments as a snapshot, a command's output so
    /// far as live output.
    fn tool(
        &mut self,
        kind: &str,
        id: &str,
        arguments_field: &str,
        item: &Item<'_>,
        event: &str,
        calls: &mut dyn CallSink,
    ) {
        if !self.declared.contains(id) {
            let title = match (item.get("server"), item.get("tool")) {
                (Some(server), Some(tool)) => [&*raw_text(server), "/", &raw_text(tool)].concat(),
                (None, Some(tool)) => raw_text(tool).into_owned(),
                _ => kind.to_owned(),
            };
            // The tool the model called: an MCP tool's own name, else the
            // item's kind (`command_execution`, `file_change`, ...).
            let name = item.get("tool").map_or(std::borrow::Cow::Borrowed(kind), raw_text);
            calls.call(None, Call::ToolCall { id, title: &title, name: &name });
            if title != kind {
                calls.call(None, Call::ToolMeta { id, meta: &one("codex_item_type", Value::from(kind)) });
            }
            self.declared.insert(id.into());
        }
        if let Some(arguments) = item.get(arguments_field).filter(|a| a.get() != "null") {
            calls.call(None, Call::ArgsSnapshot { id, args: &raw_text(arguments) });
        }
        if event == "item.updated" {
            if let Some(output) = item.get("aggregated_output") {
                calls.call(None, Call::ToolOutput { id, content: &raw_text(output), replace: true });
            }
        }
    }
}

/// A tool item completed: its result (the output, the MCP result or error,
/// else the whole item), failed when its status says so.
fn tool_result(kind: &str, id: &str, item: &Item<'_>, line: &str, calls: &mut dyn CallSink) {
    let present = |name: &str| item.get(name).filter(|v| v.get() != "null");
    let status = present("status").map(raw_text);
    let failed = matches!(status.as_deref(), Some("failed" | "declined")) || present("error").is_some();
    let content = match kind {
        "command_execution" => present("aggregated_output").map(raw_text),
        "mcp_tool_call" => present("error").or(present("result")).map(raw_text),
        _ => None,
    }
    .unwrap_or_else(|| Cow::Borrowed(whole_item(line)));
    if let Some(exit_code) = present("exit_code") {
        let meta: Meta = one("codex_exit_code", raw_value(exit_code));
        calls.call(None, Call::ToolMeta { id, meta: &meta });
    }
    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    calls.call(None, Call::ToolUpdate { id, content: &content, status });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls of one line, as text, and what it was refused for.
    fn translate(line: &str) -> (Vec<String>, Option<String>) {
        let mut calls = Vec::new();
        let mut sink = |_: Option<&str>, call: Call<'_>| calls.push(format!("{call:?}"));
        let refused = CodexAdapter::default().translate(line.as_bytes(), &mut sink).err().map(|bad| bad.reason);
        (calls, refused)
    }

    #[test]
    fn an_item_that_is_not_an_object_is_refused_in_serdes_words_for_it_alone() {
        for (item, reason) in [
            ("5", "invalid type: integer `5`, expected an object (column 1)"),
            ("[1]", "invalid type: sequence, expected an object (column 0)"),
            (r#""x""#, r#"invalid type: string "x", expected an object (column 3)"#),
        ] {
            let (_, refused) = translate(&format!(r#"{{"type":"item.completed","item":{item}}}"#));
            assert_eq!(refused.as_deref(), Some(reason), "{item}");
        }
        let (_, refused) = translate(r#"{"type":"item.completed","item":null}"#);
        assert_eq!(refused.as_deref(), Some("item.completed without an item"));
        // Another event's item is not read.
        let (calls, refused) = translate(r#"{"type":"turn.started","item":7}"#);
        assert_eq!((calls.len(), refused), (1, None));
    }

    #[test]
    fn an_item_kept_whole_is_the_item_as_sent() {
        let (calls, _) = translate(r#"{"type":"item.completed", "item": {"id":"a", "type":"weird"} }"#);
        assert!(
            calls.iter().any(|call| call.contains(r#"codex: item: {\"id\":\"a\", \"type\":\"weird\"}"#)),
            "{calls:?}"
        );
        let (calls, _) = translate(
            r#"{"type":"item.completed","item":{"id":"t","type":"web_search","query":"q", "status":"completed"}}"#,
        );
        let result = calls.iter().find(|call| call.starts_with("ToolUpdate")).unwrap();
        assert!(
            result.contains(
                r#"content: "{\"id\":\"t\",\"type\":\"web_search\",\"query\":\"q\", \"status\":\"completed\"}""#
            ),
            "{result}"
        );
    }
}
