#!/usr/bin/env bash
# Runs each cargo-fuzz target for a while and turns every crash into a regression fixture.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default: 60 s, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a C++ compiler. cargo-fuzz passes
# nightly-only `-Z` flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them, and the
# default AddressSanitizer build works on stable 1.95 (measured: ~1000 execs/s on 2 shared
# cores). SANITIZER=none skips ASan (safe Rust needs none to turn a panic into a crash).
# The first build takes several minutes (a release build of the crate plus libFuzzer).
#
# Seeds: fuzz/seeds/ (catalog fixtures). Crashes: fuzz/artifacts/TARGET/crash-*; each is
# copied to fixtures/catalog/fuzz-regressions/ so that tests/catalog_fuzz_regressions.rs runs it
# for ever after.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz list)
fi
export RUSTC_BOOTSTRAP=1
status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    echo "== $t: ${secs}s"
    if ! (cd fuzz && cargo fuzz run -s "${SANITIZER:-address}" "$t" "corpus/$t" seeds -- \
            -max_total_time="$secs" -print_final_stats=1 2>&1 | tee "/tmp/ordo-fuzz-$t.log" \
            | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+== ERROR|thread .* panicked)"); then
        :
    fi
    for crash in fuzz/artifacts/"$t"/crash-* fuzz/artifacts/"$t"/timeout-* fuzz/artifacts/"$t"/oom-*; do
        [ -e "$crash" ] || continue
        mkdir -p fixtures/catalog/fuzz-regressions
        cp "$crash" "fixtures/catalog/fuzz-regressions/$t-$(basename "$crash")"
        echo "crash kept: fixtures/catalog/fuzz-regressions/$t-$(basename "$crash")"
        status=1
    done
done
exit $status
