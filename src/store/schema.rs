//! The database's tables, as one documented script (docs/store.md explains
//! each column and the questions the indexes answer).
//!
//! Every record table is keyed by its source and the record's position in
//! that source's output (`seq`), so that a source's rows can be dropped or
//! read back in order, and two ingests of the same files give the same
//! rows whatever order they ran in.

/// The schema's version, kept in SQLite's `user_version`: a database made
/// by another version is refused rather than misread.
pub const SCHEMA_VERSION: i64 = 1;

/// The tables, indexes and views, created when the database is new.
pub(crate) const SCHEMA: &str = r#"
CREATE TABLE sources (
    id INTEGER PRIMARY KEY,
    -- The path as given, made absolute: one row per file.
    path TEXT NOT NULL UNIQUE,
    -- The input format read (asked for, or detected); NULL until decided.
    format TEXT,
    -- Bytes read of the (decompressed) input, and the CRC-32 of them.
    read_bytes INTEGER NOT NULL DEFAULT 0,
    read_crc32 INTEGER NOT NULL DEFAULT 0,
    -- Lines (payloads) read, and those that could not be.
    lines INTEGER NOT NULL DEFAULT 0,
    bad_lines INTEGER NOT NULL DEFAULT 0,
    -- Records written up to the end of what was read; records from `seq`
    -- `settled` on are the end of input's (the runs it left open, finished
    -- as interrupted), replaced when the source grows.
    settled INTEGER NOT NULL DEFAULT 0,
    records INTEGER NOT NULL DEFAULT 0,
    -- The replay's state at `read_bytes`, before the end of input: what a
    -- source that grew is read on from.
    checkpoint BLOB
);

CREATE TABLE rounds (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    seq INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    closed_by TEXT NOT NULL,
    message TEXT NOT NULL,
    thought TEXT NOT NULL,
    tool_calls INTEGER NOT NULL,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    -- Input and output tokens of the model response, where the protocol
    -- counts them per response (read from the metadata's usage object).
    input_tokens INTEGER,
    output_tokens INTEGER,
    meta TEXT,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;

CREATE TABLE tool_calls (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    -- The round's seq, and the call's place in it.
    seq INTEGER NOT NULL,
    position INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    round INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    title TEXT NOT NULL,
    arguments TEXT NOT NULL,
    -- completed, failed or placeholder: the result the round closed with
    -- (a late one is a row of `stitches`).
    status TEXT NOT NULL,
    content TEXT,
    placeholder_reason TEXT,
    placeholder_output TEXT,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    meta TEXT,
    PRIMARY KEY (source_id, seq, position)
) WITHOUT ROWID;

CREATE TABLE stitches (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    seq INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    round INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    status TEXT NOT NULL,
    content TEXT,
    placeholder_reason TEXT,
    placeholder_output TEXT,
    finished_at_ms INTEGER NOT NULL,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;

CREATE TABLE meta_patches (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    seq INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    round INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;

CREATE TABLE anomalies (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    seq INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    kind TEXT NOT NULL,
    call_id TEXT,
    status TEXT,
    detail TEXT NOT NULL,
    -- What was kept of what could not be applied.
    content TEXT,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;

CREATE TABLE runs (
    source_id INTEGER NOT NULL REFERENCES sources(id),
    seq INTEGER NOT NULL,
    session TEXT,
    run INTEGER NOT NULL,
    finish_reason TEXT,
    rounds INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    failed_tool_calls INTEGER NOT NULL,
    placeholders_superseded INTEGER NOT NULL,
    placeholders_completed INTEGER NOT NULL,
    placeholders_failed INTEGER NOT NULL,
    placeholders_canceled INTEGER NOT NULL,
    placeholders_interrupted INTEGER NOT NULL,
    stitches INTEGER NOT NULL,
    anomalies INTEGER NOT NULL,
    message_bytes INTEGER NOT NULL,
    thought_bytes INTEGER NOT NULL,
    last_token_usage INTEGER,
    -- Input and output tokens: those of its rounds added up, or, where the
    -- protocol counts per run, the run's own.
    input_tokens INTEGER,
    output_tokens INTEGER,
    meta TEXT,
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;

CREATE INDEX rounds_by_run ON rounds (source_id, session, run);
CREATE INDEX tool_calls_by_name ON tool_calls (name, status);
CREATE INDEX tool_calls_by_call ON tool_calls (source_id, session, run, round, call_id);
CREATE INDEX stitches_by_call ON stitches (source_id, session, run, round, call_id);
CREATE INDEX anomalies_by_kind ON anomalies (kind);
CREATE INDEX runs_by_session ON runs (source_id, session, run);
CREATE INDEX runs_by_finish ON runs (finish_reason);

-- One row a session: a source's sessions by name (NULL: the input named
-- none, and the source is the session).
CREATE VIEW sessions AS
SELECT
    runs.source_id AS source_id,
    runs.session AS session,
    COALESCE(runs.session, sources.path) AS name,
    COUNT(*) AS runs,
    SUM(runs.rounds) AS rounds,
    SUM(runs.tool_calls) AS tool_calls,
    SUM(runs.failed_tool_calls) AS failed_tool_calls,
    SUM(runs.anomalies) AS anomalies,
    MAX(runs.last_token_usage) AS peak_token_usage,
    SUM(runs.input_tokens) AS input_tokens,
    SUM(runs.output_tokens) AS output_tokens
FROM runs JOIN sources ON sources.id = runs.source_id
GROUP BY runs.source_id, runs.session;

-- Every tool call with the result it ended with: a late result replaces
-- the placeholder its round closed with.
CREATE VIEW tool_results AS
SELECT
    calls.source_id, calls.seq, calls.position, calls.session, calls.run, calls.round,
    calls.call_id, calls.name, calls.title,
    COALESCE(late.status, calls.status) AS status,
    COALESCE(late.content, calls.content) AS content,
    CASE WHEN late.seq IS NULL THEN calls.placeholder_reason ELSE late.placeholder_reason END AS placeholder_reason,
    late.seq IS NOT NULL AS stitched,
    calls.started_at_ms,
    COALESCE(late.finished_at_ms, calls.finished_at_ms) AS finished_at_ms
FROM tool_calls AS calls
LEFT JOIN stitches AS late
    ON late.source_id = calls.source_id
    AND late.session IS calls.session
    AND late.run = calls.run
    AND late.round = calls.round
    AND late.call_id = calls.call_id;
"#;

/// The record tables, each keyed by `(source_id, seq, ...)`.
pub(crate) const RECORD_TABLES: [&str; 6] = ["rounds", "tool_calls", "stitches", "meta_patches", "anomalies", "runs"];
