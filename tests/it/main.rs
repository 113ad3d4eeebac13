//! roundup's integration tests, one binary with a module per area (one
//! link instead of eleven). The allocation-counting test is a binary of its
//! own, because it installs its own global allocator.

mod acp;
mod agui;
mod ai_sdk;
mod ai_sdk_out;
mod bedrock;
mod builder;
mod builds;
mod claude_transcript;
mod cli;
mod codex_rollout;
mod conformance;
mod conservation;
mod deepwork;
mod example;
mod gemini;
mod gemini_cli_chat;
mod history;
mod hostile;
#[cfg(feature = "sqlite")]
mod ingest;
mod json_array;
mod layout;
mod live;
mod live_stream;
mod local_models;
mod partial_json;
mod properties;
mod providers;
mod records;
mod replayer;
mod router;
#[cfg(feature = "sqlite")]
mod store;
mod stress;
mod uagent;
