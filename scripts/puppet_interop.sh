#!/usr/bin/env bash
# Interop check: real Puppet accepts Ordo's catalogs.
#
# For every public conformance case that compiles, Ordo compiles it and
# `puppet apply --catalog FILE --noop` must accept the catalog: exit 0 and no `Error:` line.
# Needs Puppet (`apt-get install -y puppet-agent`); not part of CI.
#
# usage: scripts/puppet_interop.sh [ORDO_BIN] [CASE_SUBSTRING]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ordo=${1:-$here/target/release/ordo}
only=${2:-}
cases=$here/../shared/conformance/cases
command -v puppet >/dev/null || { echo "puppet is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0 skipped=0
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
    out=$(puppet apply --catalog "$work/$name.json" --noop --color=false "${mp[@]}" 2>&1 | grep -v '^Facter')
    status=$?
    if [ $status -ne 0 ] || grep -q '^Error:' <<<"$out"; then
        echo "FAIL $name: $(grep -m1 '^Error:' <<<"$out")"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
echo "interop: $pass accepted, $fail refused ($skipped cases without a catalog skipped)"
[ "$fail" -eq 0 ]
