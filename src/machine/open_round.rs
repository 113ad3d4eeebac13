//! The round being accumulated, before it closes.

use std::cell::Cell;

use serde::{Deserialize, Serialize};

use crate::hash::HashMap;
use crate::model::{Meta, ToolResult};

/// A tool call of the open round: like [`ToolCall`](crate::ToolCall), but
/// its result may still be missing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OpenCall {
    pub(crate) id: String,
    pub(crate) title: String,
    /// The tool's machine name; empty when none was given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) name: String,
    pub(crate) arguments: String,
    /// Live output so far (SPEC rule 13).
    pub(crate) output: String,
    pub(crate) result: Option<ToolResult>,
    pub(crate) started_at_ms: u64,
    pub(crate) finished_at_ms: u64,
    pub(crate) meta: Meta,
}

/// Text, reasoning and tool calls of the round not yet closed.
///
/// Tool calls are found by id through a map, so an argument delta costs the
/// same with one call in flight as with thousands.
///
/// A checkpoint saves its calls and text; the index and the counts are
/// derived again on restore ([`OpenRound::reindex`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct OpenRound {
    pub(crate) message: String,
    pub(crate) thought: String,
    pub(crate) calls: Vec<OpenCall>,
    #[serde(skip)]
    by_id: HashMap<Box<str>, usize>,
    /// The position last looked up: deltas for one call usually arrive in a
    /// row, and comparing one id is cheaper than hashing it.
    #[serde(skip)]
    last: Cell<usize>,
    /// Calls still without a result.
    #[serde(skip)]
    pub(crate) pending: usize,
    /// Clock at the first content.
    pub(crate) started_at_ms: Option<u64>,
    /// What the protocol said about the round (`round_meta`).
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub(crate) meta: Meta,
    /// The items of `meta`'s arrays, by fingerprint.
    #[serde(skip)]
    pub(crate) meta_items: super::meta_items::MetaItems,
}

impl OpenRound {
    /// `true` when the round holds no text, reasoning or tool call, and so
    /// would never be emitted (SPEC §2 rule 5).
    pub(crate) fn is_empty(&self) -> bool {
        self.message.is_empty() && self.thought.is_empty() && self.calls.is_empty()
    }

    /// Marks the round as having content at `now`, if it had none.
    pub(crate) fn touch(&mut self, now: u64) {
        self.started_at_ms.get_or_insert(now);
    }

    /// The position of the call with this id.
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        let last = self.last.get();
        if self.calls.get(last).is_some_and(|call| call.id == id) {
            return Some(last);
        }
        let found = self.by_id.get(id).copied()?;
        self.last.set(found);
        Some(found)
    }

    /// The call with this id.
    pub(crate) fn call_mut(&mut self, id: &str) -> Option<&mut OpenCall> {
        let at = self.position(id)?;
        self.calls.get_mut(at)
    }

    /// Adds a new, result-less call.
    pub(crate) fn declare(&mut self, id: &str, title: &str, name: &str, now: u64) {
        self.touch(now);
        self.by_id.insert(id.into(), self.calls.len());
        self.calls.push(OpenCall {
            id: id.to_owned(),
            title: title.to_owned(),
            name: name.to_owned(),
            arguments: String::new(),
            output: String::new(),
            result: None,
            started_at_ms: now,
            finished_at_ms: now,
            meta: Meta::new(),
        });
        self.pending += 1;
    }

    /// Derives the index and the pending count from the calls, after a
    /// restore; the id of a call that is not unique.
    pub(crate) fn reindex(&mut self) -> Result<(), String> {
        self.by_id.clear();
        self.last.set(0);
        for (at, call) in self.calls.iter().enumerate() {
            if self.by_id.insert(call.id.as_str().into(), at).is_some() {
                return Err(call.id.clone());
            }
        }
        self.pending = self.calls.iter().filter(|call| call.result.is_none()).count();
        Ok(())
    }

    /// Empties the round for the next one, handing back its text.
    pub(crate) fn take(&mut self) -> (String, String, Vec<OpenCall>, Option<u64>, Meta) {
        self.by_id.clear();
        self.pending = 0;
        (
            take_text(&mut self.message),
            take_text(&mut self.thought),
            std::mem::take(&mut self.calls),
            self.started_at_ms.take(),
            std::mem::take(&mut self.meta),
        )
    }
}

/// Text up to this size is copied out of the open round's buffer, which is
/// kept for the next round; larger text is handed over whole.
const KEEP_BUFFER_UP_TO: usize = 64 << 10;

/// Takes a round's text out of its accumulation buffer. Small text is
/// copied so that the buffer, hot on every chunk, stays where it is: a
/// buffer allocated anew each round lands next to other threads' fresh
/// allocations, and two builders on two threads then contend for cache
/// lines (measured: 1.4x instead of 1.9x for two threads). Large text is
/// moved, so that a big round is never held twice.
fn take_text(buffer: &mut String) -> String {
    if buffer.len() <= KEEP_BUFFER_UP_TO {
        let text = buffer.as_str().to_owned();
        buffer.clear();
        text
    } else {
        std::mem::take(buffer)
    }
}
