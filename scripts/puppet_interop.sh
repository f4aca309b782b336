#!/usr/bin/env bash
# Interop check: real Puppet accepts Ordo's catalogs.
#
# For every public conformance case that compiles, Ordo compiles it and
# `puppet apply --catalog FILE --noop` must accept the catalog: exit 0 and no `Error:` line, or
# fail with the very error line Puppet prints applying its own catalog (expected.apply.txt).
# Needs Puppet (`apt-get install -y puppet-agent`); not part of CI.
#
# usage: scripts/puppet_interop.sh [ORDO_BIN] [CASE_SUBSTRING]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ordo=$(realpath "${1:-$here/target/release/ordo}")
only=${2:-}
cases=$here/../shared/conformance/cases
command -v puppet >/dev/null || { echo "puppet is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 same=0 fail=0 skipped=0
for dir in "$cases"/*/; do
    name=$(basename "$dir")
    [[ "$name" == *"$only"* ]] || continue
    if [ ! -f "$dir/manifest.pp" ] || [ ! -f "$dir/expected.catalog.json" ]; then
        skipped=$((skipped + 1))
        continue
    fi
    mp=()
    [ -d "$dir/modules" ] && mp=(--modulepath "$dir/modules")
    if ! (cd "$dir" && "$ordo" compile manifest.pp --node oracle-node "${mp[@]}" >"$work/$name.json" 2>"$work/$name.err"); then
        echo "FAIL $name: ordo compile failed: $(head -1 "$work/$name.err")"
        fail=$((fail + 1))
        continue
    fi
    # The catalog is applied in noop; /tmp/oracle-run is what the cases touch.
    rm -rf /tmp/oracle-run && mkdir -p /tmp/oracle-run
    puppet apply --catalog "$work/$name.json" --noop --color=false "${mp[@]}" >"$work/$name.out" 2>&1
    status=$?
    out=$(grep -v 'Facter: ' "$work/$name.out")
    first_error=$(grep -m1 '^Error:' <<<"$out")
    if [ $status -eq 0 ] && [ -z "$first_error" ]; then
        pass=$((pass + 1))
    elif [ -n "$first_error" ] && [ -f "$dir/expected.apply.txt" ] &&
        grep -qxF -- "$first_error" "$dir/expected.apply.txt"; then
        # Puppet applying its own catalog for this case fails the same way (a cycle, a
        # dependency on an unrealized virtual resource, ...): the catalog was read.
        echo "SAME $name: $first_error"
        same=$((same + 1))
    else
        echo "FAIL $name: exit $status: ${first_error:-no error line}"
        fail=$((fail + 1))
    fi
done
echo "interop: $pass accepted, $same with the error Puppet gives on its own catalog, $fail refused ($skipped cases without a catalog skipped)"
[ "$fail" -eq 0 ]
