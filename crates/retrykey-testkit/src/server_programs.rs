//! PostgreSQL's server programs, found once for every run that starts a server of its own (the
//! outbox's fault table, `pg-faults`), and whether this process runs as root (PostgreSQL refuses
//! to, so a run as root starts the server as the `postgres` user).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs a run of its own server calls.
const PROGRAMS: [&str; 4] = ["initdb", "postgres", "pg_ctl", "pg_isready"];

/// The folder of the server's programs: the newest server under /usr/lib/postgresql (Debian's
/// layout), else the one `pg_config --bindir` names. `Err` says what is missing.
pub fn bin_dir() -> Result<PathBuf, String> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            has_programs(&bin).then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Ok(bin);
    }
    let bindir = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    match bindir {
        Some(bin) if has_programs(&bin) => Ok(bin),
        _ => Err(format!(
            "needs the PostgreSQL server programs ({}) under /usr/lib/postgresql/*/bin or \
             `pg_config --bindir`: `just postgres` installs them",
            PROGRAMS.join(", ")
        )),
    }
}

fn has_programs(bin: &Path) -> bool {
    PROGRAMS.iter().all(|program| bin.join(program).is_file())
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}
