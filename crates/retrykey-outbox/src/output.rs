//! What the outbox's programs print. A reader that goes away early (`| head`, `| grep -q`) ends
//! the output, not the program: Rust's `println!` would panic on the closed pipe.

use std::io::{ErrorKind, Write};

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
