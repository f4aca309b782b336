//! The whole front end (lexer, cooker, grammar, factory, static validation) on arbitrary
//! text, as a manifest and as an EPP template: it must return a tree or diagnostics, never
//! panic; a rejected file comes with at least one error; the tree dumps to PN; every
//! diagnostic renders against the text (spans inside it, on character boundaries).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ordo::diagnostics::{render, RenderOptions};
use ordo::span::SourceMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.pp", text);
    for parsed in [
        ordo::parser::parse(text, id),
        ordo::parser::parse_epp(text, id),
    ] {
        match &parsed.program {
            Some(p) => {
                let _ = ordo::pn::to_pn(p);
            }
            None => assert!(parsed.has_errors(), "no tree and no error"),
        }
        for d in &parsed.diagnostics {
            let _ = render(d, &sources, RenderOptions { color: false });
        }
    }
});
