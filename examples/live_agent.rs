//! Aggregates an agent's stdout live: runs a command, reads its stream
//! (any input format roundup knows, detected from the first line), and
//! prints each round the moment it closes and each run's end, from async
//! tasks fed by `roundup::live`.
//!
//! ```sh
//! cargo run --example live_agent --features tokio                 # a paced replay of the bundled example
//! cargo run --example live_agent --features tokio -- my-agent --stream
//! ```

use roundup::adapters::{Adapter, InputFormat};
use roundup::live::{self, Stream};
use roundup::{Call, OutputLine, RoundBuilder, StreamHandler};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut command = match args.split_first() {
        Some((program, rest)) => {
            let mut command = Command::new(program);
            command.args(rest);
            command
        }
        None => {
            let mut command = Command::new("sh");
            command.args([
                "-c",
                "while IFS= read -r l; do printf '%s\\n' \"$l\"; sleep 0.02; done < examples/session.ops.jsonl",
            ]);
            command
        }
    };
    let mut agent = command.stdout(std::process::Stdio::piped()).spawn()?;
    let stdout = agent.stdout.take().ok_or_else(|| std::io::Error::other("no stdout"))?;

    let (builder, mut records, _ui, _ends) = live::attach(RoundBuilder::new(), 1024);
    // Persistence (here: the terminal) reads the records as they come.
    let printer = tokio::spawn(async move {
        while let Some(line) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut records).poll_next(cx)).await {
            match line {
                OutputLine::Round(round) => {
                    println!(
                        "round {}.{} ({:?}): {:?}, {} tool call(s)",
                        round.run,
                        round.index,
                        round.closed_by,
                        round.message,
                        round.tool_calls.len()
                    );
                }
                OutputLine::Summary(summary) => println!("run {} finished: {} rounds", summary.run, summary.rounds),
                other => println!("{other:?}"),
            }
        }
    });

    let mut adapter: Option<Box<dyn Adapter>> = None;
    let mut lines = BufReader::new(stdout).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let adapter = adapter.get_or_insert_with(|| InputFormat::detect(line.as_bytes()).adapter());
        // This example aggregates every session into one builder.
        let translated = adapter.translate(line.as_bytes(), &mut |_: Option<&str>, call: Call<'_>| builder.call(call));
        if let Err(bad) = translated {
            eprintln!("skipped a line: {bad}");
        }
    }
    builder.finish_if_running(roundup::FinishReason::Interrupted);
    drop(builder);
    printer.await.map_err(std::io::Error::other)?;
    agent.wait().await?;
    Ok(())
}
