//! `NativeAdapter`: one protocol's events in, the calls they mean out, as
//! ops JSONL objects (SPEC §3) that any builder or router takes.

use napi::bindgen_prelude::{External, Uint8Array};
use napi_derive::napi;
use roundup::adapters::{Adapter as Inner, CallSink, InputFormat};
use roundup::Call;

use crate::{error, guarded, input_format};

/// The calls an adapter makes, as the text of a JSON array of ops objects.
struct Ops {
    text: Vec<u8>,
    at_ms: Option<u64>,
}

impl Ops {
    fn new() -> Ops {
        Ops { text: vec![b'['], at_ms: None }
    }

    fn into_text(mut self) -> String {
        self.text.push(b']');
        String::from_utf8_lossy(&self.text).into_owned()
    }
}

impl CallSink for Ops {
    fn call(&mut self, session: Option<&str>, call: Call<'_>) {
        let Ok(mut op) = serde_json::to_vec(&call) else { return };
        // The call's object, then its address and clock reading (SPEC §3).
        if op.pop() != Some(b'}') {
            return;
        }
        if let Some(session) = session {
            op.extend_from_slice(b",\"session\":");
            if let Ok(name) = serde_json::to_vec(session) {
                op.extend_from_slice(&name);
            }
        }
        if let Some(at_ms) = self.at_ms {
            op.extend_from_slice(format!(",\"at_ms\":{at_ms}").as_bytes());
        }
        op.push(b'}');
        if self.text.len() > 1 {
            self.text.push(b',');
        }
        self.text.extend_from_slice(&op);
    }

    fn clock(&mut self, at_ms: u64) {
        self.at_ms = Some(at_ms);
    }
}

/// The translator of one stream of a protocol: it keeps what translating
/// needs across events.
pub struct NativeAdapter {
    format: &'static InputFormat,
    inner: Box<dyn Inner>,
}

impl NativeAdapter {
    pub fn new(format: String) -> napi::Result<NativeAdapter> {
        let format = input_format(&format)?;
        Ok(NativeAdapter { format, inner: format.adapter() })
    }

    /// The format's name.
    pub fn format(&self) -> String {
        self.format.name().to_owned()
    }

    /// The calls one event (its JSON text) means, as a JSON array of ops
    /// objects; an event that cannot be read is an error.
    pub fn translate(&mut self, event: Uint8Array) -> napi::Result<String> {
        self.translate_bytes(&event)
    }

    /// `translate`, with the event's JSON as a string.
    pub fn translate_text(&mut self, event: String) -> napi::Result<String> {
        self.translate_bytes(event.as_bytes())
    }

    /// The stream ended: the calls for what the adapter still holds.
    pub fn end(&mut self) -> napi::Result<String> {
        let mut ops = Ops::new();
        guarded(|| self.inner.end(&mut ops))?;
        Ok(ops.into_text())
    }
}

impl NativeAdapter {
    fn translate_bytes(&mut self, bytes: &[u8]) -> napi::Result<String> {
        let mut ops = Ops::new();
        let name = self.format.name();
        guarded(|| self.inner.translate(bytes, &mut ops))?
            .map_err(|bad| error("BAD_EVENT", format!("{name} event: {}", bad.reason)))?;
        Ok(ops.into_text())
    }
}

// The functions the package calls: each takes the object as an External,
// which Node-API hands over faster than a class instance.

/// `NativeAdapter::new`.
#[napi]
pub fn adapter_new(format: String) -> napi::Result<External<NativeAdapter>> {
    NativeAdapter::new(format).map(External::new)
}

/// The format's name.
#[napi]
pub fn adapter_format(this: &External<NativeAdapter>) -> String {
    this.format()
}

/// The calls one event (its JSON text) means, as a JSON array of ops
/// objects; an event that cannot be read is an error.
#[napi]
pub fn adapter_translate(this: &mut External<NativeAdapter>, event: Uint8Array) -> napi::Result<String> {
    this.translate(event)
}

/// `translate`, with the event's JSON as a string.
#[napi]
pub fn adapter_translate_text(this: &mut External<NativeAdapter>, event: String) -> napi::Result<String> {
    this.translate_text(event)
}

/// The stream ended: the calls for what the adapter still holds.
#[napi]
pub fn adapter_end(this: &mut External<NativeAdapter>) -> napi::Result<String> {
    this.end()
}
