//! Compressed inputs: gzip (`.gz`, several members read one after another)
//! and zstd (`.zst`, several frames likewise), told by their magic bytes,
//! not by the file's name, so a compressed stream on stdin reads too.

use std::io::{self, BufRead, BufReader, Read};

/// How an input is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression whose magic bytes `head` starts with.
    pub fn of(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// `input` (called `name` in errors), decompressed when its first bytes
/// say it is compressed, and how.
pub fn decompressed<'a>(
    mut input: Box<dyn BufRead + 'a>,
    name: &str,
) -> io::Result<(Box<dyn BufRead + 'a>, Option<Compression>)> {
    let Some(compression) = Compression::of(input.fill_buf()?) else {
        return Ok((input, None));
    };
    let decoder: Box<dyn Read + 'a> = match compression {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
        Compression::Zstd => Box::new(ZstdFrames { state: Frames::Between(input) }),
    };
    let named = Named { inner: decoder, what: format!("{name} ({} data)", compression.name()) };
    Ok((Box::new(BufReader::with_capacity(1 << 16, named)), Some(compression)))
}

/// A decoder whose errors say which input, and that it is compressed.
struct Named<R> {
    inner: R,
    what: String,
}

impl<R: Read> Read for Named<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", self.what)))
    }
}

/// The frames of a zstd stream, one after another (the decoder reads one).
struct ZstdFrames<R: BufRead> {
    state: Frames<R>,
}

enum Frames<R: BufRead> {
    /// Between frames: the source, at the next frame or at its end.
    Between(R),
    /// Inside a frame (boxed: a frame decoder is large, and there is one).
    In(Box<ruzstd::StreamingDecoder<R, ruzstd::FrameDecoder>>),
    /// A frame that did not read took the source with it.
    Broken,
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match std::mem::replace(&mut self.state, Frames::Broken) {
                Frames::In(mut frame) => {
                    let read = frame.read(buf)?;
                    if read > 0 || buf.is_empty() {
                        self.state = Frames::In(frame);
                        return Ok(read);
                    }
                    // The frame ended: the source goes on with the next one.
                    self.state = Frames::Between(frame.into_inner());
                }
                Frames::Between(mut source) => {
                    if source.fill_buf()?.is_empty() {
                        self.state = Frames::Between(source);
                        return Ok(0);
                    }
                    let frame = ruzstd::StreamingDecoder::new(source).map_err(|error| {
                        io::Error::new(io::ErrorKind::InvalidData, format!("a zstd frame that does not read: {error}"))
                    })?;
                    self.state = Frames::In(Box::new(frame));
                }
                Frames::Broken => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "the zstd stream broke off at a bad frame"))
                }
            }
        }
    }
}
