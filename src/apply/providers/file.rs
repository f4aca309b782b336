//! `file`: files, directories and links, with content or a source, mode, owner and group.
//!
//! Content is written atomically (see `apply::atomic`): a temporary file in the same
//! directory, fsync, rename over the target, so that a crash leaves either the old or the new
//! file. The directories whose entries changed (renames, creations, removals) are synced once
//! each, before the runner records state and at the end of the run
//! (`atomic::sync_deferred_dirs`), not after every file. Replaced content is backed up first
//! (a bucket directory by default, or a suffix), and the backup is durable before the file is
//! replaced. A new file can instead be staged (`Provider::stage`): its temporary file is
//! written here, and the runner fsyncs a batch of them at once before renaming each
//! (`commit_staged`; see `apply::transaction`'s `deferred`).

use super::command::{gid_of, name_of_id, uid_of};
use super::{param_bool, param_list, param_str, quoted, Change, ChangeResult, Context, Provider};
use crate::apply::atomic::{self, Staged};
use crate::apply::bucket::Bucket;
use crate::apply::log::Level;
use crate::apply::stage::StagePaths;
use crate::catalog::Resource;
use crate::graph::digest::{hex, sha256};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub const ATTRIBUTES: &[&str] = &[
    "path",
    "ensure",
    "content",
    "source",
    "mode",
    "owner",
    "group",
    "replace",
    "force",
    "backup",
    "target",
    "checksum",
    "checksum_value",
    "show_diff",
    "recurse",
    "links",
    "source_permissions",
    "sourceselect",
    "validate_cmd",
    "validate_replacement",
    "selinux_ignore_defaults",
    "seluser",
    "selrole",
    "seltype",
    "selrange",
    "provider",
    "name",
    "purge",
    "ignore",
    "recurselimit",
    "max_files",
];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Ensure {
    Present,
    File,
    Directory,
    Link(String),
    Absent,
}

impl Ensure {
    fn name(&self) -> &'static str {
        match self {
            Ensure::Present => "present",
            Ensure::File => "file",
            Ensure::Directory => "directory",
            Ensure::Link(_) => "link",
            Ensure::Absent => "absent",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Current {
    Absent,
    File,
    Directory,
    Link(String),
    /// A FIFO, socket or device, by Ruby's `File::Stat#ftype` name (`fifo`,
    /// `characterSpecial`...). Never opened: a FIFO would block the run.
    Special(&'static str),
}

impl Current {
    fn name(&self) -> &'static str {
        match self {
            Current::Absent => "absent",
            Current::File => "file",
            Current::Directory => "directory",
            Current::Link(_) => "link",
            Current::Special(kind) => kind,
        }
    }
}

/// Ruby's `File::Stat#ftype` name of a file that is not a regular file, directory or link.
fn special_kind(t: &fs::FileType) -> &'static str {
    crate::input::ftype(t)
}

/// Opens `path` for reading its content only if it is a regular file: opened without
/// blocking (a FIFO swapped in after a stat does not hang the run) and checked on the open
/// file. `Ok(Err(kind))` names the type of a file that is not regular.
fn open_regular(path: &Path, follow: bool) -> std::io::Result<Result<fs::File, &'static str>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    if !follow {
        flags |= rustix::fs::OFlags::NOFOLLOW;
    }
    let f = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
    {
        Ok(f) => f,
        // ELOOP: a link where a regular file was expected (`O_NOFOLLOW`).
        Err(e) if e.raw_os_error() == Some(40) => return Ok(Err("link")),
        Err(e) => return Err(e),
    };
    let t = f.metadata()?.file_type();
    if t.is_file() {
        Ok(Ok(f))
    } else if t.is_dir() {
        Ok(Err("directory"))
    } else {
        Ok(Err(special_kind(&t)))
    }
}

/// Reads an open file in pieces of 64 KiB, handing each to `each`: content is never held
/// whole (a managed file may be larger than memory).
fn each_piece(mut f: &fs::File, mut each: impl FnMut(&[u8]) -> bool) -> std::io::Result<()> {
    use std::io::Read;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if !each(&buf[..n]) {
            return Ok(());
        }
    }
}

/// Is the content of the open file `f` (of `len` bytes) exactly `want`? Compared piece by
/// piece, stopping at the first difference.
fn same_content(mut f: &fs::File, len: u64, want: &Desired) -> std::io::Result<bool> {
    use std::io::Read;
    if len != want.len() {
        return Ok(false);
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut same = true;
    let mut failed = None;
    want.each_piece(|piece| {
        for part in piece.chunks(buf.len()) {
            let have = &mut buf[..part.len()];
            if let Err(e) = f.read_exact(have) {
                // Shorter than its length said: it changed while being read.
                if e.kind() != std::io::ErrorKind::UnexpectedEof {
                    failed = Some(e);
                }
                same = false;
            } else {
                same = *have == *part;
            }
            if !same {
                return false;
            }
        }
        true
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(same),
    }
}

/// The desired content of a file: inline bytes, or the open source file, read in pieces each
/// time it is needed (never whole: a source may be larger than memory).
enum Desired {
    Bytes(Vec<u8>),
    Source { file: fs::File, len: u64 },
}

impl Desired {
    fn len(&self) -> u64 {
        match self {
            Desired::Bytes(b) => b.len() as u64,
            Desired::Source { len, .. } => *len,
        }
    }

    /// Hands the content to `each` in pieces, from the start, until `each` says stop.
    fn each_piece(&self, mut each: impl FnMut(&[u8]) -> bool) -> std::io::Result<()> {
        match self {
            Desired::Bytes(b) => {
                each(b);
                Ok(())
            }
            Desired::Source { file, .. } => {
                use std::io::Seek;
                let mut f = file;
                f.seek(std::io::SeekFrom::Start(0))?;
                each_piece(file, each)
            }
        }
    }

    /// `{sha256}HEX` of the content.
    fn checksum(&self) -> std::io::Result<String> {
        match self {
            Desired::Bytes(b) => Ok(checksum(b)),
            Desired::Source { file, .. } => {
                use std::io::Seek;
                let mut f = file;
                f.seek(std::io::SeekFrom::Start(0))?;
                file_checksum(file)
            }
        }
    }

    /// Writes the content to `out`.
    fn write_to(&self, mut out: &fs::File) -> std::io::Result<()> {
        let mut failed = None;
        self.each_piece(|piece| match out.write_all(piece) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        })?;
        failed.map_or(Ok(()), Err)
    }
}

/// `{sha256}HEX` of the open file's content, read in pieces.
fn file_checksum(f: &fs::File) -> std::io::Result<String> {
    let mut h = crate::digest::Sha256::new();
    each_piece(f, |piece| {
        h.update(piece);
        true
    })?;
    Ok(format!("{{sha256}}{}", hex(&h.finish())))
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Content {
    Inline(Vec<u8>),
    Source(Vec<String>),
}

pub struct File {
    /// The path being managed: `declared`, or where its links lead with `links => follow`.
    path: PathBuf,
    /// The path as written in the catalog.
    declared: PathBuf,
    /// `links => follow`: manage the file a link points to rather than the link.
    follow: bool,
    ensure: Option<Ensure>,
    content: Option<Content>,
    mode: Option<Mode>,
    owner: Option<String>,
    group: Option<String>,
    replace: bool,
    force: bool,
    backup: Option<String>,
    validate_cmd: Option<(String, String)>,
    /// `content` is sensitive: no message shows its checksum.
    sensitive_content: bool,
}

/// A file's `mode`: octal, or symbolic (`u+x`, `go-w`, `a=rX`), which applies to the
/// file's mode when it is checked.
#[derive(Clone, Debug, PartialEq)]
enum Mode {
    Octal(u32),
    Symbolic(String),
}

/// `'644'`, `'0644'` -> 0o644; `'u+x,go-w'` is kept to apply later.
fn parse_mode(s: &str) -> Result<Mode, String> {
    if !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Ok(Mode::Octal(
            u32::from_str_radix(s, 8).expect("octal digits"),
        ));
    }
    // Validated against a sample mode: an invalid specification fails before any change.
    symbolic_mode(s, 0o644, false)
        .map(|_| Mode::Symbolic(s.to_string()))
        .map_err(|_| format!("The file mode specification is invalid: \"{s}\""))
}

impl Mode {
    /// The mode to set on a file whose mode is `current`.
    fn resolve(&self, current: u32, is_dir: bool) -> u32 {
        match self {
            Mode::Octal(m) if is_dir => dir_mode(*m),
            Mode::Octal(m) => *m,
            Mode::Symbolic(spec) => symbolic_mode(spec, current, is_dir).unwrap_or(current),
        }
    }
}

/// Puppet's `symbolic_mode_to_int`: comma-separated clauses `[ugoa]*[-+=][rwxXstugo]*`
/// applied in turn to `mode` (`X`: execute where a directory, or any execute bit is set).
fn symbolic_mode(spec: &str, mode: u32, is_dir: bool) -> Result<u32, String> {
    let mut special = (mode >> 9) & 0o7;
    let mut who_bits = [(mode >> 6) & 7, (mode >> 3) & 7, mode & 7];
    let any_x = mode & 0o111 != 0;
    for part in spec.split(',').map(str::trim) {
        let split = part.find(['-', '+', '=']).ok_or("Missing action")?;
        let (who, ops) = part.split_at(split);
        if !who.chars().all(|c| "ugoa".contains(c)) {
            return Err("Unknown who".into());
        }
        let who = if who.is_empty() { "a" } else { who };
        let snapshot = who_bits;
        let mut targets: Vec<usize> = vec![];
        for c in who.chars() {
            let add: &[usize] = match c {
                'u' => &[0],
                'g' => &[1],
                'o' => &[2],
                _ => &[0, 1, 2],
            };
            for i in add {
                if !targets.contains(i) {
                    targets.push(*i);
                }
            }
        }
        for &t in &targets {
            let mut value = snapshot[t];
            let mut action = None;
            for op in ops.chars() {
                let apply = |a: Option<char>, v: u32, bits: u32| -> Result<u32, String> {
                    match a {
                        Some('-') => Ok(v & !bits),
                        Some(_) => Ok(v | bits),
                        None => Err("Missing operation (-, =, or +)".into()),
                    }
                };
                match op {
                    '-' | '+' | '=' => {
                        action = Some(op);
                        if op == '=' {
                            value = 0;
                        }
                    }
                    'u' => value = apply(action, value, snapshot[0])?,
                    'g' => value = apply(action, value, snapshot[1])?,
                    'o' => value = apply(action, value, snapshot[2])?,
                    'r' => value = apply(action, value, 4)?,
                    'w' => value = apply(action, value, 2)?,
                    'x' => value = apply(action, value, 1)?,
                    'X' => {
                        if action != Some('+') {
                            return Err("X only works with the '+' operator".into());
                        }
                        if is_dir || any_x {
                            value |= 1;
                        }
                    }
                    's' | 't' => {
                        let bit = match (op, t) {
                            ('s', 0) => 4,
                            ('s', 1) => 2,
                            ('t', 2) => 1,
                            _ => 0,
                        };
                        special = apply(action, special, bit)?;
                    }
                    _ => return Err("Unknown operation".into()),
                }
            }
            who_bits[t] = value;
        }
    }
    Ok(special << 9 | who_bits[0] << 6 | who_bits[1] << 3 | who_bits[2])
}

/// The values of `checksum` (Puppet's `known_checksum_types`).
const CHECKSUMS: &[&str] = &[
    "sha256",
    "sha256lite",
    "md5",
    "md5lite",
    "sha1",
    "sha1lite",
    "sha512",
    "sha384",
    "sha224",
    "mtime",
    "ctime",
    "none",
];

/// Puppet's refusal of a `content` that is not a string (its munge converts nothing).
fn content_not_string(r: &Resource, v: &serde_json::Value) -> String {
    let class = match v {
        serde_json::Value::Number(n) if n.is_f64() => "Float",
        serde_json::Value::Number(_) => "Integer",
        serde_json::Value::Bool(true) => "true",
        serde_json::Value::Bool(false) => "false",
        serde_json::Value::Array(_) => "Array",
        serde_json::Value::Object(_) => "Hash",
        _ => "nil",
    };
    let shown = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    super::param_failure(
        r,
        "content",
        format!("Munging failed for value {shown} in class content: no implicit conversion of {class} into String"),
    )
}

fn show_mode(m: u32) -> String {
    format!("{:04o}", m & 0o7777)
}

/// Directories get the search bit wherever the read bit is set (Puppet's rule).
fn dir_mode(m: u32) -> u32 {
    m | ((m & 0o444) >> 2)
}

fn checksum(bytes: &[u8]) -> String {
    format!("{{sha256}}{}", hex(&sha256(bytes)))
}

impl File {
    pub fn new(r: &Resource) -> Result<File, String> {
        let path = param_str(r, "path").unwrap_or_else(|| r.title.clone());
        if !path.starts_with('/') {
            return Err(format!(
                "Parameter path failed on File[{}]: File paths must be fully qualified, not '{path}'",
                r.title
            ));
        }
        // Puppet's munge: the path expanded (`/x//d/` and `/x/y/../d` are `/x/d`).
        let trimmed = crate::apply::sanity::file_path(&path).into_owned();
        let target = param_str(r, "target");
        let ensure = match param_str(r, "ensure").as_deref() {
            None => None,
            Some("present") => Some(Ensure::Present),
            Some("file") => Some(Ensure::File),
            Some("directory") => Some(Ensure::Directory),
            Some("absent") | Some("false") => Some(Ensure::Absent),
            // Without a target, the change fails when it is made (empty target below).
            Some("link") => Some(Ensure::Link(target.clone().unwrap_or_default())),
            // Any other value is a symlink's target (the type's `newvalue(/./)`), relative
            // ones included.
            Some(t) if !t.is_empty() => Some(Ensure::Link(t.to_string())),
            Some(other) => {
                return Err(format!(
                    "Parameter ensure failed on File[{}]: Invalid value \"{other}\". Valid values are absent, false, file, present, directory, link",
                    r.title
                ))
            }
        };
        for source in param_list(r, "source") {
            let uri = source.split_once("://").is_some_and(|(scheme, _)| {
                !scheme.is_empty()
                    && scheme
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
            });
            if !uri && !source.starts_with('/') {
                let detail = format!("Cannot use relative URLs '{source}'");
                return Err(super::param_failure(r, "source", detail));
            }
        }
        // Puppet's CREATORS: one of content, source and target (a link's `ensure` names
        // its target too).
        let has_content = !matches!(
            r.parameters.get("content"),
            None | Some(serde_json::Value::Null)
        );
        let links = target.is_some() || matches!(ensure, Some(Ensure::Link(_)));
        let creators = [has_content, !param_list(r, "source").is_empty(), links];
        if creators.iter().filter(|c| **c).count() > 1 {
            return Err(format!(
                "Validation of File[{}] failed: You cannot specify more than one of content, source, target",
                r.title
            ));
        }
        let content = match r.parameters.get("content") {
            Some(serde_json::Value::String(s)) => Some(Content::Inline(s.clone().into_bytes())),
            Some(serde_json::Value::Null) | None => None,
            // Puppet's property keeps the last of several values.
            Some(serde_json::Value::Array(items)) => match items.last() {
                Some(serde_json::Value::String(s)) => Some(Content::Inline(s.clone().into_bytes())),
                None => None,
                Some(other) => return Err(content_not_string(r, other)),
            },
            Some(other) => return Err(content_not_string(r, other)),
        };
        if let Some(sum) = param_str(r, "checksum") {
            if !CHECKSUMS.contains(&sum.as_str()) {
                let detail = format!(
                    "Invalid value \"{sum}\". Valid values are {}.",
                    CHECKSUMS.join(", ")
                );
                return Err(super::param_failure(r, "checksum", detail));
            }
        }
        let content = match content {
            Some(c) => Some(c),
            None => {
                let s = param_list(r, "source");
                (!s.is_empty()).then_some(Content::Source(s))
            }
        };
        let ensure = match ensure {
            None if content.is_some() => Some(Ensure::File),
            None if target.is_some() => target.map(Ensure::Link),
            e => e,
        };
        if param_bool(r, "recurse", false).unwrap_or(true)
            || param_str(r, "recurse").is_some_and(|v| v == "remote")
        {
            return Err(format!(
                "File[{}]: recurse is not supported by Ordo",
                r.title
            ));
        }
        if let Some(serde_json::Value::Number(_)) = r.parameters.get("mode") {
            let detail = "The file mode specification must be a string, not 'Integer'";
            return Err(super::param_failure(r, "mode", detail));
        }
        let mode = param_str(r, "mode")
            .map(|m| parse_mode(&m).map_err(|d| super::param_failure(r, "mode", &d)))
            .transpose()?;
        let backup = match r.parameters.get("backup") {
            Some(serde_json::Value::Bool(false)) => None,
            Some(serde_json::Value::String(s)) if s == "false" => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            // Puppet 7's default: no backup (`ordo apply --backup` opts into the bucket).
            _ => None,
        };
        let validate_cmd = param_str(r, "validate_cmd").map(|c| {
            let token = param_str(r, "validate_replacement").unwrap_or_else(|| "%".into());
            (c, token)
        });
        let follow = match param_str(r, "links").as_deref() {
            None | Some("manage") => false,
            Some("follow") => true,
            Some(other) => {
                return Err(format!(
                    "Parameter links failed on File[{}]: Invalid value \"{other}\". Valid values are follow, manage",
                    r.title
                ))
            }
        };
        Ok(File {
            path: PathBuf::from(&trimmed),
            declared: PathBuf::from(trimmed),
            follow,
            ensure,
            content,
            mode,
            owner: param_str(r, "owner"),
            group: param_str(r, "group"),
            replace: param_bool(r, "replace", true)?,
            force: param_bool(r, "force", false)?,
            backup,
            validate_cmd,
            sensitive_content: r.sensitive_parameters.iter().any(|p| p == "content"),
        })
    }

    fn current(&self) -> Result<(Current, Option<fs::Metadata>), String> {
        match fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Current::Absent, None)),
            Err(e) => Err(format!("Could not stat {}: {e}", self.path.display())),
            Ok(m) if m.file_type().is_symlink() => {
                let t = fs::read_link(&self.path)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok((Current::Link(t), Some(m)))
            }
            Ok(m) if m.is_dir() => Ok((Current::Directory, Some(m))),
            Ok(m) if m.is_file() => Ok((Current::File, Some(m))),
            Ok(m) => Ok((Current::Special(special_kind(&m.file_type())), Some(m))),
        }
    }

    /// Whether the first source found is a directory: Puppet's `copy_source_values` then
    /// makes the file a directory (`ensure` takes the source's type unless it is `absent`).
    fn source_is_directory(&self, modulepath: &[PathBuf]) -> bool {
        let Some(Content::Source(sources)) = &self.content else {
            return false;
        };
        for s in sources {
            let Some(p) = resolve_source(s, modulepath) else {
                continue;
            };
            match open_regular(&p, true) {
                Ok(Ok(_)) => return false,
                Ok(Err(kind)) => return kind == "directory",
                Err(_) => {}
            }
        }
        false
    }

    /// The desired content: the inline bytes, or the first source found, opened.
    fn desired_content(&self, cx: &Context) -> Result<Option<Desired>, String> {
        match &self.content {
            None => Ok(None),
            Some(Content::Inline(b)) => Ok(Some(Desired::Bytes(b.clone()))),
            Some(Content::Source(sources)) => {
                for s in sources {
                    let Some(p) = resolve_source(s, cx.modulepath) else {
                        continue;
                    };
                    match open_regular(&p, true) {
                        Ok(Ok(file)) => {
                            if let Ok(m) = file.metadata() {
                                let len = m.len();
                                return Ok(Some(Desired::Source { file, len }));
                            }
                        }
                        Ok(Err("directory")) => return Ok(None),
                        // A FIFO, socket or device is never read (Puppet's refusal).
                        Ok(Err(kind)) => {
                            return Err(format!(
                                "Could not retrieve file metadata for {}: Cannot manage files of type {kind}",
                                source_uri(s)
                            ))
                        }
                        Err(_) => {}
                    }
                }
                Err(format!(
                    "Could not retrieve information from environment production source(s) {}",
                    sources
                        .iter()
                        .map(|s| source_uri(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
    }

    /// Keeps the content about to be replaced or removed: in the bucket (`backup => puppet`,
    /// or any bucket name) or beside the file (`backup => '.bak'`). Only regular files are kept: a
    /// symbolic link is not followed (unless `links => follow` resolved it already), so
    /// replacing a link never copies what it points to.
    fn backup(&self, cx: &mut Context) -> Result<(), String> {
        let Some(b) = &self.backup else { return Ok(()) };
        let failed = |e: std::io::Error| format!("Could not back up {}: {e}", self.path.display());
        // A directory, a link, a FIFO, a device, nothing: no content to keep.
        let f = match open_regular(&self.path, false) {
            Ok(Ok(f)) => f,
            // Puppet's `can_backup?`: a FIFO, socket or device is replaced unkept, with a
            // warning.
            Ok(Err(kind)) if !matches!(kind, "directory" | "link") => {
                let source = Some(cx.path.to_string());
                cx.log(
                    Level::Warning,
                    source,
                    format!("Could not back up file of type {kind}"),
                );
                return Ok(());
            }
            Ok(Err(_)) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(failed(e)),
        };
        let meta = f.metadata().map_err(failed)?;
        if b.starts_with('.') {
            let mut dest = self.path.clone().into_os_string();
            dest.push(b);
            atomic::copy_file(Path::new(&dest), &mut &f, meta.mode() & 0o7777).map_err(failed)?;
            return Ok(());
        }
        let sum = Bucket::new(cx.bucket_dir)
            .backup_file(&self.path, &f, Some(meta.mode()))
            .map_err(failed)?;
        let source = Some(cx.path.to_string());
        cx.log(
            Level::Info,
            source,
            format!("Filebucketed {} to {b} with sum {sum}", self.path.display()),
        );
        Ok(())
    }

    /// Writes content atomically (see `apply::atomic`) with the desired (or kept) mode and
    /// ownership, after `validate_cmd` accepted the temporary file.
    fn write(&self, content: Option<&Desired>, keep: Option<&fs::Metadata>) -> Result<(), String> {
        let (f, tmp) = self.write_temp(content, keep)?;
        let synced = atomic::sync_file(&f, &self.path);
        drop(f);
        if let Err(e) = synced {
            let _ = fs::remove_file(&tmp);
            return Err(format!("Could not write {}: {e}", self.path.display()));
        }
        if let Some((cmd, token)) = &self.validate_cmd {
            let argv = validate_argv(cmd, token, &tmp);
            let shown = argv.join(" ");
            let out = super::command::run(&super::command::RunSpec {
                argv,
                ..Default::default()
            });
            match out {
                Ok(o) if o.code == 0 => {}
                Ok(o) => {
                    let _ = fs::remove_file(&tmp);
                    return Err(format!(
                        "Execution of '{shown}' returned {}: {}",
                        o.code,
                        o.output.trim_end()
                    ));
                }
                Err(e) => {
                    let _ = fs::remove_file(&tmp);
                    return Err(e);
                }
            }
        }
        atomic::commit_deferred(&tmp, &self.path).map_err(|e| rename_error(&self.path, &e))
    }

    /// The content in a new temporary file beside the target, with its mode and ownership;
    /// not synced.
    fn write_temp(
        &self,
        content: Option<&Desired>,
        keep: Option<&fs::Metadata>,
    ) -> Result<(fs::File, PathBuf), String> {
        // No separate check of the directory: creating the temporary file finds out.
        let (f, tmp) = atomic::create_temp(&self.path).map_err(|e| {
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) {
                format!(
                    "Could not set 'file' on ensure: No such file or directory - A directory component in {} does not exist or is a dangling symbolic link",
                    self.path.display()
                )
            } else {
                format!("Could not write {}: {e}", self.path.display())
            }
        })?;
        let result = (|| -> std::io::Result<()> {
            if let Some(c) = content {
                c.write_to(&f)?;
            }
            // The file's mode before (0644 when new), with the resource's mode applied.
            let before = keep.map_or(0o644, |m| m.mode() & 0o7777);
            let mode = self
                .mode
                .as_ref()
                .map_or(before, |m| m.resolve(before, false));
            let uid = self
                .owner
                .as_deref()
                .and_then(uid_of)
                .or_else(|| keep.map(|m| m.uid()));
            let gid = self
                .group
                .as_deref()
                .and_then(gid_of)
                .or_else(|| keep.map(|m| m.gid()));
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::fchown(&f, uid, gid)?;
            }
            // After chown, which clears set-id bits.
            f.set_permissions(fs::Permissions::from_mode(mode))
        })();
        if let Err(e) = result {
            drop(f);
            let _ = fs::remove_file(&tmp);
            return Err(write_error(&self.path, &e));
        }
        Ok((f, tmp))
    }

    /// The message of a file created with content: its checksum, or nothing of it when the
    /// content is sensitive (Puppet's ensure speaks for the content property then).
    fn defined_content(&self, content: &Desired) -> Result<String, String> {
        if self.sensitive_content {
            Ok("changed [redacted] to [redacted]".into())
        } else {
            let sum = content.checksum().map_err(|e| {
                format!("Could not read the source of {}: {e}", self.path.display())
            })?;
            Ok(format!("defined content as '{sum}'"))
        }
    }

    /// The owner (`user`) or group that does not exist, if one does not.
    fn missing_owner(&self) -> Option<(&'static str, &str)> {
        [
            ("user", &self.owner, uid_of as fn(&str) -> Option<u32>),
            ("group", &self.group, gid_of),
        ]
        .into_iter()
        .find_map(|(what, name, lookup)| {
            name.as_deref()
                .filter(|n| lookup(n).is_none())
                .map(|n| (what, n))
        })
    }

    fn remove(&self, current: &Current) -> Result<(), String> {
        let r = match current {
            Current::Directory => fs::remove_dir_all(&self.path),
            Current::Absent => Ok(()),
            // Puppet removes FIFOs and sockets but never a device node.
            Current::Special(kind) if !matches!(*kind, "fifo" | "socket") => {
                return Err(format!("Could not remove files of type {kind}"))
            }
            _ => fs::remove_file(&self.path),
        };
        r.map_err(|e| format!("Could not remove {}: {e}", self.path.display()))?;
        self.sync_parent();
        Ok(())
    }

    /// Notes a creation, removal or rename in the parent directory, made durable by
    /// `atomic::sync_deferred_dirs`.
    fn sync_parent(&self) {
        if let Some(dir) = self.path.parent() {
            atomic::defer_dir_sync(dir);
        }
    }

    fn fix_metadata(&self, is_dir: bool) -> Result<(), String> {
        if let Some(mode) = &self.mode {
            let current = fs::metadata(&self.path).map_or(0, |m| m.mode() & 0o7777);
            fs::set_permissions(
                &self.path,
                fs::Permissions::from_mode(mode.resolve(current, is_dir)),
            )
            .map_err(|e| e.to_string())?;
        }
        let uid = self.owner.as_deref().and_then(uid_of);
        let gid = self.group.as_deref().and_then(gid_of);
        if uid.is_some() || gid.is_some() {
            std::os::unix::fs::chown(&self.path, uid, gid).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Brings `ensure` to its desired value; returns the message Puppet logs.
    fn sync_ensure(
        &self,
        cx: &mut Context,
        want: &Ensure,
        current: &Current,
        content: Option<&Desired>,
    ) -> Result<String, String> {
        let from = current.name();
        let created = |c: &Current| matches!(c, Current::Absent);
        // The owner and group must exist before anything is made (Puppet fails the change
        // of `ensure` with them).
        if !matches!(want, Ensure::Absent) {
            if let Some((what, name)) = self.missing_owner() {
                return Err(format!(
                    "Could not set '{}' on ensure: Could not find {what} {name}",
                    want.name()
                ));
            }
        }
        match want {
            Ensure::Absent => {
                if *current == Current::Directory && !self.force {
                    // Puppet's remove_directory: a notice, nothing removed, and the change is
                    // still reported (so every run reports it again).
                    let source = Some(cx.path.to_string());
                    cx.log(
                        Level::Notice,
                        source,
                        "Not removing directory; use 'force' to override",
                    );
                    return Ok("removed".into());
                }
                self.backup(cx)?;
                self.remove(current)?;
                Ok("removed".into())
            }
            Ensure::File | Ensure::Present => {
                if *current == Current::Directory {
                    if !self.force {
                        return Err(format!(
                            "Could not set 'file' on ensure: Is a directory - {} (use force => true to replace it)",
                            self.path.display()
                        ));
                    }
                    self.remove(current)?;
                } else if matches!(current, Current::Link(_) | Current::Special(_)) {
                    self.backup(cx)?;
                    self.remove(current)?;
                }
                self.write(content, None)?;
                // A FIFO or socket replaced with content is new content to Puppet.
                let fresh = created(current) || matches!(current, Current::Special(_));
                Ok(match (content, fresh) {
                    (Some(b), true) => self.defined_content(b)?,
                    (None, true) if !created(current) => {
                        format!("ensure changed '{from}' to '{}'", want.name())
                    }
                    (_, true) => "created".into(),
                    _ => format!("ensure changed '{from}' to '{}'", want.name()),
                })
            }
            Ensure::Directory => {
                if !matches!(current, Current::Absent) {
                    // Puppet's remove_existing: what is replaced is backed up first.
                    self.backup(cx)?;
                    self.remove(current)?;
                }
                fs::create_dir(&self.path).map_err(|e| {
                    format!(
                        "Could not set 'directory' on ensure: {e} - {}",
                        self.path.display()
                    )
                })?;
                self.sync_parent();
                atomic::defer_dir_sync(&self.path);
                let m = self.mode.as_ref().map_or(0o755, |m| m.resolve(0o755, true));
                fs::set_permissions(&self.path, fs::Permissions::from_mode(m))
                    .map_err(|e| e.to_string())?;
                self.fix_metadata(true)?;
                Ok(if created(current) {
                    "created".into()
                } else {
                    format!("ensure changed '{from}' to 'directory'")
                })
            }
            Ensure::Link(target) if target.is_empty() => {
                Err("Cannot create a symlink without a target".to_string())
            }
            Ensure::Link(target) => {
                if *current == Current::Directory && !self.force {
                    return Err(format!(
                        "Could not set 'link' on ensure: Is a directory - {}",
                        self.path.display()
                    ));
                }
                self.backup(cx)?;
                self.remove(current)?;
                std::os::unix::fs::symlink(target, &self.path).map_err(|e| {
                    format!(
                        "Could not set 'link' on ensure: {e} - {}",
                        self.path.display()
                    )
                })?;
                self.sync_parent();
                Ok(if created(current) {
                    "created".into()
                } else {
                    format!("ensure changed '{from}' to 'link'")
                })
            }
        }
    }
}

/// The message of a failed write (or fsync) of `path`'s new content.
fn write_error(path: &Path, e: &std::io::Error) -> String {
    format!("Could not write {}: {e}", path.display())
}

/// The message of a failed rename of new content over `path`.
fn rename_error(path: &Path, e: &std::io::Error) -> String {
    format!("Could not rename into {}: {e}", path.display())
}

/// Makes staged content final, given the result of its fsync (`atomic::sync_staged`): the
/// message on failure is the one a plain write gives.
pub fn commit_staged(staged: Staged, synced: std::io::Result<()>) -> Result<(), String> {
    let path = staged.target().to_path_buf();
    match synced {
        Err(e) => {
            staged.discard();
            Err(write_error(&path, &e))
        }
        Ok(()) => staged.commit().map_err(|e| rename_error(&path, &e)),
    }
}

/// A source as Puppet names it in messages: a path as a `file://` URI.
fn source_uri(s: &str) -> String {
    if s.starts_with('/') {
        format!("file://{s}")
    } else {
        s.to_string()
    }
}

/// Where a chain of symbolic links leads (`links => follow`); the last path may not exist.
fn resolve_links(path: &Path) -> Result<PathBuf, String> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = fs::read_link(&p)
                    .map_err(|e| format!("Could not read link {}: {e}", p.display()))?;
                p = match p.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(format!(
        "Could not follow {}: Too many levels of symbolic links",
        path.display()
    ))
}

/// The argv of `validate_cmd` with the temporary file where the token is. Whether the command
/// runs through the shell is decided on the command as written, and the path then goes in as
/// one argument (single-quoted for the shell), so a file name is never read as shell syntax.
fn validate_argv(cmd: &str, token: &str, tmp: &Path) -> Vec<String> {
    let path = tmp.to_string_lossy();
    let argv = super::command::posix_argv(cmd);
    if argv.len() == 3 && argv[0] == "/bin/sh" && argv[2] == cmd {
        let quoted = format!("'{}'", path.replace('\'', "'\\''"));
        super::command::shell_argv(&cmd.replace(token, &quoted))
    } else {
        argv.into_iter().map(|w| w.replace(token, &path)).collect()
    }
}

/// `MOD/PATH` of a `puppet:///modules/MOD/PATH` source (or `puppet://SERVER/modules/...`).
fn module_source(source: &str) -> Option<&str> {
    source.strip_prefix("puppet:///modules/").or_else(|| {
        source
            .strip_prefix("puppet://")
            .and_then(|r| r.split_once("/modules/").map(|(_, p)| p))
    })
}

/// Every path `resolve_source` may look at for `source`, in order.
fn source_candidates(source: &str, modulepath: &[PathBuf]) -> Vec<PathBuf> {
    if let Some(rest) = module_source(source) {
        let Some((module, path)) = rest.split_once('/') else {
            return Vec::new();
        };
        return modulepath
            .iter()
            .map(|d| d.join(module).join("files").join(path))
            .collect();
    }
    let local = source.strip_prefix("file://").unwrap_or(source);
    if local.starts_with('/') {
        vec![PathBuf::from(local)]
    } else {
        Vec::new()
    }
}

/// `puppet:///modules/MOD/PATH` -> `DIR/MOD/files/PATH`; `file:///x` and `/x` -> `/x`.
pub fn resolve_source(source: &str, modulepath: &[PathBuf]) -> Option<PathBuf> {
    let mut candidates = source_candidates(source, modulepath).into_iter();
    if module_source(source).is_some() {
        candidates.find(|p| p.exists())
    } else {
        candidates.next()
    }
}

fn owner_name(uid: u32) -> String {
    name_of_id("/etc/passwd", uid).unwrap_or_else(|| uid.to_string())
}

fn group_name(gid: u32) -> String {
    name_of_id("/etc/group", gid).unwrap_or_else(|| gid.to_string())
}

impl Provider for File {
    /// A file whose content may be written: its path, and what its sources may read.
    fn stage_paths(&self, modulepath: &[PathBuf]) -> Option<StagePaths> {
        if self.follow
            || self.validate_cmd.is_some()
            || !matches!(self.ensure, Some(Ensure::File | Ensure::Present))
        {
            return None;
        }
        let mut reads = Vec::new();
        if let Some(Content::Source(sources)) = &self.content {
            for s in sources {
                reads.extend(source_candidates(s, modulepath));
            }
        }
        Some(StagePaths {
            writes: Some(self.path.clone()),
            reads,
        })
    }

    /// Stages a new file's content; an existing file only when it is in sync.
    fn stage(&mut self, cx: &mut Context) -> Option<(Vec<Change>, Option<Staged>)> {
        let want = self.ensure.clone()?;
        // (Its failure is reported by the unstaged path.)
        if self.missing_owner().is_some() {
            return None;
        }
        let (current, _) = self.current().ok()?;
        // A directory source makes a directory (see `check_apply`): not a staged file.
        if self.source_is_directory(cx.modulepath) {
            return None;
        }
        if current != Current::Absent {
            let changes = self.check_apply(cx, false).ok()?;
            return changes.is_empty().then_some((changes, None));
        }
        let content = self.desired_content(cx).ok()?;
        let (f, tmp) = self.write_temp(content.as_ref(), None).ok()?;
        let message = match &content {
            Some(b) => self.defined_content(b).ok()?,
            None => "created".into(),
        };
        let change = Change {
            property: "ensure".into(),
            event: "file_created".into(),
            previous: quoted(current.name()),
            desired: quoted(want.name()),
            result: ChangeResult::Synced(message),
        };
        Some((vec![change], Some(Staged::new(f, tmp, self.path.clone()))))
    }

    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        if self.follow && !matches!(self.ensure, Some(Ensure::Link(_))) {
            self.path = resolve_links(&self.declared)?;
        }
        if matches!(self.ensure, Some(Ensure::File | Ensure::Present))
            && self.source_is_directory(cx.modulepath)
        {
            self.ensure = Some(Ensure::Directory);
        }
        let (current, meta) = self.current()?;
        let content = self.desired_content(cx)?;
        let mut changes = Vec::new();
        let ensure_in_sync = match (&self.ensure, &current) {
            (None, _) => true,
            (Some(Ensure::Present), c) => *c != Current::Absent,
            (Some(Ensure::File), Current::File) => true,
            (Some(Ensure::Directory), Current::Directory) => true,
            // A link to somewhere else is the `target` property's change (below).
            (Some(Ensure::Link(_)), Current::Link(_)) => true,
            (Some(Ensure::Absent), Current::Absent) => true,
            _ => false,
        };
        if !ensure_in_sync {
            let want = self.ensure.clone().expect("ensure is set when out of sync");
            let event = match (&want, &current) {
                (Ensure::Absent, _) => "file_removed",
                (Ensure::Directory, Current::Absent) => "directory_created",
                (Ensure::Link(_), Current::Absent) => "link_created",
                (_, Current::Absent) => "file_created",
                _ => "file_changed",
            };
            let result = if !apply {
                ChangeResult::Noop
            } else {
                match self.sync_ensure(cx, &want, &current, content.as_ref()) {
                    Ok(m) => ChangeResult::Synced(m),
                    Err(e) => ChangeResult::Failed(e),
                }
            };
            changes.push(Change {
                property: "ensure".into(),
                event: event.into(),
                previous: quoted(current.name()),
                desired: quoted(want.name()),
                result,
            });
            return Ok(changes);
        }
        // target: a link that points elsewhere is replaced by one to the target.
        if let (Some(Ensure::Link(want)), Current::Link(have)) = (&self.ensure, &current) {
            if want != have && !want.is_empty() {
                let result = if !apply {
                    ChangeResult::Noop
                } else {
                    match self.sync_ensure(cx, &Ensure::Link(want.clone()), &current, None) {
                        Ok(_) => {
                            ChangeResult::Synced(format!("target changed '{have}' to '{want}'"))
                        }
                        Err(e) => ChangeResult::Failed(e.replace("on ensure", "on target")),
                    }
                };
                changes.push(Change {
                    property: "target".into(),
                    event: "target_changed".into(),
                    previous: quoted(have),
                    desired: quoted(want),
                    result,
                });
            }
        }
        let Some(meta) = meta else {
            return Ok(changes); // nothing to manage: no ensure and the file does not exist
        };
        if let (Current::Special(kind), Some(Ensure::Present), Some(_)) =
            (&current, &self.ensure, &content)
        {
            let source = Some(cx.path.to_string());
            cx.log(
                Level::Warning,
                source,
                format!(
                    "Ensure set to :present but file type is {kind} so no content will be synced"
                ),
            );
        }
        if self.ensure == Some(Ensure::Absent) {
            return Ok(changes);
        }
        // content
        if let (Current::File, Some(want), true) = (&current, &content, self.replace) {
            // Read in pieces, never whole: a managed file may be larger than memory.
            let read = |e: std::io::Error| format!("Could not read {}: {e}", self.path.display());
            let have = match open_regular(&self.path, false).map_err(read)? {
                Ok(f) => f,
                Err(kind) => {
                    return Err(format!(
                        "Could not read {}: it became a {kind} while being checked",
                        self.path.display()
                    ))
                }
            };
            if !same_content(&have, meta.len(), want).map_err(read)? {
                use std::io::Seek;
                (&have).seek(std::io::SeekFrom::Start(0)).map_err(read)?;
                let new = want.checksum().map_err(|e| {
                    format!("Could not read the source of {}: {e}", self.path.display())
                })?;
                let old = file_checksum(&have).map_err(read)?;
                drop(have);
                let result = if !apply {
                    ChangeResult::Noop
                } else {
                    match self
                        .backup(cx)
                        .and_then(|_| self.write(Some(want), Some(&meta)))
                    {
                        Ok(()) => {
                            ChangeResult::Synced(format!("content changed '{old}' to '{new}'"))
                        }
                        Err(e) => ChangeResult::Failed(e),
                    }
                };
                changes.push(Change {
                    property: "content".into(),
                    event: "content_changed".into(),
                    previous: quoted(&old),
                    desired: quoted(&new),
                    result,
                });
            }
        }
        let is_link = matches!(current, Current::Link(_));
        // A file made by `ensure` has the desired metadata from the start (Puppet reports only
        // the ensure); a rewrite of the content of an existing file is followed by the other
        // properties' changes from what the file had before, as Puppet retrieves them all
        // before syncing.
        let meta = if changes.iter().any(|c| c.property == "ensure") {
            fs::symlink_metadata(&self.path).unwrap_or(meta)
        } else {
            meta
        };
        // owner, group
        for (prop, want, have, lookup, name) in [
            (
                "owner",
                &self.owner,
                meta.uid(),
                uid_of as fn(&str) -> Option<u32>,
                owner_name as fn(u32) -> String,
            ),
            ("group", &self.group, meta.gid(), gid_of, group_name),
        ] {
            let Some(want) = want else { continue };
            let Some(id) = lookup(want) else {
                changes.push(Change {
                    property: prop.into(),
                    event: format!("{prop}_changed"),
                    previous: quoted(&name(have)),
                    desired: quoted(want),
                    result: ChangeResult::Failed(format!(
                        "Could not find {} {want}",
                        if prop == "owner" { "user" } else { "group" }
                    )),
                });
                continue;
            };
            if id == have {
                continue;
            }
            let (old, new) = (name(have), want.clone());
            let result = if !apply {
                ChangeResult::Noop
            } else {
                let (u, g) = if prop == "owner" {
                    (Some(id), None)
                } else {
                    (None, Some(id))
                };
                match std::os::unix::fs::lchown(&self.path, u, g) {
                    Ok(()) => ChangeResult::Synced(format!("{prop} changed '{old}' to '{new}'")),
                    Err(e) => ChangeResult::Failed(format!("Failed to set {prop} to '{new}': {e}")),
                }
            };
            changes.push(Change {
                property: prop.into(),
                event: format!("{prop}_changed"),
                previous: quoted(&old),
                desired: quoted(&new),
                result,
            });
        }
        // mode
        if let (Some(m), false) = (&self.mode, is_link) {
            let have = meta.mode() & 0o7777;
            let want = m.resolve(have, current == Current::Directory);
            if have != want {
                let (old, new) = (show_mode(have), show_mode(want));
                // A symbolic mode is named after the mode it gives: `'0744' (u+x)`.
                let shown = match m {
                    Mode::Symbolic(spec) => format!("'{new}' ({spec})"),
                    Mode::Octal(_) => format!("'{new}'"),
                };
                let result = if !apply {
                    ChangeResult::Noop
                } else {
                    match fs::set_permissions(&self.path, fs::Permissions::from_mode(want)) {
                        Ok(()) => ChangeResult::Synced(format!("mode changed '{old}' to {shown}")),
                        Err(e) => ChangeResult::Failed(format!("failed to set mode {new}: {e}")),
                    }
                };
                changes.push(Change {
                    property: "mode".into(),
                    event: "mode_changed".into(),
                    previous: quoted(&old),
                    desired: quoted(&new),
                    result,
                });
            }
        }
        Ok(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `puppet apply` (7.23) made of these modes on files of the same starting modes
    /// (oracle case 1352 for the first).
    #[test]
    fn symbolic_modes_as_puppet() {
        assert_eq!(symbolic_mode("u+x", 0o644, false), Ok(0o744));
        assert_eq!(symbolic_mode("go+rX", 0o700, true), Ok(0o755));
        assert_eq!(symbolic_mode("go+rX", 0o600, false), Ok(0o644));
        assert_eq!(symbolic_mode("a=r", 0o644, false), Ok(0o444));
        assert_eq!(symbolic_mode("u=rw,go=", 0o777, false), Ok(0o600));
        assert_eq!(symbolic_mode("g=u", 0o640, false), Ok(0o660));
        assert!(symbolic_mode("u+q", 0o644, false).is_err());
        assert_eq!(
            parse_mode("u+q"),
            Err("The file mode specification is invalid: \"u+q\"".to_string())
        );
        assert_eq!(parse_mode("0644"), Ok(Mode::Octal(0o644)));
    }
}
