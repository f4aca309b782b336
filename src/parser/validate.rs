//! Puppet's static validation (pops/validation/checker4_0.rb): what `puppet parser validate`
//! rejects in a tree that parsed.

use crate::ast::*;
use crate::diagnostics::Diagnostic;

pub fn validate(_program: &Program) -> Vec<Diagnostic> {
    Vec::new()
}
