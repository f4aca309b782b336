//! Hiera 5: hierarchies of YAML/JSON data behind `lookup()` and class parameters.

pub mod yaml;
