//! Reading the files Ordo is given (manifests, catalogs, facts, `file()` and template
//! sources): regular files only. A FIFO would block the command for ever and a device such
//! as `/dev/zero` would fill memory, so anything else is refused at once with its type named.
//! The file is opened without blocking (`O_NONBLOCK`), and its type checked on the open file,
//! so a FIFO swapped in after a check cannot hang the command either.

#![allow(clippy::disallowed_methods)]

use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The content of the regular file at `path` (links followed).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let (mut f, len) = open(path)?;
    let mut out = Vec::with_capacity(len.min(1 << 30) as usize);
    f.read_to_end(&mut out)?;
    Ok(out)
}

/// The first `n` bytes (or fewer) of the regular file at `path`.
pub fn head(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    let (f, _) = open(path)?;
    let mut out = Vec::new();
    f.take(n).read_to_end(&mut out)?;
    Ok(out)
}

/// Opens the regular file at `path`; returns it and its length.
fn open(path: &Path) -> io::Result<(std::fs::File, u64)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    let meta = f.metadata()?;
    let t = meta.file_type();
    if !t.is_file() {
        let kind = match ftype(&t) {
            "directory" => "a directory",
            "fifo" => "a FIFO",
            "characterSpecial" => "a character device",
            "blockSpecial" => "a block device",
            "socket" => "a socket",
            _ => "of an unknown type",
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file"),
        ));
    }
    Ok((f, meta.len()))
}

/// Ruby's `File::Stat#ftype` name of a file type (Puppet's messages name types so).
pub fn ftype(t: &std::fs::FileType) -> &'static str {
    if t.is_file() {
        "file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "link"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "characterSpecial"
    } else if t.is_block_device() {
        "blockSpecial"
    } else {
        "unknown"
    }
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
