//! Reading one source into batches of rows: the part of an ingest that
//! needs no database, so that many sources are read at once, each on its
//! own thread, while one writer commits what they send.
//!
//! A source is read on from where the database says it stopped, once the
//! bytes read before are checked to be the same (their length and CRC-32).
//! Each [`Batch`] carries the records read since the last one *and* the
//! replay's state after them (how far the input was read, and the replay's
//! checkpoint), so that committing a batch is one transaction: whatever
//! moment the process is killed at, the database holds a state that the
//! next ingest reads on from, and no record is lost or written twice.

use std::io::{self, Read};

use crate::replay::{ReplayCheckpoint, ReplayOptions, Replayer};
use crate::wire::OutputLine;

/// How much input one read takes.
const READ_AT_ONCE: usize = 64 << 10;

/// What the database knows of a source: how far it was read, and the
/// replay's state there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceState {
    /// The source's row id.
    pub id: i64,
    /// Bytes read of the (decompressed) input.
    pub read_bytes: u64,
    /// The CRC-32 of those bytes.
    pub read_crc32: u32,
    /// Records written up to the end of what was read; those from here on
    /// are the end of input's (the runs left open, finished as
    /// `interrupted`), replaced when the source grows.
    pub settled: u64,
    /// Records written in all.
    pub records: u64,
    /// The replay's checkpoint at `read_bytes`, before the end of input.
    pub checkpoint: Option<Vec<u8>>,
}

/// Rows to commit for one source, with the state they bring it to.
#[derive(Debug)]
pub struct Batch {
    /// The source's row id.
    pub source: i64,
    /// Drop the source's records from this `seq` on first: 0 when the
    /// source is read again from its start, `settled` when it is read on.
    pub drop_from: Option<u64>,
    /// The records, the first of them the `first_seq`th of the source.
    pub records: Vec<OutputLine>,
    /// The `seq` of the first record.
    pub first_seq: u64,
    /// Records the source held before this batch, as its reader saw them:
    /// the writer refuses a batch when the database says otherwise
    /// (another ingest of the same source committed meanwhile).
    pub expected_records: u64,
    /// The source's state once the batch is committed.
    pub state: SourceState,
    /// The input format read, once decided.
    pub format: Option<&'static str>,
    /// Lines (payloads) read, and those that could not be.
    pub lines: u64,
    /// Lines that could not be read.
    pub bad_lines: u64,
}

/// How a source's reading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing was read past what the database holds: no batch was sent.
    Unchanged,
    /// Read on from where the last ingest stopped.
    Grew,
    /// Read from its start: new, or its head changed since.
    Read,
}

/// Reads a source from where `known` says it stopped, sending a [`Batch`]
/// every `batch_bytes` of input and one at its end to `commit`; `progress`
/// hears of every piece of input read (bytes of it so far).
///
/// `open` gives the source from its first byte. It is called once, and a
/// second time when the bytes read before changed (the source was
/// replaced or edited): the source is then read again from its start, and
/// its first batch drops the records it held.
///
/// # Errors
///
/// What `open`, reading the input or `commit` return (the reading stops
/// at the first error; what was committed before stays).
pub fn read_source<R: Read, E: From<io::Error>>(
    known: &SourceState,
    open: &mut dyn FnMut() -> io::Result<R>,
    options: &ReplayOptions,
    batch_bytes: u64,
    commit: &mut dyn FnMut(Batch) -> Result<(), E>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, E> {
    let options = options.clone().record_values(true);
    let mut buffer = vec![0; READ_AT_ONCE];
    let mut input = open()?;
    let mut reader = Reader::new(known, &options, 0)?;
    let mut outcome = Outcome::Read;
    if let Some(checkpoint) = &known.checkpoint {
        // The bytes read before must be the same for their state to hold.
        let mut crc = crc32fast::Hasher::new();
        let mut left = known.read_bytes;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buffer.len());
            let read = read_some(&mut input, &mut buffer[..want])?;
            if read == 0 {
                break;
            }
            crc.update(&buffer[..read]);
            left -= read as u64;
            progress(known.read_bytes - left);
        }
        let same = left == 0 && crc.clone().finalize() == known.read_crc32;
        let mut resumed = Reader::new(known, &options, known.settled)?;
        let restored =
            same && ReplayCheckpoint::from_json(checkpoint).is_ok_and(|saved| resumed.replayer.restore(saved).is_ok());
        if restored {
            let read = read_some(&mut input, &mut buffer)?;
            if read == 0 {
                return Ok(Outcome::Unchanged);
            }
            resumed.crc = crc;
            resumed.read_bytes = known.read_bytes;
            resumed.feed(&buffer[..read]);
            progress(resumed.read_bytes);
            reader = resumed;
            outcome = Outcome::Grew;
        } else {
            input = open()?;
        }
    }
    let mut since_batch = 0u64;
    loop {
        let read = read_some(&mut input, &mut buffer)?;
        if read == 0 {
            break;
        }
        reader.feed(&buffer[..read]);
        progress(reader.read_bytes);
        since_batch += read as u64;
        if since_batch >= batch_bytes {
            since_batch = 0;
            commit(reader.batch(false)?)?;
        }
    }
    commit(reader.batch(true)?)?;
    Ok(outcome)
}

/// Reads into `buffer`, again when interrupted; 0 at the end.
fn read_some(input: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        match input.read(buffer) {
            Ok(read) if read <= buffer.len() => return Ok(read),
            Ok(_) => return Err(io::Error::other("the reader returned more bytes than it was given room for")),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

/// The replay of one source and what it has not sent yet.
struct Reader<'a> {
    known: &'a SourceState,
    replayer: Replayer,
    read_bytes: u64,
    crc: crc32fast::Hasher,
    /// The `seq` of the next record.
    seq: u64,
    /// Records the source holds in the database, as far as this reader
    /// knows.
    expected: u64,
    /// The first batch drops the source's records from here on; `None`
    /// once it was sent.
    drop_from: Option<u64>,
}

impl<'a> Reader<'a> {
    /// A reader whose first record is the `seq`th of the source.
    fn new(known: &'a SourceState, options: &ReplayOptions, seq: u64) -> io::Result<Reader<'a>> {
        Ok(Reader {
            known,
            replayer: Replayer::values_only(options).map_err(io::Error::other)?,
            read_bytes: 0,
            crc: crc32fast::Hasher::new(),
            seq,
            expected: known.records,
            drop_from: Some(seq),
        })
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.crc.update(bytes);
        self.read_bytes += bytes.len() as u64;
        self.replayer.feed(bytes, &mut ());
    }

    /// What was read since the last batch; at the `end`, with the runs
    /// left open finished (the records from `settled` on), the checkpoint
    /// being the state before.
    fn batch(&mut self, end: bool) -> io::Result<Batch> {
        let mut records = Vec::new();
        self.replayer.take_records(&mut records);
        self.replayer.discard_output();
        let checkpoint = self.replayer.checkpoint().map_err(io::Error::other)?.to_json();
        let settled = self.seq + records.len() as u64;
        if end {
            self.replayer.end_input(&mut ());
            while self.replayer.finish_next() {}
            self.replayer.take_records(&mut records);
            self.replayer.discard_output();
        }
        let first_seq = self.seq;
        self.seq += records.len() as u64;
        let stats = self.replayer.stats();
        let batch = Batch {
            source: self.known.id,
            drop_from: self.drop_from.take(),
            records,
            first_seq,
            expected_records: self.expected,
            state: SourceState {
                id: self.known.id,
                read_bytes: self.read_bytes,
                read_crc32: self.crc.clone().finalize(),
                settled,
                records: self.seq,
                checkpoint: Some(checkpoint),
            },
            format: stats.format.map(crate::adapters::InputFormat::name),
            lines: stats.lines,
            bad_lines: stats.bad_lines,
        };
        self.expected = self.seq;
        Ok(batch)
    }
}
