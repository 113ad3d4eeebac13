//! `roundup::live` (feature `tokio`): records as an async stream that never
//! drops and never blocks, UI events through a bounded channel that cuts a
//! slow consumer off while persistence goes on, and awaitable run ends.
#![cfg(feature = "tokio")]

use std::future::poll_fn;
use std::pin::Pin;

use roundup::live::{self, Stream};
use roundup::{FinishReason, OutputLine, RoundBuilder, StreamHandler, ToolCallStatus, UiEvent};

async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn a_ui_that_does_not_read_is_cut_off_and_records_keep_flowing() {
    runtime().block_on(async {
        let (builder, mut records, ui, _ends) = live::attach(RoundBuilder::new(), 8);
        // The producer runs on a thread of its own; nobody reads the UI.
        let producer = std::thread::spawn(move || {
            for n in 0..500 {
                builder.message(&format!("round {n}"));
                builder.tool_call(&format!("t{n}"), "ls");
                builder.tool_update(&format!("t{n}"), "ok", ToolCallStatus::Completed);
            }
            builder.finish(FinishReason::Interrupted);
        });
        let mut rounds = 0;
        while let Some(line) = next(&mut records).await {
            match line {
                OutputLine::Round(round) => {
                    assert_eq!(round.message, format!("round {rounds}"), "in order");
                    rounds += 1;
                }
                OutputLine::Summary(summary) => {
                    assert_eq!(summary.rounds, 500);
                    break;
                }
                _ => {}
            }
        }
        producer.join().unwrap();
        assert_eq!(rounds, 500, "every round reached persistence");
        assert!(ui.lagged(), "the UI that never read was cut off");
    });
}

#[test]
fn ui_events_and_run_ends_arrive_while_the_producer_streams() {
    runtime().block_on(async {
        let (builder, _records, mut ui, mut ends) = live::attach(RoundBuilder::new(), 1024);
        let end = tokio::spawn(async move { ends.next_end().await });
        tokio::task::yield_now().await;
        builder.message("Hel");
        builder.message("lo");
        let mut text = String::new();
        while text != "Hello" {
            let event = next(&mut ui).await.expect("events");
            if let UiEvent::MessageDelta { text: delta } = event.event() {
                text.push_str(delta);
            }
        }
        builder.finish(FinishReason::Canceled);
        let summary = tokio::time::timeout(std::time::Duration::from_secs(10), end).await.unwrap().unwrap();
        assert_eq!(summary.map(|s| s.message_bytes), Some(5));
        assert!(!ui.lagged());
    });
}
