#!/usr/bin/env bash
# bench-cat.sh: dshctl cat against the reference tools on the same log, in one run.
#
# Builds a format-v4 zstd log of BATCHES appends (one frame each, 1,000 events a
# frame, like a long dsh session), then times, best of RUNS:
#   zstd -dc LOG > /dev/null           decompression alone (the floor)
#   zstd -dc LOG | jq -c . > /dev/null  decompress and re-print JSON (the usual script)
#   dshctl cat SESSION > /dev/null      decode, validate, canonical JSONL
#   dshctl cat -o text SESSION          the transcript
# and reports the peak RSS of dshctl cat for two log sizes, to show that memory
# does not grow with the log.
#
# Usage: scripts/bench-cat.sh [BATCHES] [RUNS]   (defaults: 200 batches, 3 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-200}
runs=${2:-3}
for tool in zstd jq /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-cat: $tool is required" >&2; exit 1; }
done
make -s build
bin=$PWD/bin/dshctl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# make_log STORE N: a session "bench" of N batches of 1,000 events.
make_log() {
	local store=$1 n=$2 b
	for ((b = 0; b < n; b++)); do
		awk -v b="$b" 'BEGIN {
			for (i = 0; i < 1000; i++) {
				if (i % 4 == 0)
					printf "{\"type\":\"user/message\",\"data\":{\"id\":\"u%d-%d\",\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"please look at file %d of batch %d and explain what it does\"}],\"source\":{\"kind\":\"user\"}},\"surfaceOp\":\"append\"}\n", b, i, i, b
				else
					printf "{\"type\":\"session/title\",\"data\":{\"title\":\"batch %d event %d: the quick brown fox jumps over the lazy dog, again and again\"}}\n", b, i
			}
		}' >"$work/batch.jsonl"
		if ((b == 0)); then
			"$bin" --store "$store" append -o jsonl --create --cwd /bench --assign-seq bench "$work/batch.jsonl" >/dev/null
		else
			"$bin" --store "$store" append -o jsonl --assign-seq bench "$work/batch.jsonl" >/dev/null
		fi
	done
}

# best CMD...: the best wall time of RUNS runs, in seconds.
best() {
	local best="" t
	for ((r = 0; r < runs; r++)); do
		t=$( { /usr/bin/time -f %e bash -c "$*" >/dev/null; } 2>&1 | tail -1)
		if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
	done
	echo "$best"
}

# rss CMD...: peak resident set size in MiB.
rss() {
	/usr/bin/time -f %M bash -c "$* > /dev/null" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.1f", $1 / 1024 }'
}

make_log "$work/small" $((batches / 10))
make_log "$work/large" "$batches"
log=$(ls "$work"/large/--bench--/bench/session.v4.jsonl.zstd)
small=$(ls "$work"/small/--bench--/bench/session.v4.jsonl.zstd)
raw=$(zstd -dc "$log" | wc -c)
events=$("$bin" --store "$work/large" stat -o json bench | awk -F': ' '/"eventCount"/ { gsub(/,/, "", $2); print $2 }')

echo "log: $events events, $(stat -c %s "$log") bytes zstd, $raw bytes decoded ($batches frames + header)"
printf '%-34s %8s %10s\n' "command" "best s" "MB/s (decoded)"
for name in "zstd -dc" "zstd -dc | jq -c ." "dshctl cat" "dshctl cat -o text"; do
	case $name in
	"zstd -dc") cmd="zstd -dc '$log'" ;;
	"zstd -dc | jq -c .") cmd="zstd -dc '$log' | jq -c ." ;;
	"dshctl cat") cmd="'$bin' --store '$work/large' cat bench" ;;
	"dshctl cat -o text") cmd="'$bin' --store '$work/large' cat -o text bench" ;;
	esac
	t=$(best "$cmd")
	printf '%-34s %8s %10s\n' "$name" "$t" "$(awk -v r="$raw" -v t="$t" 'BEGIN { if (t > 0) printf "%.0f", r / t / 1e6; else print "-" }')"
done
echo "peak RSS of dshctl cat: $(rss "'$bin' --store '$work/small' cat bench") MiB on $((batches / 10)) frames," \
	"$(rss "'$bin' --store '$work/large' cat bench") MiB on $batches frames"
