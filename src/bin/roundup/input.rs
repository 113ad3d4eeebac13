//! The command line's input: a file or stdin, read on a thread of its own so
//! that SIGINT or SIGTERM ends it like the end of input does: open runs then
//! finish as `interrupted`, their summaries are written, and the output is
//! flushed before the process exits.

use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};

/// The bytes one read of the source asks for.
const CHUNK: usize = 1 << 16;
/// Chunks read ahead of the replay: enough to keep both threads busy, few
/// enough to bound memory.
const AHEAD: usize = 4;
/// How long a wait for input goes before it looks at the signals again.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Which signal asked the process to stop, if any.
#[derive(Clone)]
pub struct Signals {
    interrupt: Arc<AtomicBool>,
    terminate: Arc<AtomicBool>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM. A second one of the same kind, while the
    /// first is being handled, ends the process at once (exit 1), so that a
    /// stuck replay can still be stopped.
    pub fn catch() -> io::Result<Signals> {
        let signals = Signals { interrupt: Arc::default(), terminate: Arc::default() };
        for (signal, flag) in [(SIGINT, &signals.interrupt), (SIGTERM, &signals.terminate)] {
            signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(flag))?;
            signal_hook::flag::register(signal, Arc::clone(flag))?;
        }
        Ok(signals)
    }

    /// The exit status a caught signal asks for: 130 after SIGINT, 143
    /// after SIGTERM (128 plus the signal's number, as shells report it).
    pub fn exit_status(&self) -> Option<u8> {
        if self.interrupt.load(Ordering::Relaxed) {
            Some(130)
        } else if self.terminate.load(Ordering::Relaxed) {
            Some(143)
        } else {
            None
        }
    }
}

/// A file, read where it is: a read of a file never waits long, so the
/// signals are looked at between reads.
pub struct FileInput {
    file: io::BufReader<std::fs::File>,
    signals: Signals,
}

impl FileInput {
    /// Reads `file`.
    pub fn new(file: std::fs::File, signals: Signals) -> FileInput {
        FileInput { file: io::BufReader::with_capacity(CHUNK, file), signals }
    }
}

impl Read for FileInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, out)
    }
}

impl BufRead for FileInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.signals.exit_status().is_some() {
            return Ok(&[]);
        }
        self.file.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.file.consume(amount);
    }
}

/// A source that may wait (a pipe, a terminal), read ahead on its own
/// thread; a caught signal reads as the end of input even while the source
/// waits.
pub struct Interruptible {
    chunks: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
    signals: Signals,
}

impl Interruptible {
    /// Starts reading `source`.
    pub fn new(mut source: impl Read + Send + 'static, signals: Signals) -> Interruptible {
        let (send, chunks) = mpsc::sync_channel(AHEAD);
        thread::spawn(move || loop {
            let mut chunk = vec![0; CHUNK];
            let read = match source.read(&mut chunk) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => Err(error),
                Ok(read) => {
                    chunk.truncate(read);
                    Ok(chunk)
                }
            };
            let last = !matches!(&read, Ok(chunk) if !chunk.is_empty());
            // The replay ended (a signal, or stdout closed): stop reading.
            if send.send(read).is_err() || last {
                return;
            }
        });
        Interruptible { chunks, chunk: Vec::new(), at: 0, ended: false, signals }
    }
}

impl Read for Interruptible {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, out)
    }
}

impl BufRead for Interruptible {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.chunk.len() && !self.ended {
            if self.signals.exit_status().is_some() {
                self.ended = true;
                break;
            }
            match self.chunks.recv_timeout(SIGNAL_CHECK) {
                Ok(Ok(chunk)) if chunk.is_empty() => self.ended = true,
                Ok(Ok(chunk)) => (self.chunk, self.at) = (chunk, 0),
                Ok(Err(error)) => return Err(error),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
        Ok(&self.chunk[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.chunk.len());
    }
}

/// `Read` for a reader whose reading is its `BufRead`.
fn read_buffered(reader: &mut impl BufRead, out: &mut [u8]) -> io::Result<usize> {
    let available = reader.fill_buf()?;
    let read = available.len().min(out.len());
    out[..read].copy_from_slice(&available[..read]);
    reader.consume(read);
    Ok(read)
}
