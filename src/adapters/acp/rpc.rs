//! The JSON-RPC layer: requests, and the responses that answer them.
//!
//! A client's traffic is requests both ways: the client's (`initialize`,
//! `session/prompt`, `session/load`, ...) and the agent's
//! (`session/request_permission`, `fs/*`, `terminal/*`), each numbered by
//! its sender, so one id may be pending on both sides at once. What a
//! response means depends on the request it answers: a prompt's ends the
//! run (`stopReason: cancelled` as `canceled`), a permission's is its tool
//! call's metadata, `initialize`'s says which agent this is.

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::{self, ContentBlock, Params, Update, UpdateMeta};
use super::{AcpAdapter, CallSink};
use crate::adapters::borrowed::view_of;
use crate::adapters::support::{one, report};
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta};

/// A request of the client that the adapter answers for.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum ClientRequest {
    Initialize,
    /// `session/prompt` or `session/load`: its response ends the run.
    Run {
        session: Box<str>,
    },
    Other,
}

/// A request of the agent (`session/request_permission`, `fs/*`,
/// `terminal/*`); a permission names the tool call it asks about.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct AgentRequest {
    permission_for: Option<(Box<str>, Box<str>)>,
}

/// The methods an agent sends to its client; every other request is the
/// client's.
fn is_agent_method(method: &str) -> bool {
    method == "session/request_permission" || method.starts_with("fs/") || method.starts_with("terminal/")
}

impl AcpAdapter {
    /// A request (with an id) or a notification (without): its id is kept
    /// until its response, on the side that sent it; its params are read.
    pub(super) fn request(
        &mut self,
        method: &str,
        id: Option<Box<str>>,
        params: Option<&Params<'_>>,
        payload: &[u8],
        calls: &mut dyn CallSink,
    ) {
        let session = params.and_then(|p| p.session_id.as_deref());
        if let Some(id) = id.clone() {
            if is_agent_method(method) {
                let permission_for = match (method, session, params.and_then(Params::tool_call)) {
                    ("session/request_permission", Some(session), Some(tool_call)) => {
                        tool_call.tool_call_id.as_deref().map(|call| {
                            let meta = UpdateMeta::read(tool_call.meta.as_ref(), || {
                                params.and_then(Params::raw_meta).map(wire::value)
                            });
                            let routed = self.route(session, meta.parent_tool_use_id.as_deref(), Some(call));
                            (Box::from(routed.as_ref()), Box::from(call))
                        })
                    }
                    _ => None,
                };
                self.agent_requests.insert(id, AgentRequest { permission_for });
            } else {
                let request = match (method, session) {
                    ("initialize", _) => ClientRequest::Initialize,
                    ("session/prompt" | "session/load", Some(session)) => {
                        ClientRequest::Run { session: session.into() }
                    }
                    _ => ClientRequest::Other,
                };
                self.client_requests.insert(id, request);
            }
        }
        let Some(params) = params else { return };
        let needs_session =
            matches!(method, "session/update" | "session/prompt" | "session/load" | "session/request_permission");
        if needs_session && params.session_id.is_none() {
            let detail = format!("acp: {method} without a sessionId: {}", String::from_utf8_lossy(payload));
            return report(calls, None, AnomalyKind::UnknownEvent, &detail);
        }
        match (method, params.session_id.as_deref()) {
            ("session/update", Some(session)) => {
                if let Some(update) = &params.update {
                    self.notification(session, update, payload, false, calls);
                }
            }
            ("session/prompt" | "session/load", Some(session)) => {
                self.begin_run(session, method == "session/load", calls);
                if let Some(prompt) = params.prompt {
                    self.prompt(session, prompt, calls);
                }
            }
            ("session/request_permission", Some(session)) => {
                if let Some(tool_call) = params.tool_call() {
                    self.permission(session, &tool_call, params, calls);
                }
            }
            // The rest (initialize, session/new, the agent's file and
            // terminal requests, ...) carries nothing for rounds.
            _ => {}
        }
    }

    /// Matches a response to the request it answers. Client and agent
    /// number their requests independently, so an id may be pending on
    /// both sides; then the result's shape decides (a prompt's result has
    /// `stopReason`, a permission's `outcome`), and failing that the
    /// agent's request, which was sent while the client's was pending and
    /// so is answered first.
    pub(super) fn response(
        &mut self,
        id: Box<str>,
        result: Option<Raw<'_>>,
        error: Option<Raw<'_>>,
        calls: &mut dyn CallSink,
    ) {
        let result_value = result.map(wire::value);
        let client_pending = self.client_requests.contains_key(&id);
        let agent_pending = self.agent_requests.contains_key(&id);
        let answers_client = match (client_pending, agent_pending) {
            (true, false) => true,
            (false, true) => false,
            (false, false) => {
                let body = match (result, error) {
                    (Some(result), _) => format!("result {}", result.get()),
                    (None, Some(error)) => format!("error {}", error.get()),
                    (None, None) => String::new(),
                };
                let detail = format!("acp: a response to no request seen, id {id}: {body}");
                return report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
            (true, true) => {
                let has = |key: &str| result_value.as_ref().is_some_and(|r| r.get(key).is_some());
                has("stopReason") && !has("outcome")
            }
        };
        if !answers_client {
            let Some(AgentRequest { permission_for: Some((session, call)) }) = self.agent_requests.remove(&id) else {
                return;
            };
            let mut meta = Meta::new();
            if let Some(outcome) = result_value.as_ref().and_then(|r| r.get("outcome")) {
                meta.insert("acp_permission_outcome".into(), outcome.clone());
            }
            if let Some(error) = error {
                meta.insert("acp_permission_error".into(), wire::value(error));
            }
            if !meta.is_empty() {
                calls.call(Some(&session), Call::ToolMeta { id: &call, meta: &meta });
            }
            return;
        }
        match self.client_requests.remove(&id) {
            Some(ClientRequest::Initialize) => {
                let name = result_value.as_ref().and_then(|r| r.pointer("/agentInfo/name")).and_then(Value::as_str);
                self.content_is_arguments = name.is_some_and(|name| name.to_ascii_lowercase().contains("kimi"));
            }
            Some(ClientRequest::Run { session }) => {
                let mut meta = Meta::new();
                let stop_reason = result_value.as_ref().and_then(|r| r.get("stopReason")).and_then(Value::as_str);
                if let Some(stop_reason) = stop_reason {
                    meta.insert("acp_stop_reason".into(), stop_reason.into());
                }
                for (field, key) in [("usage", "acp_usage"), ("_meta", "acp_response_meta")] {
                    if let Some(value) = result_value.as_ref().and_then(|r| r.get(field)) {
                        meta.insert(key.into(), value.clone());
                    }
                }
                if let Some(error) = error {
                    meta.insert("acp_error".into(), wire::value(error));
                }
                let reason = match (error, stop_reason) {
                    (Some(_), _) | (None, Some("refusal")) => FinishReason::Failed,
                    (None, Some("cancelled")) => FinishReason::Canceled,
                    // The agent ended its turn, or stopped at one of its
                    // limits: a normal end, said as such.
                    (None, Some("end_turn" | "max_tokens" | "max_turn_requests")) => FinishReason::Completed,
                    _ => FinishReason::Interrupted,
                };
                self.end_run(&session, reason, &meta, calls);
            }
            Some(ClientRequest::Other) | None => {}
        }
    }

    /// The prompt's text (its text blocks, joined) and its other blocks.
    fn prompt(&mut self, session: &str, prompt: Raw<'_>, calls: &mut dyn CallSink) {
        let Some(blocks) = view_of::<Vec<Raw<'_>>>(prompt) else {
            let meta = one("acp_prompt", wire::value(prompt));
            return calls.call(Some(session), Call::RunMeta { meta: &meta });
        };
        let mut others = Vec::new();
        for block in blocks {
            match ContentBlock::text(block) {
                Some(text) => self.gather(session, "acp_user_message", &text),
                None => others.push(wire::value(block)),
            }
        }
        if !others.is_empty() {
            let meta = one("acp_prompt_attachments", Value::Array(others));
            calls.call(Some(session), Call::RunMeta { meta: &meta });
        }
    }

    /// A permission request names the tool call it is about, with its
    /// latest title and input; its content is a preview for the user (a
    /// diff to approve), kept as metadata, not output.
    fn permission(&mut self, session: &str, tool_call: &Update<'_>, params: &Params<'_>, calls: &mut dyn CallSink) {
        let options = params.options;
        let Some(id) = tool_call.tool_call_id.as_deref() else {
            let detail = "acp: session/request_permission without a toolCall.toolCallId";
            return report(calls, Some(session), AnomalyKind::UnknownEvent, detail);
        };
        let meta = UpdateMeta::read(tool_call.meta.as_ref(), || params.raw_meta().map(wire::value));
        let target = self.route(session, meta.parent_tool_use_id.as_deref(), Some(id));
        self.ensure_running(&target, calls);
        let mut asked = Meta::new();
        if let Some(options) = options {
            asked.insert("acp_permission_options".into(), wire::value(options));
        }
        if let Some(content) = tool_call.content {
            asked.insert("acp_permission_preview".into(), wire::value(content));
        }
        let declaration = Update {
            session_update: None,
            tool_call_id: tool_call.tool_call_id.clone(),
            title: tool_call.title.clone(),
            status: None,
            content: None,
            raw_input: tool_call.raw_input,
            raw_output: None,
            kind: tool_call.kind,
            locations: tool_call.locations,
            meta: None,
            message_id: None,
        };
        self.tool_call(&target, id, &declaration, meta, false, calls);
        if !asked.is_empty() && self.calls.get(self.root(&target).as_ref()).is_some_and(|c| c.contains_key(id)) {
            calls.call(Some(&target), Call::ToolMeta { id, meta: &asked });
        }
    }
}
