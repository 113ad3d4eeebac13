//! UTF-8 validation of input lines, the one check every line pays before
//! it is parsed as text. A SIMD check (`simdutf8`) says only whether a line
//! is valid, several times faster than the standard library's on the ASCII
//! most lines are; the standard check runs only on a line that is not, to
//! say where.

/// `bytes` as text, or the standard library's error saying where it is
/// not UTF-8.
pub(crate) fn from_utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => std::str::from_utf8(bytes),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn valid_text_is_itself_and_invalid_text_says_where() {
        for text in ["", "{\"a\":1}", "é ✓ 𝄞", &"x".repeat(300)] {
            assert_eq!(super::from_utf8(text.as_bytes()), Ok(text));
        }
        for bad in
            [&b"ab\xffcd"[..], b"\xc3", &[b'a'; 100].iter().copied().chain([0xe2, 0x28, 0xa1]).collect::<Vec<_>>()]
        {
            let expected = std::str::from_utf8(bad).unwrap_err();
            assert_eq!(super::from_utf8(bad).unwrap_err(), expected);
        }
    }
}
