//! A folder as input: the recordings under it, as if each were named on
//! the command line (an agent's session logs: `~/.claude/projects`, a
//! Codex sessions tree, a folder of captures).
//!
//! A recording may come with companions: when a folder holds `X.jsonl`
//! and a folder `X/` beside it, the recordings under `X/` belong to `X`
//! (Claude Code writes a session's subagents to
//! `<session>/subagents/agent-<id>.jsonl`, beside `<session>.jsonl`, and
//! copies their lines into the session's own file too). They are read
//! right after it, as one input, so that what the files share is known
//! once: read as inputs of their own, a subagent would be counted twice.

use std::collections::HashMap;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

/// What a recording's name ends with (each also compressed, `.gz` or
/// `.zst`): JSON lines, SSE bodies, JSON documents and arrays, binary event
/// streams. Notes beside them (`README.md`, `SOURCES.md`) are not inputs.
const RECORDINGS: [&str; 6] = [".jsonl", ".ndjson", ".json", ".sse", ".bin", ".txt"];

/// One input of a folder: a recording, and the recordings under the folder
/// of its name beside it, read after it as one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub path: PathBuf,
    /// In path order.
    pub companions: Vec<PathBuf>,
}

/// The recordings under `dir`, in every folder below it, sorted by path,
/// each with its companions; links to folders are not followed (a link
/// may lead back up).
///
/// A recording `D/X.<ending>` takes every recording under the folder `D/X/`
/// (at any depth) as its companion; when several recordings are named `X`
/// (`X.jsonl`, `X.sse`), the first in path order does. A companion is no
/// input of its own.
///
/// # Errors
///
/// What reading a folder returns, naming it; a folder with no recording is
/// an error too (a mistyped path is more likely than an empty capture).
pub fn recordings(dir: &Path) -> io::Result<Vec<Recording>> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).map_err(at(&folder))? {
            let entry = entry.map_err(at(&folder))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(at(&path))?;
            if kind.is_dir() {
                folders.push(path);
            } else if is_recording(&path) {
                found.push(path);
            }
        }
    }
    if found.is_empty() {
        let kinds = RECORDINGS.join(", ");
        let message = format!("a folder with no recording in it (files ending {kinds}, or those .gz or .zst)");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    }
    found.sort();
    Ok(grouped(dir, found))
}

/// Sorted recordings grouped with their companions: each recording under a
/// folder named as a recording beside it (the outermost such folder, so a
/// companion's own companions are its recording's too) follows that one.
fn grouped(dir: &Path, found: Vec<PathBuf>) -> Vec<Recording> {
    let mut owner_of: HashMap<PathBuf, usize> = HashMap::new();
    for (at, path) in found.iter().enumerate() {
        if let (Some(parent), Some(stem)) = (path.parent(), stem(path)) {
            owner_of.entry(parent.join(stem)).or_insert(at);
        }
    }
    let mut owner = vec![None; found.len()];
    for (at, path) in found.iter().enumerate() {
        let mut folders: Vec<&Path> = path.ancestors().skip(1).take_while(|folder| *folder != dir).collect();
        folders.reverse();
        owner[at] = folders.iter().find_map(|folder| owner_of.get(*folder).copied());
    }
    let mut recordings: Vec<Option<Recording>> =
        found.iter().map(|path| Some(Recording { path: path.clone(), companions: Vec::new() })).collect();
    for (at, path) in found.iter().enumerate() {
        // A companion of a companion: of the recording that one follows.
        let mut top = owner[at];
        while let Some(next) = top.and_then(|top| owner[top]) {
            top = Some(next);
        }
        if let Some(Some(recording)) = top.map(|top| &mut recordings[top]) {
            recording.companions.push(path.clone());
        }
    }
    for (at, recording) in recordings.iter_mut().enumerate() {
        if owner[at].is_some() {
            *recording = None;
        }
    }
    recordings.into_iter().flatten().collect()
}

/// A recording's name without its ending (and compression): the name of
/// the folder of its companions.
fn stem(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(name);
    let name = name.strip_suffix(".chunks.txt").unwrap_or(name);
    RECORDINGS.iter().find_map(|ending| name.strip_suffix(ending)).filter(|stem| !stem.is_empty())
}

/// Opens a file of a [`Chain`] (decompressed, its errors naming it).
pub type Open<'a> = Box<dyn FnMut(&Path) -> io::Result<Box<dyn BufRead + 'a>> + 'a>;

/// A recording read with its companions after it, as one stream of bytes:
/// a newline between two files when the first does not end with one, so
/// that its last line and the next file's first stay two lines.
pub struct Chain<'a> {
    current: Box<dyn BufRead + 'a>,
    rest: std::vec::IntoIter<PathBuf>,
    open: Open<'a>,
    /// The last byte given.
    last: Option<u8>,
    /// A newline is owed before the next file's first byte.
    newline: bool,
}

impl<'a> Chain<'a> {
    /// `first`, then each of `rest` as `open` gives it (opened when its
    /// turn comes).
    pub fn new(
        first: Box<dyn BufRead + 'a>,
        rest: Vec<PathBuf>,
        open: impl FnMut(&Path) -> io::Result<Box<dyn BufRead + 'a>> + 'a,
    ) -> Chain<'a> {
        Chain { current: first, rest: rest.into_iter(), open: Box::new(open), last: None, newline: false }
    }
}

impl Read for Chain<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if buffer.is_empty() {
            return Ok(0);
        }
        loop {
            if std::mem::take(&mut self.newline) {
                if let Some(first) = buffer.first_mut() {
                    *first = b'\n';
                }
                self.last = Some(b'\n');
                return Ok(1);
            }
            let read = self.current.read(buffer)?;
            if let Some(&last) = buffer.get(..read).and_then(<[u8]>::last) {
                self.last = Some(last);
                return Ok(read);
            }
            let Some(next) = self.rest.next() else { return Ok(0) };
            self.current = (self.open)(&next)?;
            self.newline = self.last.is_some_and(|last| last != b'\n');
        }
    }
}

/// An error of reading `path`, naming it (made only when one happens).
fn at(path: &Path) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn is_recording(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else { return false };
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(name);
    // A `.txt` is a recording only as a chunk log (`*.chunks.txt`); other
    // text files are notes.
    RECORDINGS.iter().any(|ending| name.ends_with(ending)) && (!name.ends_with(".txt") || name.ends_with(".chunks.txt"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recordings_are_told_from_notes() {
        for name in ["a.jsonl", "b.sse", "c.json", "d.bin", "e.ndjson.gz", "f.jsonl.zst", "g.chunks.txt"] {
            assert!(is_recording(Path::new(name)), "{name}");
        }
        for name in ["README.md", "SOURCES.md", "notes.txt", "a.jsonl.bak", "image.png"] {
            assert!(!is_recording(Path::new(name)), "{name}");
        }
    }

    /// A folder of its own under the system's temporary one, with `files`
    /// (paths under it) written.
    fn folder_with(name: &str, files: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("roundup-folder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for file in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file.as_bytes()).unwrap();
        }
        dir
    }

    fn names(dir: &Path, found: &[Recording]) -> Vec<(String, Vec<String>)> {
        let name = |path: &Path| path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        found.iter().map(|r| (name(&r.path), r.companions.iter().map(|c| name(c)).collect())).collect()
    }

    #[test]
    fn companions_follow_the_recording_of_their_folders_name() {
        let dir = folder_with(
            "companions",
            &[
                "proj/s1.jsonl",
                "proj/s1/subagents/agent-b.jsonl",
                "proj/s1/subagents/agent-a.jsonl",
                "proj/s1/subagents/notes.md",
                "proj/s1/tool-results/t.txt",
                "proj/s2.jsonl.gz",
                "proj/s2/subagents/agent-c.jsonl",
                "proj/s2/subagents/agent-c/deeper.jsonl",
                "proj/agent-old.jsonl",
                "proj/lone/x.jsonl",
                "proj/README.md",
            ],
        );
        let found = recordings(&dir).unwrap();
        // Path order is by component: `agent-c/…` before `agent-c.jsonl`.
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            names(&dir, &found),
            [
                ("proj/agent-old.jsonl".to_owned(), Vec::new()),
                ("proj/lone/x.jsonl".to_owned(), Vec::new()),
                (
                    "proj/s1.jsonl".to_owned(),
                    owned(&["proj/s1/subagents/agent-a.jsonl", "proj/s1/subagents/agent-b.jsonl"])
                ),
                (
                    "proj/s2.jsonl.gz".to_owned(),
                    owned(&["proj/s2/subagents/agent-c/deeper.jsonl", "proj/s2/subagents/agent-c.jsonl"])
                ),
            ]
        );
        // The folder of companions named alone: each is an input of its own.
        let alone = recordings(&dir.join("proj/s1")).unwrap();
        assert_eq!(alone.len(), 2);
        assert!(alone.iter().all(|r| r.companions.is_empty()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_first_of_two_recordings_of_one_name_takes_the_companions() {
        let dir = folder_with("two-names", &["x.jsonl", "x.sse", "x/a.jsonl"]);
        let found = recordings(&dir).unwrap();
        let expected = [("x.jsonl".to_owned(), vec!["x/a.jsonl".to_owned()]), ("x.sse".to_owned(), Vec::new())];
        assert_eq!(names(&dir, &found), expected);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_chain_keeps_each_files_lines_apart() {
        let dir = folder_with("chain", &[]);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in [("b", "no end"), ("c", ""), ("d", "ends\n"), ("e", "last")] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let open = |path: &Path| -> io::Result<Box<dyn BufRead>> {
            Ok(Box::new(io::BufReader::new(std::fs::File::open(path)?)))
        };
        let rest = ["b", "c", "d", "e"].iter().map(|name| dir.join(name)).collect();
        let mut text = String::new();
        let first: Box<dyn BufRead> = Box::new(&b"first\n"[..]);
        Chain::new(first, rest, open).read_to_string(&mut text).unwrap();
        assert_eq!(text, "first\nno end\nends\nlast");
        let missing = vec![dir.join("missing")];
        let first: Box<dyn BufRead> = Box::new(&b"x"[..]);
        let error = Chain::new(first, missing, open).read_to_string(&mut String::new()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
