//! The questions everyone asks of their agents' runs, answered from the
//! database: which tools fail and how often, how many tokens a session
//! took, where runs ended, what went wrong.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde::Serialize;

use super::DatabaseError;

/// Sessions listed by [`Stats::sessions_by_tokens`], the largest first.
const TOP_SESSIONS: usize = 20;

/// What a database holds, summed up (`roundup stats`; `--json` writes this
/// as JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Sources ingested.
    pub sources: u64,
    /// Sessions (a source's sessions by name; a source whose input names
    /// none is one).
    pub sessions: u64,
    /// Runs, by how they ended (`completed`, `failed`, `canceled`,
    /// `interrupted`).
    pub runs_by_finish: BTreeMap<String, u64>,
    /// Runs in all.
    pub runs: u64,
    /// Rounds.
    pub rounds: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Tool calls that never got a result (their placeholder stands: no
    /// late result replaced it), by why.
    pub unanswered_by_reason: BTreeMap<String, u64>,
    /// Tool calls by tool, the most called first.
    pub tools: Vec<ToolStats>,
    /// Input and output tokens, where the protocols count them.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The sessions that took the most tokens (input and output), at most
    /// twenty.
    pub sessions_by_tokens: Vec<SessionTokens>,
    /// Anomalies by kind, the most frequent first.
    pub anomalies: Vec<AnomalyCount>,
}

/// One tool's calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolStats {
    /// The tool's name as the model called it (its title when the protocol
    /// gives no name).
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Calls whose result is `failed`.
    pub failed: u64,
    /// Calls left without a result.
    pub unanswered: u64,
    /// `failed / calls`.
    pub failure_rate: f64,
    /// `unanswered / calls`.
    pub unanswered_rate: f64,
    /// The median time from the call's declaration to its result, in
    /// milliseconds, over the calls whose times are known.
    pub median_ms: Option<u64>,
}

/// One session's tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionTokens {
    /// The session's name (its source's path when the input names none).
    pub session: String,
    /// Runs.
    pub runs: u64,
    /// Rounds.
    pub rounds: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The largest token-usage gauge reading (the context's size).
    pub peak_token_usage: Option<u64>,
}

/// How often one kind of anomaly was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnomalyCount {
    /// The anomaly's kind.
    pub kind: String,
    /// How many.
    pub count: u64,
}

/// A count or sum read back: read as `u64`, so that a negative value (a
/// database edited by hand) is an error that names it, never a silent 0.
/// A sum over no row is NULL: nothing, 0.
fn one(tx: &Transaction<'_>, sql: &str) -> Result<u64, DatabaseError> {
    Ok(tx.query_row(sql, [], |row| row.get::<_, Option<u64>>(0))?.unwrap_or(0))
}

fn by_name(tx: &Transaction<'_>, sql: &str) -> Result<BTreeMap<String, u64>, DatabaseError> {
    let mut statement = tx.prepare(sql)?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, u64>(1)?)))?;
    let mut map = BTreeMap::new();
    for row in rows {
        let (name, n) = row?;
        map.insert(name, n);
    }
    Ok(map)
}

pub(crate) fn query(tx: &Transaction<'_>) -> Result<Stats, DatabaseError> {
    let mut stats = Stats {
        sources: one(tx, "SELECT COUNT(*) FROM sources")?,
        sessions: one(tx, "SELECT COUNT(*) FROM sessions")?,
        runs: one(tx, "SELECT COUNT(*) FROM runs")?,
        rounds: one(tx, "SELECT COUNT(*) FROM rounds")?,
        tool_calls: one(tx, "SELECT COUNT(*) FROM tool_calls")?,
        input_tokens: one(tx, "SELECT SUM(input_tokens) FROM runs")?,
        output_tokens: one(tx, "SELECT SUM(output_tokens) FROM runs")?,
        runs_by_finish: by_name(
            tx,
            "SELECT COALESCE(finish_reason, 'running'), COUNT(*) FROM runs GROUP BY 1 ORDER BY 1",
        )?,
        unanswered_by_reason: by_name(
            tx,
            "SELECT placeholder_reason, COUNT(*) FROM tool_results WHERE status = 'placeholder' GROUP BY 1 ORDER BY 1",
        )?,
        ..Stats::default()
    };
    // Per tool: counts from the view, durations gathered for medians.
    let mut durations: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut statement = tx.prepare(
        "SELECT CASE WHEN name = '' THEN title ELSE name END, status, started_at_ms, finished_at_ms FROM tool_results",
    )?;
    let mut rows = statement.query([])?;
    let mut tools: BTreeMap<String, ToolStats> = BTreeMap::new();
    while let Some(row) = rows.next()? {
        let name: String = row.get(0)?;
        let status: String = row.get(1)?;
        let (started, finished): (i64, i64) = (row.get(2)?, row.get(3)?);
        let tool = tools.entry(name.clone()).or_insert_with(|| ToolStats {
            name: name.clone(),
            calls: 0,
            failed: 0,
            unanswered: 0,
            failure_rate: 0.0,
            unanswered_rate: 0.0,
            median_ms: None,
        });
        tool.calls += 1;
        tool.failed += u64::from(status == "failed");
        tool.unanswered += u64::from(status == "placeholder");
        // A time of 0 is no time known (a replay without timestamps).
        if started > 0 && finished >= started && status != "placeholder" {
            durations.entry(name).or_default().push(finished.abs_diff(started));
        }
    }
    for (name, mut tool) in tools {
        tool.failure_rate = tool.failed as f64 / tool.calls as f64;
        tool.unanswered_rate = tool.unanswered as f64 / tool.calls as f64;
        if let Some(times) = durations.get_mut(&name) {
            times.sort_unstable();
            tool.median_ms = times.get(times.len() / 2).copied();
        }
        stats.tools.push(tool);
    }
    stats.tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    let mut statement = tx.prepare(
        "SELECT name, runs, rounds, COALESCE(input_tokens, 0), COALESCE(output_tokens, 0), peak_token_usage
         FROM sessions ORDER BY COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) DESC, name LIMIT ?1",
    )?;
    let rows = statement.query_map([TOP_SESSIONS as i64], |row| {
        Ok(SessionTokens {
            session: row.get(0)?,
            runs: row.get(1)?,
            rounds: row.get(2)?,
            input_tokens: row.get(3)?,
            output_tokens: row.get(4)?,
            peak_token_usage: row.get(5)?,
        })
    })?;
    for row in rows {
        stats.sessions_by_tokens.push(row?);
    }
    let mut statement = tx.prepare("SELECT kind, COUNT(*) FROM anomalies GROUP BY kind ORDER BY 2 DESC, 1")?;
    let rows = statement.query_map([], |row| Ok(AnomalyCount { kind: row.get(0)?, count: row.get(1)? }))?;
    for row in rows {
        stats.anomalies.push(row?);
    }
    Ok(stats)
}
