#!/usr/bin/env bash
# bench-verify.sh: dshctl verify against zstd -t on the same log, in one run.
#
# Builds a format-v0 session of MIB MiB (decoded) as dsh wrote it: the append
# batches of the dsh 0.1.0 fixture sessions whose turns all close, one zstd
# frame per batch, records as stored (scripts/genlog -batches dsh), replayed
# with seqs moved along; about 2.9:1 compression, like the fixtures. Builds the
# same log plain too (its decoded text). Then runs each command RUNS times,
# interleaved so that the load of a shared machine hits them alike, and prints
# for each the best and median wall time, the CPU time (user + sys) of the
# best run and the peak RSS:
#   zstd -t LOG              checksums and decoding alone (the goal: verify within 3x)
#   dshctl verify SESSION    every frame, checksum, record and event rule
#   cat PLAIN > /dev/null    reading the plain log (its floor)
#   dshctl verify SESSION    on the plain log
#
# Usage: scripts/bench-verify.sh [MIB] [RUNS]   (defaults: 768 MiB, 3 runs;
# 3072 MiB makes a zstd log of about 1 GiB)
# FIXTURES names the shared fixtures folder (default ../shared/fixtures).
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-768}
runs=${2:-3}
fixtures=${FIXTURES:-../shared/fixtures}
for tool in zstd /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-verify: $tool is required (apt-get install -y zstd time)" >&2; exit 1; }
done
make -s build
bin=$PWD/bin/dshctl
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-verify.XXXXXX")
trap 'rm -rf "$work"' EXIT

go run ./scripts/genlog -fixtures "$fixtures" -store "$work/zstd" -mib "$mib" -batches dsh >/dev/null
go run ./scripts/genlog -fixtures "$fixtures" -store "$work/plain" -mib "$mib" -batches dsh -compression none >/dev/null
log=$(ls "$work"/zstd/*/bench/session.jsonl.zstd)
plain=$(ls "$work"/plain/*/bench/session.jsonl)

# measure NAME CMD: one run of CMD; appends "NAME wall cpu rss_kib" to $work/runs.
measure() {
	local name=$1 cmd=$2 out
	out=$( { /usr/bin/time -f '%e %U %S %M' bash -c "$cmd" >/dev/null; } 2>&1 | tail -1)
	awk -v n="$name" '{ printf "%s %s %.2f %s\n", n, $1, $2 + $3, $4 }' <<<"$out" >>"$work/runs"
}

: >"$work/runs"
for ((r = 0; r < runs; r++)); do
	measure zstd-t "zstd -qt '$log'"
	measure verify-zstd "'$bin' --store '$work/zstd' verify bench"
	measure cat-plain "cat '$plain'"
	measure verify-plain "'$bin' --store '$work/plain' verify bench"
done

raw=$(stat -c %s "$plain")
echo "log: $(stat -c %s "$log") bytes zstd, $raw bytes decoded; $(nproc) CPUs; $runs runs each, interleaved"
printf '%-13s %8s %8s %12s %9s %10s\n' command "best s" "median s" "CPU s (best)" "RSS MiB" "MB/s best"
for name in zstd-t verify-zstd cat-plain verify-plain; do
	sort -k2,2n <(grep "^$name " "$work/runs") | awk -v n="$name" -v r="$raw" '
		{ wall[NR] = $2; if (NR == 1) cpu = $3; if ($4 > rss) rss = $4 }
		END { printf "%-13s %8.2f %8.2f %12.2f %9.1f %10.0f\n", n, wall[1], wall[int((NR + 1) / 2)], cpu, rss / 1024, (wall[1] > 0 ? r / wall[1] / 1e6 : 0) }'
done
best() { grep "^$1 " "$work/runs" | sort -k2,2n | head -1 | awk -v f="$2" '{ print $f }'; }
awk -v v="$(best verify-zstd 2)" -v z="$(best zstd-t 2)" -v vc="$(best verify-zstd 3)" -v zc="$(best zstd-t 3)" \
	'BEGIN { printf "verify / zstd -t: best wall %.2f, CPU of the best runs %.2f\n", v / z, vc / zc }'
