//! The ACP messages as the adapter reads them: typed views that borrow from
//! the input line. Strings without escapes and every value the adapter only
//! passes on (arguments, content, metadata) stay slices of the line, so an
//! agent's arguments keep its own JSON text (key order, number spelling,
//! escapes) and a line is scanned about once.

use std::borrow::Cow;

use crate::adapters::borrowed::Raw;
use serde::Deserialize;
use serde_json::Value;

use crate::adapters::borrowed::{decoded_body, decoded_string, opt_cow, raw_at, CowStr, FieldsOr, Scan};
pub(super) use crate::adapters::borrowed::{raw_text as text, raw_value as value};

/// One line of a capture: a JSON-RPC request, response or notification, or
/// a bare `SessionNotification` (`sessionId` and `update` at the top).
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
pub(super) struct Message<'a> {
    pub jsonrpc: Option<Raw<'a>>,
    pub method: Option<Cow<'a, str>>,
    pub id: Option<Raw<'a>>,
    pub params: Option<Params<'a>>,
    pub result: Option<Raw<'a>>,
    pub error: Option<Raw<'a>>,
    pub session_id: Option<Cow<'a, str>>,
    pub update: Option<Update<'a>>,
}

read_in_place!(Message {
    "jsonrpc" => jsonrpc,
    "method" => method as OptCow,
    "id" => id,
    "params" => params in place,
    "result" => result,
    "error" => error,
    "sessionId" => session_id as ScalarText,
    "update" => update in place,
});

/// The params of the requests and notifications the adapter reads.
#[derive(Debug, Default)]
pub(super) struct Params<'a> {
    pub session_id: Option<Cow<'a, str>>,
    pub update: Option<Update<'a>>,
    /// `session/prompt`: the user's content blocks.
    pub prompt: Option<Raw<'a>>,
    /// `session/request_permission`: the tool call asked about, read when
    /// used ([`Params::tool_call`]): permission requests are rare.
    pub tool_call_raw: Option<Raw<'a>>,
    /// `session/request_permission`: what the user may answer.
    pub options: Option<Raw<'a>>,
}

read_in_place!(Params {
    "sessionId" => session_id as ScalarText,
    "update" => update in place,
    "prompt" => prompt,
    "toolCall" => tool_call_raw,
    "options" => options,
});

impl<'a> Params<'a> {
    /// A permission request's tool call, if it has one that reads.
    pub(super) fn tool_call(&self) -> Option<Update<'a>> {
        serde_json::from_str(self.tool_call_raw?.get()).ok()
    }

    /// The permission request's tool call's `_meta` as it was sent.
    pub(super) fn raw_meta(&self) -> Option<Raw<'a>> {
        raw_at(self.tool_call_raw?.get(), &["_meta"])
    }
}

/// A `session/update`'s update, or a permission request's tool call (the
/// same fields without `sessionUpdate`). The kinds that carry only
/// metadata are read again as a whole value when they come (rarely).
#[derive(Debug, Default)]
pub(super) struct Update<'a> {
    /// What the update is; `None` when it has no `sessionUpdate`.
    pub session_update: Option<UpdateKind<'a>>,
    pub tool_call_id: Option<Cow<'a, str>>,
    pub title: Option<Cow<'a, str>>,
    pub status: Option<Cow<'a, str>>,
    pub content: Option<Raw<'a>>,
    pub raw_input: Option<Raw<'a>>,
    pub raw_output: Option<Raw<'a>>,
    pub kind: Option<Raw<'a>>,
    pub locations: Option<Raw<'a>>,
    /// `_meta`, its fields read with the update (a third of an agent's
    /// updates are terminal output in Claude Code's `_meta`).
    pub meta: Option<FieldsOr<'a>>,
    pub message_id: Option<Cow<'a, str>>,
}

read_in_place!(Update {
    "sessionUpdate" => session_update,
    "toolCallId" => tool_call_id as ScalarText,
    "title" => title as OptCow,
    "status" => status as OptCow,
    "content" => content,
    "rawInput" => raw_input,
    "rawOutput" => raw_output,
    "kind" => kind,
    "locations" => locations,
    "_meta" => meta in place,
    "messageId" => message_id as ScalarText,
});

/// The `_meta` of the update in `line` as it was sent (`bare`: a
/// `SessionNotification`, else a `session/update` request), for a `_meta`
/// that is not an object and so is kept whole: rare enough that reading
/// the line again costs nothing, where keeping every `_meta` raw as well as
/// read scanned each twice.
pub(super) fn raw_meta(line: &str, bare: bool) -> Option<Raw<'_>> {
    raw_at(line, if bare { &["update", "_meta"] } else { &["params", "update", "_meta"] })
}

/// Declares [`UpdateKind`] and [`MetadataKind`] from one table of
/// variants and wire names, so that reading a name and writing it back
/// cannot disagree.
macro_rules! update_kinds {
    (
        read { $($(#[$doc:meta])* $variant:ident = $name:literal,)* }
        metadata { $($(#[$meta_doc:meta])* $meta_variant:ident = $meta_name:literal,)* }
    ) => {
        /// What a `sessionUpdate` says an update is.
        ///
        /// Read from the name rather than as a serde-tagged enum: an
        /// internally tagged enum buffers the whole update before choosing
        /// its variant, and the fields the adapter only passes on (raw
        /// arguments, content, `_meta`) could no longer borrow from the line.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(super) enum UpdateKind<'a> {
            $($(#[$doc])* $variant,)*
            /// A kind that carries only metadata, read again as a whole
            /// value when it comes (rarely).
            Metadata(MetadataKind),
            /// A kind this adapter does not know (or no kind at all, as
            /// an empty name): reported as `unknown_event` with its name
            /// and the whole update, never dropped.
            Unknown(Cow<'a, str>),
        }

        /// The kinds of update that carry metadata of a run, a subagent or
        /// a background task.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(super) enum MetadataKind {
            $($(#[$meta_doc])* $meta_variant,)*
        }

        impl<'a> UpdateKind<'a> {
            pub(super) fn parse(name: Cow<'a, str>) -> UpdateKind<'a> {
                match name.as_ref() {
                    $($name => UpdateKind::$variant,)*
                    $($meta_name => UpdateKind::Metadata(MetadataKind::$meta_variant),)*
                    _ => UpdateKind::Unknown(name),
                }
            }

            /// The name on the wire, as the anomalies that mention the
            /// kind spell it.
            pub(super) fn name(&self) -> &str {
                match self {
                    $(UpdateKind::$variant => $name,)*
                    UpdateKind::Metadata(kind) => kind.name(),
                    UpdateKind::Unknown(name) => name,
                }
            }
        }

        impl MetadataKind {
            /// The name on the wire.
            pub(super) fn name(self) -> &'static str {
                match self {
                    $(MetadataKind::$meta_variant => $meta_name,)*
                }
            }
        }
    };
}

update_kinds! {
    read {
        /// Text or another content block of the agent's answer.
        AgentMessageChunk = "agent_message_chunk",
        /// Text of the agent's reasoning.
        AgentThoughtChunk = "agent_thought_chunk",
        /// The user's message (a prompt, or a `session/load` replay's).
        UserMessageChunk = "user_message_chunk",
        /// A tool call's declaration.
        ToolCall = "tool_call",
        /// A change to a declared tool call.
        ToolCallUpdate = "tool_call_update",
    }
    metadata {
        /// Tokens used (a gauge), the context's size, the cost.
        UsageUpdate = "usage_update",
        Plan = "plan",
        AvailableCommandsUpdate = "available_commands_update",
        CurrentModeUpdate = "current_mode_update",
        ConfigOptionUpdate = "config_option_update",
        SessionInfoUpdate = "session_info_update",
        /// A context compaction's state (JetBrains Air).
        CompactionUpdate = "compaction_update",
        /// A piece of a compaction's summary text.
        CompactionSummaryChunk = "compaction_summary_chunk",
        /// A subagent with a session of its own (JetBrains Air).
        SubagentSpawned = "subagent_spawned",
        SubagentUpdate = "subagent_update",
        SubagentStateUpdate = "subagent_state_update",
        /// A message from one session to another (a subagent's prompt).
        SessionMessage = "session_message",
        /// A background task that a tool call started.
        AsyncTaskSpawned = "async_task_spawned",
        AsyncTaskProgress = "async_task_progress",
        AsyncTaskStateUpdate = "async_task_state_update",
    }
}

impl UpdateKind<'static> {
    /// The kind of an update without `sessionUpdate`: an unknown one,
    /// with an empty name.
    pub(super) const MISSING: UpdateKind<'static> = UpdateKind::Unknown(Cow::Borrowed(""));
}

/// `sessionUpdate` as an [`UpdateKind`], borrowed from the line like any
/// other name.
impl<'de: 'a, 'a> Deserialize<'de> for UpdateKind<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(UpdateKind::parse(CowStr::deserialize(deserializer)?.0))
    }
}

impl<'de: 'a, 'a> Scan<'de> for UpdateKind<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        CowStr::scan(value).map(|(name, end)| (UpdateKind::parse(name.0), end))
    }
}

/// What the adapter reads out of an update's `_meta`; the rest of it is
/// kept as the tool call's metadata.
#[derive(Debug, Default)]
pub(super) struct UpdateMeta<'a> {
    /// `claudeCode.parentToolUseId`: the Task call whose subagent sent this.
    pub parent_tool_use_id: Option<Cow<'a, str>>,
    /// `claudeCode.toolName`: the tool's machine name as the model called
    /// it (`Bash`, `Read`), where the title is what a person is shown.
    pub tool_name: Option<Cow<'a, str>>,
    /// `terminal_output_delta.data`: terminal bytes to append.
    pub terminal_delta: Option<Cow<'a, str>>,
    /// `terminal_output.data`: the whole terminal output so far.
    pub terminal_whole: Option<Cow<'a, str>>,
    /// Every other key, as metadata.
    pub rest: serde_json::Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct ClaudeCode<'a> {
    #[serde(borrow, default, rename = "parentToolUseId", deserialize_with = "opt_cow")]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "toolName", deserialize_with = "opt_cow")]
    tool_name: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct TerminalData<'a> {
    /// Raw: the bytes of a terminal, decoded once, where they are used
    /// ([`decoded_string`]).
    #[serde(borrow, default)]
    data: Option<Raw<'a>>,
}

impl<'a> UpdateMeta<'a> {
    /// Reads `_meta`. It is an extension point of the protocol, so a shape
    /// other than Claude Code's is kept whole as metadata, never an error:
    /// `whole` gives it as it was sent, when it is not an object.
    pub(super) fn read(read: Option<&FieldsOr<'a>>, whole: impl FnOnce() -> Option<Value>) -> UpdateMeta<'a> {
        let mut meta = UpdateMeta::default();
        let entries = match read {
            None => return meta,
            Some(FieldsOr::Other) => {
                meta.rest.insert("_meta".into(), whole().unwrap_or(Value::Null));
                return meta;
            }
            Some(FieldsOr::Fields(fields)) => &fields.0,
        };
        let mut last = Cow::Borrowed(entries.as_slice());
        if has_repeated_key(entries) {
            // A repeated key: the last wins, as in a map (in linear time: a
            // hostile `_meta` may have many keys).
            let mut seen = crate::hash::HashSet::default();
            let mut kept: Vec<_> = entries.iter().rev().filter(|(key, _)| seen.insert(key)).cloned().collect();
            kept.reverse();
            last = Cow::Owned(kept);
        }
        for (key, raw) in last.iter() {
            let raw = *raw;
            match key.as_ref() {
                "terminal_output_delta" | "terminal_output" => {
                    let data = serde_json::from_str::<TerminalData<'a>>(raw.get()).ok().and_then(|t| t.data);
                    match data.and_then(decoded_string) {
                        Some(data) if key == "terminal_output_delta" => meta.terminal_delta = Some(data),
                        Some(data) => meta.terminal_whole = Some(data),
                        None => {
                            meta.rest.insert(key.to_string(), value(raw));
                        }
                    }
                }
                "claudeCode" => {
                    if let Ok(ClaudeCode { parent_tool_use_id, tool_name }) = serde_json::from_str(raw.get()) {
                        meta.parent_tool_use_id = parent_tool_use_id;
                        meta.tool_name = tool_name;
                    }
                    meta.rest.insert(key.to_string(), value(raw));
                }
                _ => {
                    meta.rest.insert(key.to_string(), value(raw));
                }
            }
        }
        meta
    }
}

/// Whether a key comes twice: by comparing pairs when there are few (a
/// `_meta` has a handful of keys, and hashing them cost more than the
/// rest of reading it), by hashing when there are many.
fn has_repeated_key(entries: &[(Cow<'_, str>, Raw<'_>)]) -> bool {
    if entries.len() <= 16 {
        entries.iter().enumerate().any(|(i, (key, _))| entries[..i].iter().any(|(other, _)| other == key))
    } else {
        let mut seen = crate::hash::HashSet::default();
        !entries.iter().all(|(key, _)| seen.insert(key))
    }
}

/// A text content block (`{"type":"text","text":...}`) or another kind.
#[derive(Debug, Deserialize)]
pub(super) struct ContentBlock<'a> {
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub text: Option<Cow<'a, str>>,
}

impl<'a> ContentBlock<'a> {
    /// The text of a text block.
    pub(super) fn text(raw: Raw<'a>) -> Option<Cow<'a, str>> {
        // The spelling agents write a text block in, with a text that has
        // no escape, is read where it lies: the text is between the quotes
        // (a chunk is a few words, and decoding the block took more than
        // the rest of its message).
        let plain = raw.get().strip_prefix(r#"{"type":"text","text":""#).and_then(|rest| rest.strip_suffix("\"}"));
        // With escapes, decoded where it lies. A raw quote means the block
        // has more keys: without escapes it is looked for, with them the
        // body does not decode; either way the block is read below.
        let plain = plain.filter(|text| text.contains('\\') || !text.contains('"'));
        if let Some(text) = plain.and_then(decoded_body) {
            return Some(text);
        }
        let block: ContentBlock<'a> = serde_json::from_str(raw.get()).ok()?;
        match block {
            ContentBlock { kind: Some(kind), text: Some(text) } if kind == "text" => Some(text),
            _ => None,
        }
    }
}

/// One block of a tool call's `content` array.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolContent<'a> {
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub content: Option<Raw<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub path: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub old_text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub new_text: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "_meta")]
    pub meta: Option<Raw<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_kinds_read_and_name_each_other() {
        for name in ["agent_message_chunk", "tool_call", "tool_call_update", "usage_update", "async_task_progress"] {
            let kind = UpdateKind::parse(name.into());
            assert!(!matches!(kind, UpdateKind::Unknown(_)), "{name}");
            assert_eq!(kind.name(), name);
        }
        assert_eq!(UpdateKind::parse("plan".into()), UpdateKind::Metadata(MetadataKind::Plan));
        assert_eq!(UpdateKind::parse("brand_new".into()), UpdateKind::Unknown("brand_new".into()));
        assert_eq!(UpdateKind::MISSING.name(), "");
    }

    #[test]
    fn a_text_block_reads_the_same_in_any_spelling() {
        let raw = |json: &'static str| Raw::of(json);
        for (json, text) in [
            (r#"{"type":"text","text":"é plain"}"#, Some("é plain")),
            (r#"{"type":"text","text":"a \"q\" b"}"#, Some(r#"a "q" b"#)),
            (r#"{"type":"text","text":"a\nb"}"#, Some("a\nb")),
            (r#"{"type":"text","text":"a","annotations":"b"}"#, Some("a")),
            (r#"{"type":"text","text":"a\"","type":"image"}"#, None),
            (r#"{"type":"text","text":"\ud83d\ude00 \u00e9"}"#, Some("😀 é")),
            (r#"{"type":"text","text":"\ud800"}"#, None),
            (r#"{"text":"b","type":"text"}"#, Some("b")),
            (r#"{ "type": "text", "text": "c" }"#, Some("c")),
            (r#"{"type":"text","text":"d","annotations":null}"#, Some("d")),
            (r#"{"type":"image","text":"e"}"#, None),
            (r#"{"type":"text","text":5}"#, None),
        ] {
            let block = raw(json);
            assert_eq!(ContentBlock::text(block).as_deref(), text, "{json}");
        }
    }

    #[test]
    fn an_escaped_kind_name_is_the_same_kind() {
        let update: Update<'_> = serde_json::from_str(r#"{"sessionUpdate":"tool\u005fcall"}"#).unwrap();
        assert_eq!(update.session_update, Some(UpdateKind::ToolCall));
        let update: Update<'_> = serde_json::from_str(r#"{"sessionUpdate":null}"#).unwrap();
        assert_eq!(update.session_update, None);
    }
}
