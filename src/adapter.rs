//! What the protocol adapters share: how they hand out calls, and the small
//! helpers for reading native events and keeping what they carry.

use serde_json::Value;

use crate::anomaly::AnomalyKind;
use crate::call::Call;
use crate::round::Meta;

/// Receives the calls a translation makes, each with the session it belongs
/// to (`None` for an event that names none).
pub type Emit<'e> = dyn FnMut(Option<&str>, Call<'_>) + 'e;

/// Reports what an adapter cannot translate, keeping what it saw.
pub(crate) fn report(emit: &mut Emit<'_>, session: Option<&str>, kind: AnomalyKind, detail: String) {
    emit(session, Call::Anomaly { kind, id: None, detail: &detail });
}

/// Metadata with one key.
pub(crate) fn one(key: &str, value: Value) -> Meta {
    let mut meta = Meta::new();
    meta.insert(key.to_owned(), value);
    meta
}

/// The fields of `event` that it has, as metadata under their own names.
pub(crate) fn pick(event: &Value, fields: &[&str]) -> Meta {
    fields.iter().filter_map(|f| Some(((*f).to_owned(), event.get(*f)?.clone()))).collect()
}

/// The value at a path of object keys. `Value::pointer` would do, but it
/// allocates for every key it unescapes, on every event.
pub(crate) fn at_path<'v>(value: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().try_fold(value, |value, key| value.get(key))
}
