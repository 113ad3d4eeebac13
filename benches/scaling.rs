//! Linear cost everywhere: double the work, report the time ratio (which
//! must stay near 2.0). Also: two threads on two builders against one, and
//! peak memory against the largest round.
//!
//! `cargo bench --bench scaling`

mod common;

use std::io::{self, Read};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use common::ms;
use roundup::{RoundBuilder, SinkRecord, StreamHandler, ToolCallStatus, UiEvent, UiFlow};

const RUNS: usize = 15;

fn builder() -> RoundBuilder {
    RoundBuilder::new()
        .retain_rounds(false)
        .with_sink(|r: SinkRecord<'_>| {
            std::hint::black_box(r);
        })
        .with_ui(|e: &UiEvent<'_>| {
            std::hint::black_box(e);
            UiFlow::Continue
        })
}

const DELTA: &str = "{\"k\":\"0123456789ab\"}"; // 20 bytes

fn one_message(fragments: usize) {
    let b = builder();
    for _ in 0..fragments {
        b.message("fragment ");
    }
}

fn one_tool_call(bytes: usize) {
    let b = builder();
    b.tool_call("t", "write");
    for _ in 0..bytes / DELTA.len() {
        b.tool_update("t", DELTA, ToolCallStatus::InProgress);
    }
    b.tool_update("t", "ok", ToolCallStatus::Completed);
}

fn parallel_calls(deltas_per_call: usize) {
    let b = builder();
    let ids: Vec<String> = (0..64).map(|i| format!("toolu_{i:02}")).collect();
    for id in &ids {
        b.tool_call(id, "bash");
    }
    for _ in 0..deltas_per_call {
        for id in &ids {
            b.tool_update(id, DELTA, ToolCallStatus::InProgress);
        }
    }
    for id in &ids {
        b.tool_update(id, "ok", ToolCallStatus::Completed);
    }
}

fn rounds(n: usize) {
    let b = builder();
    for i in 0..n {
        let id = format!("toolu_{i}");
        b.message("Let me look.");
        b.tool_call(&id, "bash");
        b.args_snapshot(&id, "{\"cmd\":\"ls\"}");
        b.tool_update(&id, "a.txt", ToolCallStatus::Completed);
    }
}

/// Ops JSONL of `sessions` sessions, 5 rounds each, interleaved line by line.
fn sessions_input(sessions: usize) -> String {
    let mut out = String::new();
    for round in 0..5 {
        for step in 0..3 {
            for s in 0..sessions {
                out.push_str(&match step {
                    0 => format!("{{\"op\":\"message\",\"text\":\"look {round}\",\"session\":\"s{s}\"}}\n"),
                    1 => format!("{{\"op\":\"tool_call\",\"id\":\"t{round}\",\"title\":\"ls\",\"session\":\"s{s}\"}}\n"),
                    _ => format!(
                        "{{\"op\":\"tool_update\",\"id\":\"t{round}\",\"content\":\"ok\",\"status\":\"completed\",\"session\":\"s{s}\"}}\n"
                    ),
                });
            }
        }
    }
    out
}

/// Runs `a` and `b` one after the other, `RUNS` times (after a warm-up),
/// and returns their median times and the median of the per-pair ratios
/// b/a: a slow stretch of a shared machine then hits both alike.
fn paired(mut a: impl FnMut(), mut b: impl FnMut()) -> (Duration, Duration, f64) {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    time(&mut a);
    time(&mut b);
    let mut pairs: Vec<(Duration, Duration)> = (0..RUNS).map(|_| (time(&mut a), time(&mut b))).collect();
    let mut ratios: Vec<f64> = pairs.iter().map(|(x, y)| y.as_secs_f64() / x.as_secs_f64()).collect();
    ratios.sort_by(f64::total_cmp);
    pairs.sort_by_key(|p| p.0);
    let ta = pairs[RUNS / 2].0;
    pairs.sort_by_key(|p| p.1);
    (ta, pairs[RUNS / 2].1, ratios[RUNS / 2])
}

/// `ROUNDUP_BENCH_ONLY=text` runs only the ratios whose name holds `text`
/// (and skips the thread and memory figures).
fn selected(name: &str) -> bool {
    std::env::var("ROUNDUP_BENCH_ONLY").map_or(true, |only| name.contains(&only))
}

fn ratio(name: &str, small: &str, large: &str, f: impl Fn(bool)) {
    if !selected(name) {
        return;
    }
    let (t1, t2, ratio) = paired(|| f(false), || f(true));
    println!("{name:<46} {small:>10} {:>9.2} ms   {large:>10} {:>9.2} ms   ratio {ratio:.2}", ms(t1), ms(t2));
}

/// Peak RSS of a child replaying `total_mb` of input holding one round of
/// `round_mb`, streamed (the input is generated as it is read, never held).
fn memory_child(total_mb: usize, round_mb: usize) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("ROUNDUP_MEMORY_CHILD", format!("{total_mb}:{round_mb}"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().parse().expect("the child prints its peak RSS in KiB")
}

/// Generates `total` bytes of small rounds with one round of `round`
/// bytes of text (1,000-byte fragments) in the middle.
struct Generated {
    total: usize,
    round: usize,
    produced: usize,
    big_done: bool,
    pending: Vec<u8>,
    n: u64,
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            if self.produced >= self.total {
                return Ok(0);
            }
            let line = if !self.big_done && self.produced >= self.total / 2 {
                let fragment = "x".repeat(1000);
                let mut big = String::new();
                for _ in 0..self.round / 1000 {
                    big.push_str(&format!("{{\"op\":\"thought\",\"text\":\"{fragment}\"}}\n"));
                }
                self.big_done = true;
                big
            } else {
                self.n += 1;
                format!(
                    "{{\"op\":\"message\",\"text\":\"hello\"}}\n{{\"op\":\"tool_call\",\"id\":\"t{n}\"}}\n\
                     {{\"op\":\"tool_update\",\"id\":\"t{n}\",\"content\":\"{}\",\"status\":\"completed\"}}\n",
                    "r".repeat(200),
                    n = self.n % 1000
                )
            };
            self.produced += line.len();
            self.pending = line.into_bytes();
            self.pending.reverse();
        }
        let n = buf.len().min(self.pending.len());
        for slot in buf.iter_mut().take(n) {
            *slot = self.pending.pop().unwrap_or_default();
        }
        Ok(n)
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn main() {
    if let Ok(spec) = std::env::var("ROUNDUP_MEMORY_CHILD") {
        let (total, round) = spec.split_once(':').unwrap();
        let (total, round): (usize, usize) = (total.parse().unwrap(), round.parse().unwrap());
        let input = Generated {
            total: total << 20,
            round: round << 20,
            produced: 0,
            big_done: false,
            pending: Vec::new(),
            n: 0,
        };
        roundup::replay(io::BufReader::with_capacity(1 << 16, input), io::sink(), &common::ops(), &mut ()).unwrap();
        println!("{}", peak_rss_kib());
        return;
    }

    println!("scaling: double the work, time ratio (median of {RUNS} paired runs; linear is 2.0)");
    ratio("one message of N fragments", "100k", "200k", |large| one_message(if large { 200_000 } else { 100_000 }));
    ratio("one tool call, arguments in 20-byte deltas", "1 MB", "2 MB", |large| {
        one_tool_call(if large { 2 << 20 } else { 1 << 20 })
    });
    ratio("64 parallel tool calls, interleaved deltas", "1k each", "2k each", |large| {
        parallel_calls(if large { 2_000 } else { 1_000 })
    });
    ratio("rounds in one run", "10k", "20k", |large| rounds(if large { 20_000 } else { 10_000 }));
    let (small, large) = (sessions_input(1_000), sessions_input(2_000));
    ratio("sessions interleaved in one input (replay)", "1k", "2k", |big| {
        let input = if big { &large } else { &small };
        roundup::replay(input.as_bytes(), io::sink(), &common::ops(), &mut ()).unwrap();
    });

    // The three paths a red-team run found quadratic.
    let replay_as = |from: &str, to: &str, input: &str| {
        let options = roundup::ReplayOptions::new()
            .from(roundup::adapters::InputFormat::named(from).unwrap())
            .to(roundup::encoders::OutputFormat::named(to).unwrap());
        roundup::replay(input.as_bytes(), io::sink(), &options, &mut ()).unwrap();
    };
    let acp_prompt = |chunks: usize| {
        let mut input = String::from(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/load\",\"params\":{\"sessionId\":\"s\"}}\n",
        );
        for _ in 0..chunks {
            input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"user_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"a prompt sent in pieces \"}}}}\n");
        }
        input
    };
    let (small, large) = (acp_prompt(10_000), acp_prompt(20_000));
    ratio("ACP prompt as user_message_chunks", "10k", "20k", |big| {
        replay_as("acp", "records", if big { &large } else { &small })
    });
    let uagent_messages = |messages: usize| {
        let mut input = String::from("{\"type\":\"run_started\",\"session_id\":\"s\",\"v\":1}\n");
        for _ in 0..messages {
            input.push_str("{\"type\":\"user_message\",\"text\":\"one more thing\",\"v\":1}\n");
            input.push_str("{\"type\":\"turn_started\",\"v\":1}\n");
        }
        input
    };
    let (small, large) = (uagent_messages(10_000), uagent_messages(20_000));
    ratio("uagent user_messages between turns", "10k", "20k", |big| {
        replay_as("uagent", "records", if big { &large } else { &small })
    });
    let streamed_arguments = |deltas: usize| {
        let mut input = String::from("{\"op\":\"tool_call\",\"id\":\"t\",\"title\":\"write\"}\n");
        for _ in 0..deltas {
            input.push_str("{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"0123456789abcdefghij\",\"status\":\"in_progress\"}\n");
        }
        input.push_str("{\"op\":\"tool_update\",\"id\":\"t\",\"content\":\"ok\",\"status\":\"completed\"}\n");
        input
    };
    let (small, large) = (streamed_arguments(25_000), streamed_arguments(50_000));
    ratio("--emit deepwork, arguments in 20-byte deltas", "0.5 MB", "1 MB", |big| {
        replay_as("ops", "deepwork", if big { &large } else { &small })
    });

    // Quadratic until found by the adapters benchmark: a Codex
    // turn of many tool items looked each id up in a list of the turn's.
    let codex_items = |items: usize| {
        let mut input = String::from("{\"type\":\"turn.started\"}\n");
        for n in 0..items {
            input.push_str(&format!("{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"command_execution\",\"command\":\"ls\",\"aggregated_output\":\"\",\"status\":\"in_progress\"}}}}\n"));
            input.push_str(&format!("{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"command_execution\",\"command\":\"ls\",\"aggregated_output\":\"a.txt\",\"exit_code\":0,\"status\":\"completed\"}}}}\n"));
        }
        input
    };
    let (small, large) = (codex_items(20_000), codex_items(40_000));
    ratio("Codex turn of many tool items", "20k", "40k", |big| {
        replay_as("codex", "records", if big { &large } else { &small })
    });

    // Quadratic until found by the adapters benchmark: a Gemini CLI chat
    // looked each message record's id up in a list of the prompt's.
    let gemini_chat = |messages: usize| {
        let mut input = String::from("{\"sessionId\":\"s\",\"projectHash\":\"p\",\"kind\":\"main\"}\n");
        input.push_str("{\"id\":\"u0\",\"type\":\"user\",\"content\":[{\"text\":\"Go.\"}]}\n");
        for n in 0..messages {
            input.push_str(&format!("{{\"id\":\"g{n}\",\"type\":\"gemini\",\"content\":\"step {n}\"}}\n"));
        }
        input
    };
    let (small, large) = (gemini_chat(10_000), gemini_chat(20_000));
    ratio("Gemini CLI chat of many model messages", "10k", "20k", |big| {
        replay_as("gemini-cli-chat", "records", if big { &large } else { &small })
    });

    // Quadratic until found on a real Codex session file: a run's lists
    // (compactions, context messages, repeated session records) were given
    // whole to the machine after every item.
    let codex_compactions = |records: usize| {
        let mut input = String::from("{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}\n");
        input.push_str("{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"Go.\"}]}}\n");
        for n in 0..records {
            input.push_str(&format!("{{\"type\":\"compacted\",\"payload\":{{\"message\":\"summary {n}\",\"replacement_history\":[{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"earlier turn {n}\"}}]}}]}}}}\n"));
        }
        input
    };
    let (small, large) = (codex_compactions(5_000), codex_compactions(10_000));
    ratio("Codex rollout run of many compactions", "5k", "10k", |big| {
        replay_as("codex-rollout", "records", if big { &large } else { &small })
    });

    // The same, in Claude Code transcripts: a run's user lines that are not
    // prompts (here a reminder beside each tool result).
    let claude_reminders = |calls: usize| {
        let mut input = String::from("{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"Go.\"}}\n");
        for n in 0..calls {
            input.push_str(&format!("{{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"a{n}\",\"message\":{{\"id\":\"m{n}\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t{n}\",\"name\":\"Bash\",\"input\":{{\"command\":\"ls\"}}}}],\"stop_reason\":\"tool_use\"}}}}\n"));
            input.push_str(&format!("{{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"r{n}\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t{n}\",\"content\":\"ok\"}},{{\"type\":\"text\",\"text\":\"<system-reminder>step {n}</system-reminder>\"}}]}}}}\n"));
        }
        input
    };
    let (small, large) = (claude_reminders(5_000), claude_reminders(10_000));
    ratio("Claude Code transcript run of many tool calls", "5k", "10k", |big| {
        replay_as("claude-transcript", "records", if big { &large } else { &small })
    });

    // And in AI SDK UI streams: a run's responses (one a step of a
    // multi-step run) were given whole at every step.
    let ai_sdk_steps = |steps: usize| {
        let mut input = String::new();
        for n in 0..steps {
            input.push_str(&format!("{{\"type\":\"start\",\"messageId\":\"m{n}\"}}\n"));
            input.push_str(&format!(
                "{{\"type\":\"tool-input-available\",\"toolCallId\":\"c{n}\",\"toolName\":\"t\",\"input\":{{}}}}\n"
            ));
            input.push_str("{\"type\":\"finish\"}\n");
            input.push_str(&format!(
                "{{\"type\":\"tool-output-available\",\"toolCallId\":\"c{n}\",\"output\":\"ok\"}}\n"
            ));
        }
        input.push_str("{\"type\":\"finish\"}\n");
        input
    };
    let (small, large) = (ai_sdk_steps(5_000), ai_sdk_steps(10_000));
    ratio("AI SDK run of many steps", "5k", "10k", |big| {
        replay_as("ai-sdk", "records", if big { &large } else { &small })
    });

    // Closing a session found it by a scan of every session seen, and the
    // names of closed sessions were never freed.
    let open_and_close = |sessions: usize| {
        let mut router: roundup::Router<roundup::RoundMachine> = roundup::Router::new(|name| {
            let options = roundup::MachineOptions::default().retain_rounds(false).ui_events(false);
            roundup::RoundMachine::new(match name {
                Some(name) => options.session(name),
                None => options,
            })
        });
        let mut name = String::new();
        for n in 0..sessions {
            name.clear();
            std::fmt::Write::write_fmt(&mut name, format_args!("session-{n}")).unwrap();
            router.call(Some(&name), roundup::Call::Message { text: "hello" });
            router.close(Some(&name), roundup::FinishReason::Canceled);
            router.context_mut().outputs.clear();
        }
    };
    ratio("sessions opened and closed (Router::close)", "0.5M", "1M", |big| {
        open_and_close(if big { 1_000_000 } else { 500_000 })
    });

    if std::env::var_os("ROUNDUP_BENCH_ONLY").is_some() {
        return;
    }
    println!("\nthreads: independent builders (median of {RUNS} paired runs)");
    const CALLS: usize = 1_000_000;
    let feed = || {
        let b = builder();
        for i in 0..CALLS {
            if i % 100 == 99 {
                b.tool_call("t", "x");
                b.tool_update("t", "ok", ToolCallStatus::Completed);
            } else {
                b.message("fragment ");
            }
        }
    };
    let (one, two, ratio) = paired(feed, || {
        let handles: Vec<_> = (0..2).map(|_| thread::spawn(feed)).collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    });
    let speedup = 2.0 / ratio;
    println!(
        "1 thread, 1 builder: {:.1} ms; 2 threads, 2 builders: {:.1} ms for twice the work; throughput {speedup:.2}x",
        ms(one),
        ms(two)
    );
    // The control: what this machine gives two threads on work that shares
    // nothing at all (an arithmetic loop). Two vCPUs backed by one core's
    // hardware threads, or a busy host, cap the figure above as much as this.
    let spin = || {
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    };
    let (one, two, ratio) = paired(spin, || {
        let handles: Vec<_> = (0..2).map(|_| thread::spawn(spin)).collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    });
    println!(
        "control, arithmetic loop: 1 thread {:.1} ms; 2 threads {:.1} ms for twice the work; throughput {:.2}x",
        ms(one),
        ms(two),
        2.0 / ratio
    );

    println!("\nmemory: peak RSS replaying a streamed input (rounds not retained, as the CLI)");
    let baseline = memory_child(1, 0);
    println!("baseline (1 MB of small rounds): {baseline} KiB");
    for (total, round) in [(64, 16), (256, 16), (256, 64)] {
        let peak = memory_child(total, round);
        let above = peak.saturating_sub(baseline) as f64 / 1024.0;
        println!(
            "input {total:>4} MB, largest round {round:>3} MB: peak {peak:>7} KiB, {above:>6.1} MB above baseline = {:.2}x the largest round",
            above / round as f64
        );
    }
}
