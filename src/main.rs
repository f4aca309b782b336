//! The `ordo` command: a thin layer over the library.

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ordo",
    version,
    about = "Compile, check and apply Puppet manifests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum DumpFormat {
    Pn,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Parse Puppet files (.pp, .epp) and report syntax errors.
    Parse {
        /// Print the AST (`pn` as `puppet parser dump --format pn`, or `json`).
        #[arg(long, value_enum)]
        dump: Option<DumpFormat>,
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Compile a manifest into a Puppet JSON catalog (catalog_format 2).
    Compile(ordo::cli::compile::CompileArgs),
    /// Apply a manifest or a catalog to this machine.
    Apply(ordo::cli::apply::ApplyArgs),
    /// Check a manifest or catalog: missing dependencies, cycles, unsupported resources.
    Check(ordo::cli::graph::CheckArgs),
    /// Print the dependency graph of a manifest or catalog as DOT.
    Graph(ordo::cli::graph::GraphArgs),
    /// Explain why one resource is applied before another.
    Explain(ordo::cli::graph::ExplainArgs),
    /// List or restore file content that applies replaced.
    Bucket(ordo::cli::bucket::BucketArgs),
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// mimalloc, called as C calls it: `mimalloc::MiMalloc` asks `mi_malloc_aligned` for every
/// block, which looks for a block of the alignment before the plain path (a tenth of a
/// compile's instructions went to allocation). Every mimalloc block is at least
/// word-aligned (block sizes are whole words), so layouts of word alignment or less get
/// `mi_malloc`; only larger alignments take the aligned path.
struct Allocator;

/// The alignment every mimalloc block has.
const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: the blocks come from mimalloc, of the requested size, aligned as asked (see
// above), and are freed or resized by mimalloc. The only unsafe code of the crate: calling C.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_malloc(layout.size()).cast()
        } else {
            mimalloc::MiMalloc.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_zalloc(layout.size()).cast()
        } else {
            mimalloc::MiMalloc.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast())
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_realloc(ptr.cast(), size).cast()
        } else {
            mimalloc::MiMalloc.realloc(ptr, layout, size)
        }
    }
}

#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// How mimalloc takes memory from the kernel, set before the first allocation.
///
/// By default mimalloc reserves a 1 GiB arena without access and commits it 64 KiB at a
/// time (`mprotect`), each commit a system call and a change of the mapping. So:
/// - the first arena is committed when reserved (`arena_eager_commit`), and reserved
///   64 MiB (`arena_reserve`), not 1 GiB; later arenas (a compile of 100,000 resources)
///   are committed as used, and past the first the helper of [`fill_ahead`] faults
///   memory in ahead of the program;
/// - no transparent huge pages (`allow_thp` off: mimalloc does not ask for them). The VMs
///   we run on hand free memory back to the host in 2 MiB blocks a couple of seconds after
///   it is freed (free page reporting), and a huge page is such a block: the first touch
///   of each of its 4 KiB pages is then a fault in the host. A compile that follows
///   another program's run (as `ordo compile` does in use, and in the benchmark after
///   each Puppet run) paid 20 to 50 ms of system time for the 18 MiB of huge pages of a
///   10,000-resource compile; its 4 KiB pages come from memory the guest still holds.
///   Mixed 10k compile, 10 runs each right after a Puppet compile: 0.079 s with huge
///   pages, 0.058 s without (system time 0.039 -> 0.021 s). Back-to-back runs, where the
///   huge pages freed by the previous run are still held, lose about 9 ms (0.048 ->
///   0.057 s);
/// - objects over 128 KiB are mapped on their own (`arena_max_object_size`): the few large
///   vectors and tables, grown by doubling, are unmapped when they move instead of leaving
///   their old room in the arena. For an input (the manifest or catalog read) of 8 MiB or
///   more (some 50,000 resources) that memory is small beside the rest, and mapping and
///   unmapping each large block costs more: there they stay in the arenas (`ordo check`
///   of a 24 MB manifest, 5 runs: 1.32 -> 1.17 s); for `ordo check`, from 1 MiB (see
///   [`fit_to_input`]).
///
/// The option numbers are those of `mimalloc.h` in mimalloc 3, which libmimalloc-sys
/// 0.1.49 builds (pinned in Cargo.toml); that crate declares `mi_option_set` but not these
/// four options.
#[cfg(target_os = "linux")]
mod arena {
    const ARENA_EAGER_COMMIT: i32 = 4;
    const ARENA_RESERVE: i32 = 23;
    const ARENA_MAX_OBJECT_SIZE: i32 = 45;
    const ALLOW_THP: i32 = 43;

    extern "C" {
        fn mi_option_set(option: i32, value: std::ffi::c_long);
    }

    /// Sets one of mimalloc's options (it takes effect from the next use of the option).
    #[allow(unsafe_code)]
    fn set(option: i32, value: std::ffi::c_long) {
        // SAFETY: `mi_option_set` stores a number in mimalloc's option table; it allocates
        // nothing and may be called before mimalloc is initialised (that is what it is for).
        unsafe { mi_option_set(option, value) }
    }

    extern "C" fn configure() {
        set(ARENA_EAGER_COMMIT, 1);
        set(ARENA_RESERVE, 64 * 1024); // KiB
        set(ARENA_MAX_OBJECT_SIZE, 128); // KiB
        set(ALLOW_THP, 0);
    }

    /// mimalloc's default `arena_max_object_size` (KiB): large objects in the arenas.
    const ANY_OBJECT_SIZE: std::ffi::c_long = 2 << 20;

    /// Once the first arena exists (the runtime has allocated by `main`; one more
    /// allocation makes sure), arenas reserved later are mimalloc's default: 1 GiB,
    /// committed as used.
    pub fn later_arenas_lazy() {
        drop(std::hint::black_box(Box::new(0u64)));
        set(ARENA_EAGER_COMMIT, 0);
        set(ARENA_RESERVE, 1024 * 1024); // KiB
    }

    /// For an input (the manifest or catalog read; not a file written, `-o` may name a big
    /// one) of 8 MiB or more, large objects go to the arenas again (see the module's
    /// comment). For `ordo check` (`checking`), from 1 MiB: its resident size is no
    /// target, and the graph of a large catalog is made of vectors of tens of MiB, which,
    /// mapped on their own, the program faulted in itself (in huge pages), where in the
    /// arenas the helper of [`fill_ahead`] has them ready. `ordo check` of mixed 100k (a
    /// 1.3 MB manifest), 21 interleaved runs: 1.055 -> 0.958 s, peak RSS 339 -> 418 MB.
    pub fn fit_to_input(input: Option<&std::path::Path>, checking: bool) {
        let from: u64 = if checking { 1 << 20 } else { 8 << 20 };
        if input
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.len() >= from)
        {
            set(ARENA_MAX_OBJECT_SIZE, ANY_OBJECT_SIZE);
        }
    }

    extern "C" {
        fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut c_void;
        fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
        fn mincore(addr: *mut c_void, len: usize, vec: *mut u8) -> i32;
        fn mi_manage_os_memory_ex(
            start: *mut c_void,
            size: usize,
            is_committed: bool,
            is_pinned: bool,
            is_zero: bool,
            numa_node: i32,
            exclusive: bool,
            arena_id: *mut c_void,
        ) -> bool;
    }

    use std::ffi::c_void;

    const PROT_READ_WRITE: i32 = 0x1 | 0x2;
    const MAP_PRIVATE_ANONYMOUS_NORESERVE: i32 = 0x02 | 0x20 | 0x4000;
    const MADV_NOHUGEPAGE: i32 = 15;
    const MADV_POPULATE_WRITE: i32 = 23;
    const PAGE: usize = 4096;
    /// The arena the helper fills: address space only, until touched.
    const FILLED_ARENA: usize = 1 << 30;
    /// How far ahead of the highest page in use the helper keeps memory faulted in.
    const AHEAD: usize = 64 << 20;
    /// What the helper faults in at a time.
    const STEP: usize = 2 << 20;
    /// mimalloc's own data at the start of the arena: touched when it is registered.
    const HEADER: usize = 1 << 20;

    /// Faults memory in ahead of the program on the other core.
    ///
    /// Past the first arena (64 MiB: a compile of some 20,000 resources), the program
    /// faults in every 4 KiB page it touches, about 3 us each in the VMs we run on: 100,000
    /// faults and a fifth of the wall time of `ordo check` on 100,000 resources, while the
    /// second core is idle for most of the evaluation. So a second arena is registered with
    /// mimalloc, mapped here without huge pages, and a helper thread watches which of its
    /// pages the program has touched (`mincore`): once the program uses it, the helper keeps
    /// the next 64 MiB faulted in (`MADV_POPULATE_WRITE`, one call per 2 MiB), so the
    /// program finds its pages ready. A program that stays in the first arena (a compile of
    /// a few thousand resources) never has the second touched beyond its header, and the
    /// helper sleeps; it stops after two idle seconds, or when the kernel refuses.
    #[allow(unsafe_code)]
    pub fn fill_ahead() {
        // SAFETY: an anonymous private mapping of fresh address space: nothing else uses it.
        let p = unsafe {
            mmap(
                std::ptr::null_mut(),
                FILLED_ARENA + STEP,
                PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS_NORESERVE,
                -1,
                0,
            )
        };
        if p as isize == -1 {
            return;
        }
        let start = (p as usize).next_multiple_of(STEP);
        // SAFETY: advice on the mapping made above; the range is inside it. mimalloc takes
        // the memory as committed and zero (fresh anonymous pages are both) and owns it
        // from here on; the helper below only faults pages in, which changes no contents.
        let registered = unsafe {
            madvise(start as *mut c_void, FILLED_ARENA, MADV_NOHUGEPAGE);
            mi_manage_os_memory_ex(
                start as *mut c_void,
                FILLED_ARENA,
                true,
                false,
                true,
                -1,
                false,
                std::ptr::null_mut(),
            )
        };
        if registered {
            let _ = std::thread::Builder::new()
                .name("fill-ahead".into())
                .spawn(move || fill(start));
        }
    }

    #[allow(unsafe_code)]
    fn fill(start: usize) {
        let mut filled = 0;
        let mut resident = vec![0u8; AHEAD / PAGE];
        let (mut nap, mut idle) = (500u64, 0u64);
        while filled < FILLED_ARENA && idle < 2_000_000 {
            let from = filled.max(HEADER);
            let len = AHEAD.min(FILLED_ARENA - from);
            // SAFETY: `resident` has a byte for each page of the range, which is inside the
            // mapping.
            let ok = unsafe { mincore((start + from) as *mut c_void, len, resident.as_mut_ptr()) };
            let used = resident[..len / PAGE].iter().rposition(|&b| b & 1 != 0);
            match used {
                Some(last) if ok == 0 => {
                    let until = (from + (last + 1) * PAGE + AHEAD).min(FILLED_ARENA);
                    while filled < until {
                        // SAFETY: populating pages of the mapping (inside it) only faults
                        // them in: whatever the program wrote there stays.
                        let r = unsafe {
                            madvise((start + filled) as *mut c_void, STEP, MADV_POPULATE_WRITE)
                        };
                        if r != 0 {
                            return;
                        }
                        filled += STEP;
                    }
                    (nap, idle) = (500, 0);
                }
                _ => {
                    std::thread::sleep(std::time::Duration::from_micros(nap));
                    idle += nap;
                    nap = (nap * 2).min(20_000);
                }
            }
        }
    }

    /// Runs [`configure`] as an ELF constructor: the Rust runtime allocates before `main`,
    /// and the first allocation reserves the first arena with the options of that moment.
    // SAFETY: a constructor that only calls `configure`, which allocates nothing.
    #[allow(unsafe_code)]
    #[used]
    #[link_section = ".init_array"]
    static CONFIGURE: extern "C" fn() = configure;
}

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    arena::later_arenas_lazy();
    let cli = Cli::parse();
    #[cfg(target_os = "linux")]
    arena::fit_to_input(
        match &cli.command {
            Command::Compile(a) => a.manifest.as_deref(),
            Command::Check(a) => Some(a.file.as_path()),
            Command::Apply(a) => Some(a.file.as_path()),
            Command::Graph(a) => Some(a.file.as_path()),
            _ => None,
        },
        matches!(cli.command, Command::Check(_)),
    );
    #[cfg(target_os = "linux")]
    if matches!(
        cli.command,
        Command::Compile(_) | Command::Check(_) | Command::Apply(_) | Command::Graph(_)
    ) {
        arena::fill_ahead();
    }
    let code = match cli.command {
        Command::Parse { dump, files } => {
            let dump = dump.map(|d| match d {
                DumpFormat::Pn => ordo::cli::parse::Dump::Pn,
                DumpFormat::Json => ordo::cli::parse::Dump::Json,
            });
            if ordo::cli::parse::run(&files, dump) {
                0
            } else {
                1
            }
        }
        Command::Compile(a) => ordo::cli::compile::run(&a),
        Command::Apply(a) => ordo::cli::apply::run(&a),
        Command::Check(a) => ordo::cli::graph::check(&a),
        Command::Graph(a) => ordo::cli::graph::graph(&a),
        Command::Explain(a) => ordo::cli::graph::explain_cmd(&a),
        Command::Bucket(a) => ordo::cli::bucket::run(&a),
    };
    // Output that could not be written (a full disk, not a reader that stopped early) fails
    // a command that would have succeeded.
    match ordo::cli::stdout_error() {
        Some(e) => {
            eprintln!("Error: Could not write to standard output: {e}");
            exit(if code == 0 { 1 } else { code })
        }
        None => exit(code),
    }
}
