#!/usr/bin/env bash
# bench-export.sh: dshctl export against the same work done by two tools,
# `dshctl cat ID > f && zip -q -6 out.zip f`, on the same session, in one run.
#
# Builds a format-v0 zstd session of MIB MiB (decoded) out of the real events
# of the dsh 0.1.0 fixtures (scripts/genlog: every fixture session copied
# again and again, seqs moved along, one zstd frame per copy), then runs the
# two commands RUNS times each, interleaved so that the load of a shared
# machine hits both alike, and prints for each the best and median wall
# time, the CPU time of the best run and the peak RSS. Finally it checks the
# export: `unzip -t`, and the log in the ZIP is cat's output byte for byte,
# header line included.
#
# Usage: scripts/bench-export.sh [MIB] [RUNS]   (defaults: 1024 MiB, 3 runs)
# FIXTURES names the shared fixtures folder (default ../shared/fixtures).
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-1024}
runs=${2:-3}
fixtures=${FIXTURES:-../shared/fixtures}
for tool in zip unzip /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-export: $tool is required (apt-get install -y zip unzip time)" >&2; exit 1; }
done
make -s build
bin=$PWD/bin/dshctl
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-export.XXXXXX")
trap 'rm -rf "$work"' EXIT

go run ./scripts/genlog -fixtures "$fixtures" -store "$work/store" -mib "$mib" >/dev/null
log=$(ls "$work"/store/*/bench/session.jsonl.zstd)
events=$("$bin" --store "$work/store" stat -o json bench | awk -F': ' '/"eventCount"/ { gsub(/,/, "", $2); print $2 }')

# measure NAME CMD: one run of CMD; appends "NAME wall cpu rss_kib" to $work/runs.
measure() {
	local name=$1 cmd=$2 out
	out=$( { /usr/bin/time -f '%e %U %S %M' bash -c "$cmd" >/dev/null; } 2>&1 | tail -1)
	awk -v n="$name" '{ printf "%s %s %.2f %s\n", n, $1, $2 + $3, $4 }' <<<"$out" >>"$work/runs"
}

reference="rm -f '$work/ref.zip' && '$bin' --store '$work/store' cat bench > '$work/f.jsonl' && zip -q -6 '$work/ref.zip' '$work/f.jsonl'"
export_cmd="'$bin' --store '$work/store' export --force -O '$work/export.zip' bench"
: >"$work/runs"
for ((r = 0; r < runs; r++)); do
	measure "cat+zip" "$reference"
	measure "export" "$export_cmd"
done

# The peak RSS of the reference is that of its larger process; /usr/bin/time
# on bash reports the largest child.
raw=$(stat -c %s "$work/f.jsonl")
echo "session: $events events, $(stat -c %s "$log") bytes zstd, $raw bytes decoded (dshctl cat); $runs runs each, interleaved"
printf '%-10s %8s %8s %12s %10s %12s\n' command "best s" "median s" "CPU s (best)" "RSS MiB" "ZIP bytes"
for name in "cat+zip" export; do
	zipfile=$work/ref.zip
	[[ $name == export ]] && zipfile=$work/export.zip
	sort -k2,2n <(grep "^$name " "$work/runs") | awk -v n="$name" -v z="$(stat -c %s "$zipfile")" '
		{ wall[NR] = $2; if (NR == 1) cpu = $3; if ($4 > rss) rss = $4 }
		END { printf "%-10s %8.2f %8.2f %12.2f %10.1f %12d\n", n, wall[1], wall[int((NR + 1) / 2)], cpu, rss / 1024, z }'
done
best() { grep "^$1 " "$work/runs" | sort -k2,2n | head -1 | awk '{ print $2 }'; }
awk -v e="$(best export)" -v r="$(best cat+zip)" 'BEGIN { printf "export / (cat+zip), best wall: %.2f\n", e / r }'

unzip -tq "$work/export.zip"
cmp <(unzip -p "$work/export.zip" session.jsonl) "$work/f.jsonl" &&
	echo "the exported log is cat's output byte for byte"
