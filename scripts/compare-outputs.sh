#!/usr/bin/env bash
# compare-outputs.sh OLD NEW [FIXTURES]
#
# Runs two dshctl binaries over every fixture store and damaged case, the
# replay traces and captures of this repository, and a copy of the SQLite
# fixture, and fails unless they print byte-identical stdout and stderr,
# exit with the same code and leave the same files. Per store:
# `list --all -o jsonl`, `list -o json`, `verify` (text, -o json, -o jsonl,
# --mode strict, --mode point-in-time) and `export --all` into a folder
# (the ZIPs compared byte for byte); per session (named by id and by the
# path of its folder): `stat -o json`, `cat` and `cat --raw`, and also
# `stat --exact -o json`, `cat --closers`, `cat -o json`, `cat -o text`,
# `cat --raw --frames`, `verify` (text and -o json) and `export -O -` (the
# ZIP on stdout). A copy of each damaged store is repaired (`verify
# --repair`, `--repair --salvage`, `--repair --dry-run`): output, the store
# left behind and the backups must agree (the time in backup names is
# masked). replay runs testdata/traces and testdata/captures as text,
# -o json and -o jsonl, with --policy legacy, --shard and --junit; --convert
# of the captures; --generate with -o json and with --save. Also: terminal
# output (DSHCTL_TEST_TTY, COLUMNS) of list, stat, cat -o text, verify and
# export; every command's --help; completion scripts and __complete; error
# and usage-error messages; append (events, -o json, --close-interrupted,
# --create in JSONL and SQLite stores, repairs of damaged copies; where the
# write records the time it ran, logs are compared as cat prints them, times
# masked, and the revision a write notes in a session.lock). Build the old
# binary from the commit to compare against, e.g.
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
repo=$(realpath "$(dirname "$0")/..")

# differ NAME ARGS...: counts a run and reports it when the outputs in
# $work/old.* and $work/new.* (and the exit codes oc, nc) differ.
differ() {
	local name=$1
	shift
	local o="$work/old" n="$work/new"
	runs=$((runs + 1))
	if [ "$oc" != "$nc" ] || ! cmp -s "$o.out" "$n.out" || ! cmp -s "$o.err" "$n.err" ||
		! cmp -s "$o.tree" "$n.tree"; then
		diffs=$((diffs + 1))
		echo "DIFF $name: dshctl $*"
		[ "$oc" = "$nc" ] || echo "  exit $oc -> $nc"
		diff "$o.out" "$n.out" | head -5 | sed 's/^/  stdout /' || true
		diff "$o.err" "$n.err" | head -5 | sed 's/^/  stderr /' || true
		diff "$o.tree" "$n.tree" | head -5 | sed 's/^/  files /' || true
	fi
}

# compare NAME ARGS...: runs both binaries with ARGS and compares.
compare() {
	local name=$1
	shift
	oc=0 nc=0
	: >"$work/old.tree"
	: >"$work/new.tree"
	"$old" "$@" </dev/null >"$work/old.out" 2>"$work/old.err" || oc=$?
	"$new" "$@" </dev/null >"$work/new.out" 2>"$work/new.err" || nc=$?
	differ "$name" "$@"
}

# tree DIR: the names, types, modes and contents of everything under DIR,
# with the times a repair ran masked: in backup file names, and in a backup
# record's savedAt and restore command.
tree() {
	(
		cd "$1"
		find . -mindepth 1 -printf '%P %y %m\n' | sort
		find . -type f -print0 | sort -z | while IFS= read -r -d '' f; do
			case $f in
			*/backups/*.json) sed -E 's/"savedAt": "[^"]*"/"savedAt": <time>/; s/[0-9]{8}T[0-9]{6}(\.[0-9]+)?Z/<time>/g' "$f" | sha256sum | sed "s|-\$|$f|" ;;
			# The revision a write notes in the lock (device, inode, times)
			# differs between any two runs.
			*/session.lock) sed -E 's/^dshctl wrote [0-9a-f:]+$/dshctl wrote <revision>/' "$f" | sha256sum | sed "s|-\$|$f|" ;;
			*) sha256sum "$f" ;;
			esac
		done
	) | sed -E 's/[0-9]{8}T[0-9]{6}(\.[0-9]+)?Z/<time>/g'
}

# run_in SIDE SRC ARGS...: runs SIDE's binary (set in bin) with ARGS in a
# fresh $work/t holding a copy of SRC (if any) as store/: its output in
# $work/SIDE.out and .err, its exit status in code.
run_in() {
	local side=$1 src=$2
	shift 2
	bin=$old
	[ "$side" = new ] && bin=$new
	rm -rf "$work/t"
	mkdir -p "$work/t"
	[ -z "$src" ] || cp -a "$src" "$work/t/store"
	code=0
	(cd "$work/t" && "$bin" "$@") </dev/null >"$work/$side.out" 2>"$work/$side.err" || code=$?
}

# compare_in NAME SRC ARGS...: runs each binary with ARGS in a fresh folder
# $work/t (holding a copy of SRC as $work/t/store when SRC is not empty),
# and compares their output and what they leave in $work/t.
compare_in() {
	local name=$1 src=$2
	shift 2
	oc=0 nc=0
	local side bin code
	for side in old new; do
		run_in "$side" "$src" "$@"
		for f in out err; do
			sed -E 's/[0-9]{8}T[0-9]{6}(\.[0-9]+)?Z/<time>/g' "$work/$side.$f" >"$work/$side.$f.m"
			mv "$work/$side.$f.m" "$work/$side.$f"
		done
		tree "$work/t" >"$work/$side.tree"
		if [ "$side" = old ]; then oc=$code; else nc=$code; fi
	done
	differ "$name" "$@"
}

# compare_masked NAME SRC ARGS...: compare_in for a write that records the
# time it ran (a new session's createdAt, closers' times): the files left are
# compared by name, type and mode, and the logs by what each binary's cat
# prints of them, times masked.
compare_masked() {
	local name=$1 src=$2
	shift 2
	oc=0 nc=0
	local side bin code id st
	for side in old new; do
		run_in "$side" "$src" "$@"
		st=store
		[ -e "$work/t/db.sqlite" ] && st=sqlite:db.sqlite
		{
			(cd "$work/t" && find . -mindepth 1 -printf '%P %y %m\n' | sort)
			(cd "$work/t" && "$bin" --store "$st" list --all -o jsonl 2>/dev/null | jq -r .id) | while IFS= read -r id; do
				(cd "$work/t" && "$bin" --store "$st" cat "$id" 2>&1)
			done
		} | sed -E 's/"(time|createdAt)":[0-9]+/"\1":<t>/g' >"$work/$side.tree"
		sed -i -E 's/"(time|createdAt|createdAtMs)":[0-9]+/"\1":<t>/g; s/"createdAt":"[^"]*"/"createdAt":<t>/g' "$work/$side.out"
		sed -i -E 's/[0-9]{8}T[0-9]{6}(\.[0-9]+)?Z/<time>/g' "$work/$side.out" "$work/$side.err"
		if [ "$side" = old ]; then oc=$code; else nc=$code; fi
	done
	differ "$name" "$@"
}

stores=("$fixtures/dsh-0.1.0/jsonl-zstd" "$fixtures/dsh-0.1.0/jsonl-none" "$fixtures/dsh-v2-v4")
for d in "$fixtures"/dsh-0.1.0/damaged/*/; do
	stores+=("${d%/}")
done

for store in "${stores[@]}"; do
	name=${store#"$fixtures"/}
	compare "$name" --store "$store" list --all -o jsonl
	compare "$name" --store "$store" list -o json
	compare "$name" --store "$store" verify
	compare "$name" --store "$store" verify -o json
	compare "$name" --store "$store" verify -o jsonl
	compare "$name" --store "$store" verify --mode strict
	compare "$name" --store "$store" verify --mode point-in-time -o json
	compare_in "$name" "" --store "$store" export --all -O out/
	compare_in "$name" "" --store "$store" export --all -o json
	# Every session the old binary lists, readable or not, by id and by path.
	"$old" --store "$store" list --all -o jsonl 2>/dev/null |
		jq -r '[.id, (.location.path)] | @tsv' >"$work/sessions" || true
	ids=()
	while IFS=$'\t' read -r id path; do
		ids+=("$id")
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
			compare "$name" --store "$store" verify "$arg"
		done
		compare "$name" --store "$store" verify -o json "$id"
		compare "$name" --store "$store" export -O - "$id"
		compare_in "$name" "" --store "$store" export -o json "$id"
	done <"$work/sessions"
	if [ "${#ids[@]}" -gt 1 ]; then
		compare_in "$name" "" --store "$store" export -O out/ "${ids[@]}"
	fi
	# Repairs, on a copy of the store.
	case $name in
	*/damaged/*)
		compare_in "$name" "$store" --store store verify --repair --backup-dir backups
		compare_in "$name" "$store" --store store verify --repair --salvage --backup-dir backups -o json
		compare_in "$name" "$store" --store store verify --repair --dry-run --backup-dir backups
		;;
	esac
done

# A copy of the SQLite fixture (dsh refuses a database others may read, and
# the fixture is read-only).
db="$work/sqlite/sessions.sqlite"
mkdir -p "$work/sqlite"
cp "$fixtures/dsh-0.1.0/sqlite/sessions.sqlite" "$db"
chmod 600 "$db"
compare sqlite --store "sqlite:$db" list --all -o jsonl
compare sqlite --store "sqlite:$db" list
compare sqlite --store "sqlite:$db" verify -o json
compare sqlite --store "sqlite:$db" verify
"$old" --store "sqlite:$db" list --all -o jsonl 2>/dev/null | jq -r .id >"$work/sessions" || true
while IFS= read -r id; do
	compare sqlite --store "sqlite:$db" stat -o json "$id"
	compare sqlite --store "sqlite:$db" cat "$id"
	compare sqlite --store "sqlite:$db" cat -o text "$id"
	compare sqlite --store "sqlite:$db" verify "$id"
	compare sqlite --store "sqlite:$db" export -O - "$id"
done <"$work/sessions"

# People's output (a terminal of fixed width), help, completion, errors
# and version, on the demo store and the zstd fixture.
zstd="$fixtures/dsh-0.1.0/jsonl-zstd"
for st in "$zstd" "$repo/testdata/demo/sessions"; do
	for cols in 60 80 120; do
		DSHCTL_TEST_TTY=stdout COLUMNS=$cols compare tty --store "$st" list --all
	done
	DSHCTL_TEST_TTY=stdout COLUMNS=100 compare tty --store "$st" list --sort created --limit 3
	compare tty --store "$st" list
	compare tty --store "$st" list --project /home/dev/projects/demo-app -o json
	DSHCTL_TEST_TTY=stdout compare tty --store "$st" verify
	"$old" --store "$st" list --all -o jsonl 2>/dev/null | jq -r .id >"$work/sessions" || true
	while IFS= read -r id; do
		DSHCTL_TEST_TTY=stdout COLUMNS=100 compare tty --store "$st" stat "$id"
		compare tty --store "$st" stat "$id"
		DSHCTL_TEST_TTY=stdout COLUMNS=100 PAGER= compare tty --store "$st" cat -o text "$id"
		compare tty --store "$st" cat --type 'tool/*' --from 3 "$id"
		compare tty --store "$st" cat --turn 1 --header -o json "$id"
		DSHCTL_TEST_TTY=stdout,stderr compare_in tty "" --store "$st" export "$id"
	done <"$work/sessions"
done
for args in "" "list" "stat" "cat" "append" "verify" "export" "replay" "version" "completion"; do
	# shellcheck disable=SC2086 # no arguments, or a command name
	compare help $args --help
done
compare version version -o json
for sh in bash zsh fish powershell; do
	compare completion completion $sh
done
compare completion --store "$zstd" __complete stat session-
compare completion --store "$zstd" __complete export session-4f1c ''
compare completion --store "$zstd" __complete append session-4f1c ''
compare completion --store "$zstd" __complete list --sort ''
compare completion --store "$zstd" __complete cat -o ''
compare completion --store "$zstd" __complete replay --policy ''
compare completion --store "$zstd" __complete cat ./
# Errors and usage errors, whatever the command.
for args in "stat nosuch" "cat nosuch" "verify nosuch" "export nosuch" "append nosuch /dev/null" \
	"lsit" "stat" "cat --frames x" "cat --raw --turn 1 x" "verify --salvage" "export" "export --all x" \
	"replay" "replay /nonexist" "replay --generate -1" "append --cwd /x s" "list --limit x" "list -o text" \
	"stat --version x" "export -O - a b" "cat --to 1 --from 2 x" "replay --convert d --policy legacy x"; do
	# shellcheck disable=SC2086 # a command line
	compare errors --store "$zstd" $args
done
# append, on a copy of a store: events, closers, creation, repairs, refusals.
ev="$work/events.jsonl"
printf '%s\n' '{"type":"session/title","time":1785400000000,"data":{"title":"Fix CI"}}' \
	'{"type":"session/title","time":1785400000001,"data":{"title":"Fix CI 2"}}' >"$ev"
for src in "$zstd" "$fixtures/dsh-0.1.0/jsonl-none" "$fixtures/dsh-0.1.0/damaged/zstd-torn-final-frame-checksum" \
	"$fixtures/dsh-0.1.0/damaged/none-corrupt-line-after-last-turn-end" "$fixtures/dsh-0.1.0/damaged/none-torn-final-line"; do
	"$old" --store "$src" list --all -o jsonl 2>/dev/null | jq -r .id >"$work/sessions" || true
	while IFS= read -r id; do
		compare_in append "$src" --store store append --assign-seq "$id" "$ev"
		compare_in append "$src" --store store append --assign-seq -o json "$id" "$ev"
		compare_masked append "$src" --store store append --close-interrupted "$id"
		compare_in append "$src" --store store append "$id" "$ev"
	done <"$work/sessions"
	compare_masked append "$src" --store store append --create --cwd /tmp/p --assign-seq new-one "$ev"
	compare_masked append "$src" --store store append --create --format-version 0 --compression none --assign-seq new-two "$ev"
done
compare_masked append "" --store store append --create --cwd /tmp/p --assign-seq new-one "$ev"
compare_masked append "" --store sqlite:db.sqlite append --create --cwd /tmp/p --sqlite-schema 14 --assign-seq new-one "$ev"

# replay, from the repository (sources are printed as given).
cd "$repo"
for suite in testdata/traces testdata/captures "testdata/traces testdata/captures"; do
	# shellcheck disable=SC2086 # the suite is one or two folders
	for args in "" "-o json" "-o jsonl" "--policy legacy" "--policy legacy -o json" "--shard 2/3 -o jsonl"; do
		compare replay replay $args $suite
	done
done
compare replay replay testdata/traces/s2-deferral.jsonl testdata/captures/s2-deferral.har
compare replay replay --policy bug-a testdata/traces
compare replay replay testdata/traces/does-not-exist.jsonl
compare replay replay testdata/demo
compare_in replay "" replay --junit report.xml "$repo/testdata/traces" "$repo/testdata/captures"
compare_in replay "" replay --policy legacy --shard 1/2 --junit report.xml "$repo/testdata/traces"
compare_in replay "" replay --convert conv "$repo/testdata/captures"
compare_in replay "" replay --convert conv "$repo/testdata/captures/s2-deferral.har"
compare_in replay "" replay --convert conv "$repo/testdata/traces/s2-deferral.jsonl"
compare replay replay --generate 300 --seed 3 -o json
compare replay replay --generate 300 --seed 3 --shard 2/2
compare_in replay "" replay --generate 300 --seed 1 --policy legacy --save saved -o json
compare_in replay "" replay --generate 200 --seed 2 --policy bug-b --save saved --junit report.xml

echo "$runs runs, $diffs differences ($(basename "$old") vs $(basename "$new"), fixtures $fixtures)"
[ "$diffs" = 0 ]
