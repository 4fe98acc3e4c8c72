package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// feeder drives a LogCheck the way a backend does, one line at a time.
type feeder struct {
	c    *LogCheck
	v    int
	line int
}

func newFeeder(t *testing.T, v int) *feeder {
	c := NewLogCheck()
	seeded := false
	h := seam.Header{Version: v, ID: "s"}
	if v >= 2 {
		h.IsSeeded = &seeded
	}
	c.Header(h, true)
	return &feeder{c: c, v: v, line: 1}
}

// pos is the position of the next line: byte 100 per line, frame -1.
func (f *feeder) pos() seam.Pos {
	return seam.Pos{Path: "log", Offset: int64(f.line) * 100, Frame: -1, Line: f.line, Seq: -1}
}

// feed gives the lines to the check as records, or bad records.
func (f *feeder) feed(lines ...string) *feeder {
	for _, l := range lines {
		f.line++
		r, err := seam.DecodeRecord([]byte(l), f.v)
		if err != nil {
			var t struct{ Type string }
			turnEnd := json.Unmarshal([]byte(l), &t) == nil && t.Type == "turn/end"
			f.c.BadRecord(f.pos(), err, turnEnd)
			continue
		}
		f.c.Record(&r, f.pos())
	}
	return f
}

// line builds the line of an event of type typ at seq with data.
func line(typ string, seq int, data string) string {
	surface := ""
	if isSurface(typ) {
		surface = `,"surfaceOp":"append"`
	}
	return fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":%s%s}`, typ, seq, 1000+seq, data, surface)
}

// isSurface reports the v0 surface types.
func isSurface(typ string) bool { return seam.IsSurfaceType(0, typ) }

// fullTurn returns the lines of a complete turn n from seq on: turn/start,
// step/start, an assistant/message requesting call c, tool/call, tool/result,
// step/end, turn/end.
func fullTurn(n, seq int, c string) []string {
	return []string{
		line("turn/start", seq, fmt.Sprintf(`{"turn":%d}`, n)),
		line("step/start", seq+1, fmt.Sprintf(`{"turn":%d,"step":1}`, n)),
		line("assistant/message", seq+2, fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":%q,"name":"x","arguments":"{}"}]}}`, n, c)),
		line("tool/call", seq+3, fmt.Sprintf(`{"turn":%d,"step":1,"callId":%q,"name":"x","arguments":"{}"}`, n, c)),
		line("tool/result", seq+4, fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"user","source":{"kind":"tool","callId":%q},"content":[]}}`, n, c)),
		line("step/end", seq+5, fmt.Sprintf(`{"turn":%d,"step":1}`, n)),
		line("turn/end", seq+6, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, n)),
	}
}

func (f *feeder) result() CheckResult { return f.c.Result() }

var seqField = regexp.MustCompile(`"seq":[0-9]+`)

// renumberLines gives the lines seqs 0, 1, 2, ...
func renumberLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = seqField.ReplaceAllString(l, fmt.Sprintf(`"seq":%d`, i))
	}
	return out
}

func findingCodes(res CheckResult) []string {
	var out []string
	for _, f := range res.Findings() {
		out = append(out, f.Code)
	}
	return out
}

func TestCheckCleanLog(t *testing.T) {
	res := newFeeder(t, 0).feed(slices.Concat(fullTurn(1, 0, "a"), fullTurn(2, 7, "b"))...).result()
	if len(res.Findings()) != 0 || res.Events != 14 || res.NextSeq != 14 || res.OpenTurn != nil {
		t.Fatalf("%+v", res)
	}
}

func TestCheckSeqGap(t *testing.T) {
	lines := fullTurn(1, 0, "a")
	gap := slices.Concat(lines[:3], []string{line("tool/call", 5, `{"turn":1,"step":1,"callId":"a","name":"x","arguments":"{}"}`)})
	// A turn/end follows: damaged committed data.
	res := newFeeder(t, 0).feed(slices.Concat(gap, fullTurn(2, 6, "b"))...).result()
	fs := res.Findings()
	if len(fs) != 1 || fs[0].Code != "seq-gap" || fs[0].Class != seam.ClassDamage || fs[0].Pos.Seq != 5 || fs[0].Pos.Line != 5 ||
		!strings.HasPrefix(fs[0].Message, "seq gap: 2 → 5 (seqs 3–4 are missing); a turn/end follows (line 12)") {
		t.Fatalf("%+v", fs)
	}
	// None follows: the uncommitted tail, which ends the committed log.
	res = newFeeder(t, 0).feed(gap...).result()
	fs = res.Findings()
	if len(fs) != 2 || fs[0].Code != "uncommitted-tail" || fs[0].Class != seam.ClassTail || fs[1].Code != "open-turn" {
		t.Fatalf("%+v", fs)
	}
	if res.Events != 3 || res.NextSeq != 3 || res.Uncommitted == nil || res.Uncommitted.Offset != 500 {
		t.Fatalf("events %d next %d uncommitted %+v", res.Events, res.NextSeq, res.Uncommitted)
	}
	if ot := res.OpenTurn; ot == nil || ot.Turn != 1 || !ot.StepOpen || len(ot.PendingCalls) != 1 {
		t.Fatalf("open turn %+v", ot)
	}
}

func TestCheckCommitRule(t *testing.T) {
	// A bad record before a turn/end is committed damage, even when the
	// turn/end is itself a bad record.
	lines := fullTurn(1, 0, "a")
	res := newFeeder(t, 0).feed(lines[0], "{oops", lines[2], `{"type":"turn/end","seq":"x"}`).result()
	codes := findingCodes(res)
	// The bad turn/end commits the record before it, and starts an
	// uncommitted tail itself.
	if !slices.Equal(codes, []string{"record-json", "uncommitted-tail"}) {
		t.Fatalf("codes %v", codes)
	}
	if fs := res.Findings(); !strings.Contains(fs[0].Message, "a turn/end follows (line 5)") || fs[0].Class != seam.ClassDamage {
		t.Fatalf("%+v", fs)
	}
	// After the last turn/end, everything from the first bad record on is
	// the uncommitted tail: the bracketing problems in it are not reported.
	res = newFeeder(t, 0).feed(slices.Concat(fullTurn(1, 0, "a"), []string{"garbage", line("turn/start", 7, `{"turn":2}`), line("turn/start", 8, `{"turn":3}`)})...).result()
	if codes := findingCodes(res); !slices.Equal(codes, []string{"uncommitted-tail"}) || res.Events != 7 {
		t.Fatalf("codes %v, %d events", codes, res.Events)
	}
}

func TestCheckBracketing(t *testing.T) {
	full := fullTurn(1, 0, "a")
	for _, tc := range []struct {
		name  string
		lines []string
		code  string
		msg   string
	}{
		{"turn/start in a turn", []string{full[0], line("turn/start", 1, `{"turn":2}`)}, "turn-bracketing", "turn/start of turn 2 while turn 1 (from seq 0) is open"},
		{"turn/end alone", []string{line("turn/end", 0, `{"turn":1}`)}, "turn-bracketing", "turn/end of turn 1 without a turn/start"},
		{"turn/end of another turn", []string{full[0], line("turn/end", 1, `{"turn":2}`)}, "turn-bracketing", "turn/end of turn 2 closes turn 1"},
		{"turn/end in a step", []string{full[0], full[1], line("turn/end", 2, `{"turn":1}`)}, "step-bracketing", "turn/end while step 1 is open"},
		{"step/start outside a turn", []string{line("step/start", 0, `{"turn":1,"step":1}`)}, "step-bracketing", "step/start outside any turn"},
		{"step/start in a step", []string{full[0], full[1], line("step/start", 2, `{"turn":1,"step":2}`)}, "step-bracketing", "step/start of step 2 while step 1 is open"},
		{"step/end alone", []string{full[0], line("step/end", 1, `{"turn":1,"step":1}`)}, "step-bracketing", "step/end of step 1 without a step/start"},
		{"step/end of another step", []string{full[0], full[1], line("step/end", 2, `{"turn":1,"step":3}`)}, "step-bracketing", "step/end of step 3 closes step 1"},
		{"message outside a turn", []string{full[2]}, "turn-bracketing", "assistant/message outside any turn"},
		{"message of another turn", []string{line("turn/start", 0, `{"turn":5}`), line("step/start", 1, `{"turn":5,"step":1}`), strings.Replace(full[2], `"seq":2`, `"seq":2`, 1)}, "turn-bracketing", "assistant/message of turn 1 inside turn 5"},
		{"result of no call", []string{full[0], full[1], full[4]}, "tool-pairing", `tool/result for call "a", which no assistant/message or tool/call of turn 1 made`},
		{"second result", slices.Concat(full[:5], []string{strings.Replace(full[4], `"seq":4`, `"seq":5`, 1)}), "tool-pairing", `second tool/result for call "a"`},
		{"second call", slices.Concat(full[:4], []string{strings.Replace(full[3], `"seq":3`, `"seq":4`, 1)}), "tool-pairing", `second tool/call for call "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := newFeeder(t, 0).feed(renumberLines(tc.lines)...).result()
			var got *seam.Finding
			for _, f := range res.Findings() {
				if f.Code == tc.code {
					got = &f
				}
			}
			if got == nil || got.Class != seam.ClassIrregular || !strings.HasPrefix(got.Message, tc.msg) {
				t.Fatalf("findings %+v, want %s %q", res.Findings(), tc.code, tc.msg)
			}
		})
	}
	// Damage suspends the checks until the next turn/start.
	lines := fullTurn(1, 0, "a")
	f := newFeeder(t, 0).feed(lines[:2]...)
	f.c.Finding(seam.Finding{Class: seam.ClassDamage, Code: "frame-checksum", Pos: f.pos()})
	res := f.feed(slices.Concat(lines[5:], fullTurn(2, 7, "b"))...).result()
	if codes := findingCodes(res); !slices.Equal(codes, []string{"frame-checksum"}) {
		t.Fatalf("after damage: %v", codes)
	}
}

func TestCheckUnits(t *testing.T) {
	lines := fullTurn(1, 0, "a")
	// A unit that fails withdraws its records; the next record resyncs.
	f := newFeeder(t, 0).feed(lines[:2]...)
	f.c.BeginUnit(f.pos())
	f.feed(lines[2], "{bad", lines[3])
	f.c.EndUnit(seam.UnitDamaged)
	f.c.Finding(seam.Finding{Class: seam.ClassDamage, Code: "frame-checksum", Pos: f.pos()})
	res := f.feed(lines[5:]...).result()
	if codes := findingCodes(res); !slices.Equal(codes, []string{"frame-checksum"}) || res.Events != 4 {
		t.Fatalf("codes %v, %d events", codes, res.Events)
	}
	// A complete unit keeps them.
	f = newFeeder(t, 0).feed(lines[:2]...)
	f.c.BeginUnit(f.pos())
	f.feed(lines[2:5]...)
	f.c.EndUnit(seam.UnitComplete)
	if res := f.feed(lines[5:]...).result(); len(res.Findings()) != 0 || res.Events != 7 {
		t.Fatalf("%+v", res)
	}
}

func TestCheckTornSalvage(t *testing.T) {
	lines := fullTurn(1, 0, "a")
	f := newFeeder(t, 0).feed(lines[:3]...)
	p := f.pos()
	p.Frame = 4
	f.c.BeginUnit(p)
	f.feed(lines[3], lines[4], "{cut", lines[5])
	f.c.EndUnit(seam.UnitTorn)
	f.c.TornTail(p, 77)
	res := f.result()
	tt := res.Torn
	if tt == nil || tt.Salvage != 2 || tt.SalvageRecords != 2 || tt.SalvageFrom != 3 || tt.Size != 77 || res.Events != 3 {
		t.Fatalf("torn %+v, %d events", tt, res.Events)
	}
	fs := res.Findings()
	if fs[0].Code != "torn-tail" || !strings.Contains(fs[0].Message, "it holds 2 complete records (seq 3–4)") {
		t.Fatalf("%+v", fs)
	}
	// After an uncommitted tail, a torn frame holds nothing to salvage.
	f = newFeeder(t, 0).feed(lines[0], "{bad")
	f.c.BeginUnit(p)
	f.feed(lines[1])
	f.c.EndUnit(seam.UnitTorn)
	f.c.TornTail(p, 10)
	if res := f.result(); res.Torn.Salvage != 0 || res.Uncommitted == nil {
		t.Fatalf("%+v", res)
	}
}

// TestCheckSalvageStopsAtARule: a salvage re-appends the records of a
// torn frame only up to the first that breaks a rule append holds a batch
// to (#24 item 3: a second turn/end for a turn that had ended).
func TestCheckSalvageStopsAtARule(t *testing.T) {
	lines := fullTurn(1, 0, "a")
	f := newFeeder(t, 0).feed(lines...)
	p := f.pos()
	p.Frame = 3
	f.c.BeginUnit(p)
	f.feed(line("session/title", 7, `{"title":"t"}`), line("turn/end", 8, `{"turn":1,"reason":{"kind":"completed"}}`),
		line("session/title", 9, `{"title":"u"}`))
	f.c.EndUnit(seam.UnitTorn)
	f.c.TornTail(p, 50)
	if tt := f.result().Torn; tt == nil || tt.Salvage != 1 || tt.SalvageFrom != 7 {
		t.Fatalf("torn %+v: want the title at seq 7 only", tt)
	}
}

func TestCheckSeedMarker(t *testing.T) {
	mk := func(seeded bool, lines ...string) CheckResult {
		c := NewLogCheck()
		c.Header(seam.Header{Version: 2, ID: "s", IsSeeded: &seeded}, true)
		f := &feeder{c: c, v: 2, line: 1}
		return f.feed(lines...).result()
	}
	marker := line("session/end-seed", 7, `{"inherited":true}`)
	if codes := findingCodes(mk(true, fullTurn(1, 0, "a")...)); !slices.Equal(codes, []string{"seed-marker"}) {
		t.Errorf("seeded without a marker: %v", codes)
	}
	if codes := findingCodes(mk(true, append(fullTurn(1, 0, "a"), marker)...)); len(codes) != 0 {
		t.Errorf("seeded with a marker: %v", codes)
	}
	if codes := findingCodes(mk(false, append(fullTurn(1, 0, "a"), marker)...)); !slices.Equal(codes, []string{"seed-marker"}) {
		t.Errorf("unseeded with a marker: %v", codes)
	}
}

func TestCheckUnknownTypes(t *testing.T) {
	res := newFeeder(t, 0).feed(line("plug/a", 0, `{}`), line("plug/a", 1, `{}`), `{"type":"plug/b","seq":2,"time":1,"data":{},"ignorable":true}`, line("plug/a", 3, `{}`)).result()
	fs := res.Findings()
	if len(fs) != 1 || fs[0].Code != "unknown-type" || fs[0].Class != seam.ClassDamage || !strings.HasSuffix(fs[0].Message, "(3 events, the first at seq 0)") {
		t.Fatalf("%+v", fs)
	}
}

func TestJudgeModes(t *testing.T) {
	lines := fullTurn(1, 0, "a")
	// An irregularity, damage, then a torn tail.
	f := newFeeder(t, 0).feed(line("step/end", 0, `{"turn":0,"step":1}`))
	f.feed(slices.Concat([]string{line("turn/start", 1, `{"turn":1}`), "{bad"}, fullTurn(2, 3, "b"))...)
	f.c.TornTail(f.pos(), 5)
	res := f.result()
	sum := seam.LogSummary{Size: 5000}
	sev := func(r *SessionReport) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.Code+":"+f.Severity.String())
		}
		return out
	}
	for _, tc := range []struct {
		mode Mode
		want []string
	}{
		{ModeTolerateTail, []string{"step-bracketing:warning", "record-json:error", "torn-tail:warning"}},
		{ModeStrict, []string{"step-bracketing:error", "record-json:error", "torn-tail:error"}},
		{ModePointInTime, []string{"step-bracketing:warning", "record-json:warning"}},
	} {
		r := judge("s", &res, sum, tc.mode, false)
		if got := sev(r); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.mode, got, tc.want)
		}
		if tc.mode == ModePointInTime {
			if p := r.Prefix; p == nil || p.Events != 2 || p.Bytes != 400 || p.After != 4600 || p.Hidden != 1 || r.Status != StatusWarnings {
				t.Errorf("prefix %+v, status %s", p, r.Status)
			}
		}
	}
	_ = lines
}

// fakeService is a store without a LogVerifier: verify falls back to the
// events its read handles serve, as for any backend.
type fakeService struct {
	handles map[string]*fakeHandle
	broken  map[string]error // entries List reports with an error
}

func (s *fakeService) Create(context.Context, seam.Header, seam.CreateOptions) (seam.Handle, error) {
	return nil, seam.ErrReadOnly
}

func (s *fakeService) Open(_ context.Context, id string, _ seam.Access) (seam.Handle, error) {
	if h, ok := s.handles[id]; ok {
		return h, nil
	}
	return nil, seam.NotFound("open", id)
}

func (s *fakeService) Stat(_ context.Context, id string) (seam.Snapshot, error) {
	h, ok := s.handles[id]
	if !ok {
		return seam.Snapshot{}, seam.NotFound("stat", id)
	}
	return seam.Snapshot{Header: h.Head, EventCount: int64(len(h.Events)), Location: seam.Location{Backend: "fake", Path: "fake:" + id}}, nil
}

func (s *fakeService) List(ctx context.Context) ([]seam.Entry, error) {
	var out []seam.Entry
	for _, id := range slices.Sorted(maps.Keys(s.handles)) {
		snap, _ := s.Stat(ctx, id)
		out = append(out, seam.Entry{Snapshot: snap})
	}
	for _, id := range slices.Sorted(maps.Keys(s.broken)) {
		out = append(out, seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: id}}, Err: s.broken[id]})
	}
	return out, nil
}

func (s *fakeService) Flush(context.Context) error { return nil }
func (s *fakeService) Close() error                { return nil }

func TestVerifyWithoutLogVerifier(t *testing.T) {
	ctx := context.Background()
	clean := newFake(1, 4, renumber([]seam.Event{
		ev(0, 1, "turn/start", `{"turn":1}`), ev(0, 2, "step/start", `{"turn":1,"step":1}`),
		ev(0, 3, "step/end", `{"turn":1,"step":1}`), ev(0, 4, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`)})...)
	open := newFake(1, 4, renumber([]seam.Event{ev(0, 1, "turn/start", `{"turn":1}`), ev(0, 2, "step/end", `{"turn":1,"step":1}`)})...)
	corrupt := newFake(1, 4, clean.Events...)
	corrupt.FailAt = 2
	clean.Head.ID, open.Head.ID, corrupt.Head.ID = "a-clean", "b-open", "c-corrupt"
	svc := &fakeService{handles: map[string]*fakeHandle{"a-clean": clean, "b-open": open, "c-corrupt": corrupt},
		broken: map[string]error{"d-broken": &seam.Error{Kind: seam.ErrCorrupt, Pos: seam.NoPos, Err: errors.New("bad header")}}}
	var got []string
	sum, err := Run(ctx, svc, nil, Options{Jobs: 2, Report: func(r *SessionReport) error {
		got = append(got, fmt.Sprintf("%s %s %v", r.ID, r.Status, codesOf(r)))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"d-broken errors [unreadable]",
		"a-clean clean []",
		"b-open warnings [step-bracketing open-turn]",
		"c-corrupt errors [unreadable]",
	}
	if !slices.Equal(got, want) || sum != (Summary{Sessions: 4, Clean: 1, Warnings: 1, Errors: 2}) {
		t.Fatalf("reports %q, summary %+v", got, sum)
	}
}

func codesOf(r *SessionReport) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}
