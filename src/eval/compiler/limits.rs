//! Bounds that hold for a whole compile, not one call: the bytes of the strings it makes,
//! the resources it declares, and the size and depth of the arrays and hashes it builds.
//! Puppet has none of these and runs out of memory or stack instead; each gives an
//! evaluation error with the location (docs/apply-safety.md, "the evaluator's limits").

use super::{Compiler, Flow, R};
use crate::eval::values::value::Value;
use crate::span::Span;

/// The memory a compile's process may hold (its resident set, asked of the host) before the
/// compile is stopped. It is asked each time the strings the compile makes (interpolations,
/// function results, template output, ERB string operations) add up to another
/// [`MEMORY_CHECK_STEP`] bytes: strings that are dropped again (a loop's temporaries, freed
/// with their scopes) cost nothing, strings that are kept count. Together with the bound on
/// one string (`values::value::MAX_STRING_BYTES`), this bounds what strings cost.
pub(in crate::eval) const MAX_COMPILE_MEMORY: u64 = 2 << 30;
/// How many bytes of new strings between two looks at the process's memory.
const MEMORY_CHECK_STEP: u64 = 64 << 20;
/// The resources one compile may declare (classes included).
pub(in crate::eval) const MAX_RESOURCES: usize = 200_000;
/// How deep an array or hash built by the manifest may nest (`reduce` wrapping its memo).
pub(in crate::eval) const MAX_VALUE_DEPTH: usize = 1_000;
/// The elements (keys, values, nested ones) one array or hash built by the manifest may hold
/// (`reduce` doubling its memo).
pub(in crate::eval) const MAX_VALUE_NODES: u64 = 1_000_000;

/// What a compile has used of its bounds.
#[derive(Default)]
pub(in crate::eval) struct Budget {
    /// Bytes of strings made since the process's memory was last looked at.
    string_bytes: u64,
}

impl Compiler<'_> {
    /// Counts a string of `len` bytes just made; every [`MEMORY_CHECK_STEP`] bytes, the
    /// process's memory is compared with [`MAX_COMPILE_MEMORY`]: the message when it is past.
    pub(in crate::eval) fn charge_string(&mut self, len: usize) -> Result<(), String> {
        self.budget.string_bytes = self.budget.string_bytes.saturating_add(len as u64);
        if self.budget.string_bytes < MEMORY_CHECK_STEP {
            return Ok(());
        }
        self.budget.string_bytes = 0;
        match self.loader.host().memory_in_use() {
            Some(used) if used > MAX_COMPILE_MEMORY => Err(format!(
                "evaluation stopped: this compile holds more than {MAX_COMPILE_MEMORY} bytes of memory (its bound), most of it in strings"
            )),
            _ => Ok(()),
        }
    }

    /// [`Compiler::charge_string`] as an evaluation error at `span`.
    pub(in crate::eval) fn charge_string_at(&mut self, len: usize, span: Span) -> R<()> {
        self.charge_string(len)
            .map_err(|msg| Flow::Err(self.runtime(msg, span)))
    }

    /// One more resource may be declared.
    pub(in crate::eval) fn check_resource_count(&self, span: Span) -> R<()> {
        if self.resources.len() < MAX_RESOURCES {
            return Ok(());
        }
        Err(Flow::Err(self.runtime(
            format!("evaluation stopped: more than {MAX_RESOURCES} resources in one compile"),
            span,
        )))
    }

    /// An array or hash just built is within [`MAX_VALUE_DEPTH`] and [`MAX_VALUE_NODES`].
    pub(in crate::eval) fn check_value_shape(&self, v: &Value, span: Span) -> R<()> {
        match value_shape_error(v) {
            None => Ok(()),
            Some(msg) => Err(Flow::Err(self.runtime(msg, span))),
        }
    }
}

/// The top level of a value grown step by step (`reduce`'s memo) is within
/// [`MAX_VALUE_NODES`]: checked at each step, without walking what it holds (the literals that
/// nest it are walked).
pub(in crate::eval) fn top_level_too_large(v: &Value) -> bool {
    let len = match v {
        Value::Array(a) => a.len(),
        Value::Hash(h) => h.len(),
        _ => 0,
    };
    len as u64 > MAX_VALUE_NODES
}

/// Why `v` is too deep or too large, if it is.
pub(in crate::eval) fn value_shape_error(v: &Value) -> Option<String> {
    if !matches!(v, Value::Array(_) | Value::Hash(_)) {
        return None;
    }
    let mut nodes = 0u64;
    match walk(v, 1, &mut nodes) {
        Ok(()) => None,
        Err(Too::Deep) => Some(format!(
            "evaluation stopped: an array or hash nested more than {MAX_VALUE_DEPTH} levels deep"
        )),
        Err(Too::Large) => Some(too_many_elements()),
    }
}

pub(in crate::eval) fn too_many_elements() -> String {
    format!(
        "evaluation stopped: an array or hash of more than {MAX_VALUE_NODES} elements (nested ones included)"
    )
}

enum Too {
    Deep,
    Large,
}

fn walk(v: &Value, depth: usize, nodes: &mut u64) -> Result<(), Too> {
    let mut visit = |c: &Value| -> Result<(), Too> {
        *nodes += 1;
        if *nodes > MAX_VALUE_NODES {
            return Err(Too::Large);
        }
        match c {
            Value::Array(_) | Value::Hash(_) | Value::Sensitive(_) => walk(c, depth + 1, nodes),
            _ => Ok(()),
        }
    };
    match v {
        Value::Array(_) | Value::Hash(_) if depth > MAX_VALUE_DEPTH => Err(Too::Deep),
        Value::Array(a) => a.iter().try_for_each(visit),
        Value::Hash(h) => h.iter().try_for_each(|(k, v)| {
            visit(k)?;
            visit(v)
        }),
        Value::Sensitive(x) => walk(x, depth, nodes),
        _ => Ok(()),
    }
}
