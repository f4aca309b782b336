//! Files Ordo writes without managing them (`--report PATH`): a regular file (or a new one)
//! is replaced atomically, private to its owner (0600: a report may name secrets' paths and
//! commands); a device, FIFO, socket or terminal is written through, as a shell redirection
//! would (`--report /dev/null`, `--report /dev/stdout`), never replaced by a regular file. A
//! symbolic link is followed only to such a special file: one leading to a regular file, a
//! directory or nowhere is refused, so a link planted at the path never redirects the write
//! to another file, and the link itself is never replaced.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` as described in the module's documentation.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = path.display();
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("Could not write {shown}: {e}")),
        Ok(m) if m.file_type().is_symlink() => Some(()),
        Ok(m) if m.is_file() => None,
        Ok(m) if m.is_dir() => return Err(format!("Could not write {shown}: Is a directory")),
        Ok(_) => return write_through(path, bytes),
    };
    if link.is_some() {
        return match fs::metadata(path) {
            Ok(m) if is_special(&m.file_type()) => write_through(path, bytes),
            Ok(m) => Err(format!(
                "Could not write {shown}: it is a symbolic link to a {}; not writing through it (give the path it leads to)",
                if m.is_dir() { "directory" } else { "regular file" }
            )),
            Err(e) => Err(format!(
                "Could not write {shown}: it is a symbolic link leading nowhere ({e}); not replacing it"
            )),
        };
    }
    crate::apply::atomic::write_file(path, bytes, 0o600)
        .map_err(|e| format!("Could not write {shown}: {e}"))
}

fn is_special(t: &fs::FileType) -> bool {
    t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
}

/// Writes into an existing special file. A FIFO without a reader is refused at once rather
/// than waited on (`O_NONBLOCK` makes its open fail with ENXIO), then written blocking.
fn write_through(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = path.display();
    let mut f = fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(6) => format!("Could not write {shown}: a FIFO with no reader"),
            _ => format!("Could not write {shown}: {e}"),
        })?;
    let _ = rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty());
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .map_err(|e| format!("Could not write {shown}: {e}"))
}
