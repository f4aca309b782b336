#!/usr/bin/env bash
# Runs cargo-fuzz targets for a while and turns every crash into a regression fixture.
#
#   scripts/fuzz.sh TARGET [SECONDS]      one target (default 60 s)
#   scripts/fuzz.sh SECONDS [TARGET...]   each target in turn (default: every target)
#
# Debug assertions and overflow checks are on (`-a`, also cargo-fuzz's default without `-O`).
# Targets: `lexer`, `parser`, `evaluator`, `catalog` (fuzz/fuzz_targets/). Needs cargo-fuzz (`cargo install cargo-fuzz`)
# and a C++ compiler. libFuzzer's flags are nightly-only; with a stable toolchain
# RUSTC_BOOTSTRAP=1 lets stable rustc accept them, and the sanitizer is left out (`-s none`:
# AddressSanitizer's runtime is not shipped for stable). Safe Rust needs no sanitizer to turn a
# panic into a crash, which is what we look for.
#
# Seeds: the shared corpus and conformance manifests, copied once into fuzz/seeds/TARGET.
# Logs: fuzz/TARGET.log. Crashes, timeouts and OOMs: fuzz/artifacts/TARGET/{crash,timeout,oom}-*;
# each is copied to fixtures/parser/fuzz/ (evaluator: fixtures/eval/fuzz/; catalog:
# fixtures/catalog/fuzz-regressions/) where tests/{parser,eval,catalog}_fuzz_regressions.rs run
# it for ever after. -timeout=10 and libFuzzer's default -rss_limit_mb=2048 turn a hang or a
# memory blow-up into a finding, like a panic.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=60
targets=()
for a in "$@"; do
    if [[ "$a" =~ ^[0-9]+$ ]]; then secs="$a"; else targets+=("$a"); fi
done
export RUSTC_BOOTSTRAP=1
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
seed() {
    local dir="fuzz/seeds/$1"
    # The catalog seeds are committed (hand-written tricky catalogs).
    [ -d "$dir" ] && return
    mkdir -p "$dir"
    local i=0
    while IFS= read -r -d '' f; do
        cp "$f" "$dir/$(printf '%05d' $i)-$(basename "$f")"
        i=$((i + 1))
    done < <(find ../shared/corpus ../shared/conformance/cases fixtures/parser \
        -name '*.pp' -size -64k -print0 2>/dev/null | sort -z)
}
status=0
for t in "${targets[@]}"; do
    seed "$t"
    mkdir -p "fuzz/corpus/$t"
    echo "== $t: ${secs}s"
    (cd fuzz && cargo fuzz run -a -s none "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -print_final_stats=1 -max_len=65536 -timeout=10 \
        2>&1 \
        | tee "$t.log" \
        | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+== ERROR|thread .* panicked)") || true
    for crash in fuzz/artifacts/"$t"/crash-* fuzz/artifacts/"$t"/timeout-* fuzz/artifacts/"$t"/oom-*; do
        [ -e "$crash" ] || continue
        if [ "$t" = catalog ]; then
            keep="fixtures/catalog/fuzz-regressions/$t-$(basename "$crash")"
        elif [ "$t" = evaluator ]; then
            keep="fixtures/eval/fuzz/$(basename "$crash").pp"
        else
            keep="fixtures/parser/fuzz/$t-$(basename "$crash").pp"
        fi
        mkdir -p "$(dirname "$keep")"
        cp "$crash" "$keep"
        echo "crash kept: $keep"
        status=1
    done
done
exit $status
