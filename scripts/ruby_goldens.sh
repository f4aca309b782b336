#!/bin/sh
# Regenerates fixtures/ruby/cases/*.out with real Puppet (7.23 here): each case manifest is
# applied (noop) with the fixture modules copied to a work directory; the log lines of the
# compile (Scope notices and warnings, the error) are kept, the work directory's path
# removed. Arguments: the cases to regenerate (default: all). tests/ruby_runtime.rs compares Ordo's lines with them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/fixtures/ruby/modules" "$work/modules"
# Cases named as arguments (`dispatch values`), or all.
if [ $# -eq 0 ]; then set -- $(cd "$here/fixtures/ruby/cases" && ls *.pp | sed 's/[.]pp$//'); fi
for name in "$@"; do
  pp="$here/fixtures/ruby/cases/$name.pp"
  cp "$pp" "$work/site.pp"
  (cd "$work" && puppet apply --noop --color=false --modulepath modules site.pp 2>&1 || true) |
    grep -v -e '^Error: Facter:' -e '^Notice: Compiled catalog' -e '^Notice: Applied catalog' \
      -e '^Notice: Finished catalog run' -e '^Warning: Facter' |
    sed -e "s|$work/||g" -e 's/ on node [^ ]*$//' >"$here/fixtures/ruby/cases/$name.out"
done
