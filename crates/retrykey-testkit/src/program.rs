//! What a test reads from a finished program, as an operator would: its standard output, and a
//! refusal that is exactly one line on standard error with the exit status it promises.

use std::process::Output;

use crate::ScratchFile;

/// The `--db` value that names `file`, as the programs take it.
pub fn db_flag(file: &ScratchFile) -> String {
    format!("sqlite:{}", file.path().display())
}

/// The program's standard output, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Exit status `code`, and stderr one line that starts with `program: ` and contains `says`.
#[track_caller]
pub fn assert_refused(output: &Output, code: i32, program: &str, says: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with(&format!("{program}: ")), "{stderr:?}");
    assert!(stderr.contains(says), "{stderr:?} should say {says:?}");
}
