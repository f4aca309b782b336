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
    /// Serve catalogs to Puppet agents over HTTPS, with a certificate authority.
    Serve(ordo::serve::ServeArgs),
    /// The certificate authority of `ordo serve`: list, sign, revoke, import.
    Ca(ordo::serve::CaArgs),
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
/// - the first arena, 64 MiB, is mapped here ([`first_arena_in_huge_pages`]) and given to
///   mimalloc as committed: in transparent huge pages if the first two are fast to fault
///   in, else in 4 KiB pages (and mimalloc asks for no huge pages anywhere: `allow_thp`
///   off). Should that mapping fail, mimalloc reserves a first arena of the same size,
///   committed (`arena_eager_commit`, `arena_reserve`);
/// - later arenas (a compile of 100,000 resources) are committed as used, and the helper
///   of [`fill_ahead`] faults the memory of the second in ahead of the program;
/// - objects over 128 KiB are mapped on their own (`arena_max_object_size`): the few large
///   vectors and tables, grown by doubling, would otherwise leave half-touched huge pages
///   in the arena that count whole towards the resident size. For an input (the manifest
///   or catalog read) of 8 MiB or more (some 50,000 resources) that memory is small beside
///   the rest, and mapping and unmapping each large block costs more: there they stay in
///   the arenas (`ordo check` of a 24 MB manifest, 5 runs: 1.32 -> 1.17 s); for `ordo
///   check`, from 1 MiB (see [`fit_to_input`]).
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
        if !first_arena_in_huge_pages() {
            set(ALLOW_THP, 0);
        }
    }

    /// The first arena: 64 MiB mapped here and given to mimalloc, committed (its pages are
    /// faulted in as first touched), in transparent huge pages when they are fast here.
    ///
    /// A huge page is faster than 512 small ones (one fault, fewer TLB misses: mixed 10k
    /// compile, back-to-back runs, 0.043 against 0.050 s) when the memory is the guest's
    /// own. But the VMs we run on hand free memory back to the host in 2 MiB blocks a
    /// couple of seconds after it is freed (free page reporting), and a huge page is such
    /// a block: the host then faults in each of its 4 KiB pages again when the kernel
    /// zeroes it, 2 to 5 ms a huge page, where small pages come from memory the guest
    /// still holds. After another program's run (a Puppet compile, as in bench/run.py)
    /// either happens: the same compile took 0.044 s in one series of 10 and 0.078 s in
    /// another (system time 0.010 and 0.041 s), where in small pages it took 0.052 s in
    /// both. So the first two huge pages are faulted in here and timed: if that took over
    /// [`SLOW_HUGE_PAGES`], the rest of the arena is small pages. Right after a Puppet
    /// compile, 10 runs each: huge pages always 0.078 s, small pages always 0.052 s, this
    /// choice 0.046 s. Whether the arena is in huge pages: false for small pages, and if
    /// the mapping failed (mimalloc then reserves the first arena itself).
    #[allow(unsafe_code)]
    fn first_arena_in_huge_pages() -> bool {
        let Some(start) = map(FIRST_ARENA) else {
            return false;
        };
        // SAFETY: advice on the mapping made by `map` (the ranges are inside it); populating
        // only faults pages in, which changes no contents.
        let huge = unsafe {
            madvise(start as *mut c_void, FIRST_ARENA, MADV_HUGEPAGE);
            let t = std::time::Instant::now();
            madvise(start as *mut c_void, PROBED, MADV_POPULATE_WRITE);
            let fast = t.elapsed() <= SLOW_HUGE_PAGES;
            if !fast {
                madvise(
                    (start + PROBED) as *mut c_void,
                    FIRST_ARENA - PROBED,
                    MADV_NOHUGEPAGE,
                );
            }
            fast
        };
        give(start, FIRST_ARENA) && huge
    }

    /// `size` bytes of fresh address space (nothing mapped until touched), aligned to 2 MiB.
    #[allow(unsafe_code)]
    fn map(size: usize) -> Option<usize> {
        // SAFETY: an anonymous private mapping of fresh address space: nothing else uses it.
        let p = unsafe {
            mmap(
                std::ptr::null_mut(),
                size + STEP,
                PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS_NORESERVE,
                -1,
                0,
            )
        };
        (p as isize != -1).then(|| (p as usize).next_multiple_of(STEP))
    }

    /// Gives mimalloc the memory of [`map`] at `start` as an arena; false if it refuses.
    #[allow(unsafe_code)]
    fn give(start: usize, size: usize) -> bool {
        // SAFETY: the range is inside a mapping of `map`, used by nothing else. mimalloc
        // takes it as committed and zero (fresh anonymous pages are both; pages faulted in
        // since are still zero) and owns it from here on.
        unsafe {
            mi_manage_os_memory_ex(
                start as *mut c_void,
                size,
                true,
                false,
                true,
                -1,
                false,
                std::ptr::null_mut(),
            )
        }
    }

    /// See [`first_arena_in_huge_pages`]: the huge pages faulted in to see whether they are
    /// fast.
    const PROBED: usize = 2 * STEP;
    /// See [`first_arena_in_huge_pages`]: zeroing two 2 MiB pages the guest holds takes 0.3
    /// to 0.6 ms here, two that the host must fault in again about 9 ms.
    const SLOW_HUGE_PAGES: std::time::Duration = std::time::Duration::from_millis(2);
    const FIRST_ARENA: usize = 64 << 20;

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
    const MADV_HUGEPAGE: i32 = 14;
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
        let Some(start) = map(FILLED_ARENA) else {
            return;
        };
        // SAFETY: advice on the mapping made by `map`; the range is inside it. The helper
        // below only faults pages in, which changes no contents.
        unsafe { madvise(start as *mut c_void, FILLED_ARENA, MADV_NOHUGEPAGE) };
        if give(start, FILLED_ARENA) {
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
        Command::Serve(a) => ordo::serve::run(&a),
        Command::Ca(a) => ordo::serve::ca_command(&a),
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
