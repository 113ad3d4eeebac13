//! `roundup ingest`: files read on several threads, one writer committing
//! their batches into the database; progress on stderr.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roundup::store::{read_source, Batch, Database, Outcome, SourceState};
use roundup::ReplayOptions;

use crate::args::{self, IngestArgs};
use crate::{compressed, folder};

/// Batches a reader may send ahead of the writer: bounded, so that a slow
/// disk holds the readers back rather than filling memory.
const QUEUED_BATCHES: usize = 4;
/// How often progress is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// What a reader tells the writer.
enum Message {
    /// A batch to commit, and where to hand it back once committed.
    Batch(Batch, mpsc::Sender<Batch>),
    Done {
        path: String,
        result: io::Result<Outcome>,
    },
}

/// A source to read: its path (its name in the database), and the
/// companions read after it as part of it.
type Source = (String, Vec<String>);

/// What the ingest did, for the closing line and the exit status.
#[derive(Debug, Default)]
struct Tally {
    read: u64,
    grew: u64,
    unchanged: u64,
    failed: u64,
    records: u64,
}

/// Runs `roundup ingest`; `Ok(false)` when some file could not be
/// ingested (each is named on stderr).
pub fn run(args: IngestArgs) -> Result<bool, String> {
    let started = Instant::now();
    let inputs = inputs(&args.paths)?;
    let paths: Vec<String> = inputs.iter().map(|(path, _)| path.clone()).collect();
    let mut db = Database::open(&args.db).map_err(|e| format!("{}: {e}", args.db.display()))?;
    let names: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut known = db.sources(&names).map_err(|e| format!("{}: {e}", args.db.display()))?;
    for (state, path) in known.iter_mut().zip(&paths) {
        if path == "-" {
            // Stdin cannot be read twice: it is read whole each time, and
            // what an earlier ingest of it wrote is replaced.
            *state = SourceState { id: state.id, records: state.records, ..SourceState::default() };
        }
    }
    let total: Option<u64> = inputs
        .iter()
        .flat_map(|(path, companions)| std::iter::once(path).chain(companions))
        .map(|path| {
            let compressed = path.ends_with(".gz") || path.ends_with(".zst");
            (path != "-" && !compressed).then(|| std::fs::metadata(path).map_or(0, |m| m.len()))
        })
        .sum();
    let mut options = ReplayOptions::new();
    options.from = args::input_format(&args.from);
    options.max_line_bytes = args.line.max_line_bytes;
    let jobs = args
        .jobs
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            |n| usize::try_from(n).unwrap_or(1),
        )
        .min(paths.len())
        .max(1);
    let path_of: std::collections::HashMap<i64, String> =
        known.iter().zip(&paths).map(|(state, path)| (state.id, path.clone())).collect();
    let queue: Arc<Mutex<VecDeque<(Source, SourceState)>>> =
        Arc::new(Mutex::new(inputs.into_iter().zip(known).collect()));
    let read_bytes = Arc::new(AtomicU64::new(0));
    let (send, receive) = mpsc::sync_channel::<Message>(QUEUED_BATCHES * jobs);
    let batch_bytes = args.batch as u64;
    let mut readers = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        let (queue, read_bytes, send, options) = (queue.clone(), read_bytes.clone(), send.clone(), options.clone());
        // Committed batches come back to the reader that made them, to be
        // freed on its thread: freed on the writer's, each of their
        // allocations would take the reader's allocator lock from it.
        let (back, committed) = mpsc::channel::<Batch>();
        readers.push(std::thread::spawn(move || loop {
            let next = queue.lock().map(|mut queue| queue.pop_front());
            let Ok(Some(((path, companions), known))) = next else { return };
            let mut counted = 0;
            let result = read_source(
                &known,
                &mut || open(&path, &companions),
                &options,
                batch_bytes,
                &mut |batch| {
                    committed.try_iter().for_each(drop);
                    send.send(Message::Batch(batch, back.clone())).map_err(|_| io::Error::other("the writer stopped"))
                },
                &mut |bytes| {
                    read_bytes.fetch_add(bytes.saturating_sub(counted), Ordering::Relaxed);
                    counted = bytes;
                },
            );
            if send.send(Message::Done { path, result }).is_err() {
                return;
            }
        }));
    }
    drop(send);
    let terminal = io::stderr().is_terminal();
    let show_progress = args.progress.asked().unwrap_or(terminal);
    let mut progress = Progress { started, files: paths.len(), total, terminal, shown: false, last: started };
    let mut tally = Tally::default();
    // A source whose batch the database refused takes no more batches.
    let mut refused: Vec<i64> = Vec::new();
    let mut done = 0;
    loop {
        let message = match receive.recv_timeout(PROGRESS_EVERY) {
            Ok(message) => Some(message),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match message {
            Some(Message::Batch(batch, back)) if !refused.contains(&batch.source) => match db.commit(&batch) {
                Ok(()) => {
                    tally.records += batch.records.len() as u64;
                    let _ = back.send(batch);
                }
                Err(error) => {
                    refused.push(batch.source);
                    tally.failed += 1;
                    progress.clear();
                    let path = path_of.get(&batch.source).map_or("?", String::as_str);
                    eprintln!("roundup: {path}: {}", crate::chain(&error));
                }
            },
            Some(Message::Batch(..)) | None => {}
            Some(Message::Done { path, result }) => {
                done += 1;
                match result {
                    Ok(Outcome::Read) => tally.read += 1,
                    Ok(Outcome::Grew) => tally.grew += 1,
                    Ok(Outcome::Unchanged) => tally.unchanged += 1,
                    Err(error) => {
                        tally.failed += 1;
                        progress.clear();
                        eprintln!("roundup: {path}: {error}");
                    }
                }
            }
        }
        if show_progress {
            progress.show(done, read_bytes.load(Ordering::Relaxed), &tally);
        }
    }
    for reader in readers {
        if reader.join().is_err() {
            tally.failed += 1;
            eprintln!("roundup: a reader thread stopped unexpectedly");
        }
    }
    progress.clear();
    if !args.quiet {
        let bytes = read_bytes.load(Ordering::Relaxed);
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "roundup: {} files into {}: {} read, {} read on, {} unchanged{}; {} records, {:.1} MB in {seconds:.1} s",
            paths.len(),
            args.db.display(),
            tally.read,
            tally.grew,
            tally.unchanged,
            if tally.failed > 0 { format!(", {} failed", tally.failed) } else { String::new() },
            tally.records,
            bytes as f64 / 1e6,
        );
    }
    Ok(tally.failed == 0)
}

/// The sources to read, each with its companions (read after it as one
/// source, named by its path): folders expanded to the recordings under
/// them, every path made absolute (the database names sources by it), each
/// source once.
fn inputs(given: &[String]) -> Result<Vec<Source>, String> {
    let mut sources = Vec::new();
    for path in given {
        if path == "-" {
            sources.push((path.clone(), Vec::new()));
            continue;
        }
        let at = Path::new(path);
        let found = if at.is_dir() {
            folder::recordings(at).map_err(|e| e.to_string())?
        } else {
            vec![folder::Recording { path: at.to_path_buf(), companions: Vec::new() }]
        };
        for recording in found {
            let companions = recording.companions.iter().map(|file| absolute(file)).collect::<Result<_, _>>()?;
            sources.push((absolute(&recording.path)?, companions));
        }
    }
    let mut seen = std::collections::HashSet::new();
    sources.retain(|(path, _)| seen.insert(path.clone()));
    Ok(sources)
}

/// A path made absolute, links resolved when it exists.
fn absolute(file: &Path) -> Result<String, String> {
    let absolute = std::fs::canonicalize(file)
        .or_else(|_| std::path::absolute(file))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(absolute.to_string_lossy().into_owned())
}

/// A source from its first byte, decompressed when it is compressed, and
/// its companions after it: their bytes are the source's, so that a
/// companion grown at the end is the source read on, and one changed
/// before the end (or the recording itself grown) the source read again.
fn open(path: &str, companions: &[String]) -> io::Result<Box<dyn BufRead>> {
    let first = open_one(path)?;
    if companions.is_empty() {
        return Ok(first);
    }
    let rest = companions.iter().map(std::path::PathBuf::from).collect();
    let open = |path: &Path| open_one(&path.to_string_lossy());
    Ok(Box::new(BufReader::with_capacity(1 << 16, folder::Chain::new(first, rest, open))))
}

/// One file (or stdin) from its first byte, decompressed when it is
/// compressed.
fn open_one(path: &str) -> io::Result<Box<dyn BufRead>> {
    let input: Box<dyn BufRead> = if path == "-" {
        Box::new(BufReader::with_capacity(1 << 16, io::stdin()))
    } else {
        let file = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    Ok(compressed::decompressed(input, path)?.0)
}

/// The progress line: files and bytes done, rate, time left.
struct Progress {
    started: Instant,
    files: usize,
    /// Bytes of all the files, when every one's size says how much there
    /// is to read (none compressed, no stdin).
    total: Option<u64>,
    terminal: bool,
    shown: bool,
    last: Instant,
}

impl Progress {
    fn show(&mut self, done: usize, bytes: u64, tally: &Tally) {
        let now = Instant::now();
        if now.duration_since(self.last) < PROGRESS_EVERY && done < self.files {
            return;
        }
        self.last = now;
        let seconds = now.duration_since(self.started).as_secs_f64().max(1e-3);
        let rate = bytes as f64 / seconds;
        let mut text = format!(
            "{done}/{} files, {:.1} MB, {:.1} MB/s, {} records",
            self.files,
            bytes as f64 / 1e6,
            rate / 1e6,
            tally.records
        );
        if let Some(total) = self.total.filter(|&total| total > 0 && rate > 0.0) {
            let left = total.saturating_sub(bytes) as f64 / rate;
            text.push_str(&format!(" of {:.1} MB, {left:.0} s left", total as f64 / 1e6));
        }
        if self.terminal {
            eprint!("\r\x1b[2Kroundup: {text}");
        } else {
            eprintln!("roundup: {text}");
        }
        self.shown = true;
    }

    /// Ends a progress line drawn in place, before another line is written.
    fn clear(&mut self) {
        if self.shown && self.terminal {
            eprint!("\r\x1b[2K");
        }
        self.shown = false;
    }
}
