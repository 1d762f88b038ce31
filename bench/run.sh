#!/usr/bin/env bash
# bench/run.sh — the CONTRIBUTING.md validate budget, measured.
#
# Generates a realistic corpus, then times `phasegate validate` against three
# peers doing JSON Schema validation alone on the same files with the same
# schemas (ajv-cli, jv, kubeconform), and measures phasegate's peak RSS at
# several corpus sizes. See bench/README.md for what is compared and how.
#
#   bench/run.sh                      # N=10000, 5 runs, RSS at 1k/10k/50k
#   N=2000 RUNS=3 RSS_SIZES="1000 2000" bench/run.sh   # a quick pass
#
# It installs its peers itself (pinned) into bench/.tools, writes everything
# else to bench/out, is idempotent, and stops by itself. Not run by CI.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/bench/.tools
OUT=$ROOT/bench/out

N=${N:-10000}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
SEED=${SEED:-1}
RSS_SIZES=${RSS_SIZES:-"1000 10000 50000"}
RSS_RUNS=${RSS_RUNS:-3}
# Before timing, wait up to WAIT_QUIET seconds for the 1-minute load average
# to drop below QUIET_LOAD (a shared machine skews every number).
WAIT_QUIET=${WAIT_QUIET:-0}
QUIET_LOAD=${QUIET_LOAD:-0.5}

AJV_CLI_VERSION=5.0.0
AJV_VERSION=8.20.0
AJV_FORMATS_VERSION=3.0.1
KUBECONFORM_VERSION=v0.7.0
# jv: the v6-based CLI is its own module, github.com/santhosh-tekuri/jsonschema/cmd/jv.
# The proxy serves v0.7.0 but lists no versions, so `go install …@v0.7.0` fails
# ("loading deprecation … 404"); it is built from a throwaway module instead.
# (…/jsonschema/v5/cmd/jv@v5.3.1 does not exist: v5.3.1 ships no cmd/jv.)
JV_VERSION=v0.7.0

SCHEMA_URL=https://raw.githubusercontent.com/phasegate/phasegate/v0.1.0/schemas/

log() { printf '\n== %s\n' "$*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/run.sh: $1 is required" >&2; exit 2; }; }
need go
need node
need npm
need jq

mkdir -p "$TOOLS/bin" "$OUT/bin"
# A go.mod makes bench/out a module of its own, so the bench module's
# `go test ./...` and `go vet ./...` do not walk the corpora.
printf 'module phasegate.invalid/bench/out\n' >"$OUT/go.mod"

# ---------------------------------------------------------------- tools --
install_tools() {
	log "peers (pinned, cached in bench/.tools)"
	local npmdir=$TOOLS/npm
	if [ "$(cd "$npmdir" 2>/dev/null && node -p 'require("ajv-cli/package.json").version + " " + require("ajv/package.json").version + " " + require("ajv-formats/package.json").version' 2>/dev/null)" \
		!= "$AJV_CLI_VERSION $AJV_VERSION $AJV_FORMATS_VERSION" ]; then
		rm -rf "$npmdir"
		mkdir -p "$npmdir"
		cat >"$npmdir/package.json" <<-EOF
			{"name": "phasegate-bench-peers", "private": true,
			 "dependencies": {"ajv-cli": "$AJV_CLI_VERSION", "ajv": "$AJV_VERSION", "ajv-formats": "$AJV_FORMATS_VERSION"}}
		EOF
		(cd "$npmdir" && npm install --no-audit --no-fund --loglevel=error >&2)
	fi
	AJV=$npmdir/node_modules/ajv-cli/dist/index.js
	AJV_FORMATS=$npmdir/node_modules/ajv-formats

	if ! go version -m "$TOOLS/bin/kubeconform" 2>/dev/null | grep -q "mod.*kubeconform.*$KUBECONFORM_VERSION"; then
		GOBIN=$TOOLS/bin GOFLAGS=-buildvcs=false go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
	fi
	KUBECONFORM=$TOOLS/bin/kubeconform

	if ! go version -m "$TOOLS/bin/jv" 2>/dev/null | grep -q "mod.*cmd/jv.*$JV_VERSION"; then
		local b=$TOOLS/jv-build
		rm -rf "$b"
		mkdir -p "$b"
		printf 'module jvbuild\n\ngo 1.24\n\nrequire github.com/santhosh-tekuri/jsonschema/cmd/jv %s\n' "$JV_VERSION" >"$b/go.mod"
		printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/santhosh-tekuri/jsonschema/cmd/jv"\n' >"$b/tools.go"
		(cd "$b" && GOFLAGS="-mod=mod -buildvcs=false" go build -o "$TOOLS/bin/jv" github.com/santhosh-tekuri/jsonschema/cmd/jv)
	fi
	JV=$TOOLS/bin/jv
}

# ------------------------------------------------------------- timing ----
# median_ms CMD…: runs CMD RUNS times (after WARMUP) and prints the median
# wall time in ms. Used only when hyperfine is not installed.
median_ms() {
	local i t0 t1 ts=()
	for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null 2>&1 || true; done
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		ts+=($(((t1 - t0) / 1000000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

# ---------------------------------------------------------------- main ---
install_tools

log "phasegate and the bench commands"
GOFLAGS=-buildvcs=false go build -o "$OUT/bin/phasegate" ./cmd/phasegate
# The bench commands are in the bench module (bench/go.mod).
GOFLAGS=-buildvcs=false go -C bench build -o "$OUT/bin/gencorpus" ./cmd/gencorpus
GOFLAGS=-buildvcs=false go -C bench build -o "$OUT/bin/peerprep" ./cmd/peerprep
PG=$OUT/bin/phasegate

sizes=$(printf '%s\n' "$N" $RSS_SIZES | sort -nu)
for n in $sizes; do
	log "corpus of $n artifacts (seed $SEED)"
	"$OUT/bin/gencorpus" -n "$n" -seed "$SEED" -out "$OUT/corpus-$n" -manifest "$OUT/corpus-$n.tsv" -clean
done

C=$OUT/corpus-$N
P=$OUT/peers-$N
log "peer copies of corpus-$N"
"$OUT/bin/peerprep" -corpus "$C" -out "$P"

# One script per peer, one invocation per kind (kubeconform: one in all).
# $1 is where the peer's report goes (default /dev/null).
all_schemas=("$ROOT"/schemas/*/*.schema.json)
{
	echo '#!/usr/bin/env bash'
	echo 'exec >"${1:-/dev/null}" 2>&1'
	while IFS=$'\t' read -r kind schema wrapper _ _ _; do
		s=$ROOT/schemas/$schema
		[ "$wrapper" != - ] && s=$P/$wrapper
		refs=""
		for f in "${all_schemas[@]}"; do [ "$f" != "$s" ] && refs+=" -r $f"; done
		echo "node $AJV validate --spec=draft2020 --strict=false --all-errors -c $AJV_FORMATS -s $s$refs -d '$P/plain/$kind/*'"
	done <"$P/kinds.tsv"
	echo 'exit 0'
} >"$P/ajv.sh"
{
	echo '#!/usr/bin/env bash'
	echo 'exec >"${1:-/dev/null}" 2>&1'
	while IFS=$'\t' read -r kind schema wrapper _ _ _; do
		s=$ROOT/schemas/$schema
		[ "$wrapper" != - ] && s=$P/$wrapper
		echo "$JV --assert-format --quiet -m '$SCHEMA_URL=$ROOT/schemas' $s $P/plain/$kind/*"
	done <"$P/kinds.tsv"
	echo 'exit 0'
} >"$P/jv.sh"
{
	echo '#!/usr/bin/env bash'
	echo 'exec >"${1:-/dev/null}" 2>&1'
	echo "$KUBECONFORM -summary \${KC_OUTPUT:-} -schema-location '$P/kube-schemas/{{ .ResourceKind }}.json' $P/kube"
	echo 'exit 0'
} >"$P/kubeconform.sh"
printf '#!/usr/bin/env bash\nexec %s validate %s >"${1:-/dev/null}" 2>&1\n' "$PG" "$C" >"$P/phasegate.sh"
chmod +x "$P"/*.sh

# --------------------------------------------------------- same work? ---
log "do all tools reject the same files? (untimed)"
"$P/phasegate.sh" "$P/out-phasegate.txt" || true
"$PG" validate --format json "$C" >"$P/out-phasegate.json" || true
bash "$P/ajv.sh" "$P/out-ajv.txt"
bash "$P/jv.sh" "$P/out-jv.txt"
KC_OUTPUT="-output json" bash "$P/kubeconform.sh" "$P/out-kubeconform.json"
map_back() { # peer paths (relative to $P) on stdin → corpus paths
	awk -F'\t' -v col="$1" 'NR==FNR {m[$col]=$3; next} ($0 in m) {print m[$0]}' "$P/map.tsv" - | sort -u
}
sort -u "$P/expected-invalid.txt" >"$P/invalid-expected.txt"
jq -r '.findings[] | select(.rule == "schema") | .file' "$P/out-phasegate.json" | sort -u |
	comm -12 - <(cut -f3 "$P/map.tsv" | sort -u) >"$P/invalid-phasegate.txt"
sed -n "s#^$P/\(plain/.*\) invalid\$#\1#p" "$P/out-ajv.txt" | map_back 1 >"$P/invalid-ajv.txt"
sed -n "s#^instance $P/\(plain/.*\): failed\$#\1#p" "$P/out-jv.txt" | map_back 1 >"$P/invalid-jv.txt"
jq -r '.resources[]? | select(.status != "statusValid") | .filename' "$P/out-kubeconform.json" |
	sed "s#^$P/##" | map_back 2 >"$P/invalid-kubeconform.txt"
agree=$P/agreement.txt
: >"$agree"
for t in phasegate ajv jv kubeconform; do
	missed=$(comm -23 "$P/invalid-expected.txt" "$P/invalid-$t.txt" | wc -l)
	extra=$(comm -13 "$P/invalid-expected.txt" "$P/invalid-$t.txt" | wc -l)
	printf '%-12s rejects %5d files; vs phasegate schema layer: %d missed, %d extra\n' \
		"$t" "$(wc -l <"$P/invalid-$t.txt")" "$missed" "$extra" | tee -a "$agree" >&2
done

# ------------------------------------------------------------- timing ---
if [ "$WAIT_QUIET" -gt 0 ]; then
	log "waiting up to ${WAIT_QUIET}s for the load average to drop below $QUIET_LOAD"
	for ((w = 0; w < WAIT_QUIET; w += 10)); do
		awk -v q="$QUIET_LOAD" '{exit !($1 < q)}' /proc/loadavg && break
		sleep 10
	done
fi
log "wall time, $RUNS runs each after $WARMUP warm-up (N=$N)"
machine() {
	echo "- nproc: $(nproc); CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
	echo "- $(go version); node $(node --version); hyperfine $(hyperfine --version 2>/dev/null | awk '{print $2}' || echo -)"
	echo "- load average before timing: $(cut -d' ' -f1-3 /proc/loadavg)"
}
MACHINE=$(machine)
results=$OUT/results-$N.md
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" -i --export-json "$OUT/hyperfine-$N.json" \
		-n phasegate "$P/phasegate.sh" \
		-n ajv-cli "$P/ajv.sh" \
		-n jv "$P/jv.sh" \
		-n kubeconform "$P/kubeconform.sh" >&2
	jq -r '.results[] | [.command, (.median*1000|floor), (.mean*1000|floor), (.stddev*1000|floor), (.min*1000|floor), (.max*1000|floor)] | @tsv' \
		"$OUT/hyperfine-$N.json" >"$OUT/times-$N.tsv"
else
	: >"$OUT/times-$N.tsv"
	for t in phasegate ajv-cli jv kubeconform; do
		s=$P/${t%-cli}.sh
		printf '%s\t%s\t-\t-\t-\t-\n' "$t" "$(median_ms "$s")" >>"$OUT/times-$N.tsv"
	done
fi
pg_ms=$(awk -F'\t' '$1=="phasegate" {print $2}' "$OUT/times-$N.tsv")

log "peak RSS of phasegate validate (median of $RSS_RUNS runs), as shipped and without the soft memory limit (GOMEMLIMIT=off)"
# rss N [ENV…]: median peak RSS (KB) and wall (s) of phasegate validate on corpus-N.
rss() {
	local n=$1 i kb sec rs=() ws=()
	shift
	for ((i = 0; i < RSS_RUNS; i++)); do
		/usr/bin/time -f '%M %e' -o "$OUT/time.txt" env "$@" "$PG" validate "$OUT/corpus-$n" >/dev/null 2>&1 || true
		read -r kb sec < <(tail -n 1 "$OUT/time.txt") # after "Command exited with non-zero status 1"
		rs+=("$kb")
		ws+=("$sec")
	done
	echo "$(printf '%s\n' "${rs[@]}" | sort -n | sed -n "$(((RSS_RUNS + 1) / 2))p") $(printf '%s\n' "${ws[@]}" | sort -n | sed -n "$(((RSS_RUNS + 1) / 2))p")"
}
rss_rows=""
for n in $RSS_SIZES; do
	read -r kb sec < <(rss "$n")
	read -r kbnolim _ < <(rss "$n" GOMEMLIMIT=off)
	mb=$(du -sm --apparent-size "$OUT/corpus-$n" | cut -f1)
	rss_rows+=$(awk -v n="$n" -v mb="$mb" -v kb="$kb" -v kbnolim="$kbnolim" -v s="$sec" \
		'BEGIN {printf "| %d | %d MB | %.1f MB | %.1f MB | %s s |", n, mb, kb / 1024, kbnolim / 1024, s}')$'\n'
done
peer_rss=""
for t in ajv jv kubeconform; do
	/usr/bin/time -f '%M' -o "$OUT/time.txt" bash "$P/$t.sh" >/dev/null 2>&1 || true
	peer_rss+="$t $(tail -n 1 "$OUT/time.txt" | awk '{printf "%.1f MB", $1/1024}'); "
done

{
	echo "## Results, N=$N (bench/run.sh, $(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "$MACHINE"
	echo "- load average after timing: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| tool | median | mean ± σ | min … max | ratio (tool / phasegate) |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	while IFS=$'\t' read -r t med mean sd lo hi; do
		awk -v t="$t" -v med="$med" -v mean="$mean" -v sd="$sd" -v lo="$lo" -v hi="$hi" -v pg="$pg_ms" \
			'BEGIN {printf "| %s | %d ms | %s ± %s ms | %s … %s ms | %.2f× |\n", t, med, mean, sd, lo, hi, med / pg}'
	done <"$OUT/times-$N.tsv"
	echo
	echo "phasegate's own summary of corpus-$N: $(tail -n 1 "$P/out-phasegate.txt")"
	echo
	echo "Same work (files rejected by each tool vs phasegate's schema layer, on the $(wc -l <"$P/map.tsv") files the peers get):"
	echo
	sed 's/^/    /' "$agree"
	echo
	echo "Peak RSS of \`phasegate validate\` (median of $RSS_RUNS runs):"
	echo
	echo "| artifacts | corpus size (apparent) | peak RSS | peak RSS, GOMEMLIMIT=off | wall |"
	echo "| ---: | ---: | ---: | ---: | ---: |"
	printf '%s' "$rss_rows"
	echo
	echo "Peers' peak RSS at N=$N (largest single process): ${peer_rss%; }"
} | tee "$results"
echo >&2
echo "bench/run.sh: results in ${results#$ROOT/}" >&2
