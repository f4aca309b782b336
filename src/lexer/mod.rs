//! The lexer: logos recognises raw tokens (`raw`), the cooker (`cooker`) turns them into
//! the tokens the grammar reads, making Puppet's context decisions.

pub mod cooker;
pub mod raw;
pub mod regex_check;
pub mod strings;
pub mod token;

pub use cooker::{cook, cook_epp, cook_epp_stream, cook_stream, Cooked, Spanned, Stream};
pub use token::{LexError, Tok};
