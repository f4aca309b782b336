#!/bin/sh
# Regenerates fixtures/apply/puppet-catalogs/: the raw catalogs real Puppet 7.23 compiles for the
# conformance cases that are applied. Raw (not normalized) because the resource order of a raw
# catalog is Puppet's evaluation order, which decides the apply order; the normalized
# expected.catalog.json files are sorted by type and title.
# usage: tools/puppet_catalogs.sh [CASES_DIR]
set -e
cases=${1:-../shared/conformance/cases}
out=$(pwd)/fixtures/apply/puppet-catalogs
mkdir -p "$out"
for dir in "$cases"/*/; do
  name=$(basename "$dir")
  [ -f "$dir/apply.args" ] && [ -f "$dir/manifest.pp" ] || continue
  mp=""
  [ -d "$dir/modules" ] && mp="--modulepath $dir/modules"
  (cd "$dir" && puppet catalog compile --manifest manifest.pp --render-as json --color=false \
      --certname oracle-node $mp 2>/dev/null) | sed -n '/^{/,$p' |
    python3 -c '
import json, sys, os
cat = json.load(sys.stdin)
cat["version"] = 1
cat["catalog_uuid"] = "00000000-0000-0000-0000-000000000000"
for r in cat["resources"]:
    if "file" in r:
        f = r["file"]
        i = f.find("/modules/")
        r["file"] = f[i + 1:] if i >= 0 else os.path.basename(f)
json.dump(cat, sys.stdout, indent=1)
print()
' > "$out/$name.json" || { echo "failed: $name" >&2; rm -f "$out/$name.json"; }
done
