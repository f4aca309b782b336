//! Parsed files shared by the compiles of many nodes (`ordo compile --nodes`): each manifest
//! or module file is parsed once and its tree shared, read-only, by every compile (and
//! thread) that loads it.
//!
//! Spans name files by their number in a compile's `SourceMap`, which is the order that
//! compile loaded them in. A tree is therefore shared by compiles that gave its file the same
//! number (the usual case: the same code loads the same files in the same order); a compile
//! that numbered the file differently parses it again, so spans always stay right.

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

/// The shared trees, by file name and number.
#[derive(Default)]
pub struct ParseCache {
    entries: Mutex<HashMap<(String, FileId), Slot>>,
    parses: std::sync::atomic::AtomicUsize,
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
            entries.entry((name.to_string(), file)).or_default().clone()
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

    /// How many times a file was parsed (for tests and summaries).
    pub fn parses(&self) -> usize {
        self.parses.load(std::sync::atomic::Ordering::Relaxed)
    }
}
