//! What a session holds, counted by a global allocator (bytes requested
//! and not yet freed: exact and repeatable, not sampled): per tool call of
//! a long run, per run, per open session, after an outlier chunk, and what
//! the ACP adapter keeps per call.
//!
//! `cargo bench --bench memory`

use roundup::adapters::{acp::AcpAdapter, Adapter};
use roundup::{Call, FinishReason, RoundBuilder, Router, SinkRecord, StreamHandler, ToolCallStatus};

const N: usize = 100_000;

/// Bytes still allocated after `f`, per `n`.
fn held_per(n: usize, f: impl FnOnce()) -> f64 {
    allocation_counter::measure(f).bytes_current as f64 / n as f64
}

fn builder() -> RoundBuilder {
    RoundBuilder::new().retain_rounds(false).with_sink(|r: SinkRecord<'_>| {
        std::hint::black_box(r);
    })
}

/// Ids as Claude Code sends them: 30 bytes.
fn id(n: usize) -> String {
    format!("toolu_01{n:022}")
}

fn main() {
    println!("memory: bytes held (requested from the allocator, not freed), retain_rounds(false)");

    let b = builder();
    let per_call = held_per(N, || {
        for n in 0..N {
            let id = id(n);
            b.message("Looking.");
            b.tool_call(&id, "bash");
            b.tool_update(&id, "ok", ToolCallStatus::Completed);
        }
    });
    println!("{:<58} {per_call:>8.1} B", "per tool call of a long run, result in time");

    let b = builder();
    let superseded = held_per(N, || {
        for n in 0..N {
            let id = id(n);
            b.tool_call(&id, "bash");
            b.message("text before the result: the call is superseded");
        }
    });
    println!("{:<58} {superseded:>8.1} B", "per tool call superseded (a late result can still stitch)");

    let b = builder();
    let stitched = held_per(N, || {
        for n in 0..N {
            let id = id(n);
            b.tool_call(&id, "bash");
            b.message("text");
            b.tool_update(&id, "late", ToolCallStatus::Completed);
        }
    });
    println!("{:<58} {stitched:>8.1} B", "per tool call stitched");

    let b = builder();
    let run_end = held_per(N, || {
        for n in 0..N {
            let id = id(n);
            b.tool_call(&id, "bash");
            b.tool_update(&id, "ok", ToolCallStatus::Completed);
        }
        b.finish(FinishReason::Interrupted);
        b.start();
    });
    println!("{:<58} {run_end:>8.1} B", "per tool call once its run has ended");

    let b = builder();
    let per_run = held_per(N, || {
        for _ in 0..N {
            b.start();
            b.message("one round");
            b.finish(FinishReason::Interrupted);
        }
    });
    println!("{:<58} {per_run:>8.1} B", "per finished run");

    let sessions = 100_000;
    let mut router = Router::new(|_| RoundBuilder::new().retain_rounds(false));
    let names: Vec<String> = (0..sessions).map(|n| format!("session-{n:08}")).collect();
    let per_session = held_per(sessions, || {
        for name in &names {
            router.call(Some(name), Call::Message { text: "hello" });
        }
    });
    println!("{:<58} {per_session:>8.1} B", "per open session (router, one message each)");
    let after_finish = held_per(sessions, || {
        router.finish_all(FinishReason::Interrupted);
    });
    println!("{:<58} {:>8.1} B", "  freed per session when their runs finish", -after_finish);
    drop(router);

    let b = builder();
    let chunk = "x".repeat(64 << 20);
    let outlier = allocation_counter::measure(|| {
        b.message(&chunk);
        b.tool_call("t", "bash");
        b.tool_update("t", "ok", ToolCallStatus::Completed);
        b.message("small again");
    })
    .bytes_current;
    println!("{:<58} {:>8.1} KiB", "after a 64 MiB chunk, once its round closed", outlier as f64 / 1024.0);
    let reset = allocation_counter::measure(|| b.reset()).bytes_current;
    println!("{:<58} {:>8.1} KiB", "  and after reset()", (outlier + reset) as f64 / 1024.0);

    let mut acp = AcpAdapter::new();
    let mut sink = |_: Option<&str>, call: Call<'_>| {
        std::hint::black_box(call);
    };
    let line = |update: String| {
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#)
    };
    acp.translate(
        br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        &mut sink,
    )
    .unwrap();
    let calls = 10_000;
    let acp_in_run = held_per(calls, || {
        for n in 0..calls {
            let id = id(n);
            let declare = line(format!(
                r#"{{"sessionUpdate":"tool_call","toolCallId":"{id}","title":"Bash","rawInput":{{"command":"ls"}}}}"#
            ));
            let done = line(format!(
                r#"{{"sessionUpdate":"tool_call_update","toolCallId":"{id}","status":"completed","content":[{{"type":"content","content":{{"type":"text","text":"{}"}}}}]}}"#,
                "o".repeat(16 << 10)
            ));
            acp.translate(declare.as_bytes(), &mut sink).unwrap();
            acp.translate(done.as_bytes(), &mut sink).unwrap();
        }
    });
    println!("{:<58} {acp_in_run:>8.1} B", "ACP adapter, per finished call while its run goes on");
    let acp_after = held_per(calls, || {
        acp.translate(br#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#, &mut sink).unwrap();
    });
    println!("{:<58} {:>8.1} B", "  freed per call at the run's end", -acp_after);
}
