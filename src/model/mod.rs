//! The data model: what roundup hands to persistence and what it reads back.
//!
//! Every type here serialises to (and deserialises from) the output lines of
//! SPEC §4, field for field, and depends on nothing else in the crate: the
//! state machine, the builder, the adapters and the encoders all speak this
//! vocabulary, so it sits at the bottom of the module graph (as rustls keeps
//! its `msgs` apart from its state machines).

mod anomaly;
mod in_progress;
mod partial_json;
mod round;
mod status;
mod stitch;
mod summary;

pub use anomaly::{Anomaly, AnomalyKind};
pub use in_progress::{CallInProgress, RoundInProgress};
pub use partial_json::partial_json;
pub use round::{Round, ToolCall, ToolResult};
pub use status::{ClosedBy, FinishReason, PlaceholderReason, TerminalStatus, ToolCallStatus};
pub use stitch::{MetaPatch, Stitch};
pub use summary::{PlaceholderCounts, Summary};

/// Metadata a protocol carries beyond what the rounds model: a JSON object,
/// kept as the protocol sent it (tool-call `meta`, summary fields, meta
/// patches).
///
/// ```
/// let mut meta = roundup::Meta::new();
/// meta.insert("acp_kind".into(), "execute".into());
/// assert_eq!(serde_json::to_string(&meta).unwrap(), r#"{"acp_kind":"execute"}"#);
/// ```
pub type Meta = serde_json::Map<String, serde_json::Value>;
