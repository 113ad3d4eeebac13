//! Records to rows and back: each kind of record is a row of its table
//! (a round's tool calls a row each of `tool_calls`), and the rows of a
//! source read back give its records as `roundup replay` writes them,
//! byte for byte. Both directions are here so that they change together.

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use super::tokens::Tokens;
use super::DatabaseError;
use crate::model::{
    Anomaly, ClosedBy, FinishReason, Meta, MetaPatch, PlaceholderCounts, PlaceholderReason, Round, Stitch, Summary,
    TerminalStatus, ToolCall, ToolResult,
};
use crate::wire::OutputLine;

/// SQLite integers are signed: a count past `i64::MAX` is stored as the
/// largest (no input comes near it).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Metadata as JSON text, NULL when there is none.
fn meta_text(meta: &Meta) -> Result<Option<String>, DatabaseError> {
    if meta.is_empty() {
        return Ok(None);
    }
    let text = serde_json::to_string(meta).map_err(|e| DatabaseError::Corrupt(format!("metadata: {e}")))?;
    Ok(Some(text))
}

/// A result's columns: status, content, placeholder reason and output.
fn result_columns(result: &ToolResult) -> (&'static str, Option<&str>, Option<&'static str>, Option<&str>) {
    match result {
        ToolResult::Completed { content } => ("completed", Some(content), None, None),
        ToolResult::Failed { content } => ("failed", Some(content), None, None),
        ToolResult::Placeholder { reason, output } => ("placeholder", None, Some(reason.as_str()), output.as_deref()),
    }
}

/// Writes `record`, the `seq`th of source `source`.
pub(crate) fn insert(tx: &Transaction<'_>, source: i64, seq: u64, record: &OutputLine) -> Result<(), DatabaseError> {
    let seq = int(seq);
    match record {
        OutputLine::Round(round) => insert_round(tx, source, seq, round),
        OutputLine::Stitch(stitch) => {
            let (status, content, reason, output) = result_columns(&stitch.result);
            tx.prepare_cached(
                "INSERT INTO stitches (source_id, seq, session, run, round, call_id, status, content,
                 placeholder_reason, placeholder_output, finished_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                source,
                seq,
                stitch.session,
                int(stitch.run),
                int(stitch.round),
                stitch.id,
                status,
                content,
                reason,
                output,
                int(stitch.finished_at_ms)
            ])?;
            Ok(())
        }
        OutputLine::Meta(patch) => {
            tx.prepare_cached(
                "INSERT INTO meta_patches (source_id, seq, session, run, round, call_id, meta)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                source,
                seq,
                patch.session,
                int(patch.run),
                int(patch.round),
                patch.id,
                meta_text(&patch.meta)?.unwrap_or_else(|| "{}".to_owned())
            ])?;
            Ok(())
        }
        OutputLine::Anomaly(anomaly) => {
            tx.prepare_cached(
                "INSERT INTO anomalies (source_id, seq, session, run, kind, call_id, status, detail, content)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                source,
                seq,
                anomaly.session,
                int(anomaly.run),
                anomaly.kind.as_str(),
                anomaly.id,
                anomaly.status.map(TerminalStatus::as_str),
                anomaly.detail,
                anomaly.content
            ])?;
            Ok(())
        }
        OutputLine::Summary(summary) => insert_run(tx, source, seq, summary),
    }
}

fn insert_round(tx: &Transaction<'_>, source: i64, seq: i64, round: &Round) -> Result<(), DatabaseError> {
    let tokens = Tokens::of(&round.meta).unwrap_or_default();
    tx.prepare_cached(
        "INSERT INTO rounds (source_id, seq, session, run, idx, closed_by, message, thought, tool_calls,
         started_at_ms, finished_at_ms, input_tokens, output_tokens, meta)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        source,
        seq,
        round.session,
        int(round.run),
        int(round.index),
        round.closed_by.as_str(),
        round.message,
        round.thought,
        round.tool_calls.len(),
        int(round.started_at_ms),
        int(round.finished_at_ms),
        tokens.input.map(int),
        tokens.output.map(int),
        meta_text(&round.meta)?
    ])?;
    let mut calls = tx.prepare_cached(
        "INSERT INTO tool_calls (source_id, seq, position, session, run, round, call_id, name, title, arguments,
         status, content, placeholder_reason, placeholder_output, started_at_ms, finished_at_ms, meta)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    for (position, call) in round.tool_calls.iter().enumerate() {
        let (status, content, reason, output) = result_columns(&call.result);
        calls.execute(params![
            source,
            seq,
            position,
            round.session,
            int(round.run),
            int(round.index),
            call.id,
            call.name,
            call.title,
            call.arguments,
            status,
            content,
            reason,
            output,
            int(call.started_at_ms),
            int(call.finished_at_ms),
            meta_text(&call.meta)?
        ])?;
    }
    Ok(())
}

fn insert_run(tx: &Transaction<'_>, source: i64, seq: i64, summary: &Summary) -> Result<(), DatabaseError> {
    // Tokens counted per response are the run's; a protocol that counts
    // per run says so in the summary's own metadata instead.
    let counted: (Option<i64>, Option<i64>, i64) = tx
        .prepare_cached(
            // Named, as SQLite's planner, without statistics, would rather
            // walk every round of the source by its primary key: a cost
            // that grows with the source, paid at every run's end.
            "SELECT SUM(input_tokens), SUM(output_tokens), COUNT(input_tokens) + COUNT(output_tokens)
             FROM rounds INDEXED BY rounds_by_run WHERE source_id = ?1 AND session IS ?2 AND run = ?3",
        )?
        .query_row(params![source, summary.session, int(summary.run)], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?;
    let tokens = if counted.2 > 0 {
        (counted.0, counted.1)
    } else {
        let own = Tokens::of(&summary.meta).unwrap_or_default();
        (own.input.map(int), own.output.map(int))
    };
    let p = &summary.placeholders;
    tx.prepare_cached(
        "INSERT INTO runs (source_id, seq, session, run, finish_reason, rounds, tool_calls, failed_tool_calls,
         placeholders_superseded, placeholders_completed, placeholders_failed, placeholders_canceled,
         placeholders_interrupted, stitches, anomalies, message_bytes, thought_bytes, last_token_usage,
         input_tokens, output_tokens, meta)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?
    .execute(params![
        source,
        seq,
        summary.session,
        int(summary.run),
        summary.finish_reason.map(FinishReason::as_str),
        int(summary.rounds),
        int(summary.tool_calls),
        int(summary.failed_tool_calls),
        int(p.superseded),
        int(p.completed),
        int(p.failed),
        int(p.canceled),
        int(p.interrupted),
        int(summary.stitches),
        int(summary.anomalies),
        int(summary.message_bytes),
        int(summary.thought_bytes),
        summary.last_token_usage.map(int),
        tokens.0,
        tokens.1,
        meta_text(&summary.meta)?
    ])?;
    Ok(())
}

/// Deletes the records of `source` from `seq` on.
pub(crate) fn delete_from(tx: &Transaction<'_>, source: i64, seq: u64) -> Result<(), DatabaseError> {
    for table in super::schema::RECORD_TABLES {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE source_id = ?1 AND seq >= ?2"))?
            .execute(params![source, int(seq)])?;
    }
    Ok(())
}

/// A column read back that does not hold what the schema says (a
/// database edited by hand, or made by something else).
fn corrupt(table: &str, seq: i64, what: impl std::fmt::Display) -> DatabaseError {
    DatabaseError::Corrupt(format!("{table} row seq {seq}: {what}"))
}

fn from_u64(table: &str, seq: i64, column: &str, value: i64) -> Result<u64, DatabaseError> {
    u64::try_from(value).map_err(|_| corrupt(table, seq, format_args!("{column} is negative ({value})")))
}

/// A named value of one of the model's enums, read back by its name.
fn named<T: serde::de::DeserializeOwned>(
    table: &str,
    seq: i64,
    column: &str,
    name: String,
) -> Result<T, DatabaseError> {
    serde_json::from_value(Value::String(name.clone()))
        .map_err(|_| corrupt(table, seq, format_args!("{column} {name:?} is no known value")))
}

fn meta_of(table: &str, seq: i64, text: Option<String>) -> Result<Meta, DatabaseError> {
    match text {
        None => Ok(Meta::new()),
        Some(text) => serde_json::from_str(&text).map_err(|e| corrupt(table, seq, format_args!("meta: {e}"))),
    }
}

fn result_of(
    table: &str,
    seq: i64,
    status: String,
    content: Option<String>,
    reason: Option<String>,
    output: Option<String>,
) -> Result<ToolResult, DatabaseError> {
    let content = || content.clone().ok_or_else(|| corrupt(table, seq, "a result without content"));
    match status.as_str() {
        "completed" => Ok(ToolResult::Completed { content: content()? }),
        "failed" => Ok(ToolResult::Failed { content: content()? }),
        "placeholder" => {
            let reason = reason.ok_or_else(|| corrupt(table, seq, "a placeholder without a reason"))?;
            let reason: PlaceholderReason = named(table, seq, "placeholder_reason", reason)?;
            Ok(ToolResult::Placeholder { reason, output })
        }
        other => Err(corrupt(table, seq, format_args!("status {other:?} is no result"))),
    }
}

/// The records of `source`, in the order they were written.
pub(crate) fn records(tx: &Transaction<'_>, source: i64) -> Result<Vec<OutputLine>, DatabaseError> {
    let mut all: Vec<(i64, OutputLine)> = Vec::new();
    let mut calls = tool_calls(tx, source)?.into_iter().peekable();
    let mut rounds = tx.prepare(
        "SELECT seq, session, run, idx, closed_by, message, thought, started_at_ms, finished_at_ms, meta
         FROM rounds WHERE source_id = ?1 ORDER BY seq",
    )?;
    let mut rows = rounds.query(params![source])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "rounds";
        let mut round = Round {
            session: row.get(1)?,
            run: from_u64(t, seq, "run", row.get(2)?)?,
            index: from_u64(t, seq, "idx", row.get(3)?)?,
            closed_by: named::<ClosedBy>(t, seq, "closed_by", row.get(4)?)?,
            message: row.get(5)?,
            thought: row.get(6)?,
            tool_calls: Vec::new(),
            started_at_ms: from_u64(t, seq, "started_at_ms", row.get(7)?)?,
            finished_at_ms: from_u64(t, seq, "finished_at_ms", row.get(8)?)?,
            meta: meta_of(t, seq, row.get(9)?)?,
        };
        while let Some((_, call)) = calls.next_if(|(call_seq, _)| *call_seq == seq) {
            round.tool_calls.push(call);
        }
        all.push((seq, OutputLine::Round(round)));
    }
    if let Some((seq, _)) = calls.next() {
        return Err(corrupt("tool_calls", seq, "a tool call of no round"));
    }
    let mut stitches = tx.prepare(
        "SELECT seq, session, run, round, call_id, status, content, placeholder_reason, placeholder_output,
         finished_at_ms FROM stitches WHERE source_id = ?1 ORDER BY seq",
    )?;
    let mut rows = stitches.query(params![source])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "stitches";
        let stitch = Stitch {
            session: row.get(1)?,
            run: from_u64(t, seq, "run", row.get(2)?)?,
            round: from_u64(t, seq, "round", row.get(3)?)?,
            id: row.get(4)?,
            result: result_of(t, seq, row.get(5)?, row.get(6)?, row.get(7)?, row.get(8)?)?,
            finished_at_ms: from_u64(t, seq, "finished_at_ms", row.get(9)?)?,
        };
        all.push((seq, OutputLine::Stitch(stitch)));
    }
    let mut patches = tx.prepare(
        "SELECT seq, session, run, round, call_id, meta FROM meta_patches WHERE source_id = ?1 ORDER BY seq",
    )?;
    let mut rows = patches.query(params![source])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "meta_patches";
        let patch = MetaPatch {
            session: row.get(1)?,
            run: from_u64(t, seq, "run", row.get(2)?)?,
            round: from_u64(t, seq, "round", row.get(3)?)?,
            id: row.get(4)?,
            meta: meta_of(t, seq, row.get(5)?)?,
        };
        all.push((seq, OutputLine::Meta(patch)));
    }
    let mut anomalies = tx.prepare(
        "SELECT seq, session, run, kind, call_id, status, detail, content FROM anomalies
         WHERE source_id = ?1 ORDER BY seq",
    )?;
    let mut rows = anomalies.query(params![source])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "anomalies";
        let status: Option<String> = row.get(5)?;
        let anomaly = Anomaly {
            session: row.get(1)?,
            run: from_u64(t, seq, "run", row.get(2)?)?,
            kind: named(t, seq, "kind", row.get(3)?)?,
            id: row.get(4)?,
            status: status.map(|status| named(t, seq, "status", status)).transpose()?,
            detail: row.get(6)?,
            content: row.get(7)?,
        };
        all.push((seq, OutputLine::Anomaly(anomaly)));
    }
    let mut runs = tx.prepare(
        "SELECT seq, session, run, finish_reason, rounds, tool_calls, failed_tool_calls, placeholders_superseded,
         placeholders_completed, placeholders_failed, placeholders_canceled, placeholders_interrupted, stitches,
         anomalies, message_bytes, thought_bytes, last_token_usage, meta FROM runs WHERE source_id = ?1 ORDER BY seq",
    )?;
    let mut rows = runs.query(params![source])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "runs";
        let count = |i: usize, column: &str| -> Result<u64, DatabaseError> { from_u64(t, seq, column, row.get(i)?) };
        let reason: Option<String> = row.get(3)?;
        let usage: Option<i64> = row.get(16)?;
        let summary = Summary {
            session: row.get(1)?,
            run: count(2, "run")?,
            finish_reason: reason.map(|reason| named(t, seq, "finish_reason", reason)).transpose()?,
            rounds: count(4, "rounds")?,
            tool_calls: count(5, "tool_calls")?,
            failed_tool_calls: count(6, "failed_tool_calls")?,
            placeholders: PlaceholderCounts {
                superseded: count(7, "placeholders_superseded")?,
                completed: count(8, "placeholders_completed")?,
                failed: count(9, "placeholders_failed")?,
                canceled: count(10, "placeholders_canceled")?,
                interrupted: count(11, "placeholders_interrupted")?,
            },
            stitches: count(12, "stitches")?,
            anomalies: count(13, "anomalies")?,
            message_bytes: count(14, "message_bytes")?,
            thought_bytes: count(15, "thought_bytes")?,
            last_token_usage: usage.map(|usage| from_u64(t, seq, "last_token_usage", usage)).transpose()?,
            meta: meta_of(t, seq, row.get(17)?)?,
        };
        all.push((seq, OutputLine::Summary(summary)));
    }
    all.sort_by_key(|(seq, _)| *seq);
    Ok(all.into_iter().map(|(_, record)| record).collect())
}

/// The tool calls of `source`'s rounds, by round `seq` and position.
fn tool_calls(tx: &Transaction<'_>, source: i64) -> Result<Vec<(i64, ToolCall)>, DatabaseError> {
    let mut statement = tx.prepare(
        "SELECT seq, call_id, title, name, arguments, status, content, placeholder_reason, placeholder_output,
         started_at_ms, finished_at_ms, meta FROM tool_calls WHERE source_id = ?1 ORDER BY seq, position",
    )?;
    let mut rows = statement.query(params![source])?;
    let mut calls = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let t = "tool_calls";
        calls.push((
            seq,
            ToolCall {
                id: row.get(1)?,
                title: row.get(2)?,
                name: row.get(3)?,
                arguments: row.get(4)?,
                result: result_of(t, seq, row.get(5)?, row.get(6)?, row.get(7)?, row.get(8)?)?,
                started_at_ms: from_u64(t, seq, "started_at_ms", row.get(9)?)?,
                finished_at_ms: from_u64(t, seq, "finished_at_ms", row.get(10)?)?,
                meta: meta_of(t, seq, row.get(11)?)?,
            },
        ));
    }
    Ok(calls)
}

/// The id of the source at `path`, if it has one.
pub(crate) fn source_id(tx: &Transaction<'_>, path: &str) -> Result<Option<i64>, DatabaseError> {
    Ok(tx.query_row("SELECT id FROM sources WHERE path = ?1", params![path], |row| row.get(0)).optional()?)
}
