//! What the outbox's programs print. A reader that goes away early (`| head`, `| grep -q`) ends
//! the output, not the program: Rust's `println!` would panic on the closed pipe.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;

/// Writes `text` to stdout; a closed pipe is not an error, any other failure is.
pub fn print(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Prints `text` as `program`'s answer: success, or one line on stderr and status 1 when stdout
/// cannot be written.
pub fn printed(program: &str, text: &str) -> ExitCode {
    match print(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: cannot write the output: {error}");
            ExitCode::FAILURE
        }
    }
}

/// A duration for people: `850ms`, `42s`, `3m05s`, `2h07m`.
pub fn age(ms: i64) -> String {
    let ms = ms.max(0);
    let seconds = ms / 1_000;
    match seconds {
        0 => format!("{ms}ms"),
        1..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3_600, seconds % 3_600 / 60),
    }
}
