//! A folder as input: the recordings under it, as if each were named on
//! the command line (an agent's session logs: `~/.claude/projects`, a
//! Codex sessions tree, a folder of captures).

use std::io;
use std::path::{Path, PathBuf};

/// What a recording's name ends with (each also compressed, `.gz` or
/// `.zst`): JSON lines, SSE bodies, JSON documents and arrays, binary event
/// streams. Notes beside them (`README.md`, `SOURCES.md`) are not inputs.
const RECORDINGS: [&str; 6] = [".jsonl", ".ndjson", ".json", ".sse", ".bin", ".txt"];

/// The recordings under `dir`, in every folder below it, sorted by path;
/// links to folders are not followed (a link may lead back up).
///
/// # Errors
///
/// What reading a folder returns, naming it; a folder with no recording is
/// an error too (a mistyped path is more likely than an empty capture).
pub fn recordings(dir: &Path) -> io::Result<Vec<PathBuf>> {
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
    Ok(found)
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
}
