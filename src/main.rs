//! The `roundup` command line: a thin layer over the library's replay.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::process::ExitCode;

use roundup::adapters::{self, InputFormat};
use roundup::encoders::{self, Framing, OutputFormat};
use roundup::{replay, BadLine, ReplayError, ReplayObserver, ReplayOptions};

/// The help text; the format lists come from the registries.
fn help() -> String {
    format!(
        "\
roundup: turn an AI agent's chunk stream into rounds

An agent streams text deltas, reasoning deltas, tool calls, argument deltas
and snapshots, tool results and token gauges. roundup aggregates them into
rounds (one assistant turn: its text, its reasoning, its tool calls with their
final arguments and exactly one result each) and reports whatever the stream
did that could not be applied (late, duplicate or undeclared results, calls
after the run finished, lines that do not parse).

USAGE:
    {usage}
    roundup --help | --version

COMMANDS:
    replay    Replay a recorded stream from FILE (or `-`, or nothing: stdin)
              and print JSON lines on stdout.

OPTIONS for replay:
    --from FORMAT   The input format [default: auto]
{from}
                    Raw JSON lines and SSE framing (data: lines, events
                    separated by a blank line) are both accepted.
    --emit FORMAT   What to print [default: {default_emit}]
{emit}
    --sse           Frame every output value as an SSE event (data: ...
                    and a blank line) instead of a line
    --progress      Show progress on stderr (default: on when stderr is a
                    terminal and FILE is a file)
    --no-progress   Never show progress
    -q, --quiet     Do not describe skipped lines on stderr (they are still
                    in the output as `bad_line` anomalies)
    -h, --help      Print this help

OUTPUT (--emit records), one JSON object per line, `type` first:
    {{\"type\":\"round\",\"run\":0,\"index\":0,\"closed_by\":\"tools_done\",\"message\":...,
     \"thought\":...,\"tool_calls\":[{{\"id\",\"title\",\"arguments\",\"result\":{{...}}}}],...}}
    {{\"type\":\"stitch\",\"run\":0,\"round\":0,\"id\":\"t1\",\"result\":{{...}}}}
    {{\"type\":\"anomaly\",\"run\":0,\"kind\":\"undeclared_terminal\",\"id\":\"t9\",\"detail\":...}}
    {{\"type\":\"summary\",\"run\":0,\"rounds\":3,\"tool_calls\":5,...}}

EXIT STATUS:
    0   done (bad lines are reported and skipped, never fatal)
    1   the input could not be read or the output could not be written
    2   usage error (unknown option, missing file name, ...)

EXAMPLES:
    roundup replay examples/session.ops.jsonl
    roundup replay --emit ui examples/session.ops.jsonl
    roundup replay --from acp tests/fixtures/acp/bash-error.jsonl
    some-agent --stream | roundup replay -
",
        usage = usage(),
        from = choices(
            std::iter::once(("auto", "decided from the first event"))
                .chain(adapters::REGISTRY.iter().map(|format| (format.name(), format.about())))
        ),
        default_emit = OutputFormat::default_format().name(),
        emit = choices(encoders::REGISTRY.iter().map(|format| (format.name(), format.about()))),
    )
}

/// The usage line, naming every format.
fn usage() -> String {
    let names = |names: &mut dyn Iterator<Item = &'static str>| names.collect::<Vec<_>>().join("|");
    format!(
        "roundup replay [--from {}] [--emit {}] [--sse] [FILE|-]",
        names(&mut std::iter::once("auto").chain(adapters::REGISTRY.iter().map(|f| f.name()))),
        names(&mut encoders::REGISTRY.iter().map(|f| f.name())),
    )
}

/// A list of choices for `--help`: each name, then its text, indented.
fn choices<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    const NAME_AT: usize = 22;
    const TEXT_AT: usize = 32;
    let mut out = String::new();
    for (name, about) in items {
        let mut lines = about.lines();
        let first = lines.next().unwrap_or_default();
        let pad = TEXT_AT.saturating_sub(NAME_AT + name.len()).max(1);
        out.push_str(&format!("{:NAME_AT$}{name}{:pad$}{first}\n", "", ""));
        for line in lines {
            out.push_str(&format!("{:TEXT_AT$}{line}\n", ""));
        }
    }
    out.truncate(out.trim_end().len());
    out
}

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
    options: ReplayOptions,
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
            let mut replay = ReplayArgs { file: None, options: ReplayOptions::new(), progress: None, quiet: false };
            while let Some(arg) = args.next() {
                let mut value = |name: &str| args.next().cloned().ok_or_else(|| Usage(format!("{name} needs a value")));
                match arg.as_str() {
                    "-h" | "--help" => return Ok(Command::Help),
                    "--from" => replay.options.from = input_format(&value("--from")?)?,
                    "--emit" => replay.options.to = output_format(&value("--emit")?)?,
                    "--sse" => replay.options.framing = Framing::Sse,
                    "--progress" => replay.progress = Some(true),
                    "--no-progress" => replay.progress = Some(false),
                    "-q" | "--quiet" => replay.quiet = true,
                    "-" => set_file(&mut replay, arg)?,
                    flag if flag.starts_with('-') => return Err(Usage(format!("unknown option {flag:?}"))),
                    _ => set_file(&mut replay, arg)?,
                }
            }
            Ok(Command::Replay(replay))
        }
        Some(other) => Err(Usage(format!("unknown command {other:?}; the command is `replay`"))),
    }
}

/// The input format of a `--from` name (`None` for `auto`).
fn input_format(name: &str) -> Result<Option<&'static InputFormat>, Usage> {
    if name == "auto" {
        return Ok(None);
    }
    InputFormat::named(name).map(Some).ok_or_else(|| {
        let known: Vec<&str> = adapters::REGISTRY.iter().map(|f| f.name()).collect();
        Usage(format!("unknown --from format {name:?}; known: auto, {}", known.join(", ")))
    })
}

/// The output format of an `--emit` name.
fn output_format(name: &str) -> Result<&'static OutputFormat, Usage> {
    OutputFormat::named(name).ok_or_else(|| {
        let known: Vec<&str> = encoders::REGISTRY.iter().map(|f| f.name()).collect();
        Usage(format!("unknown --emit format {name:?}; known: {}", known.join(", ")))
    })
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
    let result = replay(input, output, &args.options, &mut observer);
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

/// An error and its sources, as one line: `cannot read the input: a.jsonl:
/// No such file or directory`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn named(error: io::Error, path: &str) -> io::Error {
    io::Error::new(error.kind(), format!("{path}: {error}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Err(Usage(message)) => {
            eprintln!("roundup: {message}\n\nUsage: {}\nMore: roundup --help", usage());
            ExitCode::from(2)
        }
        Ok(Command::Help) => {
            print!("{}", help());
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
                eprintln!("roundup: {}", chain(&error));
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
            options: ReplayOptions::new().from(&adapters::ops::FORMAT).to(&encoders::ui::FORMAT),
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
