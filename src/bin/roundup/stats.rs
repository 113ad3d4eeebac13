//! `roundup stats`: a database summed up, as tables for a person or one
//! JSON object for a program.

use std::fmt::Write as _;

use roundup::store::{Database, Stats};

use crate::args::StatsArgs;

/// Tools listed in the table, the most called first.
const TOOLS_SHOWN: usize = 30;

/// The text `roundup stats` prints.
pub fn run(args: &StatsArgs) -> Result<String, String> {
    let at = args.db.display();
    if !args.db.is_file() {
        return Err(format!("{at}: no database there (make one with `roundup ingest --db {at} PATH...`)"));
    }
    let stats = Database::open(&args.db).and_then(|mut db| db.stats()).map_err(|e| format!("{at}: {e}"))?;
    if args.json {
        let mut text = serde_json::to_string(&stats).map_err(|e| e.to_string())?;
        text.push('\n');
        return Ok(text);
    }
    Ok(table(&stats))
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The figures as aligned tables.
fn table(stats: &Stats) -> String {
    let mut out = String::new();
    let finishes: Vec<String> = stats.runs_by_finish.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    let _ = writeln!(out, "sources     {}", stats.sources);
    let _ = writeln!(out, "sessions    {}", stats.sessions);
    let _ = writeln!(out, "runs        {}{}", stats.runs, bracketed(&finishes));
    let _ = writeln!(out, "rounds      {}", stats.rounds);
    let unanswered: Vec<String> =
        stats.unanswered_by_reason.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    let without =
        if unanswered.is_empty() { String::new() } else { format!(" (without a result: {})", unanswered.join(", ")) };
    let _ = writeln!(out, "tool calls  {}{without}", stats.tool_calls);
    let _ = writeln!(out, "tokens      {} in, {} out", stats.input_tokens, stats.output_tokens);
    if !stats.tools.is_empty() {
        let rows: Vec<[String; 6]> = stats
            .tools
            .iter()
            .take(TOOLS_SHOWN)
            .map(|tool| {
                [
                    tool.name.clone(),
                    tool.calls.to_string(),
                    tool.failed.to_string(),
                    percent(tool.failure_rate),
                    percent(tool.unanswered_rate),
                    tool.median_ms.map_or_else(|| "-".to_owned(), |ms| format!("{ms} ms")),
                ]
            })
            .collect();
        out.push('\n');
        aligned(&mut out, ["tool", "calls", "failed", "failure", "no result", "median"], &rows);
        if stats.tools.len() > TOOLS_SHOWN {
            let _ = writeln!(out, "({} more tools: --json lists them all)", stats.tools.len() - TOOLS_SHOWN);
        }
    }
    if !stats.sessions_by_tokens.is_empty() {
        let rows: Vec<[String; 6]> = stats
            .sessions_by_tokens
            .iter()
            .map(|session| {
                [
                    session.session.clone(),
                    session.runs.to_string(),
                    session.rounds.to_string(),
                    session.input_tokens.to_string(),
                    session.output_tokens.to_string(),
                    session.peak_token_usage.map_or_else(|| "-".to_owned(), |n| n.to_string()),
                ]
            })
            .collect();
        out.push('\n');
        aligned(&mut out, ["session", "runs", "rounds", "input tokens", "output tokens", "peak context"], &rows);
    }
    if !stats.anomalies.is_empty() {
        let rows: Vec<[String; 2]> =
            stats.anomalies.iter().map(|anomaly| [anomaly.kind.clone(), anomaly.count.to_string()]).collect();
        out.push('\n');
        aligned(&mut out, ["anomaly", "count"], &rows);
    }
    out
}

fn bracketed(parts: &[String]) -> String {
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// A table: the first column left-aligned, the others right-aligned.
fn aligned<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(|title| title.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut line = |cells: [&str; N]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i == 0 {
                let _ = write!(text, "{cell:<width$}");
            } else {
                let _ = write!(text, "  {cell:>width$}");
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(header);
    for row in rows {
        line(row.each_ref().map(String::as_str));
    }
}
