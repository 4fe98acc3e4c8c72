#!/usr/bin/env bash
# compare-outputs.sh OLD NEW [FIXTURES]
#
# Runs two dshctl binaries over every fixture store and damaged case and
# fails unless they print byte-identical stdout and stderr and exit with the
# same code. Per store: `list --all -o jsonl` and `list -o json`; per session
# (named by id and by the path of its folder): `stat -o json`, `cat` and
# `cat --raw`, and also `stat --exact -o json`, `cat --closers`,
# `cat -o json`, `cat -o text` and `cat --raw --frames`. Build the old binary
# from the commit to compare against, e.g.
#
#   git worktree add /tmp/old a64090f && (cd /tmp/old && go build -o /tmp/dshctl-old ./cmd/dshctl)
#   go build -o /tmp/dshctl-new ./cmd/dshctl
#   scripts/compare-outputs.sh /tmp/dshctl-old /tmp/dshctl-new
#
# The fixtures are read-only, so revisions (device, inode, size, mtime, ctime)
# are the same for both runs. Needs jq.
set -euo pipefail

old=$(realpath "$1")
new=$(realpath "$2")
fixtures=$(realpath "${3:-${DSHCTL_FIXTURES:-$(dirname "$0")/../../shared/fixtures}}")
command -v jq >/dev/null || { echo "compare-outputs.sh needs jq" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same environment for both: no terminal, no colour, a fixed HOME.
export HOME="$work/home" NO_COLOR=1
unset DSHCTL_STORE DSH_HOME XDG_STATE_HOME
mkdir -p "$HOME"

runs=0
diffs=0

# compare NAME ARGS...: runs both binaries with ARGS and compares.
compare() {
	local name=$1
	shift
	local o="$work/old" n="$work/new" oc=0 nc=0
	"$old" "$@" >"$o.out" 2>"$o.err" || oc=$?
	"$new" "$@" >"$n.out" 2>"$n.err" || nc=$?
	runs=$((runs + 1))
	if [ "$oc" != "$nc" ] || ! cmp -s "$o.out" "$n.out" || ! cmp -s "$o.err" "$n.err"; then
		diffs=$((diffs + 1))
		echo "DIFF $name: dshctl $*"
		[ "$oc" = "$nc" ] || echo "  exit $oc -> $nc"
		diff "$o.out" "$n.out" | head -5 | sed 's/^/  stdout /' || true
		diff "$o.err" "$n.err" | head -5 | sed 's/^/  stderr /' || true
	fi
}

stores=("$fixtures/dsh-0.1.0/jsonl-zstd" "$fixtures/dsh-0.1.0/jsonl-none" "$fixtures/dsh-v2-v4")
for d in "$fixtures"/dsh-0.1.0/damaged/*/; do
	stores+=("${d%/}")
done

for store in "${stores[@]}"; do
	name=${store#"$fixtures"/}
	compare "$name" --store "$store" list --all -o jsonl
	compare "$name" --store "$store" list -o json
	# Every session the old binary lists, readable or not, by id and by path.
	"$old" --store "$store" list --all -o jsonl 2>/dev/null |
		jq -r '[.id, (.location.path)] | @tsv' >"$work/sessions" || true
	while IFS=$'\t' read -r id path; do
		folder=$path
		[ -d "$folder" ] || folder=$(dirname "$path")
		for arg in "$id" "$folder"; do
			compare "$name" --store "$store" stat -o json "$arg"
			compare "$name" --store "$store" cat "$arg"
			compare "$name" --store "$store" cat --raw "$arg"
			compare "$name" --store "$store" stat --exact -o json "$arg"
			compare "$name" --store "$store" cat --closers "$arg"
			compare "$name" --store "$store" cat -o json "$arg"
			compare "$name" --store "$store" cat -o text "$arg"
			compare "$name" --store "$store" cat --raw --frames "$arg"
		done
	done <"$work/sessions"
done

echo "$runs runs, $diffs differences ($(basename "$old") vs $(basename "$new"), fixtures $fixtures)"
[ "$diffs" = 0 ]
