//! The compiler state and the compile phases.

use super::types::PType;
use super::values::value::Value;
use super::{CompileOptions, CompileResult, Loader, LogLevel, LogLine};
use crate::ast::{ClassDef, DefineDef, Expr, ExprKind, FunctionDef, NodeDef, Program};
use crate::catalog::ResourceKind;
use crate::catalog::TrimColons;
use crate::diagnostics::Diagnostic;
use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::span::{FileId, SourceMap, Span};
use indexmap::{IndexMap, IndexSet};
use scope::{Scope, ScopeId, ScopeKind};
use std::rc::Rc;
use std::sync::Arc;

mod definitions;
mod inputs;
pub(in crate::eval) mod limits;
pub(in crate::eval) mod scope;
pub(in crate::eval) mod suggest;
pub(super) use inputs::parse_source;
use inputs::*;

/// Why evaluation stopped early: an error, or `break`/`next`/`return` travelling to the
/// construct that handles them.
#[derive(Debug)]
pub enum Flow {
    Err(EvalError),
    Break(Span),
    /// `next()`: the value and where it was called.
    Next(Value, Span),
    /// `return()`: the value and where it was called.
    Return(Value, Span),
}

/// An evaluation error. `formatted` errors already carry Puppet's full text with location;
/// the others get wrapped (`Error while evaluating a Resource Statement, ...`) by the
/// nearest enclosing statement, as Puppet's evaluator does.
#[derive(Debug, Clone)]
pub struct EvalError {
    pub msg: String,
    pub span: Option<Span>,
    pub formatted: bool,
}

pub type R<T> = Result<T, Flow>;

impl From<EvalError> for Flow {
    fn from(e: EvalError) -> Flow {
        Flow::Err(e)
    }
}

pub use super::resources::tags::Tags;

/// A resource being built.
#[derive(Clone, Debug)]
pub struct Res {
    pub type_name: String,
    pub title: String,
    pub params: super::resources::params::ParamMap,
    /// Which definition set each parameter and where (see [`ParamSetters`]).
    pub setters: ParamSetters,
    pub tags: Tags,
    pub file: Option<FileId>,
    pub line: Option<u32>,
    pub exported: bool,
    pub virtual_: bool,
    pub kind: ResourceKind,
    /// The scope that declared it.
    pub scope: ScopeId,
    /// The definition that declared it (`scope.source`).
    pub source: Arc<str>,
    pub evaluated: bool,
    pub is_define: bool,
    /// Removed from the catalog (exported without storeconfigs).
    pub dropped: bool,
    /// Declared by `create_resources` with a title that is not a string (no title tag; the
    /// catalog keeps the namevar beside the title).
    pub untagged_title: bool,
    pub span: Span,
}

/// A file and line a parameter was set at.
pub type SetAt = (Option<FileId>, Option<u32>);

/// Which definition set each parameter of a resource (Puppet's `param.source`, for the
/// override rules) and where (for error messages). A resource has few parameters, so this
/// is a vector searched linearly, the sources shared with the scopes.
#[derive(Clone, Debug, Default)]
pub struct ParamSetters(Vec<ParamSetter>);

#[derive(Clone, Debug)]
struct ParamSetter {
    /// The parameter's name, the string its resource's `params` has (see
    /// `Compiler::attr_name`).
    name: Arc<str>,
    source: Arc<str>,
    /// Where it was set ([`pack`]): 8 bytes for an `Option<SetAt>`.
    at: (u32, u32),
}

// Every resource has a setter per parameter set (mixed 10k: 44,000): 40 bytes, not 56.
const _: () = assert!(std::mem::size_of::<ParamSetter>() == 40);

/// The file of a parameter set by binding a definition's defaults (no place), and of a
/// place without a file; the line of a place without a line. File numbers are indexes of
/// the source map, lines count lines of a file: neither reaches these.
const NOT_AT: u32 = u32::MAX - 2;
const NO_FILE: u32 = u32::MAX - 1;
const NO_LINE: u32 = u32::MAX;

/// `at` as a [`ParamSetter`] keeps it.
fn pack(at: Option<SetAt>) -> (u32, u32) {
    match at {
        None => (NOT_AT, NO_LINE),
        Some((file, line)) => (file.map_or(NO_FILE, |f| f.0), line.unwrap_or(NO_LINE)),
    }
}

/// The place [`pack`] kept.
fn unpack((file, line): (u32, u32)) -> Option<SetAt> {
    (file != NOT_AT).then(|| {
        (
            (file != NO_FILE).then_some(FileId(file)),
            (line != NO_LINE).then_some(line),
        )
    })
}

impl ParamSetters {
    fn find(&self, name: &str) -> Option<&ParamSetter> {
        self.0.iter().find(|s| *s.name == *name)
    }

    /// Records that `source` set `name`, at `at` (when given; else the place stays).
    pub fn set(&mut self, name: &Arc<str>, source: &Arc<str>, at: Option<SetAt>) {
        match self.0.iter_mut().find(|s| s.name == *name) {
            Some(s) => {
                s.source = source.clone();
                if at.is_some() {
                    s.at = pack(at);
                }
            }
            None => self.0.push(ParamSetter {
                name: name.clone(),
                source: source.clone(),
                at: pack(at),
            }),
        }
    }

    /// Room for `n` more parameters.
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n)
    }

    /// The definition that set `name`.
    pub fn source(&self, name: &str) -> Option<&Arc<str>> {
        self.find(name).map(|s| &s.source)
    }

    /// Where `name` was set.
    pub fn at(&self, name: &str) -> Option<SetAt> {
        self.find(name).and_then(|s| unpack(s.at))
    }
}

impl Res {
    /// `Notify[x]` as Puppet shows it in messages (`Class[Foo]` for classes).
    pub fn reference_shown(&self) -> String {
        self.reference()
    }

    pub fn reference(&self) -> String {
        if self.type_name == "Class" {
            format!("Class[{}]", crate::catalog::capitalize_type(&self.title))
        } else {
            let mut s = String::with_capacity(self.type_name.len() + self.title.len() + 2);
            s.push_str(&self.type_name);
            s.push('[');
            s.push_str(&self.title);
            s.push(']');
            s
        }
    }
}

#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub def: Rc<NodeDef>,
    /// Where the node statement is.
    pub span: Span,
}

/// A pending chaining-arrow relationship, evaluated when the catalog is finished.
#[derive(Clone, Debug)]
pub struct Relationship {
    pub source: Vec<Operand>,
    pub target: Vec<Operand>,
    pub notify: bool,
    /// Where the source and target operands were written.
    pub source_span: Span,
    pub target_span: Span,
}

/// One side of a relationship: a reference or a collector (by index).
#[derive(Clone, Debug)]
pub enum Operand {
    Ref(PType),
    Collector(usize),
}

/// A frame of Puppet's stack: a function call (its call site), or the main manifest.
#[derive(Clone, Copy, Debug)]
pub(super) enum StackFrame {
    Call(Span),
    Main(FileId),
}

pub struct Compiler<'a> {
    pub(super) loader: &'a dyn Loader,
    pub(super) opts: &'a CompileOptions,
    pub(super) sources: SourceMap,
    pub(super) classes: HashMap<String, std::sync::Arc<ClassDef>>,
    /// Where each class is defined (for errors about the definition itself).
    pub(super) class_spans: HashMap<String, Span>,
    /// Where each define is defined (to report a second definition of the name).
    define_spans: HashMap<String, Span>,
    pub(super) defines: HashMap<String, std::sync::Arc<DefineDef>>,
    pub(super) nodes: Vec<NodeInfo>,
    pub(super) functions: HashMap<String, Rc<FunctionDef>>,
    /// Built-in functions as resolved by name (`None`: no such built-in), so that a call
    /// looks the name up once (see `call_function`).
    pub(super) builtins: HashMap<String, Option<super::functions::registry::Resolved>>,
    pub(super) type_aliases: HashMap<String, Expr>,
    pub(super) resolved_aliases: HashMap<String, PType>,
    pub(super) loaded_files: HashSet<String>,
    /// The module each loaded module file belongs to.
    pub(super) module_files: HashMap<FileId, String>,
    /// The module whose file defines a class or defined type (by lower-case name); absent
    /// for definitions in the main manifest. `$module_name` comes from here, as Puppet's.
    pub(super) def_modules: HashMap<String, String>,
    // Boxed: a vector of tens of thousands of big structs would be copied, and fresh memory
    // touched, at each doubling (mixed10k: 4 MB copied, 260 page faults); boxes stay put.
    #[allow(clippy::vec_box)]
    pub(super) scopes: Vec<Box<Scope>>,
    #[allow(clippy::vec_box)]
    pub(super) resources: Vec<Box<Res>>,
    /// (Type, title) -> resource.
    pub(super) index: super::resources::res_index::ResIndex,
    /// (Type, namevar or alias) -> resource.
    pub(super) aliases: super::resources::res_index::AliasIndex,
    pub(super) containment: Vec<(usize, usize)>,
    pub(super) class_scopes: HashMap<String, ScopeId>,
    pub(super) class_list: Vec<String>,
    pub(super) catalog_tags: IndexSet<std::sync::Arc<str>>,
    pub(super) collectors: Vec<super::resources::collect::Collector>,
    pub(super) relationships: Vec<Relationship>,
    pub(super) pending_overrides: Vec<super::resources::catalog_ops::Override>,
    pub(super) logs: Vec<LogLine>,
    /// Deprecated functions already warned about (Puppet's `warn_once`).
    pub(super) warned_deprecations: std::collections::HashSet<String>,
    /// Virtual defined-type instances whose parameters are checked when they are evaluated.
    pub(super) unchecked_virtual: Vec<usize>,
    pub(super) top: ScopeId,
    pub(super) node_scope: Option<ScopeId>,
    pub(super) main_file: FileId,
    /// Output buffers of the EPP templates being rendered.
    pub(super) render_stack: Vec<String>,
    /// Whether each template being rendered has rendered a Sensitive value (its text is
    /// then Sensitive).
    pub(super) render_sensitive: Vec<bool>,
    pub(super) hiera_cache: crate::eval::hiera::Cache,
    /// The file number of each EPP template rendered so far, by name: a template rendered
    /// again with the same text keeps its number (and its tree, parsed once).
    pub(super) epp_files: std::collections::HashMap<String, FileId>,
    /// Nesting of Puppet-language function calls.
    pub(super) call_depth: usize,
    /// Puppet's own stack (`Puppet::Pops::PuppetStack`), innermost last: the call site of
    /// each function call from Puppet code in progress, and line 0 of the main manifest
    /// while its top-level code runs. stdlib's `deprecation` names its two innermost frames.
    pub(super) puppet_stack: Vec<StackFrame>,
    /// The deprecation key and message of each unprefixed function resolved so far that a
    /// module ships as a generated shim of its namespaced one (stdlib 9), read from its
    /// Ruby; taken out when its warning is given.
    pub(super) shim_deprecations: HashMap<String, (String, String)>,
    /// Nesting of class declarations (bounded by `catalog_ops::MAX_CLASS_DEPTH`).
    pub(super) class_depth: usize,
    /// Lambda calls so far (bounded by `functions::MAX_LAMBDA_CALLS`).
    pub(super) lambda_calls: u64,
    /// What the compile has used of its other bounds (see `limits`).
    pub(super) budget: limits::Budget,
    /// The modules' Ruby functions described by Ruby so far (see `ruby_call`).
    pub(super) ruby: super::functions::ruby_call::RubyState,
    /// Rudder priorities: pending class declarations, resolved conflicts.
    pub(super) priority: super::resources::priority::PriorityState,
    /// Spans of edges and Ordo's own warnings, for `ordo check`.
    pub(super) recorder: super::resources::provenance::Recorder,
    /// Inside a type alias body or a type string, where unknown names stay references.
    pub(super) type_alias_depth: usize,
    /// The first module file refused when loaded (a definition outside its namespace).
    pub(super) load_error: Option<EvalError>,
    /// Resource type names already resolved (see `type_refs`).
    pub(super) known_resource_types: HashSet<String>,
    /// Resource type references already resolved, as written capitalised (`File`): looked
    /// up without lowering the name.
    pub(super) known_resource_refs: HashSet<String>,
    /// Resources collected from other nodes' exports: (Type, title) -> exporting node.
    pub(super) imported_exports: HashMap<(String, String), String>,
    /// Parameter types of definitions loaded from module files, still to evaluate.
    pub(super) queued_param_types: Vec<Expr>,
    /// Whether `run` builds the result's `provenance`.
    keep_provenance: bool,
    /// Whether `run` hands the catalog over unbuilt (see [`Compiler::deferring_catalog`]).
    defer_catalog: bool,
    /// Whether the process exits once done with the result (see [`Compiler::exiting`]).
    exiting: bool,
    /// Whether every missing relationship target is reported, not only the first (see
    /// [`Compiler::reporting_all`]).
    pub(super) report_all: bool,
    /// With `report_all`: the errors found after the one that stops the compile.
    pub(super) more_errors: std::cell::RefCell<Vec<EvalError>>,
    /// "Did you mean" hints by the span of their error (`suggest.rs`).
    pub(super) hints: std::cell::RefCell<Vec<(Span, String)>>,
    /// Set while `create_resources` declares a resource whose title is not a string (an
    /// Integer from `ensure_resource('t', $port)`): Puppet's 3.x path keeps the title as it
    /// is, and only a String title becomes a tag.
    pub(super) untagged_title: bool,
    /// The tags a resource type name gives its resources, made once per type: the
    /// resources share their strings.
    type_tags: HashMap<String, super::resources::tags::Tags>,
    /// Attribute names, one shared string each for every resource's parameters (see
    /// [`Compiler::attr_name`]).
    attr_names: crate::fxhash::FxHashSet<Arc<str>>,
    /// Resource type name -> its resources in declaration order (for the collectors,
    /// which would otherwise scan every resource on every pass).
    pub(super) by_type: HashMap<String, Vec<usize>>,
    /// `define NAME`, the source of a defined type's scopes, by name.
    pub(super) define_sources: HashMap<String, Arc<str>>,
    /// The line [`Compiler::span_line`] found last: file, its byte range, its number.
    last_line: std::cell::Cell<(FileId, u32, u32, u32)>,
    /// Set while a class or define parameter's default is evaluated (Puppet's
    /// `ParameterScope`): reading a parameter of that scope that has no value yet fails.
    pub(super) param_guard: Option<ParamGuard>,
    /// The classes whose parents are being declared (to refuse circular inheritance).
    pub(super) inheriting: Vec<String>,
}

/// See [`Compiler::param_guard`].
pub(super) struct ParamGuard {
    /// The class or define scope whose parameters are being bound.
    pub scope: ScopeId,
    /// `Class[C]`, `D[x]`: how the error names the callee.
    pub label: Rc<str>,
    /// The parameter whose default is evaluated (an index into `names`).
    pub from: usize,
    /// Every parameter, in declaration order.
    pub names: Rc<[String]>,
    /// The declaration, where the error is reported.
    pub span: Span,
}

/// What a successful compile made: the catalog, or what it is made of.
enum Compiled {
    Catalog(crate::catalog::Catalog),
    Source(super::resources::output::CatalogSource),
}

impl<'a> Compiler<'a> {
    pub fn new(loader: &'a dyn Loader, opts: &'a CompileOptions) -> Compiler<'a> {
        Compiler {
            loader,
            opts,
            sources: SourceMap::new(),
            classes: HashMap::default(),
            class_spans: HashMap::default(),
            define_spans: HashMap::default(),
            defines: HashMap::default(),
            nodes: Vec::new(),
            functions: HashMap::default(),
            builtins: HashMap::default(),
            type_aliases: HashMap::default(),
            resolved_aliases: HashMap::default(),
            loaded_files: HashSet::default(),
            module_files: HashMap::default(),
            def_modules: HashMap::default(),
            scopes: Vec::new(),
            resources: Vec::new(),
            index: Default::default(),
            aliases: Default::default(),
            containment: Vec::new(),
            class_scopes: HashMap::default(),
            class_list: Vec::new(),
            catalog_tags: IndexSet::default(),
            collectors: Vec::new(),
            relationships: Vec::new(),
            pending_overrides: Vec::new(),
            logs: Vec::new(),
            warned_deprecations: Default::default(),
            unchecked_virtual: Vec::new(),
            top: 0,
            node_scope: None,
            main_file: FileId(0),
            render_stack: Vec::new(),
            render_sensitive: Vec::new(),
            hiera_cache: Default::default(),
            epp_files: Default::default(),
            call_depth: 0,
            puppet_stack: Vec::new(),
            shim_deprecations: HashMap::default(),
            class_depth: 0,
            lambda_calls: 0,
            budget: Default::default(),
            ruby: Default::default(),
            priority: Default::default(),
            recorder: Default::default(),
            type_alias_depth: 0,
            load_error: None,
            known_resource_types: HashSet::default(),
            known_resource_refs: HashSet::default(),
            imported_exports: HashMap::default(),
            queued_param_types: Vec::new(),
            keep_provenance: true,
            defer_catalog: false,
            exiting: false,
            report_all: false,
            more_errors: Default::default(),
            hints: Default::default(),
            untagged_title: false,
            type_tags: HashMap::default(),
            attr_names: Default::default(),
            by_type: HashMap::default(),
            define_sources: HashMap::default(),
            last_line: std::cell::Cell::new((FileId::SYNTHETIC, 0, 0, 0)),
            param_guard: None,
            inheriting: Vec::new(),
        }
    }

    /// Does not keep where things came from: the result's `provenance` stays empty (for
    /// `ordo compile`, which only prints the catalog; saves time and memory on big catalogs).
    pub fn without_provenance(mut self) -> Self {
        self.keep_provenance = false;
        self.recorder.skip_params = true;
        self
    }

    /// The result carries a [`super::CatalogSource`] instead of the catalog, for a caller
    /// that only writes the catalog out (without storeconfigs, whose export store needs the
    /// built resources) and then exits: the compiler's own data (scopes, indexes) is left
    /// to the OS, not freed.
    pub fn deferring_catalog(mut self) -> Self {
        self.defer_catalog = true;
        self.exiting()
    }

    /// For a caller that exits once done with the result (`ordo check`): the compiler's own
    /// data (scopes, indexes, the trees) is left to the OS, not freed piece by piece (30 to
    /// 50 ms of checking 100,000 resources).
    pub fn exiting(mut self) -> Self {
        self.exiting = true;
        self
    }

    /// Reports every relationship that names a missing resource, not only the first as
    /// Puppet does (for `ordo check`, which shows all that is wrong with a manifest).
    pub fn reporting_all(mut self) -> Self {
        self.report_all = true;
        self
    }

    /// With [`Compiler::reporting_all`], sets `e` aside and carries on; otherwise `e`.
    pub(super) fn fail_or_collect(&self, e: EvalError) -> Result<(), EvalError> {
        if self.report_all {
            self.more_errors.borrow_mut().push(e);
            Ok(())
        } else {
            Err(e)
        }
    }

    /// The first error set aside by [`Compiler::fail_or_collect`], if any: the compile stops
    /// there, the others follow it in the result.
    pub(super) fn collected_error(&self) -> Result<(), EvalError> {
        let mut more = self.more_errors.borrow_mut();
        if more.is_empty() {
            Ok(())
        } else {
            Err(more.remove(0))
        }
    }

    /// The provenance when it is kept; the compiler is done with its resources (see
    /// [`Compiler::take_provenance`]).
    fn provenance_if_kept(&mut self) -> super::Provenance {
        if self.keep_provenance {
            self.take_provenance()
        } else {
            Default::default()
        }
    }

    /// Parses and compiles the main manifest.
    pub fn run(mut self, name: &str, text: &str) -> CompileResult {
        // A failed match left over from an earlier compile on this thread is not this one's.
        let _ = super::values::value::take_regex_failure();
        let file = self.sources.add(name, text);
        self.main_file = file;
        let parsed = self.parse_shared(name, text, file);
        self.log_validation_warnings(&parsed.diagnostics);
        let errors: Vec<&Diagnostic> = parsed.diagnostics.iter().filter(|d| d.is_error()).collect();
        // Several validation errors: Puppet logs each with its location, then fails with
        // "Language validation logged N errors. Giving up" (issue_reporter.rb); one error is
        // the failure itself.
        let logged = errors.len() > 1 && errors.iter().all(|d| d.code == "validation");
        let mut diagnostics: Vec<Diagnostic> = errors
            .into_iter()
            .cloned()
            .map(|mut d| {
                let loc = self.line_col_location(d.span);
                d.message = if logged {
                    d.code = "validation-logged";
                    format!("{} {}", d.message, loc)
                } else {
                    format!(
                        "Could not parse for environment production: {} {}",
                        d.message, loc
                    )
                }
                .trim_end()
                .to_string();
                d
            })
            .collect();
        if logged {
            let n = diagnostics.len();
            let file = self.sources.get(file).map_or(name, |f| f.name.as_str());
            diagnostics.push(Diagnostic::error(
                "validation-giving-up",
                format!(
                    "Could not parse for environment production: Language validation logged {n} errors. Giving up (file: {file})"
                ),
            ));
        }
        let program = match &parsed.program {
            Some(p) if diagnostics.is_empty() => p,
            _ => {
                if diagnostics.is_empty() {
                    diagnostics.push(Diagnostic::error(
                        "syntax",
                        "Could not parse for environment production",
                    ));
                }
                return CompileResult {
                    catalog: None,
                    catalog_source: None,
                    logs: self.logs,
                    diagnostics,
                    sources: self.sources,
                    priorities: vec![],
                    provenance: Default::default(),
                    exported: vec![],
                };
            }
        };
        let result = self.evaluate_program(program);
        self.release_trees(parsed);
        let mut result = result.and_then(|()| self.complete());
        // A module file that defines names outside its namespace fails the compile when it
        // is loaded (Puppet's checker); whatever went wrong after that is its consequence.
        if let Some(e) = self.load_error.take() {
            result = Err(e);
        }
        match result {
            Ok(compiled) => {
                let exported = self.exported_for_store();
                let provenance = self.provenance_if_kept();
                diagnostics.append(&mut self.recorder.warnings);
                let (catalog, catalog_source) = match compiled {
                    Compiled::Catalog(c) => (Some(c), None),
                    Compiled::Source(s) => (None, Some(s)),
                };
                let result = CompileResult {
                    exported,
                    catalog,
                    catalog_source,
                    logs: std::mem::take(&mut self.logs),
                    diagnostics,
                    sources: std::mem::take(&mut self.sources),
                    provenance,
                    priorities: std::mem::take(&mut self.priority.conflicts),
                };
                if self.exiting {
                    // The caller exits once done (see `exiting`): freeing the scopes and
                    // indexes piece by piece would only cost time.
                    std::mem::forget(self);
                }
                result
            }
            Err(e) => {
                for e in std::iter::once(e).chain(self.more_errors.take()) {
                    let mut d = Diagnostic::error("evaluation", e.msg);
                    d.span = e.span;
                    d.help = self.hint_at(e.span);
                    diagnostics.push(d);
                }
                CompileResult {
                    exported: vec![],
                    catalog: None,
                    catalog_source: None,
                    logs: std::mem::take(&mut self.logs),
                    diagnostics,
                    priorities: std::mem::take(&mut self.priority.conflicts),
                    provenance: self.provenance_if_kept(),
                    sources: self.sources,
                }
            }
        }
    }

    /// Evaluates the program: the main manifest, the node, then what declared defines and
    /// collectors make (Puppet's `evaluate_generators`).
    fn evaluate_program(&mut self, program: &Program) -> Result<(), EvalError> {
        self.register_definitions(&program.body)?;
        self.init_top_scope();
        let checked = self
            .check_main_definitions(&program.body)
            .map(|()| Value::Undef);
        self.check_flow(checked)?;
        let main = self.create_main();
        self.puppet_stack.push(StackFrame::Main(self.main_file));
        let flow = self.eval_top(&program.body);
        self.puppet_stack.pop();
        // `return()` may end a class, define or function body, not the main manifest.
        match flow {
            Err(Flow::Return(_, span)) => {
                return Err(self.issue("return() from context where this is illegal", span))
            }
            Err(Flow::Next(_, span)) => {
                return Err(self.issue("next() from context where this is illegal", span))
            }
            _ => {}
        }
        self.check_flow(flow)?;
        let _ = main;
        self.evaluate_node()?;
        self.evaluate_generators()
    }

    /// Lets go of the syntax trees once the program is evaluated: their memory serves the
    /// catalog that is finished and built next, rather than being freed at the end. The classes keep their names and
    /// parameters; their bodies (all evaluated by now, and most of a big manifest's tree)
    /// go with the tree. Not when deferred functions are to be called (they run Puppet code
    /// after the compile), nor when the trees are shared with other compiles through a
    /// parse cache (`ordo compile --nodes`: nothing would be freed).
    fn release_trees(&mut self, parsed: std::sync::Arc<super::parse_cache::Parsed>) {
        if self.opts.resolve_deferred || self.loader.parse_cache().is_some() {
            return;
        }
        let mut bodies = Vec::new();
        for def in self.classes.values_mut() {
            if def.body.is_some() {
                let bare = std::sync::Arc::new(ClassDef {
                    name: def.name.clone(),
                    params: def.params.clone(),
                    parent: def.parent.clone(),
                    body: None,
                });
                bodies.push(std::mem::replace(def, bare));
            }
        }
        drop((parsed, bodies));
    }

    /// What follows the evaluation: relationships, overrides and the checks of the finished
    /// catalog, then the catalog (or its source).
    fn complete(&mut self) -> Result<Compiled, EvalError> {
        self.validate_relationship_params()?;
        self.finish()?;
        self.collected_error()?;
        self.fail_on_unevaluated()?;
        if self.opts.resolve_deferred {
            self.resolve_deferred()?;
        }
        if self.defer_catalog && !self.loader.storeconfigs() {
            return Ok(Compiled::Source(self.catalog_source()));
        }
        Ok(Compiled::Catalog(self.build_catalog()))
    }

    fn check_flow(&mut self, r: R<Value>) -> Result<(), EvalError> {
        match r {
            Ok(_) | Err(Flow::Next(..)) | Err(Flow::Return(..)) => Ok(()),
            Err(Flow::Break(span)) => {
                Err(self.issue("break() from context where this is illegal", span))
            }
            Err(Flow::Err(e)) => Err(self.finalize_error(e, "Expression")),
        }
    }

    /// Gives an unformatted error Puppet's `Error while evaluating` wrapping.
    pub(super) fn finalize_error(&self, e: EvalError, label: &str) -> EvalError {
        if e.formatted {
            return e;
        }
        let loc = self.line_col_location(e.span);
        EvalError {
            msg: join_loc(
                format!(
                    "Evaluation Error: Error while evaluating a {label}, {}",
                    e.msg
                ),
                &loc,
            ),
            span: e.span,
            formatted: true,
        }
    }

    /// `(file: x.pp, line: 3, column: 5)`.
    pub(super) fn line_col_location(&self, span: Option<Span>) -> String {
        match span.and_then(|s| self.sources.get(s.file).map(|f| (s, f))) {
            Some((s, f)) => {
                let (line, col) = f.line_col(s.start as usize);
                format!("(file: {}, line: {}, column: {})", f.name, line, col)
            }
            None => String::new(),
        }
    }

    /// `(file: x.pp, line: 3)`.
    pub(super) fn line_location(&self, file: Option<FileId>, line: Option<u32>) -> String {
        match (file.and_then(|f| self.sources.get(f)), line) {
            (Some(f), Some(l)) => format!("(file: {}, line: {})", f.name, l),
            (Some(f), None) => format!("(file: {})", f.name),
            (None, Some(l)) => format!("(line: {l})"),
            (None, None) => String::new(),
        }
    }

    pub(super) fn span_line(&self, span: Span) -> Option<u32> {
        // Spans come in source order, many on one line: the last line found is kept.
        let (file, start, end, line) = self.last_line.get();
        if file == span.file && start <= span.start && span.start < end {
            return Some(line);
        }
        let f = self.sources.get(span.file)?;
        let line = f.line_of(span.start as usize);
        if let Some(start) = f.line_start(line) {
            let end = f.line_start(line + 1).unwrap_or(usize::MAX);
            let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            self.last_line
                .set((span.file, clamp(start), clamp(end), line as u32));
        }
        Some(line as u32)
    }

    pub(super) fn span_location(&self, span: Span) -> String {
        self.line_location(Some(span.file), self.span_line(span))
    }

    /// An error whose text is final: `Evaluation Error: msg (file, line, column)`.
    pub(super) fn issue(&self, msg: impl AsRef<str>, span: Span) -> EvalError {
        let loc = self.line_col_location(Some(span));
        EvalError {
            msg: join_loc(format!("Evaluation Error: {}", msg.as_ref()), &loc),
            span: Some(span),
            formatted: true,
        }
    }

    /// An error to be wrapped by the enclosing statement.
    pub(super) fn runtime(&self, msg: impl Into<String>, span: Span) -> EvalError {
        EvalError {
            msg: msg.into(),
            span: Some(span),
            formatted: false,
        }
    }

    /// An error printed as is (compiler-phase errors).
    pub(super) fn plain(&self, msg: impl Into<String>, span: Option<Span>) -> EvalError {
        EvalError {
            msg: msg.into(),
            span,
            formatted: true,
        }
    }

    pub(super) fn log(&mut self, level: LogLevel, message: String) {
        self.logs.push(LogLine { level, message });
    }

    /// Logs the warnings of a file's lexing (unrecognized escapes) and validation (Puppet's
    /// checker: duplicate keys), each at the first non-blank of its span.
    fn log_validation_warnings(&mut self, diagnostics: &[Diagnostic]) {
        let parse_warning =
            |d: &&Diagnostic| !d.is_error() && (d.code == "validation" || d.code == "lexer");
        for d in diagnostics.iter().filter(parse_warning) {
            let Some(mut span) = d.span else { continue };
            if let Some(f) = self.sources.get(span.file) {
                let text = f
                    .text
                    .get(span.start as usize..span.end as usize)
                    .unwrap_or("");
                span.start += (text.len() - text.trim_start().len()) as u32;
            }
            self.warn_at(&d.message, span);
        }
    }

    pub(super) fn warn_at(&mut self, msg: &str, span: Span) {
        let loc = self.line_col_location(Some(span));
        self.log(LogLevel::Warning, join_loc(msg.to_string(), &loc));
    }

    // ---- definitions ----------------------------------------------------------------------

    // ---- scopes --------------------------------------------------------------------------------

    /// The shared string of attribute name `name` (a resource's parameters are named by
    /// these: one `ensure` for all resources, not a copy each).
    pub(super) fn attr_name(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.attr_names.get(name) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(name);
        self.attr_names.insert(n.clone());
        n
    }

    pub(super) fn new_scope(&mut self, s: Scope) -> ScopeId {
        self.scopes.push(Box::new(s));
        self.scopes.len() - 1
    }

    /// Runs `body` in `s`, a new call scope (lambda, function body, template), and releases
    /// the scope when the call returns: nothing reads its variables any more (Puppet's
    /// variables are lexical: only scopes made inside the call see them, and those are done
    /// too), so they are dropped now rather than at the end of the compile (5,000 iterations
    /// over a 1 MB value kept 5 GB). The scope itself goes too when it is the last one and
    /// nothing declared in the call (a resource, a collector) refers to it; otherwise it
    /// stays, empty, for the resource defaults and source that those look up along it.
    pub(super) fn in_call_scope<T>(
        &mut self,
        s: Scope,
        body: impl FnOnce(&mut Self, ScopeId) -> R<T>,
    ) -> R<T> {
        let (resources, collectors) = (self.resources.len(), self.collectors.len());
        let sid = self.new_scope(s);
        let r = body(self, sid);
        if sid + 1 == self.scopes.len()
            && self.resources.len() == resources
            && self.collectors.len() == collectors
        {
            self.scopes.pop();
        } else if let Some(s) = self.scopes.get_mut(sid) {
            s.vars = scope::Vars::default();
            s.matches = None;
        }
        r
    }

    fn init_top_scope(&mut self) {
        let mut top = Scope::new(ScopeKind::Top, None, None);
        if let serde_json::Value::Object(facts) = &self.opts.facts {
            for (k, v) in facts {
                top.vars.insert(k.clone(), Value::from_json(v));
            }
        }
        let facts = Value::from_json(&self.opts.facts);
        let facts = if matches!(facts, Value::Hash(_)) {
            facts
        } else {
            Value::Hash(Default::default())
        };
        top.vars.insert("facts".into(), facts);
        let node = self.opts.node.clone();
        // A certname without a dot has no domain (undef).
        let (host, domain) = match node.split_once('.') {
            Some((h, d)) => (h.to_string(), Value::str(d)),
            None => (node.clone(), Value::Undef),
        };
        let mut trusted = IndexMap::new();
        trusted.insert(Value::str("authenticated"), Value::str("local"));
        trusted.insert(Value::str("certname"), Value::str(node.clone()));
        trusted.insert(Value::str("extensions"), Value::Hash(Default::default()));
        trusted.insert(Value::str("hostname"), Value::str(host));
        trusted.insert(Value::str("domain"), domain);
        trusted.insert(Value::str("external"), Value::Hash(Default::default()));
        let (trusted, server_facts, environment) = match &self.opts.server {
            Some(server) => (
                Value::from_json(&server.trusted),
                Value::from_json(&server.server_facts),
                server.environment.as_str(),
            ),
            None => (
                Value::Hash(trusted.into()),
                server_facts(&self.opts.facts),
                "production",
            ),
        };
        top.vars.insert("trusted".into(), trusted);
        top.vars.insert("server_facts".into(), server_facts);
        top.vars
            .insert("environment".into(), Value::str(environment));
        top.vars.insert("clientcert".into(), Value::str(node));
        top.vars.insert("name".into(), Value::str("main"));
        top.vars.insert("title".into(), Value::str("main"));
        top.vars.insert("module_name".into(), Value::str(""));
        self.top = self.new_scope(top);
    }

    /// Creates Stage[main] and Class[main].
    fn create_main(&mut self) -> usize {
        let stage = self.new_res(
            "Stage",
            "main",
            self.top,
            ResourceKind::CompilableType,
            Span::synthetic(),
        );
        self.resources[stage]
            .params
            .insert("name", Value::str("main"));
        self.resources[stage].tags = [std::sync::Arc::from("stage")].into_iter().collect();
        self.insert_resource(stage);
        let main = self.new_res(
            "Class",
            "main",
            self.top,
            ResourceKind::Unknown,
            Span::synthetic(),
        );
        self.resources[main]
            .params
            .insert("name", Value::str("main"));
        self.resources[main].tags = [std::sync::Arc::from("class")].into_iter().collect();
        self.resources[main].evaluated = true;
        self.insert_resource(main);
        self.containment.push((stage, main));
        self.scopes[self.top].resource = Some(main);
        self.class_scopes.insert("main".into(), self.top);
        main
    }

    pub(super) fn new_res(
        &mut self,
        type_name: impl AsRef<str> + Into<String>,
        title: &str,
        scope: ScopeId,
        kind: ResourceKind,
        span: Span,
    ) -> usize {
        let source = self.scopes[scope].source.clone();
        let idx = self.resources.len();
        let tn = type_name.as_ref();
        // Room for the title's tag (the container's are shared: `Tags::inherit`).
        let mut tags = match self.type_tags.get(tn) {
            Some(t) => t.with_room(1),
            None => {
                let mut t = Tags::default();
                add_tag(&mut t, tn);
                self.type_tags.insert(tn.to_string(), t.clone());
                t
            }
        };
        // (`add_tag` skips a title that is not tag-shaped.)
        if !self.untagged_title {
            add_tag(&mut tags, title);
        }
        match self.by_type.get_mut(tn) {
            Some(list) => list.push(idx),
            None => {
                self.by_type.insert(tn.to_string(), vec![idx]);
            }
        }
        self.resources.push(Box::new(Res {
            type_name: type_name.into(),
            title: title.to_string(),
            params: Default::default(),
            setters: ParamSetters::default(),
            tags,
            file: None,
            line: None,
            exported: false,
            virtual_: false,
            kind,
            scope,
            source,
            evaluated: false,
            is_define: false,
            dropped: false,
            untagged_title: self.untagged_title,
            span,
        }));
        idx
    }

    /// The node's scope if a node block was evaluated, else the top scope.
    pub(super) fn global_scope_for(&self, from: ScopeId) -> ScopeId {
        let mut s = Some(from);
        while let Some(id) = s {
            if matches!(self.scopes[id].kind, ScopeKind::Top | ScopeKind::Node) {
                return id;
            }
            s = self.scopes[id].parent;
        }
        self.top
    }

    // ---- nodes ---------------------------------------------------------------------------------

    fn evaluate_node(&mut self) -> Result<(), EvalError> {
        if self.nodes.is_empty() {
            return Ok(());
        }
        let name = self.opts.node.to_lowercase();
        let mut found: Option<(Rc<NodeDef>, String, Option<Vec<Value>>)> = None;
        'exact: for n in &self.nodes {
            for m in &n.def.matches {
                let s = match &m.kind {
                    ExprKind::Regex(_) | ExprKind::Default => continue,
                    _ => match node_match_key(m) {
                        Some(s) => s,
                        None => continue,
                    },
                };
                if s == name {
                    found = Some((n.def.clone(), s, None));
                    break 'exact;
                }
            }
        }
        if found.is_none() {
            'regex: for n in &self.nodes {
                for m in &n.def.matches {
                    if let ExprKind::Regex(src) = &m.kind {
                        if let Ok(re) = super::values::value::Regex::new(src) {
                            if let Some(groups) = re.captures(&name) {
                                let title = regex_node_name(src);
                                found = Some((n.def.clone(), title, Some(groups)));
                                break 'regex;
                            }
                        }
                    }
                }
            }
        }
        if found.is_none() {
            for n in &self.nodes {
                if n.def
                    .matches
                    .iter()
                    .any(|m| matches!(m.kind, ExprKind::Default))
                {
                    found = Some((n.def.clone(), "default".into(), None));
                    break;
                }
            }
        }
        let Some((def, title, groups)) = found else {
            return Err(self.plain(
                format!(
                    "Could not find node statement with name 'default' or '{}'",
                    self.opts.node
                ),
                None,
            ));
        };
        let main = self.scopes[self.top].resource.unwrap_or(0);
        let res = self.new_res(
            "Node",
            &title,
            self.top,
            ResourceKind::Unknown,
            Span::synthetic(),
        );
        self.insert_resource(res);
        self.catalog_tags
            .extend(self.resources[res].tags.iter().cloned());
        self.containment.push((main, res));
        self.copy_tags(main, res);
        self.resources[res].evaluated = true;
        self.class_list.push(title.clone());
        let mut scope = Scope::new(ScopeKind::Node, Some(self.top), Some(self.top));
        scope.resource = Some(res);
        scope.source = Arc::from(format!("node {title}"));
        scope.matches = groups;
        // `$title` and `$name` in a node are the node's (`__node_regexp__...` for a regex).
        scope.vars.insert("title".into(), Value::str(title.clone()));
        scope.vars.insert("name".into(), Value::str(title.clone()));
        let sid = self.new_scope(scope);
        self.node_scope = Some(sid);
        if let Some(body) = &def.body {
            let r = self.eval(body, sid);
            self.check_flow(r)?;
        }
        Ok(())
    }

    // ---- generators ----------------------------------------------------------------------------

    fn evaluate_generators(&mut self) -> Result<(), EvalError> {
        for _ in 0..1000 {
            let settled = self.settle_priority_classes()?;
            let mut changed = self.evaluate_collections()? || settled;
            let pending: Vec<usize> = (0..self.resources.len())
                .filter(|&i| {
                    let r = &self.resources[i];
                    r.is_define && !r.evaluated && !r.virtual_ && !r.dropped
                })
                .collect();
            for i in pending {
                if self.resources[i].evaluated || self.resources[i].virtual_ {
                    continue;
                }
                changed = true;
                if let Err(e) = self.evaluate_define(i) {
                    let r = &self.resources[i];
                    let loc = self.line_location(r.file, r.line);
                    let inner = match e {
                        Flow::Err(e) => e.msg,
                        Flow::Break(_) => "break() from context where this is illegal".into(),
                        _ => continue,
                    };
                    return Err(EvalError {
                        msg: join_loc(
                            format!("Evaluation Error: Error while evaluating a Resource Statement, {inner}"),
                            &loc,
                        ),
                        span: Some(r.span),
                        formatted: true,
                    });
                }
            }
            if !changed {
                return Ok(());
            }
        }
        Err(self.plain(
            "Somehow looped more than 1000 times while evaluating host catalog",
            None,
        ))
    }
}

pub(super) fn join_loc(msg: String, loc: &str) -> String {
    if loc.is_empty() {
        msg
    } else {
        format!("{msg} {loc}")
    }
}

/// The name a node statement's match stands for: the lower-case name, `default`, or the
/// name Puppet gives a regex node.
fn node_match_key(m: &Expr) -> Option<String> {
    Some(match &m.kind {
        ExprKind::Str(s) | ExprKind::QualifiedName(s) => s.to_lowercase(),
        ExprKind::Integer { value, .. } => value.to_string(),
        ExprKind::ConcatString(parts) => parts
            .iter()
            .map(|p| match &p.kind {
                ExprKind::Str(s) => s.clone(),
                _ => String::new(),
            })
            .collect::<String>()
            .to_lowercase(),
        ExprKind::Default => "default".into(),
        ExprKind::Regex(src) => regex_node_name(src),
        _ => return None,
    })
}

/// The key a class or define is known by: lower case, without a leading `::`.
fn definition_name(name: &str) -> String {
    name.trim_colons().to_lowercase()
}

/// Puppet's tag syntax.
pub(super) fn is_valid_tag(t: &str) -> bool {
    // Puppet's pattern ends in `\Z`, which also matches before a final newline.
    let t = t.strip_suffix('\n').unwrap_or(t);
    let mut chars = t.chars();
    match chars.next() {
        Some(c) if c.is_alphanumeric() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
}

/// `s` in lower case, borrowed when it already is (as most names are).
pub(super) fn lowercase(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        std::borrow::Cow::Owned(s.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Adds a tag and, for `a::b`, its segments.
pub(super) fn add_tag(tags: &mut Tags, t: &str) {
    let lower = lowercase(t);
    let t = &*lower;
    if !is_valid_tag(t) {
        return;
    }
    if super::is_qualified(t) {
        for seg in t.split("::") {
            if !seg.is_empty() {
                tags.insert_str(seg);
            }
        }
    }
    tags.insert_str(t);
}

/// `__node_regexp__` name of a regex node, as Puppet derives it.
fn regex_node_name(src: &str) -> String {
    let cleaned: String = src
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    format!("__node_regexp__{}", cleaned.trim_start_matches('.'))
}
