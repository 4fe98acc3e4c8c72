#!/bin/sh
# bench-replay.sh [RUNS]: replay's throughput, as BENCHMARKS.md reports it.
#
# 1. The Go benchmarks of internal/reconcile: replay (machine + checker) of a
#    recorded session of 200 turns (34,000 frames, a 100-row chunk answer per
#    turn), the same with its decoding, the command's path from the file
#    (open, decode, replay, check), and generated traces (generate +
#    replay + check), each per wall-clock second and per CPU second.
# 2. The command: `dshctl replay` on that session written as a JSONL file, and
#    `dshctl replay --generate 10000`, RUNS times each (default 3), with
#    /usr/bin/time's wall, user and system seconds and peak RSS.
#
# The machine may be shared: CPU seconds say what the code costs, wall
# seconds what a user waits.
set -eu
runs=${1:-3}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
echo "# $(go version); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
go test -run '^$' -bench 'ReplayRecorded|DecodeAndReplayRecorded|ReplayFile|Generated$|Machine' -benchtime 3s -count "$runs" ./internal/reconcile |
	grep '^Benchmark'
go build -o bin/dshctl ./cmd/dshctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -count=1 -run '^TestWriteRecordedSession$' ./internal/reconcile -args -recorded-session "$tmp/session.jsonl" >/dev/null
records=$(($(wc -l <"$tmp/session.jsonl") - 1))
bytes=$(wc -c <"$tmp/session.jsonl")
echo "# recorded session: $records records, $bytes bytes"
for i in $(seq "$runs"); do
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" bin/dshctl replay "$tmp/session.jsonl" >/dev/null
	read -r wall user sys rss <"$tmp/t"
	awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v n="$records" 'BEGIN {
		printf "dshctl replay session.jsonl: %.2f s wall, %.2f s CPU, %.0f events/s, %.0f events/CPU-s, %d MB RSS\n", w, u+s, n/w, n/(u+s), r/1024 }'
done
# 3. A long session (LONG turns of ~160 records, default 62,500: 10 M
#    records), written into a FIFO as it is made and replayed from standard
#    input while it is read: the CPU and peak RSS of dshctl alone.
long=${LONG:-62500}
mkfifo "$tmp/long.jsonl"
go test -c -o "$tmp/reconcile.test" ./internal/reconcile
"$tmp/reconcile.test" -test.run '^TestWriteRecordedSession$' -recorded-session "$tmp/long.jsonl" -recorded-turns "$long" >/dev/null &
/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" bin/dshctl replay - <"$tmp/long.jsonl" >"$tmp/long.out"
wait
read -r wall user sys rss <"$tmp/t"
events=$(sed -n 's/.*policy membership, \([0-9]*\) events.*/\1/p' "$tmp/long.out")
awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v n="$events" 'BEGIN {
	printf "dshctl replay - (long session, %d records, streamed): %.1f s wall, %.1f s CPU, %.0f events/s, %.0f events/CPU-s, %d MB RSS\n", n, w, u+s, n/w, n/(u+s), r/1024 }'
for i in $(seq "$runs"); do
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" bin/dshctl replay --generate 10000 --seed "$i" >/dev/null
	read -r wall user sys rss <"$tmp/t"
	awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v seed="$i" 'BEGIN {
		printf "dshctl replay --generate 10000 --seed %d: %.2f s wall, %.2f s CPU, %d MB RSS\n", seed, w, u+s, r/1024 }'
done
