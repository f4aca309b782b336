//! Parsed files shared by the compiles of many nodes (`ordo compile --nodes`): each manifest
//! or module file is parsed once and its tree shared, read-only, by every compile (and
//! thread) that loads it.
//!
//! Spans name files by their number in a compile's `SourceMap`, which is the order that
//! compile loaded them in. A tree is therefore shared by compiles that gave its file the same
//! number (the usual case: the same code loads the same files in the same order); a compile
//! that numbered the file differently parses it again, so spans always stay right.
//!
//! ERB templates are kept the same way, lexed and parsed, by their text.
//!
//! Bounded: past [`MAX_TREES`] trees or [`MAX_TEMPLATE_BYTES`] of template text, files and
//! templates are parsed at each use (their owner, the environment, drops the whole cache
//! when its code changes).

use crate::ast::Program;
use crate::diagnostics::Diagnostic;
use crate::span::FileId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A file's tree and the parser's diagnostics.
#[derive(Debug)]
pub struct Parsed {
    pub program: Option<Program>,
    pub diagnostics: Vec<Diagnostic>,
}

type Slot = Arc<OnceLock<(String, Arc<Parsed>)>>;

/// The most trees kept (a file numbered differently by different compiles has a tree per
/// number).
pub const MAX_TREES: usize = 50_000;
/// The most template text kept.
pub const MAX_TEMPLATE_BYTES: usize = 32 << 20;

/// The shared trees, by file name and number.
#[derive(Default)]
pub struct ParseCache {
    entries: Mutex<HashMap<(String, FileId), Slot>>,
    parses: std::sync::atomic::AtomicUsize,
    templates: Mutex<Templates>,
    /// Type aliases, resolved (their definitions are code, the same for every compile).
    aliases: Mutex<HashMap<String, crate::eval::types::PType>>,
    /// Hiera's configs and data files, parsed.
    pub(in crate::eval) hiera: crate::eval::hiera::Shared,
}

#[derive(Default)]
struct Templates {
    compiled: HashMap<String, Arc<crate::eval::erb::Compiled>>,
    bytes: usize,
}

impl ParseCache {
    pub fn new() -> ParseCache {
        ParseCache::default()
    }

    /// The tree of `text` (file `name`, number `file`): parsed by the first caller, the others
    /// wait for it and share it. A different text under the same name is parsed on its own.
    pub fn get(
        &self,
        name: &str,
        text: &str,
        file: FileId,
        parse: impl Fn() -> Parsed,
    ) -> Arc<Parsed> {
        let slot = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let key = (name.to_string(), file);
            if entries.len() >= MAX_TREES && !entries.contains_key(&key) {
                drop(entries);
                self.parses
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Arc::new(parse());
            }
            entries.entry(key).or_default().clone()
        };
        let mut fresh = None;
        let (cached_text, tree) = slot.get_or_init(|| {
            self.parses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tree = Arc::new(parse());
            fresh = Some(tree.clone());
            (text.to_string(), tree)
        });
        if let Some(tree) = fresh {
            return tree;
        }
        if cached_text == text {
            tree.clone()
        } else {
            self.parses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Arc::new(parse())
        }
    }

    /// An ERB template, lexed and parsed by the first caller (its errors are not kept).
    pub(in crate::eval) fn erb(
        &self,
        text: &str,
        compile: impl FnOnce() -> Result<crate::eval::erb::Compiled, String>,
    ) -> Result<Arc<crate::eval::erb::Compiled>, String> {
        let lock = || self.templates.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = lock().compiled.get(text) {
            return Ok(t.clone());
        }
        let t = Arc::new(compile()?);
        let mut kept = lock();
        if kept.bytes + text.len() <= MAX_TEMPLATE_BYTES {
            kept.bytes += text.len();
            kept.compiled.insert(text.to_string(), t.clone());
        }
        Ok(t)
    }

    /// A type alias another compile resolved.
    pub(in crate::eval) fn alias(&self, name: &str) -> Option<crate::eval::types::PType> {
        let aliases = self.aliases.lock().unwrap_or_else(|e| e.into_inner());
        aliases.get(name).cloned()
    }

    /// Keeps a resolved type alias for the other compiles.
    pub(in crate::eval) fn keep_alias(&self, name: &str, t: &crate::eval::types::PType) {
        let mut aliases = self.aliases.lock().unwrap_or_else(|e| e.into_inner());
        if aliases.len() < MAX_TREES {
            aliases.insert(name.to_string(), t.clone());
        }
    }

    /// How many times a file was parsed (for tests and summaries).
    pub fn parses(&self) -> usize {
        self.parses.load(std::sync::atomic::Ordering::Relaxed)
    }
}
