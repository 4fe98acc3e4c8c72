#!/usr/bin/env bash
# bench.sh: every dshctl command measured against what it must read and
# against the tool a user would use instead, side by side in one run
# (issue 15). It prints one Markdown table: the median wall time, CPU time
# (user + system) and peak RSS of each side over RUNS interleaved runs, and
# the ratios: on a shared machine the CPU ratio is the steadier one.
#
# The stores are built once, from the real events of testdata/demo/sessions
# (dsh 0.1.0 logs; they compress about 3:1, as real logs do), by
# scripts/benchstore, into the cache folder (ignored by git):
#   zstd/ and none/  sessions big (100 MB decoded), huge (1 GiB), mid (1 MiB)
#                    and small (8 KB), as zstd and plain logs
#   many-10000/, many-1000/  10,000 and 1,000 sessions (zstd)
#
# Usage: scripts/bench.sh            (RUNS=5, DSHCTL_BENCH_CACHE=.bench-cache)
#        ROWS=grep scripts/bench.sh  (only the rows whose command matches
#                                     the extended regexp ROWS)
# Needs: go, zstd, jq, zip and GNU time (/usr/bin/time), and for the grep
# rows ripgrep (rg) and zstdgrep (zstd's):
#   apt-get install -y zstd jq zip time ripgrep
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
cache=${DSHCTL_BENCH_CACHE:-$PWD/.bench-cache}

missing=()
for tool in go zstd jq zip /usr/bin/time; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
	echo "bench.sh: missing ${missing[*]}; install with: apt-get install -y zstd jq zip time (and Go 1.26)" >&2
	exit 1
fi

go build -o bin/dshctl ./cmd/dshctl
bin=$PWD/bin/dshctl
mkdir -p "$cache"
for enc in zstd none; do
	[[ -d $cache/$enc ]] || { echo "building the $enc store in $cache (once)" >&2
		go run ./scripts/benchstore -out "$cache/$enc" -enc "$enc" \
			-session big:100M -session huge:1G -session mid:1M -session small:8K; }
done
for n in 1000 10000; do
	[[ -d $cache/many-$n ]] || { echo "building a store of $n sessions in $cache (once)" >&2
		go run ./scripts/benchstore -out "$cache/many-$n" -enc zstd -sessions "$n"; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Appends change a log: they go to copies, made fresh for each run.
for enc in zstd none; do
	for id in big small; do
		dir=$(dirname "$(ls "$cache/$enc"/*/"$id"/session.jsonl*)")
		mkdir -p "$work/append-$enc/$(basename "$(dirname "$dir")")"
		cp -r "$dir" "$work/append-$enc/$(basename "$(dirname "$dir")")/"
	done
done
echo '{"type":"session/title","data":{"title":"benchmark append"}}' >"$work/event.jsonl"

log() { # log ENC ID: the log file of a session
	ls "$cache/$1"/*/"$2"/session.jsonl*
}
bytes() { stat -c %s "$1"; }

# timed FILE CMD: runs CMD (a shell command line) once under GNU time and
# appends "wall cpu rss_kib" to FILE.
timed() {
	local out=$1 cmd=$2 tf="$work/time"
	if ! /usr/bin/time -o "$tf" -f '%e %U %S %M' bash -c "exec >/dev/null; $cmd"; then
		echo "bench.sh: failed: $cmd" >&2
		exit 1
	fi
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$tf" >>"$out"
}

# median FILE COLUMN
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); if (NR % 2) print v[m]; else print (v[m] + v[m + 1]) / 2 }'
}

rows=()
# wanted WHAT: the row WHAT is to be measured (ROWS, when set, matches it).
wanted() { [[ -z ${ROWS:-} || $1 =~ $ROWS ]]; }

# pair WHAT GOAL CMD REF_WHAT REF_CMD [REF_RUNS]: RUNS interleaved runs of
# both sides; with REF_RUNS, the reference (one that takes minutes) runs
# that many times only, without a warm-up run.
pair() {
	local what=$1 goal=$2 cmd=$3 refwhat=$4 ref=$5 refruns=${6:-} a="$work/a" b="$work/b"
	wanted "$what" || return 0
	: >"$a"
	: >"$b"
	timed "$a" "$cmd" # warm the page cache and the build
	[[ -n $refruns ]] || timed "$b" "$ref"
	: >"$a"
	: >"$b"
	for ((r = 0; r < runs; r++)); do
		timed "$a" "$cmd"
		if [[ -z $refruns ]] || ((r < refruns)); then
			timed "$b" "$ref"
		fi
	done
	local ta tb ca cb ra rb ratio cratio
	ta=$(median "$a" 1) tb=$(median "$b" 1)
	ca=$(median "$a" 2) cb=$(median "$b" 2)
	ra=$(median "$a" 3) rb=$(median "$b" 3)
	ratio=$(awk -v a="$ta" -v b="$tb" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "-" }')
	cratio=$(awk -v a="$ca" -v b="$cb" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "-" }')
	rows+=("| $what | $ta | $ca | $(mib "$ra") | $refwhat | $tb | $cb | $(mib "$rb") | **$ratio** | $cratio | $goal | $(met "$goal" "$cratio") |")
	echo "  $what: $ta s against $tb s ($ratio; CPU $ca s against $cb s, $cratio)" >&2
}

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# met GOAL VALUE: whether VALUE (a ratio of CPU times, a size in KiB, events
# per CPU second or seconds of wall time) meets GOAL ("≤ 2×", "≈ 1×" within
# 20%, "≤ 1.5 KiB", "≥ 1 M events/s", "≤ 3 s"): "met", "not met", or
# nothing without a goal. Ratios and rates are of CPU time, which on a
# shared machine does not drift with the load as wall time does; a goal
# in seconds is of wall time.
met() {
	local goal=$1 v=${2%×}
	[[ -n $goal ]] || return 0
	awk -v g="$goal" -v v="$v" 'BEGIN {
		n = g; gsub(/[^0-9.]/, "", n); n += 0
		if (g ~ /M events/) n *= 1000000
		ok = (g ~ /^≈/) ? (v <= n * 1.2 && v >= n / 1.2) : (g ~ /^≥/) ? (v >= n) : (v <= n)
		print ok ? "met" : "**not met**" }'
}

# single WHAT GOAL CMD EVENTS: RUNS runs of a command without a reference;
# with EVENTS, the rate is given too, and the goal is one of events per CPU
# second; without, of seconds of wall time.
single() {
	local what=$1 goal=$2 cmd=$3 events=$4 a="$work/a"
	wanted "$what" || return 0
	: >"$a"
	timed "$a" "$cmd"
	: >"$a"
	for ((r = 0; r < runs; r++)); do
		timed "$a" "$cmd"
	done
	local ta ca ra rate="" value
	ta=$(median "$a" 1) ca=$(median "$a" 2) ra=$(median "$a" 3)
	value=$ta
	if [[ -n $events ]]; then
		rate=$(awk -v n="$events" -v t="$ta" -v c="$ca" 'BEGIN { if (t > 0 && c > 0) printf "%.0f events/s, %.0f per CPU-s", n / t, n / c }')
		value=$(awk -v n="$events" -v c="$ca" 'BEGIN { if (c > 0) printf "%.0f", n / c; else print 0 }')
	fi
	rows+=("| $what | $ta | $ca | $(mib "$ra") | $rate | | | | | | $goal | $(met "$goal" "$value") |")
	echo "  $what: $ta s $rate" >&2
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
z=zstd
bigz=$(log zstd big) bign=$(log none big)
echo "measuring, $runs runs of each side (load average $load0)" >&2

ap() { # ap ENC ID: append one event to the work copy of ENC's session ID
	echo "'$bin' --store '$work/append-$1' append --assign-seq $2 '$work/event.jsonl'"
}
for enc in zstd none; do
	pair "\`append\` one event, big ($enc)" "≤ 2×" "$(ap "$enc" big)" "\`append\` one event, small ($enc)" "$(ap "$enc" small)"
done
pair "\`stat --exact\` big ($z)" "≤ 1.1×" "'$bin' --store '$cache/zstd' stat --exact big" \
	"\`cat\` big ($z)" "'$bin' --store '$cache/zstd' cat big"
pair "\`stat --exact\` big (none)" "≤ 1.1×" "'$bin' --store '$cache/none' stat --exact big" \
	"\`cat\` big (none)" "'$bin' --store '$cache/none' cat big"
pair "\`cat\` big ($z)" "≤ 2×" "'$bin' --store '$cache/zstd' cat big" \
	"\`zstd -dc\` big" "zstd -dc '$bigz'"
pair "\`cat -o text\` big ($z)" "≤ 1.5×" "'$bin' --store '$cache/zstd' cat -o text big" \
	"\`cat\` big ($z)" "'$bin' --store '$cache/zstd' cat big"
pair "\`cat --raw\` big ($z)" "" "'$bin' --store '$cache/zstd' cat --raw big" \
	"\`zstd -dc\` big" "zstd -dc '$bigz'"
pair "\`cat\` big ($z)" "" "'$bin' --store '$cache/zstd' cat big" \
	"\`zstd -dc \| jq -c .\` big" "zstd -dc '$bigz' | jq -c ."
pair "\`stat\` huge, 1 GiB ($z)" "≈ 1×" "'$bin' --store '$cache/zstd' stat huge" \
	"\`stat\` mid, 1 MiB ($z)" "'$bin' --store '$cache/zstd' stat mid"
pair "\`stat\` huge, 1 GiB (none)" "≈ 1×" "'$bin' --store '$cache/none' stat huge" \
	"\`stat\` mid, 1 MiB (none)" "'$bin' --store '$cache/none' stat mid"
many=$cache/many-10000
pair "\`list --all\` 10,000 sessions" "" "'$bin' --store '$many' list --all -o jsonl" \
	"\`find\` + \`head\` + \`tail\` 4 KiB of each log" \
	"find '$many' -name '*.zstd' -print0 | xargs -0 head -q -c 4096; find '$many' -name '*.zstd' -print0 | xargs -0 tail -q -c 4096"
pair "\`list --all\` 10,000 sessions" "" "'$bin' --store '$many' list --all -o jsonl" \
	"\`list --all\` 1,000 sessions" "'$bin' --store '$cache/many-1000' list --all -o jsonl"
if wanted "\`list --all\` 10,000 sessions"; then
	rss10k=$(median "$work/a" 3) rss1k=$(median "$work/b" 3)
	perSession=$(awk -v a="$rss10k" -v b="$rss1k" 'BEGIN { printf "%.2f", (a - b) / 9000 }')
	rows+=("| \`list\` memory per session: (peak RSS at 10,000 − at 1,000) / 9,000 | $perSession KiB | | | | | | | | | ≤ 1.5 KiB | $(met "≤ 1.5 KiB" "$perSession") |")
fi

# has CMD: this build of dshctl has the command CMD.
has() { "$bin" --help | awk '/^Available Commands/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' | grep -qx "$1"; }
if has replay; then
	events=$(cat testdata/traces/*.jsonl | grep -c .)
	single "\`replay\` testdata/traces ($events records)" "" "'$bin' replay testdata/traces" "$events"
	# A recorded session of 200 turns, as reconcile's test writes it.
	if go test -count=1 -run '^TestWriteRecordedSession$' ./internal/reconcile -args -recorded-session "$work/recorded.jsonl" >"$work/recorded.log" 2>&1; then
		events=$(($(wc -l <"$work/recorded.jsonl") - 1))
		single "\`replay\` a recorded session ($events records)" "≥ 1 M events/s" "'$bin' replay '$work/recorded.jsonl'" "$events"
	else
		echo "bench.sh: could not write the recorded session:" >&2
		cat "$work/recorded.log" >&2
		rows+=("| \`replay\` a recorded session: not measured, its trace could not be written (see stderr) | | | | | | | | | | ≥ 1 M events/s | **not measured** |")
	fi
	single "\`replay --generate 10000\`" "≤ 3 s" "'$bin' replay --generate 10000 --seed 1" ""
fi
if has verify; then
	pair "\`verify\` big ($z)" "" "'$bin' --store '$cache/zstd' verify big" "\`zstd -t\` big" "zstd -qt '$bigz'"
fi
if has export; then
	pair "\`export -O -\` big ($z)" "" "'$bin' --store '$cache/zstd' export -O - big" \
		"\`cat \| zip -6\` big ($z)" "'$bin' --store '$cache/zstd' cat big | zip -q -6 - -"
fi

if has grep && command -v rg >/dev/null && command -v zstdgrep >/dev/null; then
	# Search a store as a user would without dshctl: ripgrep's -z (a zstd
	# process per log, piped to rg) and zstdgrep (zstdcat | grep per log),
	# on the 1 GiB store (big, huge, mid and small: 1.2 GiB decoded) and
	# on 10,000 sessions. A search that finds nothing exits 1, as grep.
	z1=$cache/zstd
	# ok01 CMD: CMD, where exit status 1 (no match; for zstdgrep, no match
	# in the last log) is not a failure.
	ok01() { echo "$1; test \$? -le 1"; }
	n=$("$bin" --store "$z1" grep -c 'build\.sh' | awk -F'\t' '{ n += $2 } END { print n }')
	pair "\`grep\` a word found nowhere, 1 GiB store ($z)" "≤ 1×" "$(ok01 "'$bin' --store '$z1' grep segfault")" \
		"\`rg -z\`" "$(ok01 "rg -z segfault '$z1'")"
	pair "\`grep\` a word found nowhere, 1 GiB store ($z)" "≤ 1×" "$(ok01 "'$bin' --store '$z1' grep segfault")" \
		"\`zstdgrep\`" "$(ok01 "find '$z1' -name '*.zstd' -exec zstdgrep segfault {} +")"
	pair "\`grep\` $n matching lines, 1 GiB store ($z)" "≤ 1×" "'$bin' --store '$z1' grep 'build\.sh'" \
		"\`rg -z\`" "rg -z 'build\.sh' '$z1'"
	pair "\`grep -i\` 1 GiB store ($z)" "≤ 1×" "'$bin' --store '$z1' grep -i 'TYPESCRIPT via'" \
		"\`rg -z -i\`" "rg -z -i 'TYPESCRIPT via' '$z1'"
	pair "\`grep -c\` a regexp, 1 GiB store ($z)" "≤ 1×" "'$bin' --store '$z1' grep -c '[0-9a-f]{8}-[0-9a-f]{4}'" \
		"\`rg -z -c\`" "rg -z -c '[0-9a-f]{8}-[0-9a-f]{4}' '$z1'"
	pair "\`grep -l\` 10,000 sessions" "≤ 1×" "'$bin' --store '$many' grep -l 'build\.sh'" \
		"\`rg -z -l\` (1 run)" "rg -z -l 'build\.sh' '$many'" 1
	pair "\`grep -l\` 10,000 sessions" "≤ 1×" "'$bin' --store '$many' grep -l 'build\.sh'" \
		"\`zstdgrep -l\` (1 run)" "$(ok01 "find '$many' -name '*.zstd' -exec zstdgrep -l 'build\.sh' {} +")" 1
fi

load1=$(cut -d' ' -f1-3 /proc/loadavg)
evz=$("$bin" --store "$cache/zstd" stat -o json big | jq .eventCount)
echo "## Latest round"
echo
rgv=""
if command -v rg >/dev/null; then rgv=", ripgrep $(rg --version | head -1 | cut -d' ' -f2)"; fi
echo "$(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), zstd $(zstd --version | grep -o "v[0-9.]*"), $(jq --version)$rgv; load average $load0 at the start, $load1 at the end."
echo "Command: \`${ROWS:+ROWS='$ROWS' }RUNS=$runs scripts/bench.sh\` ($runs interleaved runs of each side, medians; \"met\" compares the CPU figure with the goal)."
echo "big: $(($(zstd -dc "$bigz" | wc -c) / 1000000)) MB decoded, $(($(bytes "$bigz") / 1000000)) MB zstd, $evz events; huge: $(($(bytes "$(log none huge)") >> 20)) MiB decoded, $(($(bytes "$(log zstd huge)") >> 20)) MiB zstd; mid: $(($(bytes "$(log none mid)") >> 10)) KiB; small: $(($(bytes "$(log none small)") >> 10)) KiB."
echo
echo "| command | wall s | CPU s | peak RSS MiB | against | wall s | CPU s | peak RSS MiB | wall ratio | CPU ratio | goal | met |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
