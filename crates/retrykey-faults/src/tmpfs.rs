//! A small filesystem that can be filled: a size-capped tmpfs mounted for one run (as root),
//! unmounted when dropped, and a filler file that takes every byte left on it.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::on_timeout;

/// A mounted tmpfs, unmounted and removed on drop.
pub struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (as `mount -o size=` reads it: `16m`) on a fresh folder.
    /// `Err` says why not, for the run's skip line.
    pub fn mount(size: &str) -> Result<Self, String> {
        Self::mount_named(size, "retrykey-disk-full")
    }

    fn mount_named(size: &str, name: &str) -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| format!("mkdir: {error}"))?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if !output.status.success() {
            let _ = std::fs::remove_dir(&dir);
            let said = String::from_utf8_lossy(&output.stderr);
            let said: Vec<&str> = said.split_whitespace().collect();
            return Err(format!("mount refused: {}", said.join(" ")));
        }
        let undo = dir.clone();
        on_timeout(move || unmount(&undo));
        Ok(Self { dir })
    }

    /// The mounted folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        unmount(&self.dir);
    }
}

/// Whether this process can mount a tmpfs, as `disk-full` needs: it mounts one of 1 MiB and
/// unmounts it. `Err` says why not (not root, or root without the right to mount, as in a
/// container).
pub fn can_mount() -> Result<(), String> {
    if !retrykey_testkit::server_programs::is_root() {
        return Err("not root: mounting a tmpfs needs root".to_owned());
    }
    Tmpfs::mount_named("1m", "retrykey-can-mount").map(drop)
}

/// Unmounts `dir`: a process killed a moment ago may still hold a file open on it (`EBUSY`), so
/// it tries for a second, then detaches it (`umount -l`: gone once the last file closes).
fn unmount(dir: &Path) {
    if !dir.exists() {
        return; // unmounted and removed already
    }
    let unmounted = (0..20).any(|attempt| {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        Command::new("umount")
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    if !unmounted {
        let _ = Command::new("umount").arg("-l").arg(dir).status();
    }
    let _ = std::fs::remove_dir(dir);
}

/// Writes `path` until the filesystem refuses a byte more (ENOSPC); returns the bytes written.
pub fn fill(path: &Path) -> anyhow::Result<u64> {
    let mut file =
        std::fs::File::create(path).with_context(|| format!("create {}", path.display()))?;
    let chunk = vec![0xa5_u8; 64 << 10];
    let mut written = 0_u64;
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(error)
                if error.raw_os_error() == Some(28) || error.kind() == ErrorKind::StorageFull =>
            {
                break;
            }
            Err(error) => return Err(error).context("filling the filesystem"),
        }
    }
    // Whatever a partial chunk left: bytes one by one until none fits.
    while file.write(&[0xa5]).is_ok_and(|n| n == 1) {
        written += 1;
    }
    if written == 0 {
        bail!("the filesystem was full before the filler");
    }
    Ok(written)
}
