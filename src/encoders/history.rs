//! What the history exports share: a run's rounds gathered until its
//! summary, late results put where they belong, each call's result as the
//! text a provider's history takes, and the user prompts the adapters kept.
//!
//! A history goes out when its run finishes, as one line
//! `{"session": ..., "run": n, <key>: [...]}`: the list the next request to
//! the provider sends. Every tool call is paired with exactly one result,
//! as roundup's rounds guarantee, under an id no other call of the run has
//! (a reused id is renamed, and the line's `renamed_ids` says so); a call that never got one has an error
//! result that says why (`no result: superseded`), which the providers
//! accept and a model reads.
//!
//! Memory: an export is a run's whole history, so a session's finished
//! rounds are held until its run finishes (and no longer).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{Encoder, Frames, Reads};
use crate::hash::HashMap;
use crate::model::{Round, Summary, ToolCall};
use crate::sink::SinkRecord;
use crate::wire;

/// One session's finished rounds of the current run, and the late results
/// that reached them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RunHistory {
    pub(crate) rounds: Vec<Round>,
    /// Late results by (round, call id): they replace the placeholder.
    #[serde(with = "crate::pairs")]
    late: HashMap<(u64, String), (String, bool)>,
}

/// The result a call's history entry carries: its text, and whether it is
/// an error.
pub(crate) struct CallResult {
    pub(crate) text: String,
    pub(crate) is_error: bool,
}

impl RunHistory {
    /// Gives every call of the run an id no other call of it has: the
    /// providers refuse a conversation whose tool call ids repeat
    /// (Anthropic), or pair its results ambiguously (OpenAI). A call keeps
    /// its own id the first time the run has it; a later call with the same
    /// id goes by `{id}-2` (`-3`, ... : the first such name that no call of
    /// the run has), its late result with it. What was renamed, as
    /// `{"round", "id", "as"}` values in the order of the calls.
    pub(crate) fn make_ids_unique(&mut self) -> Vec<Value> {
        let all: crate::hash::HashSet<String> =
            self.rounds.iter().flat_map(|round| round.tool_calls.iter().map(|call| call.id.clone())).collect();
        let mut seen = crate::hash::HashSet::default();
        let mut renamed = Vec::new();
        for round in &mut self.rounds {
            for at in 0..round.tool_calls.len() {
                let id = round.tool_calls[at].id.clone();
                if seen.insert(id.clone()) {
                    continue;
                }
                let mut n = 2u64;
                let fresh = loop {
                    let name = format!("{id}-{n}");
                    if !all.contains(&name) && !seen.contains(&name) {
                        break name;
                    }
                    n += 1;
                };
                seen.insert(fresh.clone());
                // A late result for this round's call of that id: this
                // call's, unless an earlier call of the round kept the id.
                let kept_in_round = round.tool_calls[..at].iter().any(|call| call.id == id);
                if !kept_in_round {
                    if let Some(late) = self.late.remove(&(round.index, id.clone())) {
                        self.late.insert((round.index, fresh.clone()), late);
                    }
                }
                round.tool_calls[at].id.clone_from(&fresh);
                renamed.push(json!({"round": round.index, "id": id, "as": fresh}));
            }
        }
        renamed
    }

    pub(crate) fn result(&self, round: &Round, call: &ToolCall) -> CallResult {
        if let Some((text, success)) = self.late.get(&(round.index, call.id.clone())) {
            return CallResult { text: text.clone(), is_error: !success };
        }
        match call.result.placeholder_reason() {
            Some(reason) => CallResult { text: format!("no result: {}", reason.as_str()), is_error: true },
            None => CallResult {
                text: call.result.content().unwrap_or_default().to_owned(),
                is_error: call.result.is_failed(),
            },
        }
    }
}

/// The user prompts of a run, from its summary's metadata: what the
/// adapters kept under `*_user_message` or `*_prompt` (one) or
/// `*_user_messages` (a list), each as text (a string as is, content
/// blocks' text joined, anything else its JSON).
/// The name a provider's API takes for a call's tool: `^[a-zA-Z0-9_-]{1,64}$`.
/// The call's `name` (the tool as the model called it), else its title (a
/// display text: `Read a.ts`); any other character becomes `_`, a run of
/// them one `_` (trimmed at the ends), and the result is cut at 64
/// characters; `tool` when nothing is left. A name already valid is kept as
/// it is.
///
/// ```text
/// "Read"         -> "Read"
/// "ls -la"       -> "ls_-la"
/// "Edit src/app.ts" -> "Edit_src_app_ts"
/// ""             -> "tool"
/// ```
pub(crate) fn tool_name(call: &ToolCall) -> String {
    valid_tool_name(&call.name, &call.title)
}

/// [`tool_name`] of a call's `name` and `title`: what every output that
/// names a tool for an API or an SDK's typed tool set takes (the AI SDK's
/// tool parts too).
pub(crate) fn valid_tool_name(name: &str, title: &str) -> String {
    let source = if name.is_empty() { title } else { name };
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !source.is_empty() && source.len() <= 64 && source.chars().all(valid) {
        return source.to_owned();
    }
    let mut name = String::with_capacity(source.len().min(64));
    let mut replaced = false;
    for c in source.chars() {
        if name.len() == 64 {
            break;
        }
        if valid(c) {
            name.push(c);
            replaced = false;
        } else if !replaced {
            name.push('_');
            replaced = true;
        }
    }
    let name = name.trim_matches('_');
    if name.is_empty() {
        "tool".to_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolResult;

    fn call(name: &str, title: &str) -> ToolCall {
        ToolCall {
            id: "t".into(),
            title: title.into(),
            name: name.into(),
            arguments: String::new(),
            result: ToolResult::Completed { content: String::new() },
            started_at_ms: 0,
            finished_at_ms: 0,
            meta: Default::default(),
        }
    }

    #[test]
    fn a_tool_name_is_what_the_apis_take() {
        assert_eq!(tool_name(&call("Bash", "ls -la")), "Bash", "the name when there is one");
        assert_eq!(tool_name(&call("", "ls -la")), "ls_-la");
        assert_eq!(tool_name(&call("", "Edit src/app.ts")), "Edit_src_app_ts");
        assert_eq!(tool_name(&call("", "Find `**/*.ts`")), "Find_ts");
        assert_eq!(tool_name(&call("", "")), "tool");
        assert_eq!(tool_name(&call("", "ünïcödé")), "n_c_d", "ASCII only");
        assert_eq!(tool_name(&call(&"x".repeat(100), "")).len(), 64);
        let valid =
            |s: &str| (1..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
        assert_eq!(tool_name(&call("mcp__server__tool", "")), "mcp__server__tool", "a valid name is kept");
        for title in ["grep -n \"value\" src", "Exited Plan Mode", "  ", "a/b/c", "__x__"] {
            assert!(valid(&tool_name(&call("", title))), "{title}");
        }
    }
}

pub(crate) fn prompts(summary: &Summary) -> Vec<String> {
    let mut prompts = Vec::new();
    for (key, value) in &summary.meta {
        if key.ends_with("_user_messages") {
            prompts.extend(value.as_array().into_iter().flatten().map(text_of));
        } else if key.ends_with("_user_message") || key.ends_with("_prompt") {
            prompts.push(text_of(value));
        }
    }
    prompts.retain(|p| !p.is_empty());
    prompts
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
            if texts.is_empty() {
                value.to_string()
            } else {
                texts.join("\n")
            }
        }
        other => other.get("text").and_then(Value::as_str).map_or_else(|| other.to_string(), str::to_owned),
    }
}

/// A call's arguments as a JSON object (what a provider's `input` takes):
/// the arguments themselves when they are one, `{}` when empty, else the
/// text kept whole under `_arguments`.
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ if call.arguments.trim().is_empty() => json!({}),
        _ => json!({"_arguments": call.arguments}),
    }
}

/// The encoder of every history format: the records gathered per session,
/// each run written at its summary by the format's `render`, under `key`
/// (`messages`, or `input` for OpenAI Responses).
#[derive(Debug)]
pub(crate) struct HistoryEncoder {
    /// Each session's run so far.
    sessions: HashMap<Option<String>, RunHistory>,
    key: &'static str,
    render: fn(&RunHistory, &Summary) -> Vec<Value>,
}

impl HistoryEncoder {
    pub(crate) fn new(key: &'static str, render: fn(&RunHistory, &Summary) -> Vec<Value>) -> Self {
        HistoryEncoder { sessions: HashMap::default(), key, render }
    }
}

impl Encoder for HistoryEncoder {
    fn reads(&self) -> Reads {
        Reads::Records
    }

    /// Each session's run so far, as `[session, run]` pairs.
    fn save(&self) -> Option<Value> {
        crate::pairs::to_value(&self.sessions)
    }

    fn restore(&mut self, state: Value) -> Result<(), crate::CheckpointError> {
        self.sessions = crate::pairs::from_value(state)?;
        Ok(())
    }

    fn record(&mut self, record: SinkRecord<'_>, out: &mut Frames) {
        match record {
            SinkRecord::Round(round) => {
                self.sessions.entry(round.session.clone()).or_default().rounds.push(round.clone())
            }
            SinkRecord::Stitch(stitch) => {
                let history = self.sessions.entry(stitch.session.clone()).or_default();
                let text = stitch.result.content().unwrap_or_default().to_owned();
                history.late.insert((stitch.round, stitch.id.clone()), (text, !stitch.result.is_failed()));
            }
            SinkRecord::Summary(summary) => {
                let mut history = self.sessions.remove(&summary.session).unwrap_or_default();
                let renamed = history.make_ids_unique();
                let items = (self.render)(&history, summary);
                // A run that held nothing at all (an empty input) has no
                // history; one that failed before any output still says so.
                if items.is_empty() && super::held_nothing(summary) {
                    return;
                }
                let mut line = Map::new();
                if let Some(session) = &summary.session {
                    line.insert("session".into(), session.as_str().into());
                }
                line.insert("run".into(), summary.run.into());
                line.insert(self.key.into(), Value::Array(items));
                if !renamed.is_empty() {
                    line.insert("renamed_ids".into(), Value::Array(renamed));
                }
                out.frame(|buf| wire::write_json(buf, &Value::Object(line)));
            }
            SinkRecord::Anomaly(_) | SinkRecord::Meta(_) => {}
        }
    }
}
