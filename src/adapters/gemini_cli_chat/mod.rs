//! The Gemini CLI chat adapter: the recordings Gemini CLI keeps of its
//! sessions (`~/.gemini/tmp/<project>/chats/session-….json` or `.jsonl`).
//!
//! Two containers hold the same records. An older CLI rewrites one JSON
//! document per session (`{sessionId, projectHash, startTime, lastUpdated,
//! messages: […]}`, pretty-printed: the replay reads it as one event, see
//! the JSON document framing); a newer one appends JSON lines: a metadata
//! record first, then one record per write of a message, `{"$set": {…}}`
//! patches of the metadata and `{"$rewindTo": "<id>"}` markers.
//!
//! A `user` message is a run: `start`, its prompt kept as run metadata. A
//! `gemini` message is one model response, a round: its `thoughts`
//! (summaries) as reasoning, its `content` (a string or a Part list) as
//! text, its `toolCalls` as calls whose final `args` are the arguments and
//! whose inline `result` (with its `status`) is the result. A model message
//! with text and no tool call leaves its round open, so a second one in a
//! row joins it as a paragraph of its own: rounds close on tool results and
//! on text after tool calls, never on a message boundary alone.
//!
//! Usage is counted once per model message: `tokens.input` already holds
//! `cached`, and `total` is `input + output + thoughts + tool`. Each message's
//! counts are kept in its round's metadata, their sum over the run in the
//! run's, and its `total` is the token gauge (a response with all zero
//! counts, or none, leaves the gauge alone).
//!
//! In the JSON-lines container a message is written again, whole and with
//! the same id, each time it changes (a tool call merged in, a result
//! arriving): the last record of an id wins. The CLI only ever writes its
//! last message again, so a message is held until a record of another one
//! follows (or the input ends) and translated then, once: its round is
//! delivered as soon as the next message begins, and what is held is one
//! message, however long the prompt. A later record of a message already
//! read, or a rewind to one, is reported rather than applied: the rounds
//! delivered stand.
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut chat = InputFormat::named("gemini-cli-chat").unwrap().adapter();
//! let document = br#"{"sessionId":"s1","projectHash":"ab","messages":[
//!   {"id":"u1","type":"user","content":"List files"},
//!   {"id":"m1","type":"gemini","content":"","tokens":{"input":10,"output":2,"cached":4,"thoughts":3,"tool":0,"total":15},
//!    "toolCalls":[{"id":"t1","name":"run_shell_command","args":{"command":"ls"},"status":"success",
//!      "result":[{"functionResponse":{"id":"t1","name":"run_shell_command","response":{"output":"a.txt"}}}]}]},
//!   {"id":"m2","type":"gemini","content":"One file.","tokens":{"input":20,"output":3,"cached":0,"thoughts":0,"tool":0,"total":23}}]}"#;
//! chat.translate(document, &mut |_: Option<&str>, call: Call<'_>| builder.call(call)).unwrap();
//! let rounds = builder.rounds();
//! assert_eq!(rounds[0].tool_calls[0].arguments, r#"{"command":"ls"}"#);
//! assert_eq!(rounds[0].tool_calls[0].result.content(), Some("a.txt"));
//! assert_eq!(rounds[1].message, "One file.");
//! assert_eq!(builder.summary().last_token_usage, Some(23));
//! ```

use std::borrow::Cow;
use std::ops::Range;

use crate::adapters::borrowed::Raw;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::borrowed::{
    json_string, json_value, raw_string, raw_value, scan_raw, scan_whole, utf8, Fields, Key, ListOr, Scan,
};
use super::printed::printed;
use super::support::{fill_fields, json_text, one, parse_event, report, rfc3339_ms, FieldValue, ItemMeta};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};
use crate::text_map::TextSet;
use smallvec::SmallVec;
use tool_call::{tool_calls, ToolCall};

mod tool_call;

/// The registry row of Gemini CLI chat recordings.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let chat = &roundup::adapters::gemini_cli_chat::FORMAT;
/// let metadata = br#"{"sessionId":"s1","projectHash":"ab","startTime":"2026-04-29T21:39:22.319Z","kind":"main"}"#;
/// assert_eq!(InputFormat::detect(metadata), chat);
/// assert_eq!(InputFormat::detect(br#"{"$set":{"lastUpdated":"2026-04-29T21:39:33.156Z"}}"#), chat);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "gemini-cli-chat",
    about: "Gemini CLI's saved chats
(~/.gemini/tmp/<project>/chats/): one
pretty-printed JSON document, or JSON
lines with $set and $rewindTo; a user
prompt is a run, a model message a
round; sessionId the session",
    detect: |event: &Map<String, Value>| {
        let has = |key: &str| event.contains_key(key);
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        if event.len() == 1 && (has("$set") || has("$rewindTo")) {
            return true;
        }
        if text("sessionId").is_some() && text("projectHash").is_some() {
            return true;
        }
        text("type") == Some("gemini")
            && text("id").is_some()
            && has("timestamp")
            && (has("toolCalls") || has("tokens") || has("thoughts"))
    },
    adapter: || Box::<GeminiCliChatAdapter>::default(),
};

/// How the last message of a run left it, for the reason it finishes with.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Last {
    /// Nothing yet, or a prompt no model message answered.
    #[default]
    Prompt,
    /// A model message with no tool call: the answer.
    Answer,
    /// A model message whose tool calls wait for the model's next response.
    Tools,
    /// A model message with a tool call the user cancelled.
    Cancelled,
    /// An `error` notice (an API failure).
    Error,
}

/// Translates Gemini CLI chat recordings into calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GeminiCliChatAdapter {
    /// The session's metadata (the document's or the metadata record's
    /// fields but its messages, with every `$set` merged in), kept in each
    /// run's metadata when the run finishes.
    session: Meta,
    /// JSON lines: the message not yet translated, its last record.
    pending: Pending,
    /// JSON lines: the ids of the messages translated, whose later records
    /// can no longer change what was read.
    #[serde(default)]
    done: TextSet,
    /// A run holds something: the next prompt finishes it first.
    open: bool,
    last: Last,
    /// The run's token counts, summed over its model messages: given at
    /// the first message with counts (which places the key in the run's
    /// metadata) and whole as the run finishes, as nothing reads a run's
    /// metadata before its summary. Given after every message, a run of n
    /// messages would copy the sum n times.
    usage: Meta,
    /// The open round holds text (reasoning) of a model message with no
    /// tool call: the next message's text (reasoning) is a new paragraph.
    open_message: bool,
    open_thought: bool,
    /// How many tool ids were made up, for a tool call without one.
    made_up: u64,
    /// The session's name: its first `sessionId`, fixed once a message was
    /// read (a file is one session).
    #[serde(default)]
    name: Option<String>,
    /// The round metadata of one model message, made again for each.
    #[serde(skip)]
    item: ItemMeta,
    /// The metadata of one tool call, made again for each.
    #[serde(skip)]
    tool_meta: Meta,
    /// A model message's reasoning and text, written into the buffers of
    /// the message before.
    #[serde(skip)]
    thought: String,
    #[serde(skip)]
    text: String,
}

impl Adapter for GeminiCliChatAdapter {
    state_is_self!();

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        // A message record, the most of a file, is held as its text until a
        // record of another message follows: read here for its id and type,
        // and where its fields are, so that it is not parsed again when it
        // is translated.
        let text = utf8(payload)?;
        let known = self.pending.last().map(|(previous, spans)| Known::of(previous, spans, text));
        if let Some(head) = Message::read(text, known.as_ref()) {
            if let Some(id) = head.message_id() {
                let spans = Spans::of(&head, text);
                self.record(Record { id, json: text, spans }, calls);
                return Ok(());
            }
            if let (Some(ListOr::List(messages)), true) = (&head.messages, head.session_id.is_some()) {
                // A whole document: every message, and the last run ends
                // with it. Its other fields are the session's.
                // Read whole once already: its fields are measured, not
                // checked again.
                let mut fields = Fields::default();
                Fields::read_raw(Raw::checked(text), &mut fields).map_err(|error| BadLine::json(&error))?;
                let session_id = head.session_id.and_then(json_string);
                let session = fields.0.iter().filter(|(key, _)| key != "messages");
                self.merge_session(
                    session_id.as_deref(),
                    session.map(|(key, value)| (key.as_ref(), raw_value(*value))),
                );
                for message in messages {
                    self.message(message.get(), None, calls);
                }
                self.finish(calls);
                return Ok(());
            }
        }
        let record = parse_event(payload)?;
        let Value::Object(record) = record else {
            return Err(BadLine::new("not a JSON object"));
        };
        if let Some(patch) = record.get("$set") {
            self.set(patch, &record, calls);
            return Ok(());
        }
        if let Some(target) = record.get("$rewindTo") {
            self.rewind(target, &record, calls);
            return Ok(());
        }
        if record.contains_key("sessionId") && record.contains_key("projectHash") {
            let session_id = record.get("sessionId").and_then(Value::as_str);
            self.merge_session(session_id, record.iter().map(|(key, value)| (key.as_str(), value.clone())));
            return Ok(());
        }
        if record.get("type").is_some_and(Value::is_string) {
            self.record_value(&Value::Object(record), calls);
            return Ok(());
        }
        let detail = format!("gemini-cli-chat: unknown record: {}", Value::Object(record));
        report(calls, self.session(), AnomalyKind::UnknownEvent, &detail);
        Ok(())
    }

    fn end(&mut self, calls: &mut dyn CallSink) {
        self.flush(calls);
        self.finish(calls);
    }
}

impl GeminiCliChatAdapter {
    /// The session's name, when the file gave one.
    fn session(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Keeps the session's fields (all but a document's messages); its
    /// first `sessionId` names the session, unless a message was read
    /// before it.
    fn merge_session<'k>(&mut self, session_id: Option<&str>, fields: impl Iterator<Item = (&'k str, Value)>) {
        let fresh = self.name.is_none() && !self.open && self.done.is_empty() && self.pending.is_empty();
        if let (true, Some(id)) = (fresh, session_id) {
            self.name = Some(id.to_owned());
        }
        for (key, value) in fields {
            self.session.insert(key.to_owned(), value);
        }
    }

    /// A message record of the JSON-lines container: replaces the record
    /// of its id, or is the next message, and the one held before it is
    /// translated (the writer never writes it again).
    fn record(&mut self, message: Record<'_>, calls: &mut dyn CallSink) {
        if let Some(id) = message.id.as_deref() {
            if self.done.contains(id) {
                let detail = format!(
                    "gemini-cli-chat: a record of a message already read, not read again: {}",
                    json_value(message.json)
                );
                return report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
            }
            if let Some(at) = self.position(id) {
                if self.pending.replace(at, &message) {
                    return;
                }
            }
        }
        self.flush(calls);
        self.pending.push(&message);
    }

    /// A message record read as a value (a `$set`'s, or one whose text
    /// the quick read could not place).
    fn record_value(&mut self, message: &Value, calls: &mut dyn CallSink) {
        let json = message.to_string();
        self.record(Record::of_value(message, &json), calls);
    }

    /// A `$set` patch: `messages` replaces the messages not yet read, any
    /// other field the session's.
    fn set(&mut self, patch: &Value, record: &Map<String, Value>, calls: &mut dyn CallSink) {
        let Some(patch) = patch.as_object() else {
            let detail = format!("gemini-cli-chat: a $set that is not an object: {}", Value::Object(record.clone()));
            return report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
        };
        for (key, value) in patch {
            if key != "messages" {
                self.session.insert(key.clone(), value.clone());
                continue;
            }
            let Some(messages) = value.as_array() else {
                let detail = format!("gemini-cli-chat: $set messages that are not a list: {value}");
                report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
                continue;
            };
            self.pending.truncate(0);
            for message in messages {
                self.record_value(message, calls);
            }
        }
    }

    /// A `$rewindTo`: the message of that id and every one after it are
    /// dropped, when they were not read yet.
    fn rewind(&mut self, target: &Value, record: &Map<String, Value>, calls: &mut dyn CallSink) {
        let at = target.as_str().and_then(|id| self.position(id));
        match at {
            Some(at) => self.pending.truncate(at),
            None => {
                let detail = format!(
                    "gemini-cli-chat: a rewind to a message not held (read already, or never seen): {}",
                    Value::Object(record.clone())
                );
                report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
            }
        }
    }

    /// Where the held message of `id` is.
    fn position(&self, id: &str) -> Option<usize> {
        (0..self.pending.len()).find(|&at| self.pending.id(at) == Some(id))
    }

    /// Translates the messages held.
    fn flush(&mut self, calls: &mut dyn CallSink) {
        let mut pending = std::mem::take(&mut self.pending);
        for at in 0..pending.len() {
            if let Some(id) = pending.id(at) {
                self.done.insert(id);
            }
            if let Some((json, spans)) = pending.message(at) {
                self.message(json, spans, calls);
            }
        }
        pending.clear();
        self.pending = pending;
    }

    /// Finishes the open run: completed by an answer, failed by an API
    /// error, canceled by a cancelled tool call, interrupted otherwise (a
    /// prompt with no answer, tool calls the model never saw the results
    /// of). The session's metadata and the run's usage go with it.
    fn finish(&mut self, calls: &mut dyn CallSink) {
        if !self.open {
            return;
        }
        if !self.usage.is_empty() {
            let usage = std::mem::take(&mut self.usage);
            calls.call(self.session(), Call::RunMeta { meta: &one("gemini_cli_chat_usage", Value::Object(usage)) });
        }
        if !self.session.is_empty() {
            calls.call(
                self.session(),
                Call::RunMeta { meta: &one("gemini_cli_chat_session", Value::Object(self.session.clone())) },
            );
        }
        let reason = match self.last {
            Last::Answer => FinishReason::Completed,
            Last::Error => FinishReason::Failed,
            Last::Cancelled => FinishReason::Canceled,
            Last::Prompt | Last::Tools => FinishReason::Interrupted,
        };
        calls.call(self.session(), Call::Finish { reason });
        self.open = false;
        self.last = Last::Prompt;
        self.open_message = false;
        self.open_thought = false;
    }

    /// One message of the conversation, as JSON read once already (held,
    /// or an item of a document); `spans`, where its fields are when they
    /// were found as it was read.
    fn message(&mut self, json: &str, spans: Option<&Spans>, calls: &mut dyn CallSink) {
        match spans.and_then(|spans| spans.message(json)).or_else(|| Message::read_again(json)) {
            Some(view) => self.message_view(&view, json, calls),
            None => self.unknown_message(json, calls),
        }
    }

    /// A message this format does not know, kept whole.
    fn unknown_message(&mut self, json: &str, calls: &mut dyn CallSink) {
        self.open = true;
        let detail = format!("gemini-cli-chat: unknown message: {}", json_value(json));
        report(calls, self.session(), AnomalyKind::UnknownEvent, &detail);
    }

    fn message_view(&mut self, message: &Message<'_>, json: &str, calls: &mut dyn CallSink) {
        if let Some(at_ms) = message.timestamp.and_then(json_string).as_deref().and_then(rfc3339_ms) {
            calls.clock(at_ms);
        }
        match message.kind.and_then(json_string).as_deref() {
            Some("user") => {
                if self.open {
                    self.finish(calls);
                    calls.call(self.session(), Call::Start);
                }
                self.open = true;
                self.last = Last::Prompt;
                let mut prompt = String::new();
                content_text(message.content, &mut prompt);
                let mut meta = one("gemini_cli_chat_prompt", Value::from(prompt));
                if let Some(id) = message.id {
                    meta.insert("gemini_cli_chat_prompt_id".into(), json_value(id));
                }
                calls.call(self.session(), Call::RunMeta { meta: &meta });
            }
            Some("gemini") => self.model_message(message, calls),
            Some(kind @ ("info" | "warning" | "error")) => {
                self.open = true;
                let mut text = String::new();
                content_text(message.content, &mut text);
                if kind == "error" {
                    self.last = Last::Error;
                    report(
                        calls,
                        self.session(),
                        AnomalyKind::ProtocolError,
                        &format!("gemini-cli-chat: error: {text}"),
                    );
                } else {
                    let notice = Value::Array(vec![serde_json::json!({ "type": kind, "content": text })]);
                    calls.call(self.session(), Call::RoundMeta { meta: &one("gemini_cli_chat_notices", notice) });
                }
            }
            _ => self.unknown_message(json, calls),
        }
    }

    /// A `gemini` message: one model response.
    fn model_message(&mut self, message: &Message<'_>, calls: &mut dyn CallSink) {
        self.open = true;
        // A new paragraph of the open round's reasoning, or its first.
        let lead = if self.open_thought { "\n\n" } else { "" };
        let mut thought = std::mem::take(&mut self.thought);
        thought.clear();
        thought.push_str(lead);
        thoughts_text(message.thoughts, &mut thought);
        let has_thought = thought.len() > lead.len();
        if has_thought {
            calls.call(self.session(), Call::Thought { text: &thought });
        }
        self.thought = thought;
        let lead = if self.open_message { "\n\n" } else { "" };
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        text.push_str(lead);
        let unread = content_text(message.content, &mut text);
        for part in unread {
            let detail = format!("gemini-cli-chat: a part of a model message that is not text: {part}");
            report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
        }
        let has_text = text.len() > lead.len();
        if has_text {
            calls.call(self.session(), Call::Message { text: &text });
        }
        self.text = text;
        let tokens = message.tokens.filter(|raw| *raw != "null");
        let mut about: [(&str, &str); 3] = [("", ""); 3];
        let mut fields = 0;
        for (raw, name) in [(message.id, "id"), (message.model, "model"), (tokens, "tokens")] {
            if let (Some(raw), Some(field)) = (raw.filter(|raw| *raw != "null"), about.get_mut(fields)) {
                *field = (name, raw);
                fields += 1;
            }
        }
        if let Some(about @ [_, ..]) = about.get(..fields) {
            let meta = self.item.object("gemini_cli_chat_messages", about);
            calls.call(self.name.as_deref(), Call::RoundMeta { meta });
        }
        self.tokens(tokens, calls);
        let tool_calls = message.tool_calls.map(|json| tool_calls(Raw::checked(json))).unwrap_or_default();
        // Every call is declared before any result: the first result would
        // otherwise close the round before the other calls are in it.
        let mut declared: SmallVec<[(Cow<'_, str>, Option<String>); 2]> =
            tool_calls.iter().map(|tool_call| self.declare(tool_call, calls)).collect();
        let mut last = Last::Answer;
        for (tool_call, (id, text)) in tool_calls.iter().zip(&mut declared) {
            let answered = result(tool_call, id, text.take(), self.session(), calls);
            if last != Last::Cancelled {
                last = answered;
            }
        }
        if tool_calls.is_empty() {
            self.open_message |= has_text;
            self.open_thought |= has_thought;
        } else {
            self.open_message = false;
            self.open_thought = false;
        }
        self.last = last;
    }

    /// A message's `tokens` (the field's JSON text as its message was
    /// read): kept in the run's sum, its total the gauge.
    fn tokens(&mut self, tokens: Option<&str>, calls: &mut dyn CallSink) {
        let Some(tokens) = tokens else { return };
        let Some(counts) = Counts::read(Raw::checked(tokens)) else {
            let detail = format!("gemini-cli-chat: tokens that are not an object: {}", json_value(tokens));
            return report(calls, self.session(), AnomalyKind::UnknownContent, &detail);
        };
        let count = |number: Option<u64>| number.unwrap_or(0);
        // `cached` is part of `input`: never added to the total again.
        let parts = count(counts.input).saturating_add(count(counts.output)).saturating_add(count(counts.thoughts));
        let total = counts.total.unwrap_or(parts.saturating_add(count(counts.tool)));
        let first = self.usage.is_empty();
        for (key, value) in [
            ("input", count(counts.input)),
            ("output", count(counts.output)),
            ("cached", count(counts.cached)),
            ("thoughts", count(counts.thoughts)),
            ("tool", count(counts.tool)),
            ("total", total),
        ] {
            match self.usage.get_mut(key) {
                Some(held) => *held = held.as_u64().unwrap_or(0).saturating_add(value).into(),
                None => {
                    self.usage.insert(key.into(), value.into());
                }
            }
        }
        if first {
            calls.call(
                self.session(),
                Call::RunMeta { meta: &one("gemini_cli_chat_usage", Value::Object(self.usage.clone())) },
            );
        }
        if total > 0 {
            calls.call(self.session(), Call::TokenUsage { total });
        }
    }

    /// One tool call with its final arguments (printed as a JSON value is,
    /// whatever the container's whitespace); its id.
    fn declare<'a>(&mut self, tool_call: &ToolCall<'a>, calls: &mut dyn CallSink) -> (Cow<'a, str>, Option<String>) {
        let name = tool_call.name.and_then(raw_string);
        let name = name.as_deref().unwrap_or("");
        let id = tool_call.id.and_then(raw_string).unwrap_or_else(|| {
            self.made_up = self.made_up.saturating_add(1);
            Cow::Owned(format!("gemini-cli-chat-{}", self.made_up))
        });
        let title = tool_call.display_name.and_then(raw_string).filter(|title| !title.is_empty());
        let title = title.as_deref().unwrap_or(name);
        calls.call(self.session(), Call::ToolCall { id: &id, title, name });
        let args = tool_call.args.filter(|args| args.get() != "null");
        let args = args.map_or(Cow::Borrowed("{}"), |args| printed(args.get()));
        calls.call(self.session(), Call::ArgsSnapshot { id: &id, args: &args });
        // A display that is the result's text is decoded once, for both.
        let text = tool_call.display_is_result().then(|| tool_call.result_text());
        let display = match (&text, tool_call.result_display) {
            (Some(text), Some(_)) => Some(FieldValue::Text(text)),
            (_, display) => display.map(FieldValue::from),
        };
        let kept = [
            ("gemini_cli_chat_status", tool_call.status.map(FieldValue::from)),
            ("gemini_cli_chat_result_display", display),
            ("gemini_cli_chat_description", tool_call.description.map(FieldValue::from)),
        ];
        let mut fields: [(&str, FieldValue<'_>); 3] = [("", FieldValue::Raw("")); 3];
        let mut count = 0;
        for (name, value) in kept {
            let given = value.filter(|value| !matches!(value, FieldValue::Raw("null")));
            if let (Some(value), Some(field)) = (given, fields.get_mut(count)) {
                *field = (name, value);
                count += 1;
            }
        }
        if let Some(fields @ [_, ..]) = fields.get(..count) {
            fill_fields(&mut self.tool_meta, fields);
            calls.call(self.session(), Call::ToolMeta { id: &id, meta: &self.tool_meta });
        }
        (id, text)
    }
}

/// The message records not yet translated, the last record of each id,
/// their text one after another in one buffer. Gemini CLI's writer writes
/// only its last message again (as its calls are scheduled and answered),
/// so a record of another message is the sign that the one held is final:
/// one message is held at a time (more only from a checkpoint of a build
/// that held a whole prompt). A checkpoint holds each record as a value, as
/// it was read.
#[derive(Debug, Default)]
struct Pending {
    text: String,
    held: Vec<Held>,
}

/// Where one held record is in [`Pending`]'s text.
#[derive(Debug, Clone)]
struct Held {
    /// Its id, decoded, when it has one.
    id: Option<Range<usize>>,
    json: Range<usize>,
    /// Where its fields are in its JSON, when found as it was read.
    spans: Option<Spans>,
}

/// A message record as it is read, before it is held: its id, its JSON
/// and where its fields are in it.
struct Record<'a> {
    id: Option<Cow<'a, str>>,
    json: &'a str,
    spans: Option<Spans>,
}

impl<'a> Record<'a> {
    /// A record read as a value, `json` its text: its fields are found
    /// again when it is translated.
    fn of_value(message: &'a Value, json: &'a str) -> Record<'a> {
        let id = message.get("id").and_then(Value::as_str).map(Cow::Borrowed);
        Record { id, json, spans: None }
    }
}

impl Pending {
    /// The text kept for the next message once one longer than this was
    /// held: a long message does not hold its memory for the rest of the
    /// replay.
    const KEPT: usize = 1 << 20;

    fn len(&self) -> usize {
        self.held.len()
    }

    fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Holds `record` last.
    fn push(&mut self, record: &Record<'_>) {
        let held = self.store(record);
        self.held.push(held);
    }

    /// Holds `record` in place of the record at `at`; `false` if there is
    /// none. The record stored last is overwritten where it is (the
    /// writer's second and third writes of its message take no room).
    fn replace(&mut self, at: usize, record: &Record<'_>) -> bool {
        let Some(old) = self.held.get(at) else { return false };
        let end = old.id.as_ref().map_or(old.json.end, |id| id.end);
        if end == self.text.len() {
            self.text.truncate(old.json.start);
        }
        let held = self.store(record);
        if let Some(slot) = self.held.get_mut(at) {
            *slot = held;
        }
        true
    }

    /// Copies `record`'s JSON and id after the text held.
    fn store(&mut self, record: &Record<'_>) -> Held {
        let start = self.text.len();
        self.text.push_str(record.json);
        let json = start..self.text.len();
        let id = record.id.as_deref().map(|id| {
            let start = self.text.len();
            self.text.push_str(id);
            start..self.text.len()
        });
        Held { id, json, spans: record.spans }
    }

    /// The id of the record at `at`.
    fn id(&self, at: usize) -> Option<&str> {
        self.text.get(self.held.get(at)?.id.clone()?)
    }

    /// The last record held, and where its fields are in it (when they
    /// were found as it was read).
    fn last(&self) -> Option<(&str, &Spans)> {
        let (json, spans) = self.message(self.held.len().checked_sub(1)?)?;
        Some((json, spans?))
    }

    /// The JSON of the record at `at`, and where its fields are in it.
    fn message(&self, at: usize) -> Option<(&str, Option<&Spans>)> {
        let held = self.held.get(at)?;
        Some((self.text.get(held.json.clone())?, held.spans.as_ref()))
    }

    /// Drops the records from `at` on.
    fn truncate(&mut self, at: usize) {
        self.held.truncate(at);
        if self.held.is_empty() {
            self.clear();
        }
    }

    /// Drops every record.
    fn clear(&mut self) {
        self.held.clear();
        self.text.clear();
        if self.text.capacity() > Self::KEPT {
            self.text = String::new();
        }
    }
}

impl Serialize for Pending {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json = (0..self.len()).filter_map(|at| self.message(at)).map(|(json, _)| json_value(json));
        serializer.collect_seq(json)
    }
}

impl<'de> Deserialize<'de> for Pending {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Pending, D::Error> {
        let mut pending = Pending::default();
        for message in Vec::<Value>::deserialize(deserializer)? {
            let json = message.to_string();
            pending.push(&Record::of_value(&message, &json));
        }
        Ok(pending)
    }
}

/// A record's fields as JSON text, borrowed and read where they are used:
/// a message's, and the keys that tell the other kinds of record. A key
/// written twice counts with its last value, as a map reads it.
#[derive(Debug, Default)]
struct Message<'a> {
    id: Option<&'a str>,
    timestamp: Option<&'a str>,
    kind: Option<&'a str>,
    content: Option<&'a str>,
    thoughts: Option<&'a str>,
    model: Option<&'a str>,
    tokens: Option<&'a str>,
    tool_calls: Option<&'a str>,
    /// A document's messages, when they are a list (a record whose
    /// `messages` is not a list is not a document).
    messages: Option<ListOr<'a>>,
    set: Option<&'a str>,
    rewind: Option<&'a str>,
    session_id: Option<&'a str>,
    project_hash: Option<&'a str>,
}

impl<'a> Message<'a> {
    /// The fields of a JSON object; `None` for anything else. When the
    /// record may begin as `known`'s did, a field that lies wholly in the
    /// bytes they share is taken where it was found then, not checked
    /// again.
    fn read(json: &'a str, known: Option<&Known<'_>>) -> Option<Message<'a>> {
        Self::read_text(json, false, known)
    }

    /// [`Message::read`] of a message read once already (held, or an item
    /// of a document): what is skipped is measured, not checked again.
    fn read_again(json: &'a str) -> Option<Message<'a>> {
        Self::read_text(json, true, None)
    }

    fn read_text(json: &'a str, checked: bool, known: Option<&Known<'_>>) -> Option<Message<'a>> {
        if !json.trim_start().starts_with('{') {
            return None;
        }
        let mut message = Message::default();
        let scanned = if checked {
            scan_raw(Raw::checked(json), |value| message.scan_in(value, None))
        } else {
            scan_whole(json, |value| message.scan_in(value, known))
        };
        if scanned {
            return Some(message);
        }
        serde_json::from_str(json).ok()
    }

    /// Reads an object's fields through the scanner ([`crate::json_scan`]),
    /// as the visitor below reads them through serde; where it ends, or
    /// `None` to leave it to serde.
    fn scan_in(&mut self, value: crate::json_scan::Value<'a>, known: Option<&Known<'_>>) -> Option<usize> {
        value.object(|key, value| {
            if key == "messages" {
                let (messages, end) = ListOr::scan(value)?;
                self.messages = Some(messages);
                return Some(end);
            }
            let Some(field) = self.raw_field(key) else { return value.skip() };
            if let Some(end) = known.and_then(|known| known.end_of(value.at())) {
                *field = Some(value.text_to(end)?);
                return Some(end);
            }
            let (raw, end) = value.raw()?;
            *field = Some(raw);
            Some(end)
        })
    }

    /// The field that holds `key`'s value as raw JSON text (every key read
    /// but `messages`); `None` for a key not read.
    fn raw_field(&mut self, key: &str) -> Option<&mut Option<&'a str>> {
        Some(match key {
            "id" => &mut self.id,
            "timestamp" => &mut self.timestamp,
            "type" => &mut self.kind,
            "content" => &mut self.content,
            "thoughts" => &mut self.thoughts,
            "model" => &mut self.model,
            "tokens" => &mut self.tokens,
            "toolCalls" => &mut self.tool_calls,
            "$set" => &mut self.set,
            "$rewindTo" => &mut self.rewind,
            "sessionId" => &mut self.session_id,
            "projectHash" => &mut self.project_hash,
            _ => return None,
        })
    }

    /// A message record's id (`Some(None)`: a message without one), or
    /// `None` for a record of another kind: a message record has a string
    /// `type` and none of the other kinds' keys.
    fn message_id(&self) -> Option<Option<Cow<'a, str>>> {
        let other = self.messages.is_some()
            || self.set.is_some()
            || self.rewind.is_some()
            || (self.session_id.is_some() && self.project_hash.is_some());
        let message = !other && self.kind.is_some_and(|kind| kind.starts_with('"'));
        message.then(|| self.id.and_then(json_string))
    }

    /// The fields a message's translation reads, in the order of [`Spans`].
    fn message_fields(&self) -> [Option<&'a str>; 8] {
        [self.id, self.timestamp, self.kind, self.content, self.thoughts, self.model, self.tokens, self.tool_calls]
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Message<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Visit<'a> {
            type Value = Message<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Message<'a>, M::Error> {
                let mut message = Message::default();
                while let Some(Key(key)) = map.next_key::<Key<'a>>()? {
                    if key == "messages" {
                        message.messages = Some(map.next_value()?);
                        continue;
                    }
                    match message.raw_field(&key) {
                        Some(field) => *field = Some(map.next_value::<Raw<'a>>()?.get()),
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(message)
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A record read (and checked) before the one being read, and how many
/// bytes the two begin with alike. Gemini CLI writes a message again,
/// whole, each time it changes, so its second and third records repeat the
/// first up to its tool calls: a field of the earlier record that lies
/// wholly in the shared bytes is the same value, at the same place, in the
/// new one, and ends where it ended there.
struct Known<'p> {
    spans: &'p Spans,
    same_to: usize,
}

impl<'p> Known<'p> {
    fn of(previous: &str, spans: &'p Spans, json: &str) -> Known<'p> {
        Known { spans, same_to: crate::json_scan::common_prefix(previous.as_bytes(), json.as_bytes()) }
    }

    /// Where the earlier record's field that started at `at` ended, when
    /// it lies in the shared bytes.
    fn end_of(&self, at: usize) -> Option<usize> {
        let (_, end) = self.spans.0.iter().find(|&&(start, end)| start < end && start as usize == at)?;
        let end = *end as usize;
        (end <= self.same_to).then_some(end)
    }
}

/// Where a held message's fields are in its JSON (start and end, in
/// bytes; `(0, 0)` for a field it lacks), found as it was read: its
/// translation, once a record of another message follows, reads them there
/// rather than parsing the message again, and the next record of the same
/// message takes the fields it repeats from them ([`Known`]).
#[derive(Debug, Clone, Copy)]
struct Spans([(u32, u32); 8]);

impl Spans {
    /// Where `message`'s fields are in `json`, the text it was read from
    /// (`None` if one is not in it, which a borrowed read never gives).
    fn of(message: &Message<'_>, json: &str) -> Option<Spans> {
        let base = json.as_ptr() as usize;
        let mut spans = [(0, 0); 8];
        for (span, field) in spans.iter_mut().zip(message.message_fields()) {
            let Some(field) = field else { continue };
            let start = (field.as_ptr() as usize).checked_sub(base)?;
            let end = start.checked_add(field.len())?;
            json.get(start..end)?;
            *span = (u32::try_from(start).ok()?, u32::try_from(end).ok()?);
        }
        Some(Spans(spans))
    }

    /// The message's fields, in `json`.
    fn message<'a>(&self, json: &'a str) -> Option<Message<'a>> {
        let mut fields = [None; 8];
        for (field, &(start, end)) in fields.iter_mut().zip(&self.0) {
            if end > 0 {
                *field = Some(json.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?);
            }
        }
        let [id, timestamp, kind, content, thoughts, model, tokens, tool_calls] = fields;
        Some(Message { id, timestamp, kind, content, thoughts, model, tokens, tool_calls, ..Message::default() })
    }
}

/// A tool call's result, when it has one (`text`, its text when it was
/// decoded already); how it leaves the run.
fn result(
    tool_call: &ToolCall<'_>,
    id: &str,
    text: Option<String>,
    session: Option<&str>,
    calls: &mut dyn CallSink,
) -> Last {
    let status = tool_call.status.and_then(raw_string);
    let (terminal, last) = match status.as_deref() {
        Some("success") => (ToolCallStatus::Completed, Last::Tools),
        Some("error") => (ToolCallStatus::Failed, Last::Tools),
        Some("cancelled" | "canceled") => (ToolCallStatus::Failed, Last::Cancelled),
        // Still running, or waiting for approval, when the file was
        // written: no result yet.
        None | Some("scheduled" | "validating" | "awaiting_approval" | "executing") => return Last::Tools,
        Some(_) => {
            let tool_call = tool_call.raw.map_or(Cow::Borrowed(""), |raw| printed(raw.get()));
            let detail = format!("gemini-cli-chat: a tool call of a status this format does not know: {tool_call}");
            report(calls, session, AnomalyKind::UnknownStatus, &detail);
            return Last::Tools;
        }
    };
    if let Some(at_ms) = tool_call.timestamp.and_then(raw_string).as_deref().and_then(rfc3339_ms) {
        calls.clock(at_ms);
    }
    let content = text.unwrap_or_else(|| tool_call.result_text());
    calls.call(session, Call::ToolUpdate { id, content: &content, status: terminal });
    last
}

/// A message's `content` as text, added to `text`: a string as it is, a
/// Part list's `text` parts joined; the parts that are not text, for the
/// caller to report.
fn content_text(content: Option<&str>, text: &mut String) -> Vec<Value> {
    let Some(content) = content else { return Vec::new() };
    if let Some(own) = json_string(content) {
        text.push_str(&own);
        return Vec::new();
    }
    match json_value(content) {
        Value::Null => Vec::new(),
        Value::Array(parts) => {
            let mut unread = Vec::new();
            for part in parts {
                match part.get("text").and_then(Value::as_str) {
                    Some(piece) => text.push_str(piece),
                    None if part.is_string() => text.push_str(&json_text(&part)),
                    None => unread.push(part),
                }
            }
            unread
        }
        part @ Value::Object(_) => match part.get("text").and_then(Value::as_str) {
            Some(own) => {
                text.push_str(own);
                Vec::new()
            }
            None => vec![part],
        },
        other => {
            text.push_str(&other.to_string());
            Vec::new()
        }
    }
}

/// A message's token counts: each a whole number (as `Value::as_u64`
/// reads one; any other value counts nothing), the last of a key written
/// twice.
#[derive(Debug, Default)]
struct Counts {
    input: Option<u64>,
    output: Option<u64>,
    cached: Option<u64>,
    thoughts: Option<u64>,
    tool: Option<u64>,
    total: Option<u64>,
}

impl Counts {
    fn slot(&mut self, key: &str) -> Option<&mut Option<u64>> {
        Some(match key {
            "input" => &mut self.input,
            "output" => &mut self.output,
            "cached" => &mut self.cached,
            "thoughts" => &mut self.thoughts,
            "tool" => &mut self.tool,
            "total" => &mut self.total,
            _ => return None,
        })
    }

    /// The counts of `tokens`, read once already as part of its message;
    /// `None` when it is not an object.
    fn read(tokens: Raw<'_>) -> Option<Counts> {
        if !tokens.get().starts_with('{') {
            return None;
        }
        let mut counts = Counts::default();
        let scanned = scan_raw(tokens, |value| {
            value.object(|key, value| {
                let (text, end) = value.raw()?;
                if let Some(slot) = counts.slot(key) {
                    *slot = json_u64(text);
                }
                Some(end)
            })
        });
        if scanned {
            return Some(counts);
        }
        // Left to serde (a key with an escape): field by field.
        let mut fields = Fields::default();
        Fields::read_raw(tokens, &mut fields).ok()?;
        let mut counts = Counts::default();
        for (key, value) in &fields.0 {
            if let Some(slot) = counts.slot(key) {
                *slot = json_u64(value.get());
            }
        }
        Some(counts)
    }
}

/// A JSON number's text as a whole number, as `Value::as_u64` reads it (a
/// fraction, an exponent or a sign, `-0` too, is none).
fn json_u64(raw: &str) -> Option<u64> {
    raw.bytes().all(|byte| byte.is_ascii_digit()).then(|| raw.parse().ok()).flatten()
}

/// The `thoughts` summaries as reasoning, added to `text`: each one's
/// subject, then its description, the summaries as paragraphs. Written
/// straight into `text` as the list is read (the list read once, nothing
/// gathered first); anything but a list adds nothing. `thoughts` is the
/// field's JSON text as its message was read (checked JSON).
fn thoughts_text(thoughts: Option<&str>, text: &mut String) {
    let Some(thoughts) = thoughts.filter(|json| json.starts_with('[')) else { return };
    let start = text.len();
    if scan_raw(Raw::checked(thoughts), |list| scan_summaries(list, text)) {
        return;
    }
    // Left to serde: the text as it was, read again.
    text.truncate(start);
    let mut reader = serde_json::Deserializer::from_str(thoughts);
    if serde::de::DeserializeSeed::deserialize(Summaries(text), &mut reader).and_then(|()| reader.end()).is_err() {
        // Not a list after all (a raw value is valid JSON, so never): the
        // text as it was.
        text.truncate(start);
    }
}

/// The `thoughts` list read through the scanner into `text`, as
/// [`Summaries`] reads it through serde; where it ends, or `None` to leave
/// it to serde (with `text` then holding part of it).
fn scan_summaries(list: crate::json_scan::Value<'_>, text: &mut String) -> Option<usize> {
    let start = text.len();
    list.array(|item| {
        let mark = text.len();
        if mark > start {
            text.push_str("\n\n");
        }
        let paragraph = text.len();
        let end = scan_summary(item, text)?;
        if text.len() == paragraph {
            text.truncate(mark);
        }
        Some(end)
    })
}

/// One summary read through the scanner into `text`, as [`Summary`] reads
/// it through serde; where it ends, or `None` to leave it to serde.
fn scan_summary(item: crate::json_scan::Value<'_>, text: &mut String) -> Option<usize> {
    if let Some((own, end)) = item.string() {
        text.push_str(&own);
        return Some(end);
    }
    if item.is_object() {
        let (mut subject, mut description) = (None, None);
        let end = item.object(|key, value| {
            let field = match key {
                "subject" => &mut subject,
                "description" => &mut description,
                _ => return value.skip(),
            };
            let (read, end) = ListOr::scan(value)?;
            *field = read.into_string();
            Some(end)
        })?;
        push_summary(text, subject.as_deref(), description.as_deref());
        return Some(end);
    }
    // Anything else adds nothing.
    item.discard()
}

/// A summary's subject, then its description, on lines of their own.
fn push_summary(text: &mut String, subject: Option<&str>, description: Option<&str>) {
    let (subject, description) = (subject.unwrap_or_default(), description.unwrap_or_default());
    text.push_str(subject);
    if !subject.is_empty() && !description.is_empty() {
        text.push('\n');
    }
    text.push_str(description);
}

/// The `thoughts` list, read into the text it is given.
struct Summaries<'t>(&'t mut String);

impl<'de> serde::de::DeserializeSeed<'de> for Summaries<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Summaries<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of summaries")
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        let text = self.0;
        let start = text.len();
        loop {
            let mark = text.len();
            if mark > start {
                text.push_str("\n\n");
            }
            let paragraph = text.len();
            if seq.next_element_seed(Summary(&mut *text))?.is_none() {
                text.truncate(mark);
                return Ok(());
            }
            if text.len() == paragraph {
                text.truncate(mark);
            }
        }
    }
}

/// One summary, added to the text it is given: `subject`, then
/// `description`; a string is its own; anything else adds nothing. A key
/// written twice counts with its last value.
struct Summary<'t>(&'t mut String);

impl<'de> serde::de::DeserializeSeed<'de> for Summary<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Summary<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a summary")
    }
    fn visit_str<E>(self, own: &str) -> Result<(), E> {
        self.0.push_str(own);
        Ok(())
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let (mut subject, mut description) = (None, None);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "subject" => subject = map.next_value::<ListOr<'de>>()?.into_string(),
                "description" => description = map.next_value::<ListOr<'de>>()?.into_string(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        push_summary(self.0, subject.as_deref(), description.as_deref());
        Ok(())
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_message_read_at_its_spans_is_the_message_read_again() {
        let json = r#"{"id":"g\u0031","timestamp":"2026-01-01T00:00:00Z","extra":[1,{"id":"no"}],"type":"gemini","content":[{"text":"a"}],"thoughts":[],"model":"m","tokens":{"total":3},"toolCalls":[{"id":"t"}],"type":"gemini"}"#;
        let head = Message::read(json, None).unwrap();
        let spans = Spans::of(&head, json).unwrap();
        let held = spans.message(json).unwrap();
        assert_eq!(held.message_fields(), head.message_fields());
        assert_eq!(held.id, Some(r#""g\u0031""#));
        assert_eq!(held.tool_calls, Some(r#"[{"id":"t"}]"#));
        assert_eq!(head.message_id(), Some(Some(Cow::Borrowed("g1"))));
        // Text the spans do not fit (another record's): refused, not
        // sliced wrong or panicking.
        assert!(spans.message("{}").is_none());
    }

    #[test]
    fn a_record_read_after_the_one_it_repeats_reads_as_if_alone() {
        // A message's three writes, as the recorder appends them.
        let first = r#"{"id":"g1","timestamp":"2026-01-01T00:00:00Z","type":"gemini","content":"Let me look.\n","thoughts":[{"subject":"S","description":"d \"q\""}],"tokens":{"input":3,"total":4},"model":"m"}"#;
        let second = r#"{"id":"g1","timestamp":"2026-01-01T00:00:00Z","type":"gemini","content":"Let me look.\n","thoughts":[{"subject":"S","description":"d \"q\""}],"tokens":{"input":3,"total":4},"model":"m","toolCalls":[{"id":"t","name":"ls","args":{}}]}"#;
        let third = r#"{"id":"g1","timestamp":"2026-01-01T00:00:00Z","type":"gemini","content":"Let me look.\n","thoughts":[{"subject":"S","description":"d \"q\""}],"tokens":{"input":3,"total":4},"model":"m","toolCalls":[{"id":"t","name":"ls","args":{},"status":"success"}]}"#;
        for (previous, json) in [(first, second), (second, third), (third, first), (first, first)] {
            let head = Message::read(previous, None).unwrap();
            let spans = Spans::of(&head, previous).unwrap();
            // The record as written, and with each character in turn made
            // something else (a control character, a quote, a brace, a
            // letter) or the record cut there: read after `previous`, each
            // gives the fields, or the refusal, it gives read alone.
            let mut variants = vec![json.to_owned()];
            for (at, _) in json.char_indices() {
                variants.push(json[..at].to_owned());
                for other in ["\u{1}", "\"", "}", "x"] {
                    let mut variant = json.to_owned();
                    let end = at + json[at..].chars().next().map_or(0, char::len_utf8);
                    variant.replace_range(at..end, other);
                    variants.push(variant);
                }
            }
            for variant in &variants {
                let known = Known::of(previous, &spans, variant);
                let after = Message::read(variant, Some(&known)).map(|message| message.message_fields());
                let alone = Message::read(variant, None).map(|message| message.message_fields());
                assert_eq!(after, alone, "{variant} after {previous}");
            }
        }
        // The second write's text and reasoning are the first's, found
        // where they were.
        let head = Message::read(first, None).unwrap();
        let spans = Spans::of(&head, first).unwrap();
        let known = Known::of(first, &spans, second);
        for field in [head.content, head.thoughts, head.tokens, head.model] {
            let at = field.unwrap().as_ptr() as usize - first.as_ptr() as usize;
            assert_eq!(known.end_of(at), Some(at + field.unwrap().len()));
        }
        // Past the bytes they share, nothing is taken on trust.
        let known = Known::of(first, &spans, third);
        assert_eq!(known.same_to, first.len() - 1);
        assert_eq!(known.end_of(0), None);
    }

    #[test]
    fn a_key_written_twice_counts_with_its_last_value() {
        let head = Message::read(r#"{"type":"user","id":"a","type":"gemini"}"#, None).unwrap();
        assert_eq!(head.kind, Some(r#""gemini""#));
        assert!(Message::read(r#"["type","gemini"]"#, None).is_none());
        assert!(Message::read(r#"{"type":"gemini""#, None).is_none());
    }

    #[test]
    fn only_a_list_of_messages_makes_a_document() {
        let list = Message::read(r#"{"sessionId":"s","messages":[{"a":1},2]}"#, None).unwrap();
        let Some(ListOr::List(messages)) = list.messages else { panic!("not a list") };
        let items: Vec<&str> = messages.iter().map(|raw| raw.get()).collect();
        assert_eq!(items, [r#"{"a":1}"#, "2"]);
        for other in [r#"{}"#, r#""text""#, "3", "-1", "1.5", "true", "null"] {
            let record = format!(r#"{{"sessionId":"s","type":"gemini","messages":{other}}}"#);
            let head = Message::read(&record, None).unwrap();
            assert!(matches!(head.messages, Some(ListOr::Text(_) | ListOr::Other(_))), "{record}");
            // Not a document, and not a message either.
            assert_eq!(head.message_id(), None);
        }
    }

    #[test]
    fn token_counts_are_read_alike_with_and_without_the_scanner() {
        let cases = [
            (r#"{"input":10,"output":2,"total":12}"#, [Some(10), Some(2), None, None, None, Some(12)]),
            (r#"{"input":1,"input":"x","tool":1.5,"cached":-1,"thoughts":3}"#, [None, None, None, Some(3), None, None]),
            (r#"{"total":5,"to\u0074al":7,"extra":{"input":9}}"#, [None, None, None, None, None, Some(7)]),
            (r#"{}"#, [None; 6]),
        ];
        for (tokens, want) in cases {
            for counts in
                [Counts::read(Raw::of(tokens)), crate::adapters::by_serde_alone(|| Counts::read(Raw::of(tokens)))]
            {
                let counts = counts.unwrap();
                let read = [counts.input, counts.output, counts.cached, counts.thoughts, counts.tool, counts.total];
                assert_eq!(read, want, "{tokens}");
            }
        }
        assert!(Counts::read(Raw::of("[1]")).is_none());
        assert!(Counts::read(Raw::of("null")).is_none());
    }

    #[test]
    fn a_count_is_the_whole_number_serde_reads() {
        for raw in ["0", "12", "-0", "-1", "1.0", "1e3", "2E1", "18446744073709551615", "18446744073709551616", "\"7\""]
        {
            let value: Value = serde_json::from_str(raw).unwrap();
            assert_eq!(json_u64(raw), value.as_u64(), "{raw}");
        }
    }

    #[test]
    fn held_records_keep_their_text_and_ids_across_a_replace_and_a_checkpoint() {
        let mut pending = Pending::default();
        let record =
            |id: Option<&'static str>, json: &'static str| Record { id: id.map(Cow::Borrowed), json, spans: None };
        pending.push(&record(Some("a"), r#"{"id":"a","type":"gemini","content":"1"}"#));
        pending.push(&record(None, r#"{"type":"info","content":"x"}"#));
        pending.push(&record(Some("q\"b"), r#"{"id":"q\"b","type":"gemini"}"#));
        assert!(pending.replace(0, &record(Some("a"), r#"{"id":"a","type":"gemini","content":"2"}"#)));
        assert!(!pending.replace(3, &record(Some("c"), "{}")), "no record at 3 to replace");
        assert_eq!(pending.id(0), Some("a"));
        assert_eq!(pending.id(1), None);
        assert_eq!(pending.id(2), Some("q\"b"));
        assert_eq!(pending.message(0).map(|(json, _)| json), Some(r#"{"id":"a","type":"gemini","content":"2"}"#));
        let saved = serde_json::to_string(&pending).unwrap();
        assert_eq!(
            saved,
            r#"[{"id":"a","type":"gemini","content":"2"},{"type":"info","content":"x"},{"id":"q\"b","type":"gemini"}]"#
        );
        let restored: Pending = serde_json::from_str(&saved).unwrap();
        assert_eq!(restored.len(), 3);
        assert_eq!(restored.id(2), Some("q\"b"));
        assert_eq!(serde_json::to_string(&restored).unwrap(), saved);
        pending.truncate(1);
        assert_eq!(pending.len(), 1);
        pending.clear();
        assert_eq!((pending.len(), pending.text.len()), (0, 0));
    }

    /// A record replaced when it is not the last stored, the last one
    /// written again and again, a rewind into the records: each keeps its
    /// own text, and the text of a long message is given back.
    #[test]
    fn held_records_keep_their_text_across_replaces_and_rewinds() {
        let mut pending = Pending::default();
        let texts: Vec<String> =
            (0..30).map(|n| format!(r#"{{"id":"m{n}","type":"gemini","content":"{}"}}"#, "x".repeat(n * 7))).collect();
        let record = |n: usize, json: &'static str| Record { id: Some(Cow::Owned(format!("m{n}"))), json, spans: None };
        let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        for (n, text) in texts.iter().enumerate() {
            pending.push(&record(n, leak(text.clone())));
        }
        assert!(pending.replace(0, &record(0, r#"{"id":"m0","content":"again"}"#)));
        let check = |pending: &Pending, upto: usize| {
            for (n, text) in texts.iter().enumerate().take(upto) {
                let want = if n == 0 { r#"{"id":"m0","content":"again"}"# } else { text.as_str() };
                assert_eq!(pending.message(n).map(|(json, _)| json), Some(want), "record {n}");
                assert_eq!(pending.id(n), Some(format!("m{n}").as_str()));
            }
        };
        check(&pending, 30);
        // The record stored last, written again and again, takes the room
        // of one.
        let before = pending.text.len();
        for n in 0..5 {
            let text = leak(format!(r#"{{"id":"m29","content":"{}"}}"#, "z".repeat(2000 + n)));
            assert!(pending.replace(29, &record(29, text)));
            assert_eq!(pending.message(29).map(|(json, _)| json), Some(text));
        }
        assert!(pending.text.len() < before + 2100, "{} bytes after {before}", pending.text.len());
        check(&pending, 29);
        // A rewind into the records, then more records.
        pending.truncate(12);
        for (n, text) in texts.iter().enumerate().skip(12).take(6) {
            pending.push(&record(n, leak(text.clone())));
        }
        check(&pending, 18);
        // A long message's text is not kept once it is translated.
        pending.clear();
        pending.push(&record(1, leak(format!(r#"{{"id":"m1","content":"{}"}}"#, "y".repeat(2 * Pending::KEPT)))));
        pending.clear();
        assert_eq!(pending.text.capacity(), 0);
        pending.push(&record(7, leak(texts[7].clone())));
        assert_eq!(pending.message(0).map(|(json, _)| json), Some(texts[7].as_str()));
    }

    #[test]
    fn thoughts_are_paragraphs_of_their_texts() {
        let mut text = String::from("before");
        thoughts_text(
            Some(
                r#"[{"subject":"S","description":"d"},{"subject":""},"plain",{"description":"x","description":"y"},7]"#,
            ),
            &mut text,
        );
        assert_eq!(text, "beforeS\nd\n\nplain\n\ny");
        let mut none = String::new();
        thoughts_text(Some(r#""not a list""#), &mut none);
        assert_eq!(none, "");
    }

    /// The scanner reads a `thoughts` list as serde does, where it reads
    /// it at all, odd items and refusals included (a refused list adds
    /// nothing).
    #[test]
    fn thoughts_read_the_same_with_and_without_the_scanner() {
        let lists = [
            r#"[{"subject":"S","description":"d"},"plain",null,true,7,[1,{"a":2}],{"subject":["x"]}]"#,
            r#"[{"subject":"a\nb \u00e9 \ud83d\ude00","description":"c\"d"}]"#,
            r#"[{"subject":null,"description":"d"}]"#,
            r#"[{"subject":{"x":1}}]"#,
            r#"[{"subject":"a","subject":"b"}]"#,
            r#"[1.5, -2, 1e400]"#,
            r#"["\ud800"]"#,
            r#"[{"subject":"\udc00"}]"#,
            r#"[{"other":"\ud800"}]"#,
            r#"[ { "subject" : "s" } , "t" ]"#,
            r#"[]"#,
        ];
        for list in lists {
            let mut scanned = String::from("x");
            thoughts_text(Some(list), &mut scanned);
            let mut serde = String::from("x");
            crate::adapters::by_serde_alone(|| thoughts_text(Some(list), &mut serde));
            assert_eq!(scanned, serde, "{list}");
        }
    }
}
