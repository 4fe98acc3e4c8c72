#!/usr/bin/env bash
# make compat: every store dshctl writes is read, and appended to, by the
# real dsh (issue 20), and dshctl never extends a log that dsh refuses.
#
# It installs ../shared/dsh-oracle (or $DSHCTL_ORACLE) in a temporary copy
# with npm (the real dsh persistence packages: 0.1.0-rc.8 JSONL, 0.0.1-rc.1
# SQLite schema 14), then, each checked with the oracle's check.mjs (exit 0:
# dsh accepts every session) and check.mjs --append (dsh resumes each
# session and appends a closed turn):
#   - sessions dshctl creates in empty stores (zstd, plain, a schema-14
#     database), appends to, and closes after a crash (--close-interrupted);
#   - dsh's damaged fixtures after verify --repair (torn frame, uncommitted
#     tail, --salvage);
#   - two-writer damage made with dsh's own writer (dshctl appends a turn,
#     dsh appends its own from the log as it was before): dsh refuses it,
#     dshctl refuses to extend it, verify --repair --renumber mends it and
#     dsh then reads both turns;
#   - races: dsh's own writer (writer-loop.mjs) appending turns to a session
#     while dshctl appends to it. Each must end with a log dsh accepts, or
#     with dshctl refusing to extend the log dsh refuses (at most the one
#     append in flight when the damage landed is after it); a damaged log is
#     then renumbered (verify --repair --renumber) and dsh must accept it
#     holding every event both writers wrote (checked against the writers'
#     own tags in the log's bytes, not against dshctl's counts).
# Environment: COMPAT_RACES (default 4), COMPAT_RACE_SECONDS (default 8).
# When the npm registry cannot be reached it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
oracle_src=${DSHCTL_ORACLE:-$(cd .. && pwd)/shared/dsh-oracle}
fixtures=${DSHCTL_FIXTURES:-$(cd .. && pwd)/shared/fixtures}
races=${COMPAT_RACES:-4}
race_seconds=${COMPAT_RACE_SECONDS:-8}

[ -f "$oracle_src/check.mjs" ] || { echo "compat: the dsh oracle is not at $oracle_src (set DSHCTL_ORACLE)"; exit 1; }
command -v npm >/dev/null || { echo "compat: npm is required (the real dsh is installed from the npm registry)"; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/dshctl-compat.XXXXXX")
loop_pid=
cleanup() {
	if [ -n "$loop_pid" ]; then kill "$loop_pid" 2>/dev/null || true; wait "$loop_pid" 2>/dev/null || true; fi
	rm -rf "$W"
}
trap cleanup EXIT

cp -r "$oracle_src" "$W/oracle"
chmod -R u+w "$W/oracle"
if ! (cd "$W/oracle" && npm ci --no-audit --no-fund --loglevel=error >"$W/npm.log" 2>&1 &&
	npm ci --prefix rc1 --no-audit --no-fund --loglevel=error >>"$W/npm.log" 2>&1); then
	if ! npm ping >/dev/null 2>&1; then
		echo "compat: SKIPPED: the npm registry cannot be reached (npm ping fails), so the real dsh cannot be installed"
		exit 0
	fi
	cat "$W/npm.log"
	echo "compat: npm ci failed with the registry reachable"
	exit 1
fi
node=$W/oracle/node_modules/.bin/node
[ -x "$node" ] || node=node
go build -o "$W/dshctl" ./cmd/dshctl
D() { "$W/dshctl" "$@" 2>>"$W/dshctl.err"; }
export XDG_STATE_HOME=$W/state

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# accepted NAME STORE: check.mjs accepts every session of STORE, and dsh
# resumes each and appends a closed turn to it (in a copy).
accepted() {
	local name=$1 store=$2 out=$W/check-$1
	if (cd "$W/oracle" && "$node" check.mjs "$store" >"$out.read.jsonl" 2>"$out.err"); then
		if grep -q '"ignoredGenerations":\[\]' "$out.read.jsonl" && ! grep -q '"sessions":0,' "$out.read.jsonl"; then
			pass "$name: dsh reads it"
		else
			fail "$name: dsh reads no session of it, or ignores some ($(tail -1 "$out.read.jsonl"))"
		fi
	else
		fail "$name: dsh refuses it: $(grep -o '"message":"[^"]*"' "$out.read.jsonl" | head -2 | tr '\n' ' ')"
	fi
	if (cd "$W/oracle" && "$node" check.mjs "$store" --append --out "$out.copy" >"$out.append.jsonl" 2>>"$out.err"); then
		pass "$name: dsh appends to it"
	else
		fail "$name: dsh cannot append to it: $(grep -o '"message":"[^"]*"' "$out.append.jsonl" | head -2 | tr '\n' ' ')"
	fi
}

turn() { # turn N: a closed turn, for --assign-seq
	printf '%s\n' "{\"type\":\"turn/start\",\"data\":{\"turn\":$1}}" \
		"{\"type\":\"user/message\",\"data\":{\"id\":\"u$1\",\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello $1\"}],\"source\":{\"kind\":\"user\"}},\"surfaceOp\":\"append\"}" \
		"{\"type\":\"turn/end\",\"data\":{\"turn\":$1,\"reason\":{\"kind\":\"completed\"}}}"
}
open_turn() { # open_turn N: a turn a crash left open after a tool call
	printf '%s\n' "{\"type\":\"turn/start\",\"data\":{\"turn\":$1}}" "{\"type\":\"step/start\",\"data\":{\"turn\":$1,\"step\":1}}" \
		"{\"type\":\"tool/call\",\"data\":{\"turn\":$1,\"step\":1,\"callId\":\"call-$1\",\"name\":\"bash\",\"arguments\":\"{}\"}}"
}

# 1. Sessions dshctl creates in empty stores, appends to and closes.
for enc in zstd none; do
	S=$W/new-$enc
	turn 1 | D --store "$S" append --create --compression "$enc" --cwd /work/proj --assign-seq fresh >/dev/null
	turn 1 | D --store "$S" append --create --cwd /work/proj --assign-seq fresh-2 >/dev/null
	turn 2 | D --store "$S" append --assign-seq fresh >/dev/null
	open_turn 3 | D --store "$S" append --assign-seq fresh >/dev/null
	D --store "$S" append --close-interrupted fresh </dev/null >/dev/null
	if ls "$S"/*/fresh/session.v*.jsonl* >/dev/null 2>&1; then fail "create-$enc: a new session in an empty store is not v0"; fi
	accepted "create-$enc" "$S"
done
S14=$W/s14.sqlite
turn 1 | D --store "sqlite:$S14" append --create --sqlite-schema 14 --cwd /work/proj --assign-seq fresh >/dev/null
turn 2 | D --store "sqlite:$S14" append --assign-seq fresh >/dev/null
open_turn 3 | D --store "sqlite:$S14" append --assign-seq fresh >/dev/null
D --store "sqlite:$S14" append --close-interrupted fresh </dev/null >/dev/null
if turn 1 | D --store "sqlite:$S14" append --create --format-version 4 --cwd /work/proj --assign-seq v4 >/dev/null 2>&1; then
	fail "sqlite-14: a v4 session was created in a schema-14 database"
fi
accepted "sqlite-14" "$S14"

# 2. dsh's damaged fixtures, repaired.
for c in "zstd-torn-final-frame-checksum:--repair" "none-corrupt-line-after-last-turn-end:--repair" "zstd-torn-final-frame-checksum:--repair --salvage"; do
	case=${c%%:*} flags=${c#*:} S=$W/repair-$passed
	cp -a "$fixtures/dsh-0.1.0/damaged/$case" "$S"
	chmod -R u+w "$S"
	# shellcheck disable=SC2086
	D --store "$S" verify $flags --force >/dev/null 2>&1 || true
	accepted "repair ${case} ($flags)" "$S"
done

# 3. Two-writer damage made on purpose with dsh's own writer, then
# renumbered: dshctl appends a turn while dsh (reading the log as it was
# before) appends its own from the same next seq.
for enc in zstd none; do
	S=$W/renumber-$enc
	turn 1 | D --store "$S" append --create --compression "$enc" --cwd /work/proj --assign-seq rn >/dev/null
	cp -a "$S" "$W/snap-$enc"
	turn 2 | D --store "$S" append --assign-seq rn >/dev/null
	(cd "$W/oracle" && "$node" check.mjs "$W/snap-$enc" --append --out "$W/dsh-$enc" >/dev/null 2>&1) || fail "renumber-$enc: dsh cannot append to the snapshot"
	log=$(ls "$S"/*/rn/session.jsonl*)
	snap=$(ls "$W/snap-$enc"/*/rn/session.jsonl*)
	dshlog=$(ls "$W/dsh-$enc"/*/rn/session.jsonl*)
	tail -c +$(($(wc -c <"$snap") + 1)) "$dshlog" >>"$log"
	if (cd "$W/oracle" && "$node" check.mjs "$S" >"$W/rn-$enc.check" 2>&1); then
		fail "renumber-$enc: dsh accepts the log two writers left (the damage was not made)"
		continue
	fi
	if printf '{"type":"session/title","data":{"title":"late"}}\n' | D --store "$S" append --force --assign-seq rn >/dev/null 2>&1; then
		fail "renumber-$enc: dshctl extends a log dsh refuses"
	else
		pass "renumber-$enc: dsh refuses the log two writers left, and dshctl refuses to extend it"
	fi
	D --store "$S" verify --repair --renumber --force rn >/dev/null 2>&1 || true
	if (cd "$W/oracle" && "$node" check.mjs "$S" --events >"$W/rn-$enc.events" 2>&1) &&
		grep -q 'hello 2' "$W/rn-$enc.events" && grep -q '\[dsh-oracle\]' "$W/rn-$enc.events"; then
		pass "renumber-$enc: dsh reads the renumbered log, with dshctl's turn and dsh's"
	else
		fail "renumber-$enc: after renumbering: $(grep -o '"message":"[^"]*"' "$W/rn-$enc.events" | head -1)"
	fi
	accepted "renumber-$enc renumbered" "$S"
done

# 4. Races of dsh's writer and dshctl on one session.
# tags FILE PREFIX: the distinct tags "[PREFIX-N]" of the log FILE's text.
tags() {
	"$node" -e '
const fs = require("fs"), zlib = require("zlib")
let b = fs.readFileSync(process.argv[1])
if (process.argv[1].endsWith(".zstd")) {
	// node decodes one frame at a time: split the frames by their structure
	const parts = []
	for (let o = 0; o + 6 <= b.length;) {
		const start = o, fhd = b[o + 4]
		const fcs = fhd >> 6, single = (fhd >> 5) & 1
		o += 5 + (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fcs]
		for (let last = 0; !last && o + 3 <= b.length;) {
			const h = b[o] | (b[o + 1] << 8) | (b[o + 2] << 16)
			last = h & 1
			o += 3 + (((h >> 1) & 3) === 1 ? 1 : h >>> 3)
		}
		if (fhd & 4) o += 4
		if (o > b.length) break // a torn final frame
		parts.push(zlib.zstdDecompressSync(b.subarray(start, o)))
	}
	b = Buffer.concat(parts)
}
const re = new RegExp("\\[" + process.argv[2] + "-[0-9]+\\]", "g")
console.log(new Set(b.toString("utf8").match(re) ?? []).size)' "$1" "$2"
}
declare -A outcome
for i in $(seq 1 "$races"); do
	enc=zstd
	[ $((i % 2)) -eq 0 ] && enc=none
	S=$W/race-$i id=race-$i
	turn 1 | D --store "$S" append --create --compression "$enc" --cwd /work/proj --assign-seq "$id" >/dev/null
	(cd "$W/oracle" && exec "$node" writer-loop.mjs "$S" "$id" "$race_seconds" direct >"$W/loop-$i.out" 2>&1) &
	loop_pid=$!
	ok=0 inuse=0 overlap=0 other=0 bad=0 n=0
	while kill -0 "$loop_pid" 2>/dev/null; do
		n=$((n + 1))
		if printf '{"type":"session/title","data":{"title":"[dshctl-%d]"}}\n' "$n" | "$W/dshctl" --store "$S" append --assign-seq "$id" >/dev/null 2>"$W/err"; then
			ok=$((ok + 1))
			echo "$n" >>"$W/ok-$i"
		else
			rc=$?
			# Exit 1 is a refusal (nothing written): in use, a log whose
			# seqs repeat, or another (a frame dsh is writing that moment).
			# Any other exit status fails.
			if [ $rc -ne 1 ]; then
				bad=$((bad + 1))
				echo "  exit $rc: $(head -1 "$W/err")"
			elif grep -q 'overlaps' "$W/err"; then overlap=$((overlap + 1)); elif grep -q 'in use' "$W/err"; then inuse=$((inuse + 1)); else
				other=$((other + 1))
				echo "  refused: $(head -1 "$W/err")"
			fi
		fi
	done
	wait "$loop_pid" || true
	loop_pid=
	log=$(ls "$S"/*/"$id"/session.jsonl*)
	dsh_turns=$(tags "$log" dsh)
	line="race $i ($enc, ${race_seconds}s): dsh wrote $dsh_turns turns; dshctl appended $ok, refused $inuse as in use, $overlap as damaged, $other otherwise"
	if [ "$bad" -ne 0 ]; then fail "$line; $bad appends exited neither 0 nor 1"; continue; fi
	if (cd "$W/oracle" && "$node" check.mjs "$S" >"$W/race-$i.check" 2>&1); then
		outcome[accepted]=$((${outcome[accepted]:-0} + 1))
		pass "$line: dsh accepts the log"
		continue
	fi
	outcome[refused]=$((${outcome[refused]:-0} + 1))
	# dsh refuses the log: dshctl must refuse to extend it, and must not
	# have gone on appending after the damage.
	if printf '{"type":"session/title","data":{"title":"late"}}\n' | D --store "$S" append --assign-seq --force "$id" >/dev/null 2>&1; then
		fail "$line: dsh refuses the log, and dshctl still appends to it"
		continue
	fi
	pass "$line: dsh refuses the log (two writers), and dshctl refuses to extend it"
	before_dsh=$dsh_turns before_dshctl=$(tags "$log" dshctl)
	D --store "$S" verify --repair --renumber --force "$id" >/dev/null 2>&1 || true
	log=$(ls "$S"/*/"$id"/session.jsonl*)
	if (cd "$W/oracle" && "$node" check.mjs "$S" --events >"$W/race-$i.events" 2>&1); then
		got_dsh=$(grep -o '\[dsh-[0-9]*\]' "$W/race-$i.events" | sort -u | wc -l)
		got_dshctl=$(grep -o '\[dshctl-[0-9]*\]' "$W/race-$i.events" | sort -u | wc -l)
		if [ "$got_dsh" -eq "$before_dsh" ] && [ "$got_dshctl" -eq "$before_dshctl" ] && [ "$before_dshctl" -ge "$ok" ]; then
			pass "race $i: renumbered, dsh reads every event: $got_dsh dsh turns, $got_dshctl dshctl events"
		else
			fail "race $i: renumbered, but dsh reads $got_dsh of $before_dsh dsh turns and $got_dshctl of $before_dshctl dshctl events ($ok acknowledged)"
		fi
		accepted "race $i renumbered" "$S"
	else
		fail "race $i: dsh refuses the renumbered log: $(grep -o '"message":"[^"]*"' "$W/race-$i.events" | head -1)"
	fi
done
echo "compat: races: ${outcome[accepted]:-0} ended with a log dsh accepts, ${outcome[refused]:-0} with dshctl refusing the log dsh refuses (then renumbered)"
echo "compat: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
