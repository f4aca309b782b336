//! The evaluator: manifests in, catalog out, the way Puppet 7.23's compiler builds it.
//!
//! **Architecture invariant:** this module does no IO. Module sources come through the
//! [`Loader`] trait, facts come in as data, and log lines go out as data.
//!
//! The compile follows Puppet's phases (`Puppet::Parser::Compiler#compile`): evaluate the main
//! class (top-level code), the matching node block, then the generators loop (collectors,
//! lazily evaluated defined types) until nothing changes, then validate relationship
//! metaparameters, evaluate chaining arrows, apply pending overrides, copy metaparameters
//! along containment edges, and build the catalog.

mod compiler;
mod erb;
mod expr;
mod functions;
pub mod hiera;
pub mod host;
pub mod parse_cache;
mod resources;
pub mod types;
pub mod values;

use crate::catalog::Catalog;
use crate::diagnostics::Diagnostic;
use crate::span::SourceMap;
use serde_json::Value as Json;

pub use compiler::Compiler;
pub use functions::registry::{
    Entry as FunctionEntry, Origin as FunctionOrigin, Purity, ENTRIES as FUNCTIONS,
};
pub use functions::ruby_call::RUBY_PACKAGE;
pub use functions::signatures::names as signature_names;
pub use resources::output::CatalogSource;
pub use resources::priority;
pub use resources::provenance::{ArrowEdge, CallEdge, Provenance};
pub use types::type_schema;
pub use values::ruby_print::ruby_inspect;

/// Whether a name has a namespace (`a::b`). A byte search for `:` first: most names have
/// none, and are told at that cost.
pub(crate) fn is_qualified(name: &str) -> bool {
    name.contains(':') && name.contains("::")
}

/// Where module files come from. `module` is the first segment of a qualified name,
/// `path` is relative to the module root (`manifests/sub/cls.pp`).
pub trait Loader {
    /// Returns the file's display name and text.
    fn load(&self, module: &str, path: &str) -> Option<(String, String)>;

    /// The directory of a module of this name on the modulepath, as an absolute path
    /// (`module_directory()`, `find_template()`); `None` when unknown.
    fn module_dir(&self, _module: &str) -> Option<String> {
        None
    }

    /// Whether a module of this name is on the modulepath.
    fn has_module(&self, _module: &str) -> bool {
        false
    }

    /// Whether a module ships a Ruby resource type of this name (`lib/puppet/type/NAME.rb`).
    fn has_ruby_type(&self, _name: &str) -> bool {
        false
    }

    /// The schema (namevars, attributes) of a Ruby resource type, when one was given.
    fn type_schema(&self, _name: &str) -> Option<type_schema::TypeSchema> {
        None
    }

    /// The namevar a module's Ruby resource type declares in its source
    /// (`lib/puppet/type/NAME.rb`), for types no schema describes.
    fn ruby_type_namevar(&self, _name: &str) -> Option<String> {
        None
    }

    /// A Hiera data file (`hiera.yaml` or a data file), by path as the hierarchy names it
    /// (`env:data/common.yaml`, `module:<name>:data/common.yaml`); see `crate::eval::hiera`.
    /// `Ok(None)`: no such file; `Err`: a file that is there but cannot be read as text.
    fn load_data(&self, _path: &str) -> Result<Option<std::sync::Arc<str>>, String> {
        Ok(None)
    }

    /// The file name of the global Hiera config (`--hiera-config`), read as `global/<name>`.
    fn hiera_config_name(&self) -> Option<String> {
        None
    }

    /// Trees shared with other compiles of the same code (`ordo compile --nodes`); `None`
    /// parses every file afresh.
    fn parse_cache(&self) -> Option<&parse_cache::ParseCache> {
        None
    }

    /// Whether a module ships a Ruby function of this name.
    fn has_ruby_function(&self, _name: &str) -> bool {
        false
    }

    /// The file of a module's Ruby function: the 4.x API's `lib/puppet/functions/a/b.rb`
    /// for `a::b`, else the 3.x API's `lib/puppet/parser/functions/NAME.rb`.
    fn ruby_function_file(&self, _name: &str) -> Option<RubyFunctionFile> {
        None
    }

    /// The Ruby that runs the modules' Ruby code, when this loader has one.
    fn ruby(&self) -> Option<&dyn RubyRuntime> {
        None
    }

    /// The modules' `lib` directories (Ruby's load path for their code).
    fn ruby_lib_dirs(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether exported resources are stored and collected (Puppet's `storeconfigs`; see
    /// `eval::exported`). Off: `@@` and `<<| |>>` only warn, as without PuppetDB.
    fn storeconfigs(&self) -> bool {
        false
    }

    /// The resources of type `type_name` (`Type::Name`) that nodes exported, with the node
    /// that exported each, from the store that stands in for PuppetDB.
    fn exported_resources(&self, _type_name: &str) -> Vec<(String, crate::catalog::Resource)> {
        Vec::new()
    }

    /// The machine's files, commands and clock, for the functions that read them; the
    /// default sees an empty machine at the epoch.
    fn host(&self) -> &dyn host::Host {
        &host::NoHost
    }
}

/// Where a module's Ruby function is defined, and with which of Puppet's APIs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RubyFunctionFile {
    pub path: String,
    /// `lib/puppet/parser/functions` (the 3.x API) rather than `lib/puppet/functions`.
    pub legacy: bool,
}

/// A Ruby interpreter running the modules' Ruby (functions, ERB), implemented outside the
/// core (the CLI's is a child `ruby` process: `crate::ruby`). Requests and answers are
/// JSON messages of the protocol in `src/ruby/host.rb` (docs/ruby.md).
pub trait RubyRuntime: Sync {
    /// Sends `request`; while Ruby works, answers each of its callbacks with `host`, until
    /// Ruby answers (`{"ok": ..}` or `{"err": ..}`). `Err`: Ruby could not answer (not
    /// installed, died, out of time), with what it printed.
    fn request(&self, request: &Json, host: &mut dyn FnMut(&Json) -> Json) -> Result<Json, String>;

    /// Whether Ruby runs (started now if need be); `Err`: why not.
    fn available(&self) -> Result<(), String>;
}

/// A loader with no modules.
pub struct NoModules;

impl Loader for NoModules {
    fn load(&self, _module: &str, _path: &str) -> Option<(String, String)> {
        None
    }
}

/// A loader over in-memory files, keyed by `module/path`.
#[derive(Default)]
pub struct MemoryLoader {
    pub files: std::collections::HashMap<String, String>,
}

impl Loader for MemoryLoader {
    fn load(&self, module: &str, path: &str) -> Option<(String, String)> {
        let key = format!("{module}/{path}");
        self.files
            .get(&key)
            .map(|t| (format!("modules/{key}"), t.clone()))
    }
}

#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The node name (`--node`); also `$trusted['certname']`.
    pub node: String,
    /// Facts as a JSON object.
    pub facts: Json,
    pub strict_variables: bool,
    /// Call the functions of `Deferred` values once the catalog is complete, as the agent
    /// does before applying (`ordo apply`); otherwise they stay in the catalog as strings,
    /// as `puppet catalog compile` writes them.
    pub resolve_deferred: bool,
    /// Set by a compile server (`ordo serve`): what it knows of the node besides its facts.
    /// `None` for a local compile (`$trusted['authenticated']` is `local`).
    pub server: Option<ServerContext>,
}

/// A compile server's view of the node (`ordo serve`), as Puppet's server sets it.
#[derive(Clone, Debug, Default)]
pub struct ServerContext {
    /// The agent's environment: `$environment`, `$server_facts['environment']`.
    pub environment: String,
    /// `$trusted`, from the node's client certificate (a JSON object).
    pub trusted: Json,
    /// `$server_facts` (a JSON object), the environment put in by the compiler.
    pub server_facts: Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Err,
    Alert,
    Emerg,
    Crit,
}

impl LogLevel {
    pub fn label(self) -> &'static str {
        match self {
            LogLevel::Debug => "Debug",
            LogLevel::Info => "Info",
            LogLevel::Notice => "Notice",
            LogLevel::Warning => "Warning",
            LogLevel::Err => "Error",
            LogLevel::Alert => "Alert",
            LogLevel::Emerg => "Emergency",
            LogLevel::Crit => "Critical",
        }
    }
}

/// One compile-time log line, printed by the CLI as `Level: message`.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

impl LogLine {
    /// The console line, without the message's last line break: Puppet's console writes
    /// with Ruby's `puts`, which adds none where the text ends in one.
    pub fn render(&self) -> String {
        let message = self.message.strip_suffix('\n').unwrap_or(&self.message);
        format!("{}: {message}", self.level.label())
    }
}

/// What a compile produced: the catalog when it succeeded, log lines, and diagnostics
/// (errors carry Puppet's message text, without the `Error: ` prefix; warnings are Ordo's
/// own, which only `ordo check` shows).
pub struct CompileResult {
    pub catalog: Option<Catalog>,
    /// In place of `catalog`, for [`compile_to_write`]: the catalog, to be written.
    pub catalog_source: Option<CatalogSource>,
    pub logs: Vec<LogLine>,
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
    /// Duplicate declarations resolved by `priority` (Ordo extension, `priority.rs`).
    pub priorities: Vec<priority::PriorityConflict>,
    /// Where resources and edges were written (for `ordo check`).
    pub provenance: Provenance,
    /// With storeconfigs: the resources this node exported, as the store keeps them.
    pub exported: Vec<crate::catalog::Resource>,
}

/// Compiles the manifest `text` (named `name`) for a node.
pub fn compile(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> CompileResult {
    Compiler::new(loader, opts).run(name, text)
}

/// [`compile`] for a caller that exits once done with the result (see
/// [`Compiler::exiting`]).
pub fn compile_exiting(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> CompileResult {
    Compiler::new(loader, opts).exiting().run(name, text)
}

/// [`compile`] reporting every missing relationship target, not only the first (`ordo
/// check`); `exiting` as [`compile_exiting`].
pub fn compile_checking(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
    exiting: bool,
) -> CompileResult {
    let compiler = Compiler::new(loader, opts).reporting_all();
    if exiting {
        compiler.exiting().run(name, text)
    } else {
        compiler.run(name, text)
    }
}

/// [`compile`] for a caller that only wants the catalog: `provenance` stays empty.
pub fn compile_catalog(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> CompileResult {
    Compiler::new(loader, opts)
        .without_provenance()
        .run(name, text)
}

/// [`compile_catalog`] for a caller that only writes the catalog out: the result carries a
/// [`CatalogSource`] in place of the catalog (but with storeconfigs), which writes the
/// same text without building the whole catalog in memory. The compiler's own data is not
/// freed (the caller exits after writing): not for a long-lived process.
pub fn compile_to_write(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> CompileResult {
    Compiler::new(loader, opts)
        .without_provenance()
        .deferring_catalog()
        .run(name, text)
}
