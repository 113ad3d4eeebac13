//! A tool call's `content` array as text: what the result of a tool shows.

use std::fmt::Write;

use crate::adapters::borrowed::Raw;

use super::wire::{ContentBlock, ToolContent};
use crate::adapters::borrowed::view_of;

/// What a `content` array renders to.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Rendered {
    /// The text of the blocks that have one, joined by newlines: text
    /// blocks as they are, diffs as a unified-looking patch.
    pub text: String,
    /// Every block is a text content block (Kimi's arguments-as-content).
    pub only_text: bool,
    /// Some block has no text rendering (an image, a resource, a shape
    /// this adapter does not know): the content is kept as metadata.
    pub unrendered: bool,
    /// A terminal block: the output comes from the terminal.
    pub terminal: bool,
}

/// Renders a `content` array; `None` when it is not an array of blocks.
pub(super) fn render(content: Raw<'_>) -> Option<Rendered> {
    let blocks: Vec<ToolContent<'_>> = view_of(content)?;
    let mut rendered = Rendered { only_text: !blocks.is_empty(), ..Rendered::default() };
    let mut parts: Vec<String> = Vec::new();
    for block in &blocks {
        let kind = block.kind.as_deref().unwrap_or_default();
        if kind != "content" || block.content.and_then(ContentBlock::text).is_none() {
            rendered.only_text = false;
        }
        match kind {
            "content" => match block.content.and_then(ContentBlock::text) {
                Some(text) => parts.push(text.into_owned()),
                None => rendered.unrendered = true,
            },
            "diff" => parts.push(diff(block)),
            "terminal" => rendered.terminal = true,
            _ => rendered.unrendered = true,
        }
    }
    rendered.text = parts.join("\n");
    Some(rendered)
}

/// A diff block as a patch. JetBrains Air attaches the real patch in
/// `_meta.jetbrains.air.diffPatch.text` when old and new text are not given.
fn diff(block: &ToolContent<'_>) -> String {
    if let Some(patch) = block.meta.and_then(air_patch) {
        return patch;
    }
    let path = block.path.as_deref().unwrap_or_default();
    let old = block.old_text.as_deref();
    let new = block.new_text.as_deref().unwrap_or_default();
    let mut diff = format!("--- {}\n+++ {path}\n", if old.is_some() { path } else { "/dev/null" });
    for line in old.unwrap_or_default().lines() {
        let _ = writeln!(diff, "-{line}");
    }
    for line in new.lines() {
        let _ = writeln!(diff, "+{line}");
    }
    diff
}

fn air_patch(meta: Raw<'_>) -> Option<String> {
    let meta: serde_json::Value = serde_json::from_str(meta.get()).ok()?;
    meta.pointer("/jetbrains/air/diffPatch/text")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Raw<'_> {
        Raw::of(json)
    }

    #[test]
    fn text_diff_and_terminal_blocks() {
        let content = raw(r#"[{"type":"content","content":{"type":"text","text":"a"}},
                {"type":"diff","path":"x","oldText":"1","newText":"2"},{"type":"terminal","terminalId":"t"}]"#);
        let rendered = render(content).unwrap();
        assert_eq!(rendered.text, "a\n--- x\n+++ x\n-1\n+2\n");
        assert!(rendered.terminal && !rendered.only_text && !rendered.unrendered);
    }

    #[test]
    fn images_are_unrendered_and_non_arrays_are_none() {
        let image = raw(r#"[{"type":"content","content":{"type":"image","data":"AAAA"}}]"#);
        let rendered = render(image).unwrap();
        assert!(rendered.unrendered && rendered.text.is_empty());
        assert_eq!(render(raw(r#"{"type":"text"}"#)), None);
        assert!(render(raw(r#"[{"type":"content","content":{"type":"text","text":"k"}}]"#)).unwrap().only_text);
    }
}
