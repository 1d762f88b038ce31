#!/usr/bin/env bash
# bench/mutation/run.sh — mutation testing of phasegate's defences (issue 18).
#
# Runs gremlins (pinned) on the files that hold the trust model's defences,
# one package at a time with one worker, then the named mutations of
# bench/mutation/mutations.txt (bench/mutation/named), and prints
# one table: killed, lived, not covered, timed out and the score
# killed / (killed + lived) of each target. See bench/mutation/README.md.
#
#   bench/mutation/run.sh                         # everything, into bench/mutation/results/latest
#   OUT=bench/mutation/results/before bench/mutation/run.sh
#   TARGETS="ledger gate" NAMED=no bench/mutation/run.sh    # a subset
#   NAMED_RUN='^[a-g]/' GREMLINS_TARGETS=none bench/mutation/run.sh
#
# The source tree is never written: gremlins mutates its own copy of the
# module (under a private TMPDIR), the named mutations use go test -overlay.
# The tree's target files are still copied first and, on any exit (an
# interrupt too), compared and restored if anything changed them. Not run by
# CI: it takes about an hour on a 2-core machine.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD

GREMLINS_VERSION=v0.6.0
OUT=${OUT:-bench/mutation/results/latest}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
TIMEOUT_COEFFICIENT=${TIMEOUT_COEFFICIENT:-30}
NICE=${NICE:-10}
NAMED=${NAMED:-yes}
NAMED_RUN=${NAMED_RUN:-}
NAMED_TIMEOUT=${NAMED_TIMEOUT:-10m}

# name | package | files gremlins mutates (every other non-test file of the
# package is excluded, files added later included)
TARGET_SPECS=(
	"ledger|internal/ledger|ledger.go"
	"decide|internal/decide|trust.go handle.go commit.go anchor.go pushers.go stale.go post.go"
	"command|internal/command|visible.go text.go markdown.go"
	"outcome|internal/outcome|sign.go verify.go marker.go"
	"gate|internal/gate|gate.go"
	"checkjob|internal/checkjob|check.go commit.go guard.go outcomes.go"
	"commitfs|internal/ghclient|commitfs.go tarfs.go tree.go treewalk.go"
	"servercheck|internal/server|check.go recheck.go"
)
TARGETS=${TARGETS:-ledger decide command outcome gate checkjob commitfs servercheck}
GREMLINS_TARGETS=${GREMLINS_TARGETS:-$TARGETS}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/phasegate-mutation.XXXXXX")
SNAP=$WORK/snapshot
mkdir -p "$WORK/tmp" "$SNAP"

# The files any mutation could touch: every non-test Go file of the target
# packages and of the named mutations' files.
snapshot_files() {
	local spec pkg
	for spec in "${TARGET_SPECS[@]}"; do
		IFS='|' read -r _ pkg _ <<<"$spec"
		find "$pkg" -maxdepth 1 -name '*.go' ! -name '*_test.go'
	done
	sed -n 's/^file: *//p' bench/mutation/mutations.txt
}
mapfile -t WATCHED < <(snapshot_files | sort -u)
for f in "${WATCHED[@]}"; do
	[[ -f $f ]] && cp --parents -- "$f" "$SNAP/"
done

# bg LOG CMD…: runs CMD, its output to LOG, in its own process group and
# waits for it, so that an interrupt reaches the trap at once and the trap
# can stop CMD and its children (gremlins' go test runs). The redirection is
# CMD's alone: the trap's messages still reach the terminal.
CHILD=
bg() {
	local log=$1
	shift
	setsid "$@" >"$log" 2>&1 &
	CHILD=$!
	local rc=0
	wait "$CHILD" || rc=$?
	CHILD=
	return "$rc"
}

cleanup() {
	local rc=$? f
	trap - EXIT INT TERM
	if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
		# gremlins stops at the end of the mutant it is testing; after 20 s
		# its process group is killed.
		kill -TERM -- "-$CHILD" 2>/dev/null || true
		for _ in {1..20}; do
			kill -0 "$CHILD" 2>/dev/null || break
			sleep 1
		done
		kill -KILL -- "-$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	for f in "${WATCHED[@]}"; do
		if [[ -f $SNAP/$f ]] && ! cmp -s -- "$SNAP/$f" "$f"; then
			cp -- "$SNAP/$f" "$f"
			echo "run.sh: $f had changed during the run: restored" >&2
		fi
	done
	rm -rf -- "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# TMPDIR is where gremlins copies the module and go test builds; the trap
# removes it.
export TMPDIR=$WORK/tmp

install_gremlins() {
	local bin
	bin=$(command -v gremlins || true)
	if [[ -z $bin ]] && [[ -x $(go env GOPATH)/bin/gremlins ]]; then
		bin=$(go env GOPATH)/bin/gremlins
	fi
	if [[ -z $bin ]] || ! go version -m "$bin" | grep -q "github.com/go-gremlins/gremlins[[:space:]]*$GREMLINS_VERSION"; then
		echo "installing gremlins $GREMLINS_VERSION" >&2
		go install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
		bin=$(go env GOPATH)/bin/gremlins
	fi
	GREMLINS=$bin
}

spec_of() {
	local spec
	for spec in "${TARGET_SPECS[@]}"; do
		if [[ ${spec%%|*} == "$1" ]]; then
			echo "$spec"
			return
		fi
	done
	echo "run.sh: unknown target $1" >&2
	return 1
}

# run_gremlins NAME: gremlins on the target's files, raw output in $OUT.
run_gremlins() {
	local name=$1 spec pkg files f base rc=0
	spec=$(spec_of "$name")
	IFS='|' read -r _ pkg files <<<"$spec"
	local excludes=(--exclude-files '/') # files of sub-packages (outcometest)
	for f in "$pkg"/*.go; do
		base=${f##*/}
		[[ $base == *_test.go ]] && continue
		if [[ " $files " != *" $base "* ]]; then
			excludes+=(--exclude-files "^${base//./\\.}\$")
		fi
	done
	for f in $files; do
		if [[ ! -f $pkg/$f ]]; then
			echo "run.sh: $pkg/$f does not exist: fix TARGET_SPECS" >&2
			MISSING=$((MISSING + 1))
		fi
	done
	echo "== gremlins $name: $pkg ($files)" >&2
	bg "$OUT/gremlins-$name.txt" nice -n "$NICE" "$GREMLINS" unleash --workers 1 --timeout-coefficient "$TIMEOUT_COEFFICIENT" \
		--output "$OUT/gremlins-$name.json" "${excludes[@]}" "./$pkg" || rc=$?
	if ((rc != 0)); then
		echo "run.sh: gremlins failed on $pkg (exit $rc); see $OUT/gremlins-$name.txt" >&2
		FAILED=$((FAILED + 1))
	fi
	tail -n 5 "$OUT/gremlins-$name.txt" >&2
}

# row LABEL FILE JSON: one table row from gremlins' JSON, for one of its
# files (FILE) or all (FILE empty).
row() {
	jq -r --arg lbl "$1" --arg f "$2" '
		[.files[] | select($f == "" or .file_name == $f) | .mutations[].status] as $s
		| def n(x): [$s[] | select(. == x)] | length;
		n("KILLED") as $k | n("LIVED") as $l
		| "| \($lbl) | \($k) | \($l) | \(n("NOT COVERED")) | \(n("TIMED OUT")) | \(n("NOT VIABLE")) | "
		+ (if $k + $l == 0 then "–" else "\(($k * 1000 / ($k + $l) | round) / 10) %" end) + " |"' "$3"
}

table() {
	local name spec pkg files f json
	echo "| target (files) | killed | lived | not covered | timed out | not viable | score |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	for name in $TARGETS; do
		spec=$(spec_of "$name")
		IFS='|' read -r _ pkg files <<<"$spec"
		json=$OUT/gremlins-$name.json
		if [[ ! -s $json ]]; then
			[[ -e $OUT/gremlins-$name.txt ]] && echo "| gremlins $pkg ($files) | no result: see gremlins-$name.txt | | | | | |"
			continue
		fi
		row "**gremlins $pkg** (${files// /, })" "" "$json"
		for f in $files; do
			row "&nbsp;&nbsp;$f" "$f" "$json"
		done
	done
	if [[ -s $OUT/named.tsv ]]; then
		awk -F'\t' 'NR > 1 { n[$2]++; t++ }
			END {
				k = n["KILLED"] + 0; l = n["LIVED"] + 0
				score = (k + l) ? sprintf("%.1f %%", 100 * k / (k + l)) : "–"
				printf "| **named mutations** (mutations.txt; %d, %d not found or ambiguous) | %d | %d | – | %d | %d | %s |\n",
					t, n["NOT FOUND"] + n["AMBIGUOUS"], k, l, n["TIMED OUT"] + 0, n["NOT VIABLE"] + 0, score
			}' "$OUT/named.tsv"
	fi
}

named_table() {
	echo "| named mutation | status | killed by |"
	echo "| --- | --- | --- |"
	awk -F'\t' 'NR > 1 { printf "| %s | %s | %s |\n", $1, $2, ($5 == "" ? "–" : $5) }' "$OUT/named.tsv"
}

# step_done STEP SECONDS: records in $OUT/steps.txt how long a step took
# and on which code it ran (commit, internal/'s tree, uncommitted changes),
# replacing the line of an earlier run of the same step.
step_done() {
	local f=$OUT/steps.txt dirty=
	git diff --quiet HEAD -- internal || dirty=" +uncommitted"
	touch "$f"
	grep -v "^$1 " "$f" >"$f.new" || true
	echo "$1 $2s $(git rev-parse --short HEAD) internal/=$(git rev-parse --short HEAD:internal)$dirty $(date -u +%Y-%m-%dT%H:%MZ)" >>"$f.new"
	mv "$f.new" "$f"
}

main() {
	mkdir -p "$OUT"
	rm -f "$OUT/summary.md"
	FAILED=0 MISSING=0
	local name start total_start=$SECONDS named_rc=0 ran=()
	if [[ $GREMLINS_TARGETS != none ]]; then
		install_gremlins
		for name in $GREMLINS_TARGETS; do
			spec_of "$name" >/dev/null
			rm -f "$OUT/gremlins-$name.json" "$OUT/gremlins-$name.txt"
			start=$SECONDS
			run_gremlins "$name"
			step_done "$name" $((SECONDS - start))
			ran+=("gremlins $name")
		done
	fi
	if [[ $NAMED == yes ]]; then
		echo "== named mutations (bench/mutation/mutations.txt)" >&2
		rm -f "$OUT/named.tsv" "$OUT/named.log"
		start=$SECONDS
		go -C bench build -o "$WORK/named" ./mutation/named # the bench module; it runs from the root
		bg "$OUT/named.log" nice -n "$NICE" "$WORK/named" -out "$OUT/named.tsv" -run "$NAMED_RUN" -timeout "$NAMED_TIMEOUT" || named_rc=$?
		cat "$OUT/named.log" >&2
		step_done named $((SECONDS - start))
		ran+=(named)
	fi
	{
		echo "# Mutation testing, $(date -u +%Y-%m-%dT%H:%MZ)"
		echo
		echo "This run: ${ran[*]:-nothing} in $((SECONDS - total_start)) s; gremlins $GREMLINS_VERSION, --workers 1," \
			"--timeout-coefficient $TIMEOUT_COEFFICIENT; $(nproc) cores. Each step's time and the code it ran on are under Steps;" \
			"a step not run this time shows the results already in this directory."
		echo
		echo "Score = killed / (killed + lived). Not covered: gremlins found no test reaching the mutant (it also says so for every \`case\` condition of a tag-less \`switch\`, covered or not; the named mutations cover those defences)."
		echo
		table
		if [[ -s $OUT/named.tsv ]]; then
			echo
			named_table
		fi
		echo
		echo "Steps (step, time, commit, internal/ tree, when):"
		echo
		sed 's/^/    /' "$OUT/steps.txt"
	} >"$OUT/summary.md"
	cat "$OUT/summary.md"
	if ((named_rc != 0 || FAILED > 0 || MISSING > 0)); then
		echo "run.sh: incomplete: named mutations exit $named_rc, $FAILED gremlins failure(s), $MISSING missing target file(s)" >&2
		return 3
	fi
}

main "$@"
