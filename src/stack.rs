//! How much of the current thread's stack is left, so that a recursion (the evaluator's,
//! the ERB interpreter's) stops with Puppet's "stack level too deep" instead of overflowing
//! the stack, which aborts the process. The depth bounds (parser, calls, classes, data)
//! each hold alone; this catches them compounding (an `include` chain whose classes each
//! nest expressions, a recursive function whose body is deep).
//!
//! A thread that compiles marks itself with its stack size when it starts ([`mark`]); on a
//! thread that did not, [`low`] is always false (the bounds alone hold there).

use std::cell::Cell;

thread_local! {
    /// The lowest address the marked thread's recursion may reach (0: not marked).
    static FLOOR: Cell<usize> = const { Cell::new(0) };
}

/// What is kept free below the floor: more than one step of any recursion between two
/// checks uses (frames of debug builds are large).
const MARGIN: usize = 16 << 20;

/// Marks the calling thread as having `size` bytes of stack from about here downwards (the
/// stack size it was spawned with; call it first thing in the thread).
pub fn mark(size: usize) {
    let floor = here().saturating_sub(size.saturating_sub(MARGIN));
    FLOOR.with(|f| f.set(floor));
}

/// Whether the calling thread is marked and has used its stack down to the margin.
#[inline]
pub fn low() -> bool {
    let floor = FLOOR.with(Cell::get);
    floor != 0 && here() < floor
}

/// Puppet's words for a recursion out of stack.
pub const TOO_DEEP: &str = "stack level too deep";

/// An address in the caller's frame (the stack grows downwards on every target Ordo runs on).
#[inline(never)]
fn here() -> usize {
    let probe = 0u8;
    std::hint::black_box(&probe) as *const u8 as usize
}
