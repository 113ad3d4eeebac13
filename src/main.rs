//! The `roundup` command line: a thin layer over the library's replay.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::process::ExitCode;

use roundup::{replay, BadLine, Emit, Format, ReplayError, ReplayObserver};

const HELP: &str = "\
roundup: turn an AI agent's chunk stream into rounds

An agent streams text deltas, reasoning deltas, tool calls, argument deltas
and snapshots, tool results and token gauges. roundup aggregates them into
rounds (one assistant turn: its text, its reasoning, its tool calls with their
final arguments and exactly one result each) and reports whatever the stream
did that could not be applied (late, duplicate or undeclared results, calls
after the run finished, lines that do not parse).

USAGE:
    roundup replay [OPTIONS] [FILE]
    roundup --help | --version

COMMANDS:
    replay    Replay a recorded stream from FILE (or `-`, or nothing: stdin)
              and print JSON lines on stdout.

OPTIONS for replay:
    --from FORMAT   The input format [default: auto]
                      auto  decided from the first event
                      ops   ops JSONL: one StreamHandler call per line, e.g.
                            {\"op\":\"message\",\"text\":\"Hi\",\"session\":\"s1\",\"at_ms\":100}
                      acp   Agent Client Protocol: a client's JSON-RPC traffic
                            or bare SessionNotifications; sessionId is the
                            session, session/prompt starts a run, its
                            response finishes it
                      uagent  uagent --stream JSONL (and the uah superset);
                            uagent's run statistics are recomputed into
                            the summary as uagent_stats
                      deepwork  deepwork Events, or deepwork transcripts
                            (progress lines carry the Event in workstream)
                    Raw JSON lines and SSE framing (data: lines, events
                    separated by a blank line) are both accepted.
    --emit WHAT     What to print [default: records]
                      records  rounds, stitches and anomalies as they happen,
                               then one summary line per run
                      ui       the live UI events (message_start,
                               message_delta, tool_call_start, ...)
                      deepwork the live UI events as deepwork Events, with
                               meta.seq, meta.ts, and source = the session
    --sse           With --emit deepwork: frame each Event as an SSE event
    --progress      Show progress on stderr (default: on when stderr is a
                    terminal and FILE is a file)
    --no-progress   Never show progress
    -q, --quiet     Do not describe skipped lines on stderr (they are still
                    in the output as `bad_line` anomalies)
    -h, --help      Print this help

OUTPUT (--emit records), one JSON object per line, `type` first:
    {\"type\":\"round\",\"run\":0,\"index\":0,\"closed_by\":\"tools_done\",\"message\":...,
     \"thought\":...,\"tool_calls\":[{\"id\",\"title\",\"arguments\",\"result\":{...}}],...}
    {\"type\":\"stitch\",\"run\":0,\"round\":0,\"id\":\"t1\",\"result\":{...}}
    {\"type\":\"anomaly\",\"run\":0,\"kind\":\"undeclared_terminal\",\"id\":\"t9\",\"detail\":...}
    {\"type\":\"summary\",\"run\":0,\"rounds\":3,\"tool_calls\":5,...}

EXIT STATUS:
    0   done (bad lines are reported and skipped, never fatal)
    1   the input could not be read or the output could not be written
    2   usage error (unknown option, missing file name, ...)

EXAMPLES:
    roundup replay examples/session.ops.jsonl
    roundup replay --emit ui examples/session.ops.jsonl
    roundup replay --from acp tests/fixtures/acp/bash-error.jsonl
    some-agent --stream | roundup replay -
";

/// A command line that cannot be run; exit status 2.
#[derive(Debug)]
struct Usage(String);

#[derive(Debug, PartialEq, Eq)]
enum Command {
    Help,
    Version,
    Replay(ReplayArgs),
}

#[derive(Debug, PartialEq, Eq)]
struct ReplayArgs {
    file: Option<String>,
    from: Format,
    emit: Emit,
    progress: Option<bool>,
    quiet: bool,
}

fn parse_args(args: &[String]) -> Result<Command, Usage> {
    let mut args = args.iter();
    match args.next().map(String::as_str) {
        None => Err(Usage("no command given; try `roundup replay FILE`".into())),
        Some("-h" | "--help" | "help") => Ok(Command::Help),
        Some("-V" | "--version") => Ok(Command::Version),
        Some("replay") => {
            let mut replay =
                ReplayArgs { file: None, from: Format::Auto, emit: Emit::Records, progress: None, quiet: false };
            let mut sse = false;
            while let Some(arg) = args.next() {
                let mut value = |name: &str| args.next().cloned().ok_or_else(|| Usage(format!("{name} needs a value")));
                match arg.as_str() {
                    "-h" | "--help" => return Ok(Command::Help),
                    "--from" => {
                        let name = value("--from")?;
                        replay.from = Format::parse(&name).ok_or_else(|| {
                            Usage(format!("unknown --from format {name:?}; known: {}", Format::NAMES))
                        })?;
                    }
                    "--emit" => {
                        replay.emit = match value("--emit")?.as_str() {
                            "records" => Emit::Records,
                            "ui" => Emit::Ui,
                            "deepwork" => Emit::Deepwork { sse: false },
                            other => {
                                return Err(Usage(format!("unknown --emit {other:?}; known: records, ui, deepwork")))
                            }
                        }
                    }
                    "--sse" => sse = true,
                    "--progress" => replay.progress = Some(true),
                    "--no-progress" => replay.progress = Some(false),
                    "-q" | "--quiet" => replay.quiet = true,
                    "-" => set_file(&mut replay, arg)?,
                    flag if flag.starts_with('-') => return Err(Usage(format!("unknown option {flag:?}"))),
                    _ => set_file(&mut replay, arg)?,
                }
            }
            if sse {
                match replay.emit {
                    Emit::Deepwork { .. } => replay.emit = Emit::Deepwork { sse: true },
                    _ => return Err(Usage("--sse goes with --emit deepwork".into())),
                }
            }
            Ok(Command::Replay(replay))
        }
        Some(other) => Err(Usage(format!("unknown command {other:?}; the command is `replay`"))),
    }
}

fn set_file(replay: &mut ReplayArgs, file: &str) -> Result<(), Usage> {
    if let Some(first) = &replay.file {
        return Err(Usage(format!("one input only (got {first:?} and {file:?})")));
    }
    replay.file = Some(file.to_owned());
    Ok(())
}

/// Reports skipped lines and progress on stderr.
struct Stderr {
    quiet: bool,
    total_bytes: Option<u64>,
    progress: bool,
}

impl ReplayObserver for Stderr {
    fn bad_line(&mut self, line: u64, error: &BadLine) {
        if !self.quiet {
            eprintln!("roundup: line {line}: {} (skipped, reported as bad_line)", error.reason);
        }
    }

    fn progress(&mut self, bytes: u64, lines: u64) {
        if !self.progress {
            return;
        }
        let mb = bytes as f64 / 1e6;
        match self.total_bytes {
            Some(total) if total > 0 => {
                let percent = (bytes as f64 / total as f64 * 100.0).min(100.0);
                eprint!("\rroundup: {mb:.0} MB of {:.0} MB ({percent:.0}%), {lines} lines", total as f64 / 1e6)
            }
            _ => eprint!("\rroundup: {mb:.0} MB, {lines} lines"),
        }
    }
}

fn run_replay(args: ReplayArgs) -> Result<(), ReplayError> {
    let stdout = io::stdout().lock();
    let output = io::BufWriter::with_capacity(1 << 16, stdout);
    let (input, total_bytes): (Box<dyn io::BufRead>, Option<u64>) = match args.file.as_deref() {
        None | Some("-") => (Box::new(io::stdin().lock()), None),
        Some(path) => {
            let file = File::open(path).map_err(|e| ReplayError::Read(named(e, path)))?;
            let size = file.metadata().ok().map(|m| m.len());
            (Box::new(BufReader::with_capacity(1 << 16, file)), size)
        }
    };
    let progress = args.progress.unwrap_or(total_bytes.is_some() && io::stderr().is_terminal());
    let mut observer = Stderr { quiet: args.quiet, total_bytes, progress };
    let result = replay(input, output, args.from, args.emit, &mut observer);
    if let (true, Ok(stats)) = (progress, &result) {
        eprintln!(
            "\rroundup: done, {:.0} MB, {} lines ({} skipped), {} sessions",
            stats.bytes as f64 / 1e6,
            stats.lines,
            stats.bad_lines,
            stats.sessions
        );
    } else if progress {
        eprintln!();
    }
    result.map(|_| ())
}

fn named(error: io::Error, path: &str) -> io::Error {
    io::Error::new(error.kind(), format!("{path}: {error}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Err(Usage(message)) => {
            eprintln!("roundup: {message}\n\nUsage: roundup replay [--from auto|ops|acp] [--emit records|ui|deepwork [--sse]] [FILE|-]\nMore: roundup --help");
            ExitCode::from(2)
        }
        Ok(Command::Help) => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("roundup {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Replay(replay)) => match run_replay(replay) {
            Ok(()) => ExitCode::SUCCESS,
            Err(ReplayError::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(1),
            Err(error) => {
                let _ = io::stdout().flush();
                eprintln!("roundup: {error}");
                ExitCode::from(1)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Command, Usage> {
        parse_args(&line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn replay_arguments_are_read() {
        let Ok(Command::Replay(args)) = parse("replay --from ops --emit ui -q trace.jsonl") else { panic!() };
        let expected = ReplayArgs {
            file: Some("trace.jsonl".into()),
            from: Format::Ops,
            emit: Emit::Ui,
            progress: None,
            quiet: true,
        };
        assert_eq!(args, expected);
    }

    #[test]
    fn usage_errors_name_the_problem() {
        let message = |line: &str| match parse(line) {
            Err(Usage(m)) => m,
            Ok(c) => panic!("{line:?} parsed as {c:?}"),
        };
        assert!(message("").contains("no command"));
        assert!(message("frobnicate").contains("\"frobnicate\""));
        assert!(message("replay --from acp2").contains("\"acp2\""));
        assert!(message("replay --emit").contains("--emit needs a value"));
        assert!(message("replay a b").contains("one input only"));
        assert!(message("replay --bogus").contains("\"--bogus\""));
    }

    #[test]
    fn help_is_reachable_from_replay() {
        assert_eq!(parse("replay --help").ok(), Some(Command::Help));
        assert_eq!(parse("--version").ok(), Some(Command::Version));
    }
}
