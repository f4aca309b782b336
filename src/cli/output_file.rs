//! Files Ordo writes without managing them (`apply --report PATH`, `compile --output`,
//! `compile --outdir`'s catalogs, `graph --output`): a regular file (or a new one)
//! is replaced atomically, private to its owner (0600: a report may name secrets' paths and
//! commands); a device, FIFO, socket or terminal is written through, as a shell redirection
//! would (`--report /dev/null`, `--report /dev/stdout`), never replaced by a regular file. A
//! symbolic link is followed only to such a special file: one leading to a regular file, a
//! directory or nowhere is refused, so a link planted at the path never redirects the write
//! to another file, and the link itself is never replaced. A write that fails (a full
//! disk) leaves the old file whole and no temporary file; one left by a write that was
//! killed is removed by the next write of the same path.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` as described in the module's documentation.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_with(path, &mut |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path` as described in the module's documentation, in
/// pieces (a catalog is never held whole as text).
pub fn write_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let shown = path.display();
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("Could not write {shown}: {e}")),
        Ok(m) if m.file_type().is_symlink() => Some(()),
        Ok(m) if m.is_file() => None,
        Ok(m) if m.is_dir() => return Err(format!("Could not write {shown}: Is a directory")),
        Ok(_) => return write_through(path, fill),
    };
    if link.is_some() {
        return match fs::metadata(path) {
            Ok(m) if is_special(&m.file_type()) => write_through(path, fill),
            Ok(m) => Err(format!(
                "Could not write {shown}: it is a symbolic link to a {}; not writing through it (give the path it leads to)",
                if m.is_dir() { "directory" } else { "regular file" }
            )),
            Err(e) => Err(format!(
                "Could not write {shown}: it is a symbolic link leading nowhere ({e}); not replacing it"
            )),
        };
    }
    replace(path, fill).map_err(|e| format!("Could not write {shown}: {e}"))
}

/// Replaces a regular file (or makes a new one) atomically, mode 0600: a temporary file
/// beside it, written, fsynced, renamed over it; removed again if anything fails.
fn replace(path: &Path, fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    use crate::apply::atomic;
    remove_leftovers(path);
    let (f, tmp) = atomic::create_temp(path)?;
    let mut w = io::BufWriter::with_capacity(1 << 16, f);
    let written = fill(&mut w)
        .and_then(|_| w.into_inner().map_err(|e| e.into_error()))
        .and_then(|f| f.sync_all());
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    atomic::commit(&tmp, path)
}

/// Removes the temporary files of this path that an earlier write left when its process
/// was killed (`.NAME.ordo-PID-N` of a pid that no longer runs).
fn remove_leftovers(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!(
        ".{}{}",
        name.to_string_lossy(),
        crate::apply::atomic::TEMP_MARK
    );
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        if regular && n.starts_with(&prefix) && crate::apply::state::writer_is_gone(&n) {
            let _ = fs::remove_file(e.path());
        }
    }
}

fn is_special(t: &fs::FileType) -> bool {
    t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
}

/// Writes into an existing special file. A FIFO without a reader is refused at once rather
/// than waited on (`O_NONBLOCK` makes its open fail with ENXIO), then written blocking.
fn write_through(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let shown = path.display();
    let f = fs::OpenOptions::new()
        .write(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(6) if fs::metadata(path).is_ok_and(|m| m.file_type().is_socket()) => {
                format!(
                    "Could not write {shown}: it is a socket, which cannot be opened for writing"
                )
            }
            Some(6) if fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) => {
                format!("Could not write {shown}: a FIFO with no reader")
            }
            _ => format!("Could not write {shown}: {e}"),
        })?;
    let _ = rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty());
    let mut w = io::BufWriter::with_capacity(1 << 16, f);
    fill(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| format!("Could not write {shown}: {e}"))
}
