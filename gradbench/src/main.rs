//! `gradbench-tool`: answers GradBench's messages, one JSON line in, one JSON line out, until
//! the input ends. Diagnostics go to standard error; standard output carries only the protocol.

use std::io::{BufRead, Write};

fn main() {
    let mut tool = wengert_gradbench::Tool;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let response = tool.respond(&line);
        if writeln!(out, "{response}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
}
