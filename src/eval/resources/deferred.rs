//! `Deferred` values resolved as the agent resolves them before applying a catalog
//! (Puppet's `DeferredResolver`): each one's function is called with its arguments, nested
//! deferred arguments first; a name starting with `$` is a top-scope variable, its
//! arguments digging into the value. `ordo apply` asks for this; `ordo compile` keeps them
//! as strings, as `puppet catalog compile` writes them.

use crate::eval::compiler::{Compiler, EvalError, Flow};
use crate::eval::values::value::Value;
use crate::span::Span;

/// Whether a value holds a deferred call anywhere.
fn has_deferred(v: &Value) -> bool {
    match v {
        Value::Deferred(_) => true,
        Value::Array(a) => a.iter().any(has_deferred),
        Value::Hash(h) => h.values().any(has_deferred),
        Value::Sensitive(inner) => has_deferred(inner),
        _ => false,
    }
}

impl Compiler<'_> {
    /// Replaces every deferred value in the catalog's resources by its result.
    pub(in crate::eval) fn resolve_deferred(&mut self) -> Result<(), EvalError> {
        for i in 0..self.resources.len() {
            let r = &self.resources[i];
            if r.virtual_ || r.dropped || !r.params.values().any(has_deferred) {
                continue;
            }
            let span = r.span;
            let names: Vec<std::sync::Arc<str>> = r
                .params
                .iter()
                .filter(|(_, v)| has_deferred(v))
                .map(|(k, _)| k.clone())
                .collect();
            for name in names {
                let Some(v) = self.resources[i].params.get_mut(&name) else {
                    continue;
                };
                let v = std::mem::replace(v, Value::Undef);
                let resolved = match self.resolve_value(v, span) {
                    Ok(x) => x,
                    Err(Flow::Err(e)) => return Err(self.finalize_error(e, "Function Call")),
                    Err(_) => Value::Undef,
                };
                if let Some(slot) = self.resources[i].params.get_mut(&name) {
                    *slot = resolved;
                }
            }
        }
        Ok(())
    }

    fn resolve_value(&mut self, v: Value, span: Span) -> Result<Value, Flow> {
        Ok(match v {
            Value::Deferred(d) => {
                let d = *d;
                let mut args = Vec::new();
                for a in d.arguments.unwrap_or_default() {
                    args.push(self.resolve_value(a, span)?);
                }
                match d.name.strip_prefix('$') {
                    Some(var) => {
                        let mut cur = self.lookup_var(var, 0, span)?;
                        for k in args {
                            cur = match (&cur, k) {
                                (Value::Hash(h), k) => h.get(&k).cloned().unwrap_or(Value::Undef),
                                (Value::Array(a), Value::Int(n)) => usize::try_from(n)
                                    .ok()
                                    .and_then(|n| a.get(n).cloned())
                                    .unwrap_or(Value::Undef),
                                _ => Value::Undef,
                            };
                        }
                        cur
                    }
                    None => self.call_function(&d.name, args, None, 0, span)?,
                }
            }
            Value::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for x in a {
                    out.push(self.resolve_value(x, span)?);
                }
                Value::Array(out)
            }
            Value::Hash(h) => {
                let mut out = indexmap::IndexMap::with_capacity(h.len());
                for (k, x) in h {
                    out.insert(k, self.resolve_value(x, span)?);
                }
                Value::Hash(out.into())
            }
            Value::Sensitive(inner) => {
                Value::Sensitive(Box::new(self.resolve_value(*inner, span)?))
            }
            other => other,
        })
    }
}
