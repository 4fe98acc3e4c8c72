#!/usr/bin/env bash
# bench-verify.sh: dshctl verify against zstd -t on the same log, in one run.
#
# Builds a format-v0 zstd log of SIZE bytes from the fixtures' real append
# batches (scripts/benchlog: one frame per batch, as dsh writes them, about
# 3:1 compression), and the same log plain (its decoded text), then times,
# best of RUNS:
#   zstd -t LOG                  checksums and decoding alone (the goal: verify within 3x)
#   dshctl verify SESSION        every frame, checksum, record and event rule
#   cat PLAIN > /dev/null        reading the plain log (its floor)
#   dshctl verify SESSION        on the plain log
# reporting wall time and CPU time (user + sys: steadier on a shared machine)
# and the peak RSS of each run.
#
# Usage: scripts/bench-verify.sh [SIZE] [RUNS]   (defaults: 256MiB, 3 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256MiB}
runs=${2:-3}
for tool in zstd /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-verify: $tool is required" >&2; exit 1; }
done
fixtures=${DSHCTL_FIXTURES_DIR:-../shared/fixtures}
make -s build
bin=$PWD/bin/dshctl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go run ./scripts/benchlog -fixtures "$fixtures" -out "$work/zstd" -plain "$work/plain" -size "$size" >/dev/null
log=$work/zstd/--bench--/bench/session.jsonl.zstd
plain=$work/plain/--bench--/bench/session.jsonl
raw=$(stat -c %s "$plain")

# measure CMD: "wall cpu rss" of the best (by wall time) of RUNS runs.
measure() {
	local best="" line
	for ((r = 0; r < runs; r++)); do
		line=$( { /usr/bin/time -f '%e %U %S %M' bash -c "$* >/dev/null"; } 2>&1 | tail -1)
		line=$(awk '{ printf "%.2f %.2f %.1f", $1, $2 + $3, $4 / 1024 }' <<<"$line")
		if [[ -z $best ]] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best=$line; fi
	done
	echo "$best"
}

echo "zstd log: $(stat -c %s "$log") bytes ($raw decoded); plain log: $raw bytes; $(nproc) CPUs"
printf '%-28s %8s %8s %10s %9s\n' "command" "wall s" "cpu s" "MB/s" "RSS MiB"
row() {
	local name=$1 m
	shift
	m=$(measure "$@")
	read -r wall cpu rss <<<"$m"
	printf '%-28s %8s %8s %10s %9s\n' "$name" "$wall" "$cpu" "$(awk -v r="$raw" -v t="$wall" 'BEGIN { if (t > 0) printf "%.0f", r / t / 1e6; else print "-" }')" "$rss"
}
row "zstd -t (zstd log)" "zstd -qt '$log'"
row "dshctl verify (zstd log)" "'$bin' --store '$work/zstd' verify bench"
row "cat (plain log)" "cat '$plain'"
row "dshctl verify (plain log)" "'$bin' --store '$work/plain' verify bench"
echo "(MB/s: decoded bytes per wall second)"
