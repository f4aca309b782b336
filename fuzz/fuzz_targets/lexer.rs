//! The lexer and token cooker on arbitrary text (manifests and EPP templates): they must
//! return tokens or an error, never panic, and every token span must lie inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for cooked in [ordo::lexer::cook(text), ordo::lexer::cook_epp(text)] {
        for (start, _, end) in &cooked.tokens {
            assert!(start <= end && *end <= text.len(), "token span out of the text");
        }
    }
});
