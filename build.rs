//! Generates the LALRPOP parser from `grammar/` into `$OUT_DIR` (never into `src/`).
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .process()
        .expect("LALRPOP failed to generate the parser");
}
