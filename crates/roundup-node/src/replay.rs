//! `NativeReplayer`: a replay driven by the package's `replay()`: bytes in
//! (cut anywhere), the output format's bytes out, the command line's
//! output byte for byte.

use std::path::PathBuf;

use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;
use roundup::encoders::{Framing, OutputFormat};
use roundup::{ReplayOptions, Replayer as Inner};

use crate::{error, guarded, input_format};

/// A replay's options.
#[napi(object)]
pub struct ReplayerOptions {
    /// The input format; detected when absent.
    pub from: Option<String>,
    /// The output format.
    pub emit: Option<String>,
    /// SSE events instead of JSON lines.
    pub sse: Option<bool>,
    /// Keep at most this many sessions in memory.
    pub max_sessions: Option<u32>,
    /// Evict into files of this directory.
    pub evict_dir: Option<String>,
}

/// A replay in progress.
#[napi]
pub struct NativeReplayer {
    inner: Inner,
    /// The input ended: no more input is read.
    ended: bool,
    /// Every session has finished.
    done: bool,
    out: Vec<u8>,
}

#[napi(object)]
/// What was read so far.
pub struct Stats {
    /// Physical lines read, blank ones included.
    pub lines: f64,
    /// Lines reported as `bad_line`.
    pub bad_lines: f64,
    /// Payloads read.
    pub payloads: f64,
    /// Bytes read.
    pub bytes: f64,
    /// Sessions seen (counted at the end).
    pub sessions: f64,
    /// The input format read: the one asked for, or the one detected.
    pub format: Option<String>,
}

impl NativeReplayer {
    fn output(&mut self) -> String {
        self.out.clear();
        self.inner.take_output(&mut self.out);
        String::from_utf8_lossy(&self.out).into_owned()
    }

    fn open(&self, what: &str) -> napi::Result<()> {
        if self.ended {
            return Err(error("CLOSED", format!("{what} after the end of the input")));
        }
        Ok(())
    }
}

#[napi]
impl NativeReplayer {
    #[napi(constructor)]
    pub fn new(options: ReplayerOptions) -> napi::Result<NativeReplayer> {
        let emit = options.emit.as_deref().unwrap_or("records");
        let to = OutputFormat::named(emit).ok_or_else(|| {
            let names: Vec<&str> = roundup::encoders::REGISTRY.iter().map(|f| f.name()).collect();
            error("BAD_ARGUMENT", format!("emit {emit:?} is not an output format: {}", names.join(", ")))
        })?;
        let framing = if options.sse.unwrap_or(false) { Framing::Sse } else { Framing::Lines };
        let mut replay = ReplayOptions::new().to(to).framing(framing);
        if let Some(from) = options.from.as_deref() {
            replay = replay.from(input_format(from)?);
        }
        match (options.max_sessions, options.evict_dir) {
            (Some(0), _) => return Err(error("BAD_ARGUMENT", "maxSessions must be at least 1")),
            (Some(keep), dir) => replay = replay.evict(keep as usize, dir.map(PathBuf::from)),
            (None, Some(_)) => return Err(error("BAD_ARGUMENT", "evictDir needs maxSessions")),
            (None, None) => {}
        }
        let inner = Inner::new(&replay).map_err(|e| {
            let cause = std::error::Error::source(&e).map(|s| format!(": {s}")).unwrap_or_default();
            error("IO", format!("{e}{cause}"))
        })?;
        Ok(NativeReplayer { inner, ended: false, done: false, out: Vec::new() })
    }

    /// A piece of input (lines cut anywhere); returns the output it
    /// completed.
    #[napi]
    pub fn feed(&mut self, bytes: Uint8Array) -> napi::Result<String> {
        self.open("feed")?;
        guarded(|| self.inner.feed(&bytes, &mut ()))?;
        Ok(self.output())
    }

    /// `feed` with text.
    #[napi]
    pub fn feed_text(&mut self, text: String) -> napi::Result<String> {
        self.open("feed")?;
        guarded(|| self.inner.feed(text.as_bytes(), &mut ()))?;
        Ok(self.output())
    }

    /// One whole event's JSON text; returns the output it completed.
    #[napi]
    pub fn feed_payload(&mut self, payload: String) -> napi::Result<String> {
        self.open("feed")?;
        guarded(|| self.inner.feed_payload(payload.as_bytes(), &mut ()))?;
        Ok(self.output())
    }

    /// The input ended: returns the output that completes. Then
    /// `finishNext` until it returns `null`.
    #[napi]
    pub fn end_input(&mut self) -> napi::Result<String> {
        if !self.ended {
            self.ended = true;
            guarded(|| self.inner.end_input(&mut ()))?;
        }
        Ok(self.output())
    }

    /// Finishes the next open session (one at a time, so that a million
    /// sessions' last rounds are never held at once); its output, or
    /// `null` when every session has finished.
    #[napi]
    pub fn finish_next(&mut self) -> napi::Result<Option<String>> {
        if !self.ended {
            self.ended = true;
            guarded(|| self.inner.end_input(&mut ()))?;
        }
        if self.done {
            return Ok(None);
        }
        let more = guarded(|| self.inner.finish_next());
        if !matches!(more, Ok(true)) {
            self.done = true;
        }
        more?;
        let out = self.output();
        Ok(if self.done && out.is_empty() { None } else { Some(out) })
    }

    /// What was read so far.
    #[napi]
    pub fn stats(&self) -> Stats {
        let stats = self.inner.stats();
        // Counts of one process's input: far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        Stats {
            lines: stats.lines as f64,
            bad_lines: stats.bad_lines as f64,
            payloads: stats.payloads as f64,
            bytes: stats.bytes as f64,
            sessions: stats.sessions as f64,
            format: stats.format.map(|f| f.name().to_owned()),
        }
    }
}
