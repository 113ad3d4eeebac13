//! The `roundup` command line: a thin layer over the library's replay.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use roundup::adapters::{self, InputFormat};
use roundup::encoders::{self, Framing};
use roundup::{replay, BadLine, ReplayError, ReplayObserver, ReplayOptions, ReplayStats};

mod args;
mod color;
mod compressed;
mod filter;
mod folder;
mod ingest;
mod input;
#[cfg(feature = "otlp-http")]
mod otlp_http;
mod stats;

use args::{Cli, Command, InputArgs};
use filter::{Filter, Filtered};
use input::{FileInput, Interruptible, Signals};

/// One replay of the command line: its inputs, options and what to do
/// with the output.
#[derive(Debug)]
struct ReplayArgs {
    files: Vec<String>,
    options: ReplayOptions,
    progress: Option<bool>,
    quiet: bool,
    filter: Filter,
    /// Where `export --to otlp --endpoint` sends the traces.
    #[cfg(feature = "otlp-http")]
    endpoint: Option<otlp_http::Endpoint>,
}

impl ReplayArgs {
    fn new(input: InputArgs, to: &'static encoders::OutputFormat, types: Vec<String>) -> ReplayArgs {
        let mut options = ReplayOptions::new();
        options.from = args::input_format(&input.from);
        options.to = to;
        if input.sse {
            options.framing = Framing::Sse;
        }
        options.max_open_sessions = input.max_sessions.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        options.evict_dir = input.evict_dir;
        options.max_line_bytes = input.line.max_line_bytes;
        let progress = input.progress.asked();
        let sessions = input.session.into_iter().map(|name| Some(name).filter(|name| name != "-")).collect();
        let color = match input.color.as_str() {
            "always" => true,
            "never" => false,
            _ => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty()),
        };
        let filter = Filter { sessions, types, pretty: input.pretty, color };
        ReplayArgs {
            files: input.files,
            options,
            progress,
            quiet: input.quiet,
            filter,
            #[cfg(feature = "otlp-http")]
            endpoint: None,
        }
    }
}

/// Reports skipped lines and progress on stderr.
struct Stderr<'a> {
    quiet: bool,
    /// The input's name, when there are several (messages then say which).
    source: Option<&'a str>,
    total_bytes: Option<u64>,
    progress: bool,
    /// stderr is a terminal: progress rewrites one line; otherwise (a log
    /// file) each update is a line of its own.
    terminal: bool,
    bad_lines: u64,
}

/// Bad lines described on stderr; the rest are counted (all are in the
/// output as `bad_line` anomalies).
const DESCRIBED_BAD_LINES: u64 = 20;

impl Stderr<'_> {
    fn prefix(&self) -> String {
        self.source.map_or_else(|| "roundup: ".to_owned(), |source| format!("roundup: {source}: "))
    }
}

impl ReplayObserver for Stderr<'_> {
    fn bad_line(&mut self, line: u64, error: &BadLine) {
        self.bad_lines += 1;
        if !self.quiet && self.bad_lines <= DESCRIBED_BAD_LINES {
            eprintln!("{}line {line}: {} (skipped, reported as bad_line)", self.prefix(), error.reason);
        }
    }

    fn progress(&mut self, bytes: u64, lines: u64) {
        if !self.progress {
            return;
        }
        let mb = bytes as f64 / 1e6;
        let text = match self.total_bytes {
            Some(total) if total > 0 => {
                let percent = (bytes as f64 / total as f64 * 100.0).min(100.0);
                format!("{mb:.0} MB of {:.0} MB ({percent:.0}%), {lines} lines", total as f64 / 1e6)
            }
            _ => format!("{mb:.0} MB, {lines} lines"),
        };
        if self.terminal {
            eprint!("\r{}{text}", self.prefix());
        } else {
            eprintln!("{}{text}", self.prefix());
        }
    }
}

/// How a replay ended, for the exit status.
enum Ended {
    /// All input read: 0, or 1 when no line of an input could be read.
    Done { all_bad: bool },
    /// A signal stopped the input: 130 or 143.
    Signal(u8),
}

fn run_replay(mut args: ReplayArgs) -> Result<Ended, ReplayError> {
    let signals = Signals::catch().map_err(ReplayError::Read)?;
    let stdout = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    // `export --to otlp --endpoint`: the traces are sent, not printed.
    #[cfg(feature = "otlp-http")]
    let sent = args.endpoint.take().map(|endpoint| Box::new(otlp_http::Exporter::new(endpoint)) as Box<dyn Write>);
    #[cfg(not(feature = "otlp-http"))]
    let sent: Option<Box<dyn Write>> = None;
    let mut output: Box<dyn Write> = if let Some(sent) = sent {
        sent
    } else if args.filter.is_active() {
        Box::new(Filtered::new(stdout, std::mem::take(&mut args.filter)))
    } else {
        Box::new(stdout)
    };
    let given = if args.files.is_empty() { vec!["-".to_owned()] } else { args.files.clone() };
    // A folder is the recordings under it, each an input of its own (with
    // its companions after it).
    let mut files = Vec::with_capacity(given.len());
    for file in given {
        let path = std::path::Path::new(&file);
        if file != "-" && path.is_dir() {
            let found = folder::recordings(path).map_err(|e| ReplayError::Read(named(e, &file)))?;
            files.extend(found.into_iter().map(|found| (found.path.to_string_lossy().into_owned(), found.companions)));
        } else {
            files.push((file, Vec::new()));
        }
    }
    let several = files.len() > 1;
    let mut all_bad = false;
    for (file, companions) in &files {
        let source = several.then_some(file.as_str());
        match replay_one(file, companions, source, &args, &signals, &mut output)? {
            Ended::Done { all_bad: bad } => all_bad |= bad,
            signal @ Ended::Signal(_) => return Ok(signal),
        }
    }
    output.flush().map_err(ReplayError::Write)?;
    Ok(Ended::Done { all_bad })
}

/// Replays one input onto `output`: `file`, then its `companions` (a
/// folder's recordings that belong to it) as one input.
fn replay_one(
    file: &str,
    companions: &[std::path::PathBuf],
    source: Option<&str>,
    args: &ReplayArgs,
    signals: &Signals,
    output: &mut dyn Write,
) -> Result<Ended, ReplayError> {
    let (input, total_bytes, compressed) = match file {
        "-" => {
            if io::stdin().is_terminal() {
                eprintln!("roundup: reading stdin from the terminal; end the input with Ctrl-D, or name a FILE");
            }
            let input = Box::new(Interruptible::new(io::stdin(), signals.clone()));
            let (input, compression) =
                compressed::decompressed(input, file).map_err(|e| ReplayError::Read(named(e, file)))?;
            (input, None, compression.is_some())
        }
        path => open_file(path, signals).map_err(ReplayError::Read)?,
    };
    let is_file = total_bytes.is_some();
    // A compressed file's size says nothing of how much there is to read.
    let mut total_bytes = total_bytes.filter(|_| !compressed);
    let input: Box<dyn io::BufRead> = if companions.is_empty() {
        input
    } else {
        for companion in companions {
            let size = std::fs::metadata(companion).ok().map(|m| m.len());
            let compressed = companion.extension().is_some_and(|e| e == "gz" || e == "zst");
            total_bytes = total_bytes.zip(size.filter(|_| !compressed)).map(|(a, b)| a.saturating_add(b));
        }
        let signals = signals.clone();
        let open = move |path: &std::path::Path| open_file(&path.to_string_lossy(), &signals).map(|(input, ..)| input);
        Box::new(io::BufReader::with_capacity(1 << 16, folder::Chain::new(input, companions.to_vec(), open)))
    };
    let terminal = io::stderr().is_terminal();
    let progress = args.progress.unwrap_or(is_file && terminal);
    let mut observer = Stderr { quiet: args.quiet, source, total_bytes, progress, terminal, bad_lines: 0 };
    let result = replay(input, &mut *output, &args.options, &mut observer);
    let prefix = observer.prefix();
    if !args.quiet && observer.bad_lines > DESCRIBED_BAD_LINES {
        let more = observer.bad_lines - DESCRIBED_BAD_LINES;
        eprintln!("{prefix}{more} more bad lines not described (all are in the output as bad_line anomalies)");
    }
    let back = if terminal { "\r" } else { "" };
    if let (true, Ok(stats)) = (progress, &result) {
        eprintln!(
            "{back}{prefix}done, {:.0} MB, {} lines ({} skipped), {} sessions",
            stats.bytes as f64 / 1e6,
            stats.lines,
            stats.bad_lines,
            stats.sessions
        );
    } else if progress && terminal {
        eprintln!();
    }
    let stats = result?;
    if let Some(status) = signals.exit_status() {
        return Ok(Ended::Signal(status));
    }
    let all_bad = stats.payloads > 0 && stats.bad_lines == stats.payloads;
    if let Some(hint) = bad_input_hint(&stats, args.options.from).or_else(|| unknown_events_hint(&stats)) {
        eprintln!("{prefix}{hint}");
    }
    Ok(Ended::Done { all_bad })
}

/// A file to replay, decompressed when it is compressed; its size, and
/// whether it was compressed. Errors name it.
fn open_file(path: &str, signals: &Signals) -> io::Result<(Box<dyn io::BufRead>, Option<u64>, bool)> {
    let file = File::open(path).map_err(|e| named(e, path))?;
    let metadata = file.metadata().ok();
    if metadata.as_ref().is_some_and(|m| m.is_dir()) {
        let error = io::Error::new(io::ErrorKind::InvalidInput, "a directory, not a file");
        return Err(named(error, path));
    }
    let size = metadata.map(|m| m.len());
    let input = Box::new(FileInput::new(file, signals.clone()));
    let (input, compression) = compressed::decompressed(input, path).map_err(|e| named(e, path))?;
    Ok((input, size, compression.is_some()))
}

/// What to say when no payload, or nearly none (nine in ten bad), could be
/// read: the format the bad ones look like, when they look like one.
fn bad_input_hint(stats: &ReplayStats, from: Option<&'static InputFormat>) -> Option<String> {
    let (bad, payloads) = (stats.bad_lines, stats.payloads);
    if payloads == 0 || bad.saturating_mul(10) < payloads.saturating_mul(9) {
        return None;
    }
    // Under --from auto, input no line of which reads is not "ops" (the
    // format an undecidable input falls back to): it is no known format.
    let undecidable = from.is_none() && bad == payloads;
    let read_as =
        if undecidable { "any input format" } else { stats.format.or(from).map_or("any format", InputFormat::name) };
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

/// What to say when most events read but meant nothing to the format
/// (more than half kept as `unknown_event`): probably the wrong `--from`.
fn unknown_events_hint(stats: &ReplayStats) -> Option<String> {
    let (unknown, payloads) = (stats.unknown_events, stats.payloads);
    if payloads == 0 || unknown.saturating_mul(2) <= payloads {
        return None;
    }
    let read_as = stats.format.map_or("the input format", InputFormat::name);
    let what = format!("{unknown} of {payloads} events are unknown to {read_as} (kept as unknown_event anomalies)");
    Some(match stats.unknown_events_look_like {
        Some(format) => format!("{what}; the input looks like {0}: try --from {0}", format.name()),
        None => {
            let known: Vec<&str> = adapters::REGISTRY.iter().map(|f| f.name()).collect();
            format!("{what}; is it another format? (formats: {})", known.join(", "))
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

/// `roundup formats`: every input and output format, one line each.
fn formats() -> String {
    let mut out = String::from("Input formats (--from):\n");
    let inputs = std::iter::once(("auto", "decided from the first event some format recognises".to_owned()))
        .chain(adapters::REGISTRY.iter().map(|format| (format.name(), args::one_line(format.about()))));
    let outputs = encoders::REGISTRY.iter().map(|format| (format.name(), args::one_line(format.about())));
    let width = adapters::REGISTRY
        .iter()
        .map(|f| f.name().len())
        .chain(encoders::REGISTRY.iter().map(|f| f.name().len()))
        .max()
        .unwrap_or(0);
    for (name, about) in inputs {
        out.push_str(&format!("  {name:width$}  {about}\n"));
    }
    out.push_str("\nOutput formats (replay --emit; the histories also export --to):\n");
    for (name, about) in outputs {
        out.push_str(&format!("  {name:width$}  {about}\n"));
    }
    out
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to stdout with status 0; usage errors to
        // stderr with status 2, naming what was typed.
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let replay = match cli.command {
        Command::Formats => return print(&formats()),
        Command::Ingest(ingest) => {
            return match ingest::run(ingest) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(error) => {
                    eprintln!("roundup: {error}");
                    ExitCode::from(1)
                }
            };
        }
        Command::Stats(stats) => {
            return match stats::run(&stats) {
                Ok(text) => print(&text),
                Err(error) => {
                    eprintln!("roundup: {error}");
                    ExitCode::from(1)
                }
            };
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "roundup", &mut io::stdout());
            return ExitCode::SUCCESS;
        }
        Command::Man => {
            let mut page = Vec::new();
            if let Err(error) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
                eprintln!("roundup: cannot render the man page: {error}");
                return ExitCode::from(1);
            }
            return write_stdout(&page);
        }
        Command::Replay(replay) => {
            if !replay.types.is_empty() && replay.emit != "records" {
                let message =
                    format!("--type filters records: it goes with --emit records, not --emit {}", replay.emit);
                return usage_error(&message);
            }
            let emit = match (replay.compact, replay.emit.as_str()) {
                (false, emit) => emit,
                (true, "agui" | "agui-compact") => "agui-compact",
                (true, other) => {
                    return usage_error(&format!("--compact goes with --emit agui, not --emit {other}"));
                }
            };
            let emit = match (replay.otlp_content, emit) {
                (false, emit) => emit,
                (true, "otlp" | "otlp-content") => "otlp-content",
                (true, other) => {
                    return usage_error(&format!("--otlp-content goes with --emit otlp, not --emit {other}"));
                }
            };
            ReplayArgs::new(replay.input, args::output_format(emit), replay.types)
        }
        Command::Export(export) => {
            let to = match (export.otlp_content, export.to.as_str()) {
                (false, to) => to,
                (true, "otlp") => "otlp-content",
                (true, other) => {
                    return usage_error(&format!("--otlp-content goes with --to otlp, not --to {other}"));
                }
            };
            let replay = ReplayArgs::new(export.input, args::output_format(to), Vec::new());
            #[cfg(feature = "otlp-http")]
            let replay = match sending(replay, export.endpoint.as_deref(), &export.to) {
                Ok(replay) => replay,
                Err(message) => return usage_error(&message),
            };
            replay
        }
    };
    match run_replay(replay) {
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
    }
}

/// `export --endpoint URL`: the replay's traces go to URL (with `--to
/// otlp` only).
#[cfg(feature = "otlp-http")]
fn sending(mut replay: ReplayArgs, url: Option<&str>, to: &str) -> Result<ReplayArgs, String> {
    match (url, to) {
        (None, _) => {}
        (Some(url), "otlp") => replay.endpoint = Some(otlp_http::Endpoint::parse(url)?),
        (Some(_), other) => return Err(format!("--endpoint goes with --to otlp, not --to {other}")),
    }
    Ok(replay)
}

/// A command line that cannot be run, said as clap says its own: exit 2.
fn usage_error(message: &str) -> ExitCode {
    let error = Cli::command().error(clap::error::ErrorKind::ArgumentConflict, message);
    let _ = error.print();
    ExitCode::from(2)
}

fn print(text: &str) -> ExitCode {
    write_stdout(text.as_bytes())
}

/// Writes to stdout; a closed pipe is no error.
fn write_stdout(bytes: &[u8]) -> ExitCode {
    match io::stdout().lock().write_all(bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("roundup: cannot write the output: {error}");
            ExitCode::from(1)
        }
    }
}
