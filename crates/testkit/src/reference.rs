//! A second implementation of SPEC §2, deliberately naive: no indexes, no
//! incremental counts, linear searches over everything retained, summaries
//! recomputed from the final rounds. It is slow and obviously follows the
//! text of the spec, which is its only job: the real machine is compared
//! with it on random call sequences.

use roundup::{
    Anomaly, AnomalyKind, Call, ClosedBy, FinishReason, Meta, MetaPatch, PlaceholderCounts, PlaceholderReason, Round,
    Stitch, Summary, TerminalStatus, ToolCall, ToolResult,
};
use serde_json::Value;

#[derive(Debug, Clone)]
struct PendingCall {
    meta: Meta,
    id: String,
    title: String,
    name: String,
    arguments: String,
    output: String,
    result: Option<ToolResult>,
    started: u64,
    finished: u64,
}

#[derive(Debug, Default)]
struct Session {
    name: Option<String>,
    run: u64,
    finished: bool,
    /// Every run's closed rounds, with stitches applied.
    rounds: Vec<Round>,
    message: String,
    thought: String,
    calls: Vec<PendingCall>,
    started: Option<u64>,
    round_meta: Meta,
    /// Anomalies and last token usage, per run.
    anomalies: Vec<u64>,
    stitches: Vec<u64>,
    meta: Vec<Meta>,
    usage: Vec<Option<u64>>,
    touched: bool,
}

/// The reference model of a whole replay: sessions by name, output lines as
/// JSON values, in order.
#[derive(Debug, Default)]
pub struct Reference {
    sessions: Vec<Session>,
    pub lines: Vec<Value>,
}

fn line<T: serde::Serialize>(kind: &str, value: &T) -> Value {
    let mut v = serde_json::to_value(value).unwrap();
    let mut out = serde_json::Map::new();
    out.insert("type".into(), Value::String(kind.into()));
    out.append(v.as_object_mut().unwrap());
    Value::Object(out)
}

impl Reference {
    fn session(&mut self, name: Option<&str>) -> usize {
        if let Some(i) = self.sessions.iter().position(|s| s.name.as_deref() == name) {
            return i;
        }
        self.sessions.push(Session {
            name: name.map(str::to_owned),
            anomalies: vec![0],
            stitches: vec![0],
            meta: vec![Meta::new()],
            usage: vec![None],
            ..Session::default()
        });
        self.sessions.len() - 1
    }

    pub fn apply(&mut self, session: Option<&str>, call: Call<'_>, now: u64) {
        let i = self.session(session);
        let mut lines = Vec::new();
        self.sessions[i].apply(call, now, &mut lines);
        self.lines.extend(lines);
    }

    /// End of input: open runs finish in order of first appearance (each
    /// finish writes its summary).
    pub fn end(&mut self, now: u64) {
        if self.sessions.is_empty() {
            self.session(None);
        }
        for i in 0..self.sessions.len() {
            if !self.sessions[i].finished {
                let mut lines = Vec::new();
                self.sessions[i].apply(Call::Finish { reason: FinishReason::Interrupted }, now, &mut lines);
                self.lines.extend(lines);
            }
        }
    }
}

impl Session {
    fn anomaly(
        &mut self,
        out: &mut Vec<Value>,
        kind: AnomalyKind,
        id: Option<&str>,
        status: Option<TerminalStatus>,
        detail: &str,
        content: Option<String>,
    ) {
        self.touched = true;
        if !self.finished {
            *self.anomalies.last_mut().unwrap() += 1;
        }
        let anomaly = Anomaly {
            session: self.name.clone(),
            run: self.run,
            kind,
            id: id.map(str::to_owned),
            status,
            detail: detail.to_owned(),
            content,
        };
        out.push(line("anomaly", &anomaly));
    }

    fn apply(&mut self, call: Call<'_>, now: u64, out: &mut Vec<Value>) {
        if let Call::Anomaly { kind, id, detail } = call {
            return self.anomaly(out, kind, id, None, detail, None);
        }
        if self.finished && call != Call::Start {
            let content = Some(call.payload()).filter(|c| !c.is_empty());
            let status = call.terminal_status();
            let op = if let Call::Unknown { op, .. } = call { op } else { call.op_name() };
            return self.anomaly(out, AnomalyKind::AfterFinish, call.id(), status, op, content);
        }
        if let Call::Unknown { line, .. } = call {
            return self.anomaly(out, AnomalyKind::UnknownEvent, None, None, line, None);
        }
        match call {
            Call::Message { text } | Call::Thought { text } => {
                if text.is_empty() {
                    return;
                }
                if !self.calls.is_empty() {
                    self.close(ClosedBy::NextChunk, PlaceholderReason::Superseded, now, out);
                }
                self.started.get_or_insert(now);
                if matches!(call, Call::Message { .. }) {
                    self.message.push_str(text);
                } else {
                    self.thought.push_str(text);
                }
            }
            Call::ToolCall { id, title, name } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.id == id) {
                    if !title.is_empty() {
                        c.title = title.to_owned();
                    }
                    if !name.is_empty() {
                        c.name = name.to_owned();
                    }
                } else {
                    self.started.get_or_insert(now);
                    self.calls.push(PendingCall {
                        meta: Meta::new(),
                        id: id.to_owned(),
                        title: title.to_owned(),
                        name: name.to_owned(),
                        arguments: String::new(),
                        output: String::new(),
                        result: None,
                        started: now,
                        finished: now,
                    });
                }
            }
            Call::ToolUpdate { id, content, .. } if call.terminal_status().is_none() => {
                match self.calls.iter_mut().find(|c| c.id == id) {
                    Some(c) => c.arguments.push_str(content),
                    None => self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, content, None),
                }
            }
            Call::ArgsSnapshot { id, args } => match self.calls.iter_mut().find(|c| c.id == id) {
                Some(c) => c.arguments = args.to_owned(),
                None => self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, args, None),
            },
            Call::ToolOutput { id, content, replace } => {
                match self.calls.iter_mut().find(|c| c.id == id && c.result.is_none()) {
                    Some(c) if replace => c.output = content.to_owned(),
                    Some(c) => c.output.push_str(content),
                    None => self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, content, None),
                }
            }
            Call::ToolUpdate { id, content, .. } => {
                let status = call.terminal_status().unwrap();
                if let Some(c) = self.calls.iter_mut().find(|c| c.id == id && c.result.is_none()) {
                    let content = if content.is_empty() { c.output.clone() } else { content.to_owned() };
                    c.result = Some(ToolResult::real(status, content));
                    c.finished = now;
                    if self.calls.iter().all(|c| c.result.is_some()) {
                        self.close(ClosedBy::ToolsDone, PlaceholderReason::Superseded, now, out);
                    }
                    return;
                }
                let run = self.run;
                let superseded = |c: &&mut ToolCall| {
                    c.id == id && c.result.placeholder_reason() == Some(PlaceholderReason::Superseded)
                };
                for round in self.rounds.iter_mut().filter(|r| r.run == run) {
                    if let Some(c) = round.tool_calls.iter_mut().find(superseded) {
                        let content = match content {
                            "" => c.result.placeholder_output().unwrap_or_default().to_owned(),
                            content => content.to_owned(),
                        };
                        let result = ToolResult::real(status, content);
                        c.result = result.clone();
                        c.finished_at_ms = now;
                        let stitch = Stitch {
                            session: self.name.clone(),
                            run,
                            round: round.index,
                            id: id.to_owned(),
                            result,
                            finished_at_ms: now,
                        };
                        self.touched = true;
                        self.stitches[run as usize] += 1;
                        out.push(line("stitch", &stitch));
                        return;
                    }
                }
                let has_real = |c: &ToolCall| c.id == id && !c.result.is_placeholder();
                let duplicate = self.rounds.iter().filter(|r| r.run == run).any(|r| r.tool_calls.iter().any(has_real))
                    || self.calls.iter().any(|c| c.id == id && c.result.is_some());
                let kind = if duplicate { AnomalyKind::DuplicateTerminal } else { AnomalyKind::UndeclaredTerminal };
                self.anomaly(out, kind, Some(id), Some(status), content, None);
            }
            Call::ToolMeta { id, meta } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.id == id) {
                    c.meta.extend(meta.clone());
                    return;
                }
                let run = self.run;
                let latest = self.rounds.iter_mut().rev().filter(|r| r.run == run).find_map(|r| {
                    let index = r.index;
                    r.tool_calls.iter_mut().find(|c| c.id == id).map(|c| (index, c))
                });
                match latest {
                    Some((round, call)) => {
                        call.meta.extend(meta.clone());
                        let patch =
                            MetaPatch { session: self.name.clone(), run, round, id: id.to_owned(), meta: meta.clone() };
                        out.push(line("meta", &patch));
                    }
                    None => {
                        let detail = serde_json::to_string(meta).unwrap();
                        self.anomaly(out, AnomalyKind::UnknownToolCall, Some(id), None, &detail, None);
                    }
                }
            }
            Call::RunMeta { meta } => {
                for (key, value) in meta {
                    if Summary::FIELDS.contains(&key.as_str()) {
                        let detail = format!("key `{key}` names a summary field; value: {value}");
                        self.anomaly(out, AnomalyKind::BadMeta, None, None, &detail, None);
                    } else {
                        self.touched = true;
                        self.meta.last_mut().unwrap().insert(key.clone(), value.clone());
                    }
                }
            }
            Call::RoundMeta { meta } => {
                for (key, value) in meta {
                    let joined = match (self.round_meta.get(key), value) {
                        (Some(Value::Array(held)), Value::Array(items)) => {
                            let mut joined = held.clone();
                            for item in items {
                                if !joined.contains(item) {
                                    joined.push(item.clone());
                                }
                            }
                            Value::Array(joined)
                        }
                        _ => value.clone(),
                    };
                    self.round_meta.insert(key.clone(), joined);
                }
            }
            Call::TokenUsage { total } => {
                self.touched = true;
                *self.usage.last_mut().unwrap() = Some(total);
            }
            Call::Finish { reason } => {
                self.close(ClosedBy::Finish, reason.into(), now, out);
                self.finish(reason, out);
            }
            Call::Start => {
                if !self.finished {
                    let pristine =
                        !self.touched && self.message.is_empty() && self.thought.is_empty() && self.calls.is_empty();
                    if pristine {
                        return;
                    }
                    self.close(ClosedBy::Finish, PlaceholderReason::Interrupted, now, out);
                    self.finish(FinishReason::Interrupted, out);
                }
                self.finished = false;
                self.touched = false;
                // Round metadata describes a round of its run; a new run
                // starts without it.
                self.round_meta.clear();
                self.run += 1;
                self.anomalies.push(0);
                self.stitches.push(0);
                self.meta.push(Meta::new());
                self.usage.push(None);
            }
            Call::Anomaly { .. } => unreachable!(),
            other => panic!("the reference model does not know {}", other.op_name()),
        }
    }

    /// The run is over: round metadata that found no round joins the run's,
    /// then its summary line, as it is now.
    fn finish(&mut self, reason: FinishReason, out: &mut Vec<Value>) {
        for (key, value) in std::mem::take(&mut self.round_meta) {
            if Summary::FIELDS.contains(&key.as_str()) {
                let detail = format!("key `{key}` names a summary field; value: {value}");
                self.anomaly(out, AnomalyKind::BadMeta, None, None, &detail, None);
            } else {
                self.meta.last_mut().unwrap().insert(key, value);
            }
        }
        self.finished = true;
        out.push(line("summary", &self.summary(self.run, reason)));
    }

    fn close(&mut self, closed_by: ClosedBy, reason: PlaceholderReason, now: u64, out: &mut Vec<Value>) {
        if self.message.is_empty() && self.thought.is_empty() && self.calls.is_empty() {
            return;
        }
        self.touched = true;
        let index = self.rounds.iter().filter(|r| r.run == self.run).count() as u64;
        let tool_calls = self
            .calls
            .drain(..)
            .map(|c| ToolCall {
                meta: c.meta,
                id: c.id,
                title: c.title,
                name: c.name,
                arguments: c.arguments,
                finished_at_ms: if c.result.is_some() { c.finished } else { now },
                result: c.result.unwrap_or(ToolResult::placeholder_with_output(reason, c.output)),
                started_at_ms: c.started,
            })
            .collect();
        let round = Round {
            session: self.name.clone(),
            run: self.run,
            index,
            closed_by,
            message: std::mem::take(&mut self.message),
            thought: std::mem::take(&mut self.thought),
            tool_calls,
            started_at_ms: self.started.take().unwrap_or(now),
            finished_at_ms: now,
            meta: std::mem::take(&mut self.round_meta),
        };
        out.push(line("round", &round));
        self.rounds.push(round);
    }

    fn summary(&self, run: u64, reason: FinishReason) -> Summary {
        let rounds: Vec<&Round> = self.rounds.iter().filter(|r| r.run == run).collect();
        let calls: Vec<&ToolCall> = rounds.iter().flat_map(|r| r.tool_calls.iter()).collect();
        let placeholders =
            |reason| calls.iter().filter(|c| c.result.placeholder_reason() == Some(reason)).count() as u64;
        Summary {
            session: self.name.clone(),
            run,
            finish_reason: Some(reason),
            rounds: rounds.len() as u64,
            tool_calls: calls.len() as u64,
            failed_tool_calls: calls.iter().filter(|c| c.result.is_failed()).count() as u64,
            placeholders: PlaceholderCounts {
                superseded: placeholders(PlaceholderReason::Superseded),
                completed: placeholders(PlaceholderReason::Completed),
                failed: placeholders(PlaceholderReason::Failed),
                canceled: placeholders(PlaceholderReason::Canceled),
                interrupted: placeholders(PlaceholderReason::Interrupted),
            },
            stitches: self.stitches[run as usize],
            anomalies: self.anomalies[run as usize],
            message_bytes: rounds.iter().map(|r| r.message.len() as u64).sum(),
            thought_bytes: rounds.iter().map(|r| r.thought.len() as u64).sum(),
            last_token_usage: self.usage[run as usize],
            meta: self.meta[run as usize].clone(),
        }
    }
}
