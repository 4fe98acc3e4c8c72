#!/usr/bin/env bash
# bench-sqlite.sh: dshctl on SQLite stores beside the sqlite3 shell, in one run.
#
# Builds (once, into DIR) databases from the real events of dsh's fixture
# sessions, renumbered: 10,000 small sessions (schemas 14 and 17), sessions of
# 1,000 and 100,000 events, and one session of about 100 MB (schemas 14 and 17).
# Then, best of RUNS with hyperfine (wall time, and user+system CPU, which
# the shared machine's load disturbs less):
#   cat of the 100 MB session   vs  sqlite3 DB "select data from events where session_id = 'big' order by seq"
#   list --all of 10,000        vs  sqlite3 running list's own listing query
#   stat at 1,000 and 100,000 events (must not grow with the log)
# and the in-process Go benchmarks (Scan, the bare modernc select, ListOpen +
# ReadMeta, Append beside a bare write+fsync), plus the fsyncs per append
# counted with strace when it is installed.
#
# Usage: scripts/bench-sqlite.sh [DIR] [RUNS]   (defaults: a temp dir, 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-}
runs=${2:-5}
for tool in sqlite3 hyperfine; do
	command -v "$tool" >/dev/null || { echo "bench-sqlite: $tool is required (apt-get install $tool)" >&2; exit 1; }
done
if [[ -z $dir ]]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
make -s build
bin=$PWD/bin/dshctl

echo "== in-process benchmarks (they build the databases in $dir on first use)"
DSHCTL_SQLITE_BENCH_DIR=$dir go test -run '^$' -bench 'BenchmarkStat|BenchmarkList|BenchmarkCat|BenchmarkAppend' \
	-benchtime 3x -timeout 60m ./internal/sqlite/ | grep -E '^Benchmark'

for schema in 14 17; do
	db=$dir/cat-100mb-$schema.sqlite
	echo "== cat of a 100 MB session, schema $schema ($(du -m "$db" | cut -f1) MB database)"
	hyperfine -N -w 1 -r "$runs" \
		"$bin --store sqlite:$db cat big" \
		"sqlite3 $db \"select data from events where session_id = 'big' order by seq\""
done

for schema in 14 17; do
	db=$dir/list-10k-$schema.sqlite
	echo "== list of 10,000 sessions, schema $schema"
	hyperfine -N -w 1 -r "$runs" \
		"$bin --store sqlite:$db list --all -o jsonl" \
		"sqlite3 $db \"SELECT s.id, s.version, s.created_at, s.revision, e.seq, e.type, length(e.data) FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq = (SELECT max(seq) FROM events WHERE session_id = s.id)\""
done

echo "== stat: the same at 1,000 and at 100,000 events"
hyperfine -N -w 2 -r "$runs" \
	"$bin --store sqlite:$dir/stat-1000.sqlite stat -o json z" \
	"$bin --store sqlite:$dir/stat-100000.sqlite stat -o json z"

if command -v strace >/dev/null; then
	echo "== fsyncs per append (10 appends of 3 events to the 100 MB session's database copy)"
	cp "$dir/cat-100mb-17.sqlite" "$dir/append.sqlite"
	strace -f -c -e trace=fsync,fdatasync -o "$dir/strace.txt" bash -c "
		for i in \$(seq 10); do
			printf '%s\n' '{\"type\":\"session/title\",\"data\":{\"title\":\"t\"}}' | $bin --store sqlite:$dir/append.sqlite append --assign-seq big >/dev/null
		done"
	grep -E 'fsync|fdatasync' "$dir/strace.txt" || true
	rm -f "$dir/append.sqlite"*
fi
