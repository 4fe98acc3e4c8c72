#!/usr/bin/env bash
# bench-sqlite.sh: dshctl on SQLite stores beside the sqlite3 shell, in one run.
#
# Builds (once, into DIR) databases from the real events of dsh's fixture
# sessions, renumbered: 10,000 small sessions (schemas 14 and 17), sessions of
# 1,000 and 100,000 events, and one session of about 100 MB (schemas 14 and 17).
# Then, with hyperfine, RUNS runs of each side (interleaved by hyperfine's
# order within each comparison), wall time and user+system CPU, which the
# shared machine's load disturbs less:
#   cat of the 100 MB session   vs  sqlite3 DB "select data from events where session_id = 'big' order by seq"
#   list --all of 10,000        vs  sqlite3 running list's own listing query
#   stat at 1,000 and 100,000 events (must not grow with the log)
# With BEFORE=REV, cat and list also run a dshctl built from git revision
# REV (before and after side by side). A Markdown table of the means and the
# CPU ratios to the sqlite3 shell ends the output.
# Then the in-process Go benchmarks (cat as inspect.Stream into the canonical
# writer, the bare select through database/sql and through the direct
# connection the scans use, the shell; ListOpen + ReadMeta; Stat; Append
# beside a bare write+fsync), which report CPU ms per op, and the fsyncs per
# append counted with strace when it is installed.
#
# Usage: [BEFORE=REV] scripts/bench-sqlite.sh [DIR] [RUNS]
#        (defaults: a temp dir, 5 runs)
# Needs: go, sqlite3, hyperfine, jq (apt-get install sqlite3 hyperfine jq).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-}
runs=${2:-5}
before=${BEFORE:-}
for tool in go sqlite3 hyperfine jq; do
	command -v "$tool" >/dev/null || { echo "bench-sqlite: $tool is required (apt-get install $tool)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $dir ]]; then
	dir=$work/db
fi
mkdir -p "$dir"
make -s build
bin=$PWD/bin/dshctl
if [[ -n $before ]]; then
	mkdir -p "$work/before"
	git archive "$before" | tar -x -C "$work/before"
	(cd "$work/before" && go build -o "$work/dshctl-before" ./cmd/dshctl)
	echo "== before: $(git rev-parse --short "$before"); after: this tree"
fi

echo "== building the databases in $dir (once)"
DSHCTL_SQLITE_BENCH_DIR=$dir go test -run '^$' -bench 'BenchmarkStat|BenchmarkList/schema14/List$|BenchmarkCat/schema14/direct' \
	-benchtime 1x -timeout 60m ./internal/sqlite/ >/dev/null

# compare NAME CMD...: hyperfine runs of the commands, kept as JSON.
compare() {
	local name=$1
	shift
	echo "== $name"
	hyperfine -N -w 1 -r "$runs" --export-json "$work/$name.json" "$@" | grep -E '^(Benchmark|  Time)'
}
# dshctl ARGS...: the commands of this tree's dshctl and, with BEFORE, the
# one built from REV.
dshctl() {
	[[ -n $before ]] && printf '%s\n' "$work/dshctl-before $*"
	printf '%s\n' "$bin $*"
}

for schema in 14 17; do
	db=$dir/cat-100mb-$schema.sqlite
	mapfile -t cmds < <(dshctl --store "sqlite:$db" cat big)
	compare "cat-$schema" "${cmds[@]}" "sqlite3 $db \"select data from events where session_id = 'big' order by seq\""
done
for schema in 14 17; do
	db=$dir/list-10k-$schema.sqlite
	mapfile -t cmds < <(dshctl --store "sqlite:$db" list --all -o jsonl)
	compare "list-$schema" "${cmds[@]}" \
		"sqlite3 $db \"SELECT s.id, s.version, s.created_at, s.revision, e.seq, e.type, length(e.data) FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq = (SELECT max(seq) FROM events WHERE session_id = s.id)\""
done
compare stat "$bin --store sqlite:$dir/stat-1000.sqlite stat -o json z" "$bin --store sqlite:$dir/stat-100000.sqlite stat -o json z"

echo
echo "| comparison | command | wall (mean) | CPU user+sys (mean) | CPU / sqlite3's |"
echo "|---|---|---|---|---|"
for f in cat-14 cat-17 list-14 list-17 stat; do
	jq -r --arg name "$f" --arg bin "$bin" --arg before "$work/dshctl-before" '
		(.results | map(select(.command | startswith("sqlite3"))) | first | (.user + .system)) as $ref
		| .results[]
		| (.user + .system) as $cpu
		| "| \($name) | \(.command | sub($before; "dshctl(before)") | sub($bin; "dshctl") | sub(" --store sqlite:[^ ]*"; "") | sub(" [^ ]*[.]sqlite "; " DB ")) | \(.mean * 1000 | round) ms | \($cpu * 1000 | round) ms | \(if $ref then ($cpu / $ref * 10 | round / 10 | tostring) + "×" else "—" end) |"
	' "$work/$f.json"
done
echo "(load average during the run: $(cut -d' ' -f1-3 /proc/loadavg))"

echo
echo "== in-process benchmarks (CPU per op from getrusage; wall per op is the load's)"
DSHCTL_SQLITE_BENCH_DIR=$dir go test -run '^$' -bench 'BenchmarkStat|BenchmarkList|BenchmarkCat|BenchmarkAppend' \
	-benchtime 3x -benchmem -timeout 60m ./internal/sqlite/ | grep -E '^Benchmark'

if command -v strace >/dev/null; then
	echo "== fsyncs per append (10 appends of 3 events to the 100 MB session's database copy)"
	cp "$dir/cat-100mb-17.sqlite" "$work/append.sqlite"
	strace -f -c -e trace=fsync,fdatasync -o "$work/strace.txt" bash -c "
		for i in \$(seq 10); do
			printf '%s\n' '{\"type\":\"session/title\",\"data\":{\"title\":\"t\"}}' | $bin --store sqlite:$work/append.sqlite append --assign-seq big >/dev/null
		done"
	grep -E 'fsync|fdatasync' "$work/strace.txt" || true
fi
