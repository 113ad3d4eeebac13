//! The Claude Code transcript adapter: the session logs Claude Code writes
//! while it runs (`~/.claude/projects/<project>/<session-id>.jsonl`).
//!
//! A transcript is a log of the conversation, not a stream of the model's
//! output: Claude Code writes one `assistant` line per content block as the
//! block finishes, each line repeating the whole message envelope (`id`,
//! `model`, `usage`, `requestId`). The lines of one API message need not be
//! adjacent (hook `progress` lines, and even the `tool_result` of an earlier
//! block of the same message, can sit between them), so the adapter
//! gathers a message's blocks, and the results of its tool calls, until the
//! message is over (a line of another message, a prompt, an interrupt, the
//! end of input) and only then makes its calls: one API message is one
//! round, whatever order its lines came in.
//!
//! A user prompt is a run (the prompt kept as `claude_prompt`); lines that
//! are not prompts to the model (`isMeta` expansions and caveats, local
//! `<command-name>`/`<local-command-stdout>` and `!` shell
//! `<bash-input>`/`<bash-stdout>` lines, compaction summaries) are kept as
//! `claude_user_lines`, and a slash command answered by the model begins a
//! run of its own. `[Request interrupted by user…]` ends the run
//! `canceled`. Sessions are the lines' `sessionId`; a subagent (Task tool)
//! is a session of its own, `<session>/agent-<agentId>`, linked both ways
//! to its parent call.
//!
//! A subagent's lines are written twice: copied into the parent's
//! `agent_progress` lines, and in the subagent's own file
//! (`<session>/subagents/agent-<agentId>.jsonl`, read after the parent's as
//! one input). A line is applied once per session, by its `uuid`: a repeat
//! is only counted (`claude_events` `duplicate_line`), so that a subagent's
//! rounds and tokens are never counted twice.
//!
//! Usage is counted once per API message (`message.id` + `requestId`):
//! every line repeats it and `output_tokens` is a running count whose early
//! lines hold a placeholder, so the line with the largest output is kept.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! let mut transcript = InputFormat::named("claude-transcript").unwrap().adapter();
//! for line in [
//!     r#"{"type":"user","sessionId":"s","message":{"role":"user","content":"list files"}}"#,
//!     r#"{"type":"assistant","sessionId":"s","requestId":"r1","message":{"id":"m1","content":[{"type":"text","text":"Listing."}],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
//!     r#"{"type":"assistant","sessionId":"s","requestId":"r1","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":3,"output_tokens":20}}}"#,
//!     r#"{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt"}]}}"#,
//! ] {
//!     transcript.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! transcript.end(&mut apply);
//! let round = &builder.rounds()[0];
//! assert_eq!(round.message, "Listing.");
//! assert_eq!(round.tool_calls[0].arguments, r#"{"command":"ls"}"#);
//! assert_eq!(round.tool_calls[0].result.content(), Some("a.txt"));
//! ```

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::anthropic::Block;
use super::borrowed::{json_value, opt_cow, raw_text, raw_value, scan_count_field, scan_whole, utf8, view_of, ListOr};
use super::run_lists;
use super::support::{one, report, rfc3339_ms, EventCounts};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::hash::HashSet;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Claude Code transcripts.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let prompt = br#"{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}"#;
/// assert_eq!(InputFormat::detect(prompt).name(), "claude-transcript");
/// let summary = br#"{"type":"summary","summary":"A title","leafUuid":"u"}"#;
/// assert_eq!(InputFormat::detect(summary).name(), "claude-transcript");
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "claude-transcript",
    about: "Claude Code session logs
(~/.claude/projects/*/<session>.jsonl); a
prompt is a run, an API message a round,
sessionId the session, a subagent the
session <session>/agent-<agentId>",
    detect: |event: &Map<String, Value>| match event.get("type").and_then(Value::as_str) {
        Some("summary") => event.contains_key("leafUuid"),
        Some("file-history-snapshot") => event.contains_key("snapshot"),
        Some(_) => event.contains_key("sessionId") && (event.contains_key("uuid") || event.contains_key("parentUuid")),
        // The usage-only lines analysers meet (no type, no content).
        None => event.contains_key("sessionId") && event.contains_key("requestId") && event.contains_key("message"),
    },
    adapter: || Box::<ClaudeTranscriptAdapter>::default(),
};

/// The text that begins the user line Claude Code writes when the user
/// stops a response.
const INTERRUPT: &str = "[Request interrupted by user";

/// The run metadata keys of a run's user lines that were not prompts, and
/// of Claude Code's stand-ins for a response.
const USER_LINES: &str = "claude_user_lines";
const SYNTHETIC: &str = "claude_synthetic_messages";

/// Line kinds that carry nothing for rounds: counted in the run's
/// `claude_events`, so that their occurrence is not lost.
const NOT_TURNS: [&str; 9] = [
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "system",
    "attachment",
    "permission-mode",
    "custom-title",
    "last-prompt",
];

/// Translates Claude Code transcript lines into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClaudeTranscriptAdapter {
    /// Every session seen, in order of first appearance.
    sessions: Vec<Session>,
    /// The session of the last line that named one: where lines that name
    /// none (`summary`, `file-history-snapshot`) are counted.
    current: Option<usize>,
    /// Kinds of lines that named no session, seen before any line did:
    /// counted in the first session.
    orphans: Vec<String>,
    /// The time of the latest line that had one: the clock again after a
    /// run is finished at an earlier time at the end of input.
    #[serde(default)]
    now_ms: Option<u64>,
}

/// One session: the main conversation, or a subagent's.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Session {
    name: String,
    /// The session's run finished: a call to it begins the next one.
    finished: bool,
    /// The run holds a prompt or a model call: a new prompt ends it.
    has_turn: bool,
    /// How the run ends, when a line said so (an interrupt, an API error),
    /// and when: the finish is made when the next prompt begins or the
    /// input ends, so that what the user did after it stays in that run.
    ending: Option<(FinishReason, Option<u64>)>,
    /// The last API message asked for tools: the run has not ended its turn.
    wants_tools: bool,
    /// The API message being gathered.
    message: Option<Pending>,
    /// User lines that are not prompts, held until it is known whether a
    /// model call answers them (a slash command begins a run) or not.
    side: Vec<Value>,
    /// `side` holds a slash command.
    command: bool,
    /// The run's user lines that were not prompts, as sent so far.
    run_side: Vec<Value>,
    /// Texts of `<synthetic>` lines (Claude Code's own stand-ins for a
    /// response), in the run.
    synthetic: Vec<Value>,
    /// The run's usage, summed over its API messages.
    usage: Totals,
    counts: EventCounts,
    /// Subagents of this session: the tool call that started each, and the
    /// subagent's session.
    children: Vec<(String, String)>,
    /// The `uuid`s of the lines applied: a line seen again (a subagent's
    /// line in its own file after its copy in the parent's progress) is
    /// counted, not applied twice.
    #[serde(default, serialize_with = "crate::pairs::sorted_set")]
    seen: HashSet<String>,
    /// How the parent's Task result said this subagent ended, and when:
    /// its run finishes so at the end of input (or when a prompt begins its
    /// next run), not at once, so that lines of its own file read after
    /// the parent's join the same run.
    #[serde(default)]
    parent_end: Option<(FinishReason, Option<u64>)>,
}

/// An API message whose lines are being gathered.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Pending {
    id: String,
    request: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    /// The content blocks, as JSON text, in file order.
    blocks: Texts,
    /// The ids of its tool calls.
    tools: Vec<String>,
    /// The usage of the line with the largest output so far (ties: the
    /// later line), as JSON text, and that output.
    usage: Option<(String, u64)>,
    /// `costUSD` of the kept line (older versions write one per line).
    cost: Option<f64>,
    /// Results for its tool calls that came before its last block.
    results: Vec<Held>,
    /// Tool metadata for its calls that came before it was sent.
    metas: Vec<(String, Meta)>,
}

/// Texts gathered one after another into one buffer: a message's content
/// blocks, a line at a time, with no allocation for each. Saved as the
/// list of the texts it holds.
#[derive(Debug, Default)]
struct Texts {
    joined: String,
    /// Where each text ends in `joined`.
    ends: Vec<usize>,
}

impl Texts {
    fn push(&mut self, text: &str) {
        self.joined.push_str(text);
        self.ends.push(self.joined.len());
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The texts, in the order they were pushed.
    fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            // Ends are where a pushed text ended: character boundaries.
            let text = &self.joined[start..end];
            start = end;
            text
        })
    }
}

impl Serialize for Texts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Texts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut texts = Texts::default();
        for text in Vec::<String>::deserialize(deserializer)? {
            texts.push(&text);
        }
        Ok(texts)
    }
}

/// A tool result waiting for its message's round.
#[derive(Debug, Serialize, Deserialize)]
struct Held {
    id: String,
    content: String,
    failed: bool,
    meta: Option<Meta>,
}

/// Token counts summed over a run's API messages.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
struct Totals {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_creation: u64,
    messages: u64,
    cost: Option<f64>,
}

/// The fields of a line the adapter reads.
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
struct Line<'a> {
    kind: Option<Cow<'a, str>>,
    subtype: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    uuid: Option<Cow<'a, str>>,
    is_sidechain: Option<bool>,
    agent_id: Option<Cow<'a, str>>,
    is_meta: Option<bool>,
    is_compact_summary: Option<bool>,
    is_api_error: Option<bool>,
    request_id: Option<Cow<'a, str>>,
    timestamp: Option<Cow<'a, str>>,
    message: Option<Message<'a>>,
    data: Option<Progress<'a>>,
    parent_tool_use_id: Option<Cow<'a, str>>,
    tool_use_result: Option<Raw<'a>>,
    cost_usd: Option<f64>,
}

read_in_place!(Line {
    "type" => kind as OptCow,
    "subtype" => subtype as OptCow,
    "sessionId" => session_id as OptCow,
    "uuid" => uuid as OptCow,
    "isSidechain" => is_sidechain,
    "agentId" => agent_id as OptCow,
    "isMeta" => is_meta,
    "isCompactSummary" => is_compact_summary,
    "isApiErrorMessage" => is_api_error,
    "requestId" => request_id as OptCow,
    "timestamp" => timestamp as OptCow,
    "message" => message in place,
    "data" => data in place,
    "parentToolUseID" => parent_tool_use_id as OptCow,
    "toolUseResult" => tool_use_result,
    "costUSD" => cost_usd,
});

#[derive(Debug, Default)]
struct Message<'a> {
    id: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    stop_reason: Option<Cow<'a, str>>,
    /// Its blocks split as the line is read (a transcript's bytes are
    /// mostly content: read once, not kept raw and read again as a list).
    content: Option<ListOr<'a>>,
    usage: Option<Raw<'a>>,
}

read_in_place!(Message {
    "id" => id as OptCow,
    "model" => model as OptCow,
    "stop_reason" => stop_reason as OptCow,
    "content" => content,
    "usage" => usage,
});

/// A `progress` line's `data`: a subagent's message (`agent_progress`),
/// or a hook's or a tool's progress.
#[derive(Debug, Default)]
struct Progress<'a> {
    kind: Option<Cow<'a, str>>,
    agent_id: Option<Cow<'a, str>>,
    message: Option<Raw<'a>>,
}

read_in_place!(Progress {
    "type" => kind as OptCow,
    "agentId" => agent_id as OptCow,
    "message" => message,
});

/// Whether a content block's JSON can be a tool call's (`tool_use`,
/// `server_tool_use`, `mcp_tool_use`): such a type is written `…_use"`,
/// or with a `\u` escape. A text or thinking block, the most of a
/// transcript, is then not read twice.
fn may_be_tool_use(json: &str) -> bool {
    json.contains("_use\"") || json.contains("\\u")
}

/// The subagent a Task result (`toolUseResult`) names; any other result
/// (a string, a list, an object without it) names none.
#[derive(Debug, Deserialize)]
struct Subagent<'a> {
    #[serde(borrow, default, rename = "agentId", deserialize_with = "opt_cow")]
    agent_id: Option<Cow<'a, str>>,
}

/// The summary of a subagent a Task result carries.
const SUBAGENT_FIELDS: [&str; 6] =
    ["agentId", "status", "totalTokens", "totalToolUseCount", "totalDurationMs", "usage"];

impl Adapter for ClaudeTranscriptAdapter {
    state_is_self!();

    /// Each session's message being gathered is sent, what it held back is
    /// kept, and a run that ended its turn (or was stopped) finishes so.
    fn end(&mut self, calls: &mut dyn CallSink) {
        if self.sessions.is_empty() && !self.orphans.is_empty() {
            let mut counts = EventCounts::default();
            for kind in std::mem::take(&mut self.orphans) {
                counts.count("claude_events", &kind, None, calls);
            }
        }
        for at in 0..self.sessions.len() {
            let session = &mut self.sessions[at];
            session.flush(calls);
            session.attach_side(calls);
            match session.ending.take().or_else(|| session.parent_end.take()) {
                Some((reason, at_ms)) if session.has_turn => {
                    session.finish(reason, at_ms, calls);
                    // The runs finished after this one end at the time of
                    // input's end, not at this one's.
                    if let (Some(_), Some(now)) = (at_ms, self.now_ms) {
                        calls.clock(now);
                    }
                }
                // A run whose last response ended its turn is complete; one
                // that waits for tools is left to the end of input
                // (`interrupted`).
                None if session.has_turn && !session.wants_tools => {
                    session.finish(FinishReason::Completed, None, calls)
                }
                // Left running: the end of input finishes it.
                _ if !session.finished => session.give_lists(calls),
                _ => {}
            }
        }
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        let text = utf8(payload)?;
        let mut line = Line::default();
        Line::read_into(text, &mut line).map_err(|error| BadLine::json(&error))?;
        self.line(&line, text, None, calls);
        Ok(())
    }
}

impl ClaudeTranscriptAdapter {
    /// One line, of the main conversation or (`child`: the parent session
    /// and the call that started it) embedded in a subagent's progress.
    fn line(&mut self, line: &Line<'_>, text: &str, child: Option<(usize, &str)>, calls: &mut dyn CallSink) {
        // The session the line belongs to, named and found once: by its
        // name, or (a line that names none) the current one.
        let name = match child {
            Some((parent, tool)) => Some(Cow::Owned(self.child_name(parent, tool, line))),
            None => line.session_id.as_ref().map(|id| session_name(id, line)),
        };
        let known = match &name {
            Some(name) => self.sessions.iter().position(|s| &s.name == name),
            None => self.current,
        };
        if let (Some(uuid), Some(at)) = (&line.uuid, known) {
            if self.sessions[at].seen.contains(uuid.as_ref()) {
                self.sessions[at].count("duplicate_line", calls);
                return;
            }
        }
        if let Some(at_ms) = line.timestamp.as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
            self.now_ms = Some(at_ms);
        }
        let at = match name {
            None => known,
            Some(name) => {
                let at = known.unwrap_or_else(|| self.session(&name, calls));
                match (child, &line.session_id) {
                    // A subagent a progress line of its parent speaks for:
                    // linked to the call that started it when first seen.
                    (Some((parent, tool)), _) => self.link(parent, tool, &name, calls),
                    (None, Some(_)) if line.is_sidechain != Some(true) => self.current = Some(at),
                    (None, Some(id)) if known.is_none() => self.sidechain_parent(at, id, calls),
                    (None, _) => {}
                }
                Some(at)
            }
        };
        if let (Some(at), Some(uuid)) = (at, &line.uuid) {
            self.sessions[at].seen.insert(uuid.clone().into_owned());
        }
        let kind = line.kind.as_deref();
        let Some(at) = at else {
            // A line that names no session before any did.
            match kind {
                Some(kind) if NOT_TURNS.contains(&kind) => self.orphans.push(kind.to_owned()),
                _ => report(calls, None, AnomalyKind::UnknownEvent, &format!("claude-transcript: line: {text}")),
            }
            return;
        };
        match kind {
            Some("assistant") | None if line.message.is_some() => self.assistant(at, line, calls),
            Some("user") => self.user(at, line, calls),
            Some("progress") => {
                let data = line.data.as_ref();
                match (data.and_then(|d| d.kind.as_deref()), data.and_then(|d| d.message)) {
                    (Some("agent_progress"), Some(message)) => {
                        let tool = line.parent_tool_use_id.as_deref().unwrap_or("");
                        match Line::read(message.get()) {
                            Ok(embedded) => {
                                // The subagent names itself in `data`.
                                let embedded = Line { agent_id: data.and_then(|d| d.agent_id.clone()), ..embedded };
                                self.line(&embedded, message.get(), Some((at, tool)), calls);
                            }
                            Err(_) => {
                                let detail = format!("claude-transcript: subagent message: {}", message.get());
                                report(calls, Some(&self.sessions[at].name), AnomalyKind::UnknownEvent, &detail);
                            }
                        }
                    }
                    (progress, _) => {
                        let kind = format!("progress/{}", progress.unwrap_or("?"));
                        self.sessions[at].count(&kind, calls);
                    }
                }
            }
            Some("system") => {
                let kind = format!("system/{}", line.subtype.as_deref().unwrap_or("?"));
                self.sessions[at].count(&kind, calls);
            }
            Some(kind) if NOT_TURNS.contains(&kind) => self.sessions[at].count(kind, calls),
            _ => {
                let session = &self.sessions[at];
                let detail = format!("claude-transcript: unknown line: {text}");
                report(calls, Some(&session.name), AnomalyKind::UnknownEvent, &detail);
            }
        }
    }

    /// The session of this name, made when first seen.
    fn session(&mut self, name: &str, calls: &mut dyn CallSink) -> usize {
        if let Some(at) = self.sessions.iter().position(|s| s.name == name) {
            return at;
        }
        self.sessions.push(Session { name: name.to_owned(), ..Session::default() });
        let at = self.sessions.len() - 1;
        for kind in std::mem::take(&mut self.orphans) {
            self.sessions[at].count(&kind, calls);
        }
        at
    }

    /// The name of the subagent session a progress line of `parent` speaks
    /// for.
    fn child_name(&self, parent: usize, tool: &str, line: &Line<'_>) -> String {
        let agent = line.agent_id.as_deref().unwrap_or(tool);
        format!("{}/agent-{agent}", self.sessions[parent].name)
    }

    /// Links the subagent session `child` and the call `tool` of `parent`
    /// that started it, both ways, once: the call's `claude_subagent_session`
    /// now, the subagent's `claude_parent` when its session exists (else
    /// when its first line comes).
    fn link(&mut self, parent: usize, tool: &str, child: &str, calls: &mut dyn CallSink) {
        if self.sessions[parent].children.iter().any(|(_, known)| known == child) {
            return;
        }
        self.sessions[parent].children.push((tool.to_owned(), child.to_owned()));
        self.sessions[parent].tool_meta(tool, one("claude_subagent_session", Value::from(child)), calls);
        if let Some(at) = self.sessions.iter().position(|s| s.name == child) {
            let link = parent_link(&self.sessions[parent].name, Some(tool));
            self.sessions[at].run_meta(one("claude_parent", link), calls);
        }
    }

    /// A subagent session first met in its own lines (its own file, or
    /// sidechain lines of the parent's): its parent is the call linked to
    /// it already, else only the session it names (`sessionId`), the call
    /// that started it being unknown.
    fn sidechain_parent(&mut self, at: usize, session_id: &str, calls: &mut dyn CallSink) {
        let name = &self.sessions[at].name;
        let link = match self.sessions.iter().find_map(|parent| {
            let (tool, _) = parent.children.iter().find(|(_, child)| child == name)?;
            Some(parent_link(&parent.name, Some(tool)))
        }) {
            Some(link) => link,
            None => parent_link(session_id, None),
        };
        self.sessions[at].run_meta(one("claude_parent", link), calls);
    }

    fn assistant(&mut self, at: usize, line: &Line<'_>, calls: &mut dyn CallSink) {
        let session = &mut self.sessions[at];
        let Some(message) = &line.message else { return };
        if message.model.as_deref() == Some("<synthetic>") {
            // Claude Code's own stand-in for a response: no model call.
            session.flush(calls);
            session.begin_turn(false, calls);
            let text = message.content.as_ref().map_or(Value::Null, ListOr::value);
            if let Some(first) = run_lists::extend(&mut session.synthetic, SYNTHETIC, [text]) {
                session.run_meta(first, calls);
            }
            if line.is_api_error == Some(true) {
                session.ending = Some((FinishReason::Failed, None));
            }
            return;
        }
        let id = message.id.as_deref().unwrap_or("");
        let request = line.request_id.as_deref();
        let same =
            session.message.as_ref().is_some_and(|m| !id.is_empty() && m.id == id && m.request.as_deref() == request);
        if !same {
            session.flush(calls);
            session.begin_turn(true, calls);
            session.message =
                Some(Pending { id: id.to_owned(), request: request.map(str::to_owned), ..Pending::default() });
        }
        let Some(pending) = session.message.as_mut() else { return };
        // Every line of a message repeats these: kept again only when
        // they change.
        if let Some(model) = message.model.as_deref().filter(|model| pending.model.as_deref() != Some(*model)) {
            pending.model = Some(model.to_owned());
        }
        if let Some(stop) = message.stop_reason.as_deref().filter(|stop| pending.stop_reason.as_deref() != Some(*stop))
        {
            pending.stop_reason = Some(stop.to_owned());
        }
        if let Some(usage) = message.usage {
            let output = output_tokens(usage);
            match &mut pending.usage {
                // Every line repeats the usage: the kept text's buffer is
                // used again.
                Some((text, kept)) if output >= *kept => {
                    usage.get().clone_into(text);
                    *kept = output;
                    pending.cost = line.cost_usd;
                }
                Some(_) => {}
                None => {
                    pending.usage = Some((usage.get().to_owned(), output));
                    pending.cost = line.cost_usd;
                }
            }
        }
        let blocks: &[Raw<'_>] = match &message.content {
            Some(ListOr::List(blocks)) => blocks,
            Some(content) => {
                // Content that is not a list of blocks (a bare string).
                let detail = format!("claude-transcript: assistant content: {}", content.value());
                report(calls, Some(&session.name), AnomalyKind::UnknownContent, &detail);
                &[]
            }
            None => &[],
        };
        for raw in blocks {
            if may_be_tool_use(raw.get()) {
                if let Ok(block) = Block::read(raw.get()) {
                    if matches!(block.kind.as_ref(), "tool_use" | "server_tool_use" | "mcp_tool_use") {
                        pending.tools.push(block.id.as_deref().unwrap_or("").to_owned());
                    }
                }
            }
            pending.blocks.push(raw.get());
        }
    }

    /// A `user` line: tool results, the prompt, an interrupt, or a line
    /// that is not a prompt to the model.
    fn user(&mut self, at: usize, line: &Line<'_>, calls: &mut dyn CallSink) {
        let content = line.message.as_ref().and_then(|m| m.content.as_ref());
        let Some(content) = content else {
            let session = &self.sessions[at];
            report(
                calls,
                Some(&session.name),
                AnomalyKind::UnknownEvent,
                "claude-transcript: user line without content",
            );
            return;
        };
        let blocks = match content {
            ListOr::List(blocks) => Some(blocks),
            _ => None,
        };
        let mut texts: Vec<Value> = Vec::new();
        let mut first_text = String::new();
        let mut results = false;
        match &blocks {
            None => {
                first_text = content.text().into_owned();
                texts.push(content.value());
            }
            Some(blocks) => {
                for raw in blocks.iter() {
                    match Block::read(raw.get()) {
                        Ok(block) if block.kind == "tool_result" => {
                            results = true;
                            let at_ms = line.timestamp.as_deref().and_then(rfc3339_ms);
                            self.tool_result(at, &block, line.tool_use_result, at_ms, calls);
                        }
                        block => {
                            if let (Ok(block), true) = (&block, texts.is_empty()) {
                                first_text = block.text.as_deref().unwrap_or("").to_owned();
                            }
                            texts.push(raw_value(*raw));
                        }
                    }
                }
            }
        }
        if texts.is_empty() {
            return;
        }
        let session = &mut self.sessions[at];
        let kept = match blocks {
            None => content.value(),
            Some(_) => Value::Array(texts),
        };
        if first_text.starts_with(INTERRUPT) {
            session.flush(calls);
            session.side.push(kept);
            session.attach_side(calls);
            session.ending = Some((FinishReason::Canceled, line.timestamp.as_deref().and_then(rfc3339_ms)));
            return;
        }
        let trimmed = first_text.trim_start();
        let slash = trimmed.starts_with("<command-name>") || trimmed.starts_with("<command-message>");
        let aside = results
            || line.is_meta == Some(true)
            || line.is_compact_summary == Some(true)
            || slash
            || ["<local-command-", "<bash-", "<user-memory-input>"].iter().any(|tag| trimmed.starts_with(tag));
        if aside {
            session.side.push(kept);
            session.command |= slash;
            return;
        }
        session.flush(calls);
        session.attach_side(calls);
        session.new_run(calls);
        session.has_turn = true;
        session.run_meta(one("claude_prompt", kept), calls);
    }

    /// A tool result: held for its message's round while that message is
    /// being gathered, else sent to pair with its call.
    fn tool_result(
        &mut self,
        at: usize,
        block: &Block<'_>,
        structured: Option<Raw<'_>>,
        at_ms: Option<u64>,
        calls: &mut dyn CallSink,
    ) {
        let id = block.tool_use_id.as_deref().unwrap_or("");
        let content = result_text(block.content);
        let failed = block.is_error == Some(true);
        // A Task result names its subagent (`agentId`): the call is linked
        // to the subagent's session even when no progress line spoke for it.
        if let Some(agent) = structured.and_then(view_of::<Subagent<'_>>) {
            if let Some(agent) = agent.agent_id {
                let child = format!("{}/agent-{agent}", self.sessions[at].name);
                self.link(at, id, &child, calls);
            }
        }
        // A Task result summarises its subagent, whose session ends here.
        let mut meta = None;
        if let Some((_, child)) = self.sessions[at].children.iter().find(|(tool, _)| tool == id) {
            let child = child.clone();
            if let Some(Value::Object(result)) = structured.map(raw_value) {
                let summary: Map<String, Value> = SUBAGENT_FIELDS
                    .iter()
                    .filter_map(|key| Some(((*key).to_owned(), result.get(*key)?.clone())))
                    .collect();
                meta = Some(one("claude_subagent", Value::Object(summary)));
            }
            if let Some(child_at) = self.sessions.iter().position(|s| s.name == child) {
                let subagent = &mut self.sessions[child_at];
                subagent.flush(calls);
                subagent.attach_side(calls);
                let reason = if failed { FinishReason::Failed } else { FinishReason::Completed };
                subagent.parent_end = Some((reason, at_ms));
            }
        }
        let session = &mut self.sessions[at];
        let held = Held { id: id.to_owned(), content, failed, meta };
        match session.message.as_mut() {
            Some(pending) if pending.tools.iter().any(|tool| tool == id) => pending.results.push(held),
            _ => session.send_result(&held, calls),
        }
    }
}

impl Session {
    fn run_meta(&mut self, meta: Meta, calls: &mut dyn CallSink) {
        self.open(calls);
        calls.call(Some(&self.name), Call::RunMeta { meta: &meta });
    }

    fn count(&mut self, kind: &str, calls: &mut dyn CallSink) {
        self.open(calls);
        self.counts.count("claude_events", kind, Some(&self.name), calls);
    }

    /// Tool metadata: held with the message that holds the call, else sent.
    fn tool_meta(&mut self, id: &str, meta: Meta, calls: &mut dyn CallSink) {
        match self.message.as_mut() {
            Some(pending) if pending.tools.iter().any(|tool| tool == id) => pending.metas.push((id.to_owned(), meta)),
            _ => {
                self.open(calls);
                calls.call(Some(&self.name), Call::ToolMeta { id, meta: &meta });
            }
        }
    }

    fn send_result(&mut self, held: &Held, calls: &mut dyn CallSink) {
        self.open(calls);
        if let Some(meta) = &held.meta {
            calls.call(Some(&self.name), Call::ToolMeta { id: &held.id, meta });
        }
        let status = if held.failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        calls.call(Some(&self.name), Call::ToolUpdate { id: &held.id, content: &held.content, status });
    }

    /// A model call (or a stand-in for one) begins: a slash command held
    /// before it begins a run; other held lines join the run they follow.
    /// A run stopped by the user that the model goes on in ends first.
    fn begin_turn(&mut self, model_call: bool, calls: &mut dyn CallSink) {
        let slash = self.command && model_call;
        if slash || self.ending.is_some() {
            let prompt = if slash { std::mem::take(&mut self.side) } else { Vec::new() };
            self.attach_side(calls);
            self.new_run(calls);
            let mut prompt = prompt.into_iter();
            if let Some(first) = prompt.next() {
                self.run_meta(one("claude_prompt", first), calls);
            }
            self.side = prompt.collect();
            self.command = false;
        }
        self.attach_side(calls);
        self.has_turn = true;
    }

    /// Held user lines join the current run's `claude_user_lines`.
    fn attach_side(&mut self, calls: &mut dyn CallSink) {
        if self.side.is_empty() {
            return;
        }
        self.command = false;
        let side = std::mem::take(&mut self.side);
        if let Some(first) = run_lists::extend(&mut self.run_side, USER_LINES, side) {
            self.run_meta(first, calls);
        }
    }

    /// The run's lists, whole, as it ends (each was given at its first
    /// items only: see `run_lists`); they start empty for the next run.
    fn give_lists(&mut self, calls: &mut dyn CallSink) {
        let lists =
            [run_lists::end_run(&mut self.run_side, USER_LINES), run_lists::end_run(&mut self.synthetic, SYNTHETIC)];
        for meta in lists.into_iter().flatten() {
            calls.call(Some(&self.name), Call::RunMeta { meta: &meta });
        }
    }

    /// The current run ends if it holds a turn (as a line said, else
    /// complete when its last response ended its turn), and the next one
    /// is open; a run without a turn (only counted lines) goes on.
    fn new_run(&mut self, calls: &mut dyn CallSink) {
        if self.has_turn {
            let (reason, at_ms) = match self.ending.take().or_else(|| self.parent_end.take()) {
                Some(ending) => ending,
                None if self.wants_tools => (FinishReason::Interrupted, None),
                None => (FinishReason::Completed, None),
            };
            self.finish(reason, at_ms, calls);
        }
        self.open(calls);
    }

    fn finish(&mut self, reason: FinishReason, at_ms: Option<u64>, calls: &mut dyn CallSink) {
        if self.finished {
            return;
        }
        self.give_lists(calls);
        if let Some(at_ms) = at_ms {
            calls.clock(at_ms);
        }
        calls.call(Some(&self.name), Call::Finish { reason });
        self.finished = true;
        self.has_turn = false;
        self.ending = None;
        self.parent_end = None;
        self.wants_tools = false;
    }

    /// After a finish, the next run begins: its counts and lists start
    /// empty.
    fn open(&mut self, calls: &mut dyn CallSink) {
        if !std::mem::take(&mut self.finished) {
            return;
        }
        calls.call(Some(&self.name), Call::Start);
        self.run_side.clear();
        self.synthetic.clear();
        self.usage = Totals::default();
        self.counts = EventCounts::default();
    }

    /// The gathered API message is over: its round, its usage, and the
    /// results that came while it was gathered.
    fn flush(&mut self, calls: &mut dyn CallSink) {
        let Some(pending) = self.message.take() else { return };
        self.open(calls);
        let session = self.name.clone();
        let session = Some(session.as_str());
        let mut tools = Vec::new();
        let mut signatures = Vec::new();
        for raw in pending.blocks.iter() {
            let Ok(block) = Block::read(raw) else {
                report(calls, session, AnomalyKind::UnknownContent, &format!("claude-transcript: block: {raw}"));
                continue;
            };
            match (block.kind.as_ref(), block.text.as_deref(), block.thinking.as_deref()) {
                ("text", Some(text), _) => calls.call(session, Call::Message { text }),
                ("thinking", _, Some(thinking)) => {
                    calls.call(session, Call::Thought { text: thinking });
                    if let Some(signature) = &block.signature {
                        signatures.push(Value::from(signature.as_ref()));
                    }
                }
                ("tool_use" | "server_tool_use" | "mcp_tool_use", _, _) => tools.push(block),
                // Kept whole: its text is encrypted.
                ("redacted_thinking", _, _) => {
                    calls.call(session, Call::RoundMeta { meta: &one("claude_redacted_thinking", json_value(raw)) });
                }
                _ => report(calls, session, AnomalyKind::UnknownContent, &format!("claude-transcript: block: {raw}")),
            }
        }
        // Text first and calls after, whatever order the blocks came in: a
        // text after a call would otherwise close the round (rule 2).
        for block in &tools {
            let id = block.id.as_deref().unwrap_or("");
            let name = block.name.as_deref().unwrap_or("");
            calls.call(session, Call::ToolCall { id, title: name, name });
            let args = block.input.map_or(Cow::Borrowed("{}"), raw_text);
            calls.call(session, Call::ArgsSnapshot { id, args: &args });
        }
        let usage = pending.usage.as_ref().map(|(usage, _)| json_value(usage));
        if !pending.blocks.is_empty() {
            let mut meta = Meta::new();
            meta.insert("claude_message_ids".into(), Value::Array(vec![Value::from(pending.id.as_str())]));
            if let Some(request) = &pending.request {
                meta.insert("claude_request_ids".into(), Value::Array(vec![Value::from(request.as_str())]));
            }
            if let Some(model) = &pending.model {
                meta.insert("claude_model".into(), Value::from(model.as_str()));
            }
            if let Some(stop) = &pending.stop_reason {
                meta.insert("claude_stop_reason".into(), Value::from(stop.as_str()));
            }
            if let Some(usage) = &usage {
                meta.insert("claude_usage".into(), usage.clone());
            }
            if !signatures.is_empty() {
                meta.insert("claude_thinking_signatures".into(), Value::Array(signatures));
            }
            calls.call(session, Call::RoundMeta { meta: &meta });
        }
        for (id, meta) in &pending.metas {
            calls.call(session, Call::ToolMeta { id, meta });
        }
        if let Some(usage) = &usage {
            let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
            let (input, output) = (field("input_tokens"), field("output_tokens"));
            let (cache_read, cache_creation) = (field("cache_read_input_tokens"), field("cache_creation_input_tokens"));
            // Counts come from the file: a huge one saturates, never overflows.
            let total = [output, cache_read, cache_creation].into_iter().fold(input, u64::saturating_add);
            calls.call(session, Call::TokenUsage { total });
            let totals = &mut self.usage;
            totals.input = totals.input.saturating_add(input);
            totals.output = totals.output.saturating_add(output);
            totals.cache_read = totals.cache_read.saturating_add(cache_read);
            totals.cache_creation = totals.cache_creation.saturating_add(cache_creation);
            totals.messages = totals.messages.saturating_add(1);
            if let Some(cost) = pending.cost {
                totals.cost = Some(totals.cost.unwrap_or(0.0) + cost);
            }
            let totals = *totals;
            let mut meta = Meta::new();
            let summed = Map::from_iter([
                ("input_tokens".to_owned(), Value::from(totals.input)),
                ("output_tokens".to_owned(), Value::from(totals.output)),
                ("cache_read_input_tokens".to_owned(), Value::from(totals.cache_read)),
                ("cache_creation_input_tokens".to_owned(), Value::from(totals.cache_creation)),
                ("api_messages".to_owned(), Value::from(totals.messages)),
            ]);
            meta.insert("claude_usage".into(), Value::Object(summed));
            if let Some(cost) = totals.cost {
                meta.insert("claude_cost_usd".into(), Value::from(cost));
            }
            calls.call(session, Call::RunMeta { meta: &meta });
        }
        self.wants_tools = !tools.is_empty();
        for held in &pending.results {
            self.send_result(held, calls);
        }
    }
}

/// The session a line of session `id` belongs to: the session, or a
/// subagent's (`isSidechain` lines).
fn session_name<'s>(id: &'s str, line: &Line<'_>) -> Cow<'s, str> {
    match (line.is_sidechain, &line.agent_id) {
        (Some(true), Some(agent)) => Cow::Owned(format!("{id}/agent-{agent}")),
        (Some(true), None) => Cow::Owned(format!("{id}/sidechain")),
        _ => Cow::Borrowed(id),
    }
}

/// A subagent's `claude_parent`: the parent session, and the call that
/// started the subagent when it is known.
fn parent_link(session: &str, tool: Option<&str>) -> Value {
    let mut link = Map::from_iter([("session".to_owned(), Value::from(session))]);
    if let Some(tool) = tool {
        link.insert("tool_call".to_owned(), Value::from(tool));
    }
    Value::Object(link)
}

/// The output tokens a usage reports (0 when it says none).
fn output_tokens(usage: Raw<'_>) -> u64 {
    #[derive(Deserialize)]
    struct Output {
        #[serde(default)]
        output_tokens: Option<u64>,
    }
    let mut count = None;
    let scanned = scan_whole(usage.get(), |value| {
        let (read, end) = scan_count_field(value, "output_tokens")?;
        count = read;
        Some(end)
    });
    if scanned {
        return count.unwrap_or(0);
    }
    serde_json::from_str::<Output>(usage.get()).ok().and_then(|u| u.output_tokens).unwrap_or(0)
}

/// A tool result's content as text: a string as it is, a list of text
/// blocks as their texts joined, anything else (images) its JSON as sent.
fn result_text(content: Option<Raw<'_>>) -> String {
    let Some(content) = content else { return String::new() };
    if let Some(blocks) = view_of::<Vec<Block<'_>>>(content) {
        if blocks.iter().all(|b| b.kind == "text") {
            return blocks.iter().filter_map(|b| b.text.as_deref()).collect::<Vec<_>>().join("\n");
        }
    }
    raw_text(content).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathered_texts_are_saved_as_the_list_they_hold() {
        let list = [r#"{"type":"text","text":"é"}"#, "", r#"{"type":"tool_use","id":"t"}"#];
        let mut texts = Texts::default();
        for text in list {
            texts.push(text);
        }
        assert_eq!(texts.iter().collect::<Vec<_>>(), list);
        let saved = serde_json::to_string(&texts).unwrap();
        assert_eq!(saved, serde_json::to_string(&list).unwrap(), "the bytes of a list of strings");
        let restored: Texts = serde_json::from_str(&saved).unwrap();
        assert_eq!(restored.iter().collect::<Vec<_>>(), list);
        assert!(Texts::default().is_empty() && !restored.is_empty());
    }
}
