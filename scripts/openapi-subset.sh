#!/usr/bin/env bash
# Cuts from GitHub's published descriptions what the tests hold phasegate to:
#   internal/ghfake/testdata/openapi-subset.json   the REST operations phasegate
#                                                  uses (bench/cmd/openapi-subset/main.go lists them)
#   internal/server/testdata/webhooks/*.jsonl      the example payloads of the
#                                                  webhook events serve handles
# from the pinned npm packages below.
#
#   scripts/openapi-subset.sh            rewrite the committed copies
#   scripts/openapi-subset.sh --check    re-extract into a temporary directory and
#                                        compare with the committed copies (CI)
#
# The packages are fetched with `npm pack` into a cache
# (${PHASEGATE_NPM_CACHE:-${TMPDIR:-/tmp}/phasegate-openapi-subset}), once.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_PACKAGE=@octokit/openapi@23.0.2
WEBHOOKS_PACKAGE=@octokit/webhooks-examples@7.6.1

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

cache=${PHASEGATE_NPM_CACHE:-${TMPDIR:-/tmp}/phasegate-openapi-subset}
mkdir -p "$cache"

# unpack PACKAGE: the directory the pinned package is unpacked in.
unpack() {
  local pkg=$1 dir
  dir="$cache/$(printf '%s' "$pkg" | tr '@/' '__')"
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    local tgz
    tgz=$(cd "$dir" && npm pack --silent --cache "$cache/npm" "$pkg")
    tar -xzf "$dir/$tgz" -C "$dir"
    rm -f "$dir/$tgz"
    touch "$dir/.done"
  fi
  printf '%s/package' "$dir"
}

openapi=$(unpack "$OPENAPI_PACKAGE")/generated/api.github.com.json
webhooks=$(unpack "$WEBHOOKS_PACKAGE")/api.github.com/index.json

# The extractor is a program of the bench module (bench/go.mod: tooling, not
# the product); it is built there and runs here, at the repository root.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go -C bench build -o "$bin/openapi-subset" ./cmd/openapi-subset

if ! $check; then
  rm -f internal/server/testdata/webhooks/*.jsonl
  "$bin/openapi-subset" -openapi "$openapi" -webhooks "$webhooks" -out .
  exit 0
fi

out=$(mktemp -d)
trap 'rm -rf "$bin" "$out"' EXIT
"$bin/openapi-subset" -openapi "$openapi" -webhooks "$webhooks" -out "$out"
stale=0
for f in internal/ghfake/testdata/openapi-subset.json internal/server/testdata/webhooks/*.jsonl; do
  if ! cmp -s "$f" "$out/$f"; then echo "differs from a fresh extraction: $f"; stale=1; fi
done
for f in "$out"/internal/server/testdata/webhooks/*.jsonl; do
  f=${f#"$out/"}
  [ -f "$f" ] || { echo "missing: $f"; stale=1; }
done
if [ "$stale" -ne 0 ]; then
  echo "the committed OpenAPI subset or webhook examples are not what scripts/openapi-subset.sh extracts from $OPENAPI_PACKAGE and $WEBHOOKS_PACKAGE."
  echo "Regenerate them with: scripts/openapi-subset.sh   (then review git diff)"
  exit 1
fi
echo "the OpenAPI subset and the webhook examples match $OPENAPI_PACKAGE and $WEBHOOKS_PACKAGE"
