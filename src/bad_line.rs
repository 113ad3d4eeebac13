//! The error of one input payload that cannot be applied.

/// Why a line could not be applied, with what could still be recovered from
/// it (its session and clock reading), so that the anomaly lands in the
/// right run and the clock still moves.
///
/// ```
/// use roundup::adapters::InputFormat;
/// let mut ops = InputFormat::named("ops").unwrap().adapter();
/// let error = ops.translate(br#"{"op":"message","text":5,"session":"s1"}"#, &mut |_: Option<&str>, _: roundup::Call<'_>| {}).unwrap_err();
/// assert_eq!(error.reason, "field `text`: expected a string, found an integer");
/// assert_eq!(error.session.as_deref(), Some("s1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
#[non_exhaustive]
pub struct BadLine {
    /// What is wrong, naming the field (`field `text`: expected a string,
    /// found a number`).
    pub reason: String,
    /// The line's `session`, when it was a JSON object with a string one.
    pub session: Option<String>,
    /// The line's `at_ms`, when it was a JSON object with a numeric one.
    pub at_ms: Option<u64>,
}

impl BadLine {
    /// A payload that is not UTF-8, said the same way whatever the format:
    /// the column (from 1, in bytes) of the first byte that is not.
    pub(crate) fn not_utf8(error: std::str::Utf8Error) -> BadLine {
        BadLine::new(utf8_reason(error))
    }

    /// A payload that cannot be read, for `reason`, with nothing recovered
    /// from it: what an adapter of one's own returns.
    ///
    /// ```
    /// let error = roundup::BadLine::new("expected a JSON object, found a string");
    /// assert_eq!(error.to_string(), "expected a JSON object, found a string");
    /// ```
    pub fn new(reason: impl Into<String>) -> Self {
        BadLine { reason: reason.into(), session: None, at_ms: None }
    }

    /// A payload that is not JSON at all (or not JSON as an adapter reads
    /// it): nothing of it can be recovered.
    pub(crate) fn json(error: &serde_json::Error) -> Self {
        BadLine { reason: describe_json_error(error), session: None, at_ms: None }
    }
}

/// Names what is wrong with a line that does not decode as an object.
pub(crate) fn describe_json_error(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let message = strip_position(&error.to_string());
    match error.classify() {
        Category::Syntax if message.starts_with("recursion limit exceeded") => {
            format!("JSON nested deeper than 128 levels{}", message.trim_start_matches("recursion limit exceeded"))
        }
        Category::Syntax => format!("not valid JSON: {message}"),
        Category::Eof => format!("truncated JSON: {message}"),
        Category::Data | Category::Io => message,
    }
}

/// serde_json appends " at line 1 column N"; the line is ours to name, the
/// column is worth keeping.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line 1 column ") {
        Some(at) => format!("{} (column {})", &message[..at], &message[at + " at line 1 column ".len()..]),
        None => message.to_owned(),
    }
}

/// What [`BadLine::not_utf8`] says.
pub(crate) fn utf8_reason(error: std::str::Utf8Error) -> String {
    format!("not UTF-8: an invalid byte sequence at column {}", error.valid_up_to() + 1)
}
