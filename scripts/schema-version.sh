#!/usr/bin/env bash
# Sets the release the schemas belong to: schemas.Version and every schema
# file's $id (https://raw.githubusercontent.com/phasegate/phasegate/<version>/schemas/…),
# and the URLs the README and CONTRIBUTING quote. Run it, commit, then tag:
#   scripts/schema-version.sh v0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
new=${1:?usage: scripts/schema-version.sh vMAJOR.MINOR.PATCH}
[[ $new =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "not a release version: $new" >&2; exit 2; }
old=$(sed -n 's/^const Version = "\(v[^"]*\)"$/\1/p' schemas/embed.go)
[ -n "$old" ] || { echo "schemas/embed.go: no Version constant" >&2; exit 1; }
from="raw.githubusercontent.com/phasegate/phasegate/$old/schemas/"
to="raw.githubusercontent.com/phasegate/phasegate/$new/schemas/"
grep -rlF "$from" schemas README.md CONTRIBUTING.md docs bench/run.sh bench/README.md | while IFS= read -r f; do
  sed -i.bak "s#$from#$to#g" "$f" && rm -f "$f.bak"
done
sed -i.bak "s/^const Version = \"$old\"$/const Version = \"$new\"/" schemas/embed.go && rm -f schemas/embed.go.bak
echo "schemas: $old -> $new"
