//! Writes a large ACP capture to stdout: one prompt, CALLS shell tools with
//! OUTPUT bytes of terminal output each (defaults 30,000 and 16,384: about
//! 550 MB). The stream behind the ACP throughput and memory figures in
//! docs/performance.md:
//!
//! ```text
//! cargo run --release --example acp_load > /tmp/acp.jsonl
//! /usr/bin/time -v target/release/roundup replay -q --from acp /tmp/acp.jsonl > /dev/null
//! ```

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let calls = args.next().and_then(Result::ok).unwrap_or(30_000);
    let output = args.next().and_then(Result::ok).unwrap_or(16 << 10);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = None;
    roundup_testkit::load::acp_shell_session(calls, output, |piece| {
        if failed.is_none() {
            failed = out.write_all(piece).err();
        }
    });
    if let Some(error) = failed.or_else(|| out.flush().err()) {
        eprintln!("acp_load: {error}");
        std::process::exit(1);
    }
}
