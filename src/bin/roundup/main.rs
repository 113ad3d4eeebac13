//! The `roundup` command line: a thin layer over the library's replay.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use roundup::adapters::{self, InputFormat};
use roundup::encoders::{self, Framing, OutputFormat};
use roundup::{replay, BadLine, ReplayError, ReplayObserver, ReplayOptions, ReplayStats};

mod input;

use input::{FileInput, Interruptible, Signals};

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
    roundup export --to openai-chat|openai-responses|anthropic [--from ...] [FILE|-]
    roundup --help | --version

COMMANDS:
    replay    Replay a recorded stream from FILE (or `-`, or nothing: stdin)
              and print JSON lines on stdout.
    export    The same, each run (when it finishes) as the history the next
              request to a provider sends: `replay --emit` with a history
              format, every tool call paired with its result.

OPTIONS for replay:
    --from FORMAT   The input format [default: auto]
{from}
                    Raw JSON lines and SSE framing (data: lines, events
                    separated by a blank line) are both accepted.
    --emit FORMAT   What to print [default: {default_emit}]
{emit}
    --sse           Frame every output value as an SSE event (data: ...
                    and a blank line) instead of a line
    --max-sessions N
                    Keep at most N sessions in memory; the least recently
                    used are evicted as checkpoints and restored when their
                    next line comes (the output is the same)
    --evict-dir DIR With --max-sessions: evict into files of DIR (memory
                    then stays bounded however many sessions there are);
                    without it, evicted sessions are kept in memory, compact
    --max-line-bytes SIZE
                    A line longer than SIZE (bytes, or with K, M, G) is read
                    past without holding it, and reported as a bad_line
                    [default: 256M]
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

LIVE USE:
    Output is flushed as soon as the input runs dry, so a line's output
    appears while the agent is still streaming. Ctrl-C (or SIGTERM) stops
    reading, finishes the open runs as interrupted, writes their summaries
    and exits; a second Ctrl-C exits at once. A closed output pipe (| head)
    ends the replay quietly. Options also take `--name=value`.

EXIT STATUS:
    0   done (bad lines are reported and skipped, never fatal), or the
        output pipe was closed
    1   the input could not be read, the output could not be written, or
        no line of the input could be read (stderr names the format it
        looks like)
    2   usage error (unknown option, missing file name, ...)
    130 stopped by SIGINT (Ctrl-C), 143 by SIGTERM, after the summaries

EXAMPLES:
    roundup replay examples/session.ops.jsonl
    roundup replay --emit ui examples/session.ops.jsonl
    roundup replay --from acp tests/fixtures/acp/bash-error.jsonl
    some-agent --stream | roundup replay -
    roundup replay --emit agui --sse session.jsonl    # AG-UI events for a web UI
    roundup export --to anthropic session.jsonl       # each run as the history the next
                                                      # request sends (= replay --emit)
",
        usage = usage(),
        from = choices(
            std::iter::once(("auto", "decided from the first event some format recognises"))
                .chain(adapters::REGISTRY.iter().map(|format| (format.name(), format.about())))
        ),
        default_emit = OutputFormat::default_format().name(),
        emit = choices(encoders::REGISTRY.iter().map(|format| (format.name(), format.about()))),
    )
}

/// The history formats `export --to` takes: the encoders named like the
/// provider formats.
fn history_names() -> &'static str {
    "openai-chat|openai-responses|anthropic"
}

/// The usage line, naming every format.
fn usage() -> String {
    let names = |names: &mut dyn Iterator<Item = &'static str>| names.collect::<Vec<_>>().join("|");
    format!(
        "roundup replay [--from {}] [--emit {}] [--sse] [--max-sessions N [--evict-dir DIR]] [--max-line-bytes SIZE] [FILE|-]",
        names(&mut std::iter::once("auto").chain(adapters::REGISTRY.iter().map(|f| f.name()))),
        names(&mut encoders::REGISTRY.iter().map(|f| f.name())),
    )
}

/// A list of choices for `--help`: each name, then its text, indented.
fn choices<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    const NAME_AT: usize = 22;
    let items: Vec<(&str, &str)> = items.collect();
    // The descriptions start two columns after the longest name.
    let text_at = NAME_AT + items.iter().map(|(name, _)| name.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for (name, about) in items {
        let mut lines = about.lines();
        let first = lines.next().unwrap_or_default();
        let pad = text_at - NAME_AT - name.len();
        out.push_str(&format!("{:NAME_AT$}{name}{:pad$}{first}\n", "", ""));
        for line in lines {
            out.push_str(&format!("{:text_at$}{line}\n", ""));
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
    // `--from=acp` reads as `--from acp`; a flag that takes no value
    // refuses one (`--sse=true` is not `--sse` and a file named `true`).
    if let Some((flag, _)) = args
        .iter()
        .filter_map(|arg| arg.split_once('='))
        .find(|(name, _)| ["--sse", "--progress", "--no-progress", "--quiet", "--help", "--version"].contains(name))
    {
        return Err(Usage(format!("{flag} takes no value")));
    }
    let args: Vec<String> = args
        .iter()
        .flat_map(|arg| match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => vec![name.to_owned(), value.to_owned()],
            _ => vec![arg.clone()],
        })
        .collect();
    // `export --to FORMAT` is `replay --emit FORMAT` for the history formats,
    // under the name their users look for.
    let exporting = args.first().map(String::as_str) == Some("export");
    if exporting && !args.iter().any(|arg| arg == "--to" || arg == "-h" || arg == "--help") {
        return Err(Usage(format!("export needs --to {}", history_names())));
    }
    let args: Vec<String> = args
        .into_iter()
        .enumerate()
        .map(|(at, arg)| if exporting && at == 0 { "replay".to_owned() } else { arg })
        .collect();
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
                    "--to" if exporting => replay.options.to = history_format(&value("--to")?)?,
                    "--emit" if exporting => {
                        return Err(Usage(format!(
                            "export writes histories: it takes --to {}, not --emit (that is replay's)",
                            history_names()
                        )))
                    }
                    "--emit" => replay.options.to = output_format(&value("--emit")?)?,
                    "--sse" => replay.options.framing = Framing::Sse,
                    "--max-sessions" => {
                        let text = value("--max-sessions")?;
                        let keep = text.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| {
                            Usage(format!("--max-sessions takes a number of sessions above 0, not {text:?}"))
                        })?;
                        replay.options.max_open_sessions = Some(keep);
                    }
                    "--evict-dir" => replay.options.evict_dir = Some(value("--evict-dir")?.into()),
                    "--max-line-bytes" => {
                        let text = value("--max-line-bytes")?;
                        replay.options.max_line_bytes = size(&text).ok_or_else(|| {
                            Usage(format!(
                                "--max-line-bytes takes a size above 0 (1048576, 64K, 256M, 1G), not {text:?}"
                            ))
                        })?;
                    }
                    "--progress" => replay.progress = Some(true),
                    "--no-progress" => replay.progress = Some(false),
                    "-q" | "--quiet" => replay.quiet = true,
                    // Everything after `--` is a file, even one named `-x`.
                    "--" => {
                        for file in args.by_ref() {
                            set_file(&mut replay, file)?;
                        }
                    }
                    "-" => set_file(&mut replay, arg)?,
                    flag if flag.starts_with('-') => return Err(Usage(format!("unknown option {flag:?}"))),
                    _ => set_file(&mut replay, arg)?,
                }
            }
            if replay.options.evict_dir.is_some() && replay.options.max_open_sessions.is_none() {
                return Err(Usage("--evict-dir goes with --max-sessions N".into()));
            }
            Ok(Command::Replay(replay))
        }
        Some(other) => Err(Usage(format!("unknown command {other:?}; the commands are `replay` and `export`"))),
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

/// The history format of an `export --to` name: only the provider
/// histories, and an error naming what was typed otherwise.
fn history_format(name: &str) -> Result<&'static OutputFormat, Usage> {
    match OutputFormat::named(name) {
        Some(format) if history_names().split('|').any(|history| history == name) => Ok(format),
        _ => Err(Usage(format!(
            "unknown --to format {name:?}; export writes the histories {}",
            history_names().replace('|', ", ")
        ))),
    }
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
    bad_lines: u64,
}

/// Bad lines described on stderr; the rest are counted (all are in the
/// output as `bad_line` anomalies).
const DESCRIBED_BAD_LINES: u64 = 20;

impl ReplayObserver for Stderr {
    fn bad_line(&mut self, line: u64, error: &BadLine) {
        self.bad_lines += 1;
        if !self.quiet && self.bad_lines <= DESCRIBED_BAD_LINES {
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

/// How a replay ended, for the exit status.
enum Ended {
    /// All input read: 0, or 1 when no line of it could be read.
    Done { all_bad: bool },
    /// A signal stopped the input: 130 or 143.
    Signal(u8),
}

fn run_replay(args: ReplayArgs) -> Result<Ended, ReplayError> {
    let signals = Signals::catch().map_err(ReplayError::Read)?;
    let stdout = io::stdout().lock();
    let output = io::BufWriter::with_capacity(1 << 16, stdout);
    let (input, total_bytes): (Box<dyn io::BufRead>, _) = match args.file.as_deref() {
        None | Some("-") => {
            if io::stdin().is_terminal() {
                eprintln!("roundup: reading stdin from the terminal; end the input with Ctrl-D, or name a FILE");
            }
            (Box::new(Interruptible::new(io::stdin(), signals.clone())), None)
        }
        Some(path) => {
            let file = File::open(path).map_err(|e| ReplayError::Read(named(e, path)))?;
            let metadata = file.metadata().ok();
            if metadata.as_ref().is_some_and(|m| m.is_dir()) {
                let error = io::Error::new(io::ErrorKind::InvalidInput, "a directory, not a file");
                return Err(ReplayError::Read(named(error, path)));
            }
            let size = metadata.map(|m| m.len());
            (Box::new(FileInput::new(file, signals.clone())), size)
        }
    };
    let progress = args.progress.unwrap_or(total_bytes.is_some() && io::stderr().is_terminal());
    let mut observer = Stderr { quiet: args.quiet, total_bytes, progress, bad_lines: 0 };
    let result = replay(input, output, &args.options, &mut observer);
    if !args.quiet && observer.bad_lines > DESCRIBED_BAD_LINES {
        let more = observer.bad_lines - DESCRIBED_BAD_LINES;
        eprintln!("roundup: {more} more bad lines not described (all are in the output as bad_line anomalies)");
    }
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
    let stats = result?;
    if let Some(status) = signals.exit_status() {
        return Ok(Ended::Signal(status));
    }
    let all_bad = stats.payloads > 0 && stats.bad_lines == stats.payloads;
    if let Some(hint) = bad_input_hint(&stats, args.options.from) {
        eprintln!("roundup: {hint}");
    }
    Ok(Ended::Done { all_bad })
}

/// A size in bytes: a number, or one with a `K`, `M` or `G` suffix (powers
/// of 1024); `None` for zero or anything else.
fn size(text: &str) -> Option<usize> {
    let (digits, unit) = match text.char_indices().last()? {
        (at, 'k' | 'K') => (&text[..at], 1 << 10),
        (at, 'm' | 'M') => (&text[..at], 1 << 20),
        (at, 'g' | 'G') => (&text[..at], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit).filter(|&n| n > 0)
}

/// What to say when no payload, or nearly none (nine in ten bad), could be
/// read: the format the bad ones look like, when they look like one.
fn bad_input_hint(stats: &ReplayStats, from: Option<&'static InputFormat>) -> Option<String> {
    let (bad, payloads) = (stats.bad_lines, stats.payloads);
    if payloads == 0 || bad.saturating_mul(10) < payloads.saturating_mul(9) {
        return None;
    }
    let read_as = stats.format.or(from).map_or("any format", InputFormat::name);
    let how_many = if bad == payloads { "no line".to_owned() } else { format!("{bad} of {payloads} lines") };
    let could = if bad == payloads { "could be read" } else { "could not be read" };
    Some(match stats.bad_lines_look_like {
        Some(format) if Some(format) != stats.format => {
            format!("{how_many} of the input {could} as {read_as}; it looks like {0}: try --from {0}", format.name())
        }
        _ => {
            let known: Vec<&str> = adapters::REGISTRY.iter().map(|f| f.name()).collect();
            format!("{how_many} of the input {could} as {read_as} (formats: {})", known.join(", "))
        }
    })
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
            Ok(Ended::Done { all_bad: false }) => ExitCode::SUCCESS,
            Ok(Ended::Done { all_bad: true }) => ExitCode::from(1),
            Ok(Ended::Signal(status)) => ExitCode::from(status),
            // The reader went away (`| head`): done, as ripgrep does.
            Err(ReplayError::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
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
    fn export_reads_a_history_format() {
        let Ok(Command::Replay(args)) = parse("export --to anthropic s.jsonl") else { panic!() };
        assert_eq!(args.options.to.name(), "anthropic");
    }

    #[test]
    fn usage_errors_name_the_problem() {
        let message = |line: &str| match parse(line) {
            Err(Usage(m)) => m,
            Ok(c) => panic!("{line:?} parsed as {c:?}"),
        };
        assert!(message("").contains("no command"));
        assert!(message("frobnicate").contains("\"frobnicate\""));
        assert!(message("frobnicate").contains("`replay` and `export`"));
        // export takes the history formats only, and names what was typed.
        assert!(message("export --to bogus x").contains("unknown --to format \"bogus\""));
        assert!(message("export --to ui x").contains("unknown --to format \"ui\""));
        assert!(message("export --to records x").contains("openai-chat, openai-responses, anthropic"));
        assert!(message("export --to anthropic --emit ui x").contains("not --emit"));
        assert!(message("replay --to anthropic x").contains("unknown option \"--to\""));
        assert_eq!(message("replay --sse=true x"), "--sse takes no value");
        assert!(message("replay --from acp2").contains("\"acp2\""));
        assert!(message("replay --emit").contains("--emit needs a value"));
        assert!(message("replay a b").contains("one input only"));
        assert!(message("replay --bogus").contains("\"--bogus\""));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let Ok(Command::Replay(args)) = parse("replay -q -- -odd-name.jsonl") else { panic!() };
        assert_eq!(args.file.as_deref(), Some("-odd-name.jsonl"));
    }

    #[test]
    fn help_is_reachable_from_replay() {
        assert_eq!(parse("replay --help").ok(), Some(Command::Help));
        assert_eq!(parse("--version").ok(), Some(Command::Version));
    }
}
