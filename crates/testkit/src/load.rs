//! Large recorded-looking streams, written piece by piece, for the memory
//! tests and the throughput figures (`examples/acp_load.rs`).

/// An ACP capture of one prompt whose agent runs `calls` shell tools, each
/// with a declaration, its input, `output` bytes of terminal output in
/// 4 KiB deltas (Claude Code's `_meta.terminal_output_delta`) and its
/// completion, and a line of text after every tool. Each piece (a few
/// lines) goes to `write`; the total is about `calls × (output + 1.2 KiB)`.
pub fn acp_shell_session(calls: usize, output: usize, mut write: impl FnMut(&[u8])) {
    let line = |update: String| {
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"load","update":{update}}}}}"#)
            + "\n"
    };
    write(br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"load","prompt":[{"type":"text","text":"Build it."}]}}"#);
    write(b"\n");
    let delta = "0123456789abcdef".repeat(256);
    for n in 0..calls {
        let id = format!("toolu_{n:08}");
        let mut piece = line(format!(
            r#"{{"sessionUpdate":"tool_call","toolCallId":"{id}","title":"Terminal","kind":"execute","status":"pending","content":[{{"type":"terminal","terminalId":"{id}"}}],"_meta":{{"claudeCode":{{"toolName":"Bash"}},"terminal_info":{{"terminal_id":"{id}"}}}}}}"#
        ));
        piece += &line(format!(
            r#"{{"sessionUpdate":"tool_call_update","toolCallId":"{id}","title":"make step {n}","rawInput":{{"command":"make step{n}","description":"Build step {n}"}}}}"#
        ));
        let mut left = output;
        while left > 0 {
            let take = left.min(delta.len());
            piece += &line(format!(
                r#"{{"sessionUpdate":"tool_call_update","toolCallId":"{id}","_meta":{{"terminal_output_delta":{{"terminal_id":"{id}","data":"{}"}}}}}}"#,
                &delta[..take]
            ));
            left -= take;
        }
        piece += &line(format!(
            r#"{{"sessionUpdate":"tool_call_update","toolCallId":"{id}","status":"completed","_meta":{{"terminal_exit":{{"exit_code":0,"signal":null,"terminal_id":"{id}"}}}}}}"#
        ));
        piece += &line(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Step done; next."}}"#.to_owned(),
        );
        write(piece.as_bytes());
    }
    write(br#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    write(b"\n");
}
