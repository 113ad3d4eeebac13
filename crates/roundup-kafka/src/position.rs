//! How far a partition's checkpoints reach in the input.
//!
//! A transaction commits at once, but its markers reach each partition it
//! wrote one by one. The committed input offsets are read stable (the read
//! waits for a transaction that wrote them to end), while a `read_committed`
//! reader of the checkpoint partition stops at that partition's last stable
//! offset, which may still lie before the last committed transaction's
//! checkpoints: just after a broker restart, say, while the coordinator
//! writes the markers of the transactions it had prepared. A restore that
//! stopped there would read on from the committed offset with the state of
//! an older batch, and the events of the newer one would be lost. (CI saw
//! it once: 47 of 200 sessions short after a broker restart.)
//!
//! So each transaction writes, beside its checkpoints, one record per input
//! partition it read, to the checkpoint partition of the same number: under
//! [`KEY`], the input offset after the batch. A restore reads until that
//! record says the committed offset, and knows then that it holds the state
//! the offset was committed with.

/// The key of a position record. No session can have it: sessions are
/// UTF-8 (the worker reads record keys lossily), and this is not.
pub const KEY: &[u8] = b"\xffroundup-kafka:position";

/// The record's value: the offset in decimal, readable by any console
/// consumer.
pub fn encode(offset: i64) -> Vec<u8> {
    offset.to_string().into_bytes()
}

/// The offset a position record holds, `None` when it holds none.
pub fn decode(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok()?.parse().ok().filter(|&offset| offset >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_reads_back_as_itself() {
        for offset in [0, 1, 4_095, i64::MAX] {
            assert_eq!(decode(&encode(offset)), Some(offset));
        }
    }

    #[test]
    fn a_value_that_is_no_offset_reads_as_none() {
        for value in [&b""[..], b"-1", b"12x", b"\xff", b" 12"] {
            assert_eq!(decode(value), None, "{value:?}");
        }
    }

    #[test]
    fn no_session_key_is_the_position_key() {
        // A session key is what the worker's lossy UTF-8 reading makes of
        // any record key: even the position key's own bytes.
        let session = String::from_utf8_lossy(KEY);
        assert_ne!(session.as_bytes(), KEY);
    }
}
