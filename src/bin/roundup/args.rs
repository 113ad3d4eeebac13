//! The command line's grammar: commands, options and their help, as clap
//! reads them. The format lists come from the registries, so a new format
//! is in `--help`, in the completions and in the man page without an edit
//! here.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand};
use roundup::adapters::{self, InputFormat};
use roundup::encoders::{self, OutputFormat};

/// roundup: turn an AI agent's chunk stream into rounds.
///
/// An agent streams text deltas, reasoning deltas, tool calls, argument
/// deltas and snapshots, tool results and token gauges. roundup aggregates
/// them into rounds (one assistant turn: its text, its reasoning, its tool
/// calls with their final arguments and exactly one result each) and
/// reports whatever the stream did that could not be applied (late,
/// duplicate or undeclared results, calls after the run finished, lines
/// that do not parse).
#[derive(Debug, Parser)]
#[command(
    name = "roundup",
    version,
    arg_required_else_help = true,
    after_long_help = EXAMPLES,
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples:
  roundup replay examples/session.ops.jsonl
  roundup replay --emit ui examples/session.ops.jsonl
  roundup replay --type round --pretty tests/fixtures/acp/bash-error.jsonl
  some-agent --stream | roundup replay -
  roundup replay --emit agui --sse session.jsonl     # AG-UI events for a web UI
  roundup export --to anthropic session.jsonl        # each run as the next request's history
  roundup formats                                    # every input and output format
  roundup completions bash > ~/.local/share/bash-completion/completions/roundup

Exit status:
  0    done (bad lines are reported and skipped, never fatal), or the output
       pipe was closed
  1    an input could not be read, the output could not be written, or no
       line of an input could be read (stderr names the format it looks like)
  2    usage error (unknown option, missing value, ...)
  130  stopped by SIGINT (Ctrl-C), 143 by SIGTERM, after the summaries";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay recorded streams and print JSON lines on stdout.
    ///
    /// Reads each FILE (or `-`, or nothing: stdin) in its format, aggregates
    /// its sessions into rounds and prints, one JSON object per line, what
    /// `--emit` names. Several files are replayed one after another, each
    /// its own source. Output is flushed as soon as the input runs dry, so
    /// a live stream's output appears while the agent is still streaming.
    /// Ctrl-C (or SIGTERM) stops reading, finishes the open runs as
    /// interrupted, writes their summaries and exits; a second Ctrl-C exits
    /// at once. A closed output pipe (`| head`) ends the replay quietly.
    #[command(after_long_help = RECORDS)]
    Replay(ReplayArgs),
    /// Replay streams and print each run, when it finishes, as the history
    /// the next request to a provider sends.
    ///
    /// The same as `replay --emit` with a history format: every tool call
    /// paired with its result, tools named as the provider's API requires.
    Export(ExportArgs),
    /// Read recordings and transcripts into a SQLite database, exactly
    /// once.
    ///
    /// Each FILE (folders: the recordings under them; `-`: stdin) is read
    /// in its format (detected per file unless --from names one) and its
    /// rounds, tool calls, stitches, anomalies and run summaries go into the
    /// database's tables (docs/store.md), each batch committed with how far
    /// the file was read. Run it again on the same paths: an unchanged file
    /// adds nothing, a file that grew (a live log) is read on from where it
    /// stopped, one whose start changed is read again, its rows replaced.
    /// Killed at any moment, the next run ends with the same database.
    /// Files are read on several threads (--jobs), one writer commits.
    #[command(after_long_help = INGEST_EXAMPLES)]
    Ingest(IngestArgs),
    /// Sum up a database: runs by how they ended, tools by calls with
    /// their failure rates and durations, tokens per session, anomalies.
    Stats(StatsArgs),
    /// List the input and output formats, one line each.
    Formats,
    /// Print a completion script for a shell.
    ///
    /// bash: `roundup completions bash > ~/.local/share/bash-completion/completions/roundup`;
    /// zsh: into a directory of `$fpath` as `_roundup`; fish: into
    /// `~/.config/fish/completions/roundup.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `roundup man > roundup.1; man ./roundup.1`.
    Man,
}

const RECORDS: &str = "\
Output (--emit records), one JSON object per line, `type` first:
  {\"type\":\"round\",\"run\":0,\"index\":0,\"closed_by\":\"tools_done\",\"message\":...,
   \"thought\":...,\"tool_calls\":[{\"id\",\"title\",\"name\",\"arguments\",\"result\":{...}}],...}
  {\"type\":\"stitch\",\"run\":0,\"round\":0,\"id\":\"t1\",\"result\":{...}}
  {\"type\":\"anomaly\",\"run\":0,\"kind\":\"undeclared_terminal\",\"id\":\"t9\",\"detail\":...}
  {\"type\":\"summary\",\"run\":0,\"finish_reason\":\"completed\",\"rounds\":3,\"tool_calls\":5,...}";

const INGEST_EXAMPLES: &str = "\
Examples:
  roundup ingest --db runs.db ~/.claude/projects      # every Claude Code transcript
  roundup ingest --db runs.db ~/.codex/sessions       # every Codex rollout
  roundup stats --db runs.db
  sqlite3 runs.db \"SELECT name, COUNT(*) FROM tool_results WHERE status = 'failed' GROUP BY name\"";

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// The database file (made when it does not exist).
    #[arg(long, value_name = "FILE", required = true, value_hint = clap::ValueHint::FilePath)]
    pub db: PathBuf,
    /// The input format of every file (`roundup formats` lists them); by
    /// default each file's own is detected.
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_names(), hide_possible_values = true)]
    pub from: String,
    /// Files read at once (default: the machine's cores).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Input read between two commits of a file (bytes, or with K, M, G).
    #[arg(long, value_name = "SIZE", default_value = "8M", allow_negative_numbers = true, value_parser = size)]
    pub batch: usize,
    #[command(flatten)]
    pub line: LineArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Print no closing line (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
    /// The inputs: files, folders (the recordings under them), or `-` for
    /// stdin (read whole each time, its rows replaced).
    #[arg(value_name = "PATH", required = true, value_hint = clap::ValueHint::AnyPath)]
    pub paths: Vec<String>,
}

/// The longest line held whole, for every command that reads input.
#[derive(Debug, Args)]
pub struct LineArgs {
    /// A line longer than SIZE (bytes, or with K, M, G) is read past without
    /// holding it, and reported as a bad_line.
    #[arg(long, value_name = "SIZE", default_value = "256M", allow_negative_numbers = true, value_parser = size)]
    pub max_line_bytes: usize,
}

/// Whether to show progress on stderr: `--progress`, `--no-progress`, or
/// (neither) the command's own default.
#[derive(Debug, Args)]
pub struct ProgressArgs {
    /// Show progress on stderr (default: when stderr is a terminal and the
    /// input a file).
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Never show progress.
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
}

impl ProgressArgs {
    /// What was asked: `None` when neither option was given.
    pub fn asked(&self) -> Option<bool> {
        match (self.progress, self.no_progress) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The database file.
    #[arg(long, value_name = "FILE", required = true, value_hint = clap::ValueHint::FilePath)]
    pub db: PathBuf,
    /// Write the figures as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// What `replay` and `export` share: the inputs and how to read them.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The input format (`roundup formats` lists them); raw JSON lines and
    /// SSE framing (`data:` lines, events separated by a blank line) are
    /// both accepted.
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_names(), hide_possible_values = true)]
    pub from: String,
    /// Keep at most N sessions in memory; the least recently used are
    /// evicted as checkpoints and restored when their next line comes (the
    /// output is the same).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: Option<u64>,
    /// With --max-sessions: evict into a scratch database in DIR, so that
    /// memory stays bounded however many sessions there are (without it,
    /// evicted sessions are kept in memory, compact).
    #[arg(long, value_name = "DIR", requires = "max_sessions", value_hint = clap::ValueHint::DirPath)]
    pub evict_dir: Option<PathBuf>,
    #[command(flatten)]
    pub line: LineArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Do not describe skipped lines on stderr (they are still in the
    /// output as `bad_line` anomalies).
    #[arg(short, long)]
    pub quiet: bool,
    /// Only the output of session NAME (repeat for several; `-` for the
    /// session without a name).
    #[arg(long, value_name = "NAME")]
    pub session: Vec<String>,
    /// Print each JSON value indented over several lines.
    #[arg(long, conflicts_with = "sse")]
    pub pretty: bool,
    /// Colour `--pretty` output: `auto` when stdout is a terminal and
    /// NO_COLOR is not set, `always`, or `never`.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
    /// Frame every output value as an SSE event (`data: ...` and a blank
    /// line) instead of a line.
    #[arg(long)]
    pub sse: bool,
    /// The inputs: files, folders (the recordings under them, in path
    /// order), or `-` (or nothing) for stdin.
    #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// What to print (`roundup formats` lists them).
    #[arg(long, value_name = "FORMAT", default_value = OutputFormat::default_format().name(), value_parser = emit_names(), hide_possible_values = true)]
    pub emit: String,
    /// With --emit records: only the records of these types (repeat, or
    /// separate with commas).
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',', value_parser = ["round", "stitch", "anomaly", "meta", "summary"])]
    pub types: Vec<String>,
    /// With --emit agui: each run as one MESSAGES_SNAPSHOT of its thread
    /// (what a client that reconnects is sent), `--emit agui-compact`.
    #[arg(long)]
    pub compact: bool,
    /// With --emit otlp: the spans carry the content (the assistant's text
    /// and reasoning, the prompts, tool arguments and results), which may
    /// be sensitive and is left out otherwise; `--emit otlp-content`.
    #[arg(long)]
    pub otlp_content: bool,
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The provider whose history to write, or `otlp`: each run as
    /// OpenTelemetry traces.
    #[arg(long, value_name = "FORMAT", required = true, value_parser = history_names())]
    pub to: String,
    /// With --to otlp: the spans carry the content (the assistant's text
    /// and reasoning, the prompts, tool arguments and results), which may
    /// be sensitive and is left out otherwise.
    #[arg(long)]
    pub otlp_content: bool,
    /// With --to otlp: send each run's trace, when the run finishes, to
    /// this OpenTelemetry receiver over OTLP/HTTP (protobuf) instead of
    /// printing it: http://HOST:PORT[/PATH], the path /v1/traces when none
    /// is given.
    #[cfg(feature = "otlp-http")]
    #[arg(long, value_name = "URL", conflicts_with_all = ["sse", "pretty"])]
    pub endpoint: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// The formats `export --to` takes: the encoders named like the provider
/// formats, and the OpenTelemetry traces.
pub const HISTORIES: [&str; 4] = ["openai-chat", "openai-responses", "anthropic", "otlp"];

fn from_names() -> PossibleValuesParser {
    let auto = PossibleValue::new("auto").help("decided from the first event some format recognises");
    let formats =
        adapters::REGISTRY.iter().map(|format| PossibleValue::new(format.name()).help(one_line(format.about())));
    PossibleValuesParser::new(std::iter::once(auto).chain(formats))
}

fn emit_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        encoders::REGISTRY.iter().map(|format| PossibleValue::new(format.name()).help(one_line(format.about()))),
    )
}

fn history_names() -> PossibleValuesParser {
    PossibleValuesParser::new(HISTORIES.iter().map(|name| PossibleValue::new(*name)))
}

/// A registry row's text, its lines joined.
pub fn one_line(about: &'static str) -> String {
    about.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The input format of a `--from` name (`None` for `auto`); the parser
/// only lets known names through.
pub fn input_format(name: &str) -> Option<&'static InputFormat> {
    InputFormat::named(name)
}

/// The output format of an `--emit` or `--to` name; the parser only lets
/// known names through, and the default is there when one did not.
pub fn output_format(name: &str) -> &'static OutputFormat {
    OutputFormat::named(name).unwrap_or_else(OutputFormat::default_format)
}

/// A size in bytes: a number, or one with a `K`, `M` or `G` suffix (powers
/// of 1024), above zero.
fn size(text: &str) -> Result<usize, String> {
    let refuse = || format!("a size above 0 (1048576, 64K, 256M, 1G), not {text:?}");
    let (digits, unit) = match text.char_indices().last().ok_or_else(refuse)? {
        (at, 'k' | 'K') => (&text[..at], 1 << 10),
        (at, 'm' | 'M') => (&text[..at], 1 << 20),
        (at, 'g' | 'G') => (&text[..at], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok().and_then(|n| n.checked_mul(unit)).filter(|&n| n > 0).ok_or_else(refuse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(line: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("roundup").chain(line.split_whitespace()))
    }

    fn error(line: &str) -> String {
        parse(line).map(|cli| format!("parsed: {cli:?}")).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn the_grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn replay_arguments_are_read() {
        let Command::Replay(args) =
            parse("replay --from ops --emit ui -q --session s1 a.jsonl b.jsonl").unwrap().command
        else {
            panic!()
        };
        assert_eq!((args.input.from.as_str(), args.emit.as_str()), ("ops", "ui"));
        assert!(args.input.quiet);
        assert_eq!(args.input.session, ["s1"]);
        assert_eq!(args.input.files, ["a.jsonl", "b.jsonl"]);
        let Command::Replay(args) = parse("replay --type round,summary --type stitch").unwrap().command else {
            panic!()
        };
        assert_eq!(args.types, ["round", "summary", "stitch"]);
    }

    #[test]
    fn usage_errors_name_the_problem() {
        assert!(error("frobnicate").contains("unrecognized subcommand 'frobnicate'"));
        assert!(error("export --to bogus x").contains("invalid value 'bogus' for '--to <FORMAT>'"));
        assert!(error("export --to ui x").contains("[possible values: openai-chat, openai-responses, anthropic, otlp]"));
        assert!(error("export x").contains("--to <FORMAT>"));
        assert!(error("export --to anthropic --emit ui x").contains("unexpected argument '--emit'"));
        assert!(error("replay --to anthropic x").contains("unexpected argument '--to'"));
        assert!(error("replay --sse=true x").contains("unexpected value 'true' for '--sse'"));
        assert!(error("replay --from acp2").contains("invalid value 'acp2' for '--from <FORMAT>'"));
        assert!(error("replay --from acp2").contains("acp"), "the known formats are named");
        assert!(error("replay --emit").contains("a value is required for '--emit <FORMAT>'"));
        assert!(error("replay --bogus").contains("unexpected argument '--bogus'"));
        assert!(error("replay --evict-dir d x").contains("--max-sessions <N>"));
        assert!(error("replay --max-sessions 0 x").contains("0 is not in 1.."));
        assert!(error("replay --max-sessions -3 x").contains("invalid value '-3' for '--max-sessions <N>'"));
        assert!(error("replay --max-line-bytes 0 x").contains("a size above 0"));
        assert!(error("replay --pretty --sse x").contains("cannot be used with"));
        assert!(error("replay --type rounds x").contains("invalid value 'rounds' for '--type <TYPE>'"));
        assert!(error("replay --otlp-content=yes x").contains("unexpected value 'yes' for '--otlp-content'"));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let Command::Replay(args) = parse("replay -q -- -odd-name.jsonl").unwrap().command else { panic!() };
        assert_eq!(args.input.files, ["-odd-name.jsonl"]);
    }

    #[test]
    fn sizes_take_units() {
        assert_eq!(size("64K"), Ok(64 << 10));
        assert_eq!(size("256M"), Ok(256 << 20));
        assert_eq!(size("1g"), Ok(1 << 30));
        assert_eq!(size("1048576"), Ok(1 << 20));
        assert!(
            size("").is_err() && size("M").is_err() && size("-1").is_err() && size("99999999999999999999G").is_err()
        );
    }

    #[test]
    fn each_command_has_its_own_help() {
        let mut cli = Cli::command();
        let replay = cli.find_subcommand_mut("replay").unwrap().render_long_help().to_string();
        let mut cli = Cli::command();
        let export = cli.find_subcommand_mut("export").unwrap().render_long_help().to_string();
        assert_ne!(replay, export);
        assert!(replay.contains("--emit <FORMAT>") && !export.contains("--emit <FORMAT>"));
        assert!(export.contains("--to <FORMAT>") && !replay.contains("--to <FORMAT>"));
        for option in
            ["--from", "--max-sessions", "--evict-dir", "--max-line-bytes", "--progress", "--session", "--pretty"]
        {
            assert!(replay.contains(option) && export.contains(option), "{option}");
        }
    }
}
