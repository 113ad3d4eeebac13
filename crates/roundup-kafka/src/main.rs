//! `roundup-kafka`: one worker of a consumer group that aggregates agent
//! sessions from a Kafka topic, exactly once.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use roundup::adapters::{InputFormat, REGISTRY};
use roundup_kafka::{Config, Worker};

const USAGE: &str = "usage: roundup-kafka --input TOPIC --output TOPIC [--ui-topic TOPIC] [--from FORMAT]
                     [--group GROUP] [--checkpoints TOPIC] [--brokers HOST:PORT] [--id ID]
                     [--batch N] [--batch-ms MS]";

fn help() -> String {
    let formats: Vec<&str> = REGISTRY.iter().map(|f| f.name()).collect();
    format!(
        "roundup-kafka: aggregate agent sessions from a Kafka topic into rounds, exactly once.

Reads native events (one per record, the record's key the session) with a
consumer group, aggregates each session as `roundup replay` would, and
writes the SPEC §4 lines (rounds, stitches, anomalies, meta patches, run
summaries; key: the session) to the output topic. Each batch is one Kafka
transaction with the checkpoints of the sessions it touched and the input
offsets: a worker killed at any moment loses nothing and repeats nothing,
and the worker that takes its partitions over goes on from the checkpoints.
A record with no value ends its session (its open runs finish). Readers of
the output must use isolation.level=read_committed.

{USAGE}

Options:
  --input TOPIC        the topic of native events (must exist)
  --output TOPIC       where the lines go (made if missing)
  --ui-topic TOPIC     also write the live UI events (the lines of
                       `roundup replay --emit ui`) there, in the same
                       transactions (made if missing)
  --from FORMAT        the input format, or auto (default: detected per
                       session): {}
  --group GROUP        the consumer group (default: roundup-kafka)
  --checkpoints TOPIC  the checkpoint topic (default: INPUT.roundup-checkpoints;
                       made compacted with the input's partitions if missing)
  --brokers HOST:PORT  bootstrap servers (default: $ROUNDUP_KAFKA_BROKERS,
                       else 127.0.0.1:9092)
  --id ID              this worker's transactional id, unique among the
                       live workers (default: GROUP-HOSTNAME-PID)
  --batch N            at most N records per transaction (default 2000)
  --batch-ms MS        a transaction gathers records for at most MS (default 100)
  -h, --help           this text

SIGINT or SIGTERM: the current batch is committed, then the worker leaves
the group and exits 0. ROUNDUP_KAFKA_TRACE=1 says on stderr when each
transaction begins and commits. ROUNDUP_KAFKA_BREAK_EXACTLY_ONCE=1 commits
the input offsets outside the transaction, which loses or repeats output
when a worker dies: it exists for the test that shows it, never use it.",
        formats.join(", ")
    )
}

fn parse(args: &[String]) -> Result<Option<Config>, String> {
    let mut options = std::collections::HashMap::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        let Some(name) = arg.strip_prefix("--") else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        let (name, value) = match name.split_once('=') {
            Some((name, value)) => (name.to_owned(), value.to_owned()),
            None => (name.to_owned(), rest.next().ok_or_else(|| format!("--{name} needs a value"))?.clone()),
        };
        if !["input", "output", "ui-topic", "from", "group", "checkpoints", "brokers", "id", "batch", "batch-ms"]
            .contains(&name.as_str())
        {
            return Err(format!("unknown option --{name}"));
        }
        options.insert(name, value);
    }
    let required = |name: &str| options.get(name).cloned().ok_or_else(|| format!("--{name} is required"));
    let input = required("input")?;
    let output = required("output")?;
    let from = match options.get("from").map(String::as_str) {
        None | Some("auto") => None,
        Some(name) => Some(InputFormat::named(name).ok_or_else(|| {
            let names: Vec<&str> = REGISTRY.iter().map(|f| f.name()).collect();
            format!("--from {name}: not an input format ({})", names.join(", "))
        })?),
    };
    let group = options.get("group").cloned().unwrap_or_else(|| "roundup-kafka".to_owned());
    let number = |name: &str, default: u64| -> Result<u64, String> {
        options.get(name).map_or(Ok(default), |v| v.parse().map_err(|_| format!("--{name} {v}: not a number")))
    };
    let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
    Ok(Some(Config {
        brokers: options
            .get("brokers")
            .cloned()
            .or_else(|| std::env::var("ROUNDUP_KAFKA_BROKERS").ok())
            .unwrap_or_else(|| "127.0.0.1:9092".to_owned()),
        checkpoints: options.get("checkpoints").cloned().unwrap_or_else(|| format!("{input}.roundup-checkpoints")),
        transactional_id: options
            .get("id")
            .cloned()
            .unwrap_or_else(|| format!("{group}-{host}-{}", std::process::id())),
        batch_records: number("batch", 2000)?.max(1) as usize,
        batch_time: Duration::from_millis(number("batch-ms", 100)?),
        trace: std::env::var_os("ROUNDUP_KAFKA_TRACE").is_some(),
        offsets_outside_transaction: std::env::var_os("ROUNDUP_KAFKA_BREAK_EXACTLY_ONCE").is_some(),
        ui: options.get("ui-topic").cloned(),
        group,
        input,
        output,
        from,
    }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match parse(&args) {
        Ok(Some(config)) => config,
        Ok(None) => {
            println!("{}", help());
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("roundup-kafka: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(error) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            eprintln!("roundup-kafka: cannot handle signal {signal}: {error}");
            return ExitCode::FAILURE;
        }
    }
    let result = Worker::new(config).and_then(|mut worker| worker.run(&stop));
    match result {
        Ok(stats) => {
            eprintln!(
                "roundup-kafka: stopped: {} events, {} lines, {} checkpoints ({} bytes), {} transactions ({} aborted)",
                stats.events, stats.lines, stats.checkpoints, stats.checkpoint_bytes, stats.committed, stats.aborted
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            let mut message = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("roundup-kafka: {message}");
            ExitCode::FAILURE
        }
    }
}
