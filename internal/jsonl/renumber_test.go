package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// raceLog writes, as lines (plain) or one frame per batch (zstd), the log
// two writers leave: turn 1 (seq 0–3, a tool call and its result citing
// it), a batch of one writer (seq 4–5), the other writer's stale batch
// from the same next seq (seq 4–7: a turn whose result cites its call,
// whose assistant message cites a chunk, and an earlier seq), then that
// writer going on (seq 8). It returns the root.
func raceLog(tb testing.TB, enc Encoding, batches ...string) string {
	w := newLogWriter(tb, enc, "race")
	defer w.close()
	for _, b := range batches {
		w.put([]byte(b))
	}
	return w.root
}

var raceBatches = []string{
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}
{"type":"tool/call","seq":1,"time":2,"data":{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}}
{"type":"tool/result","seq":2,"time":3,"data":{"turn":1,"step":1,"message":{"role":"user","source":{"kind":"tool","callId":"c1"},"content":[]}},"surfaceOp":"append","sourceEventSeqs":[1]}
{"type":"turn/end","seq":3,"time":4,"data":{"turn":1,"reason":{"kind":"completed"}}}
`,
	`{"type":"session/title","seq":4,"time":5,"data":{"title":"mine"}}
{"type":"session/title","seq":5,"time":6,"data":{"title":"mine too"},"sourceEventSeqs":[4]}
`,
	`{"type":"turn/start","seq":4,"time":7,"data":{"turn":2}}
{"type":"tool/call","seq":5,"time":8,"data":{"turn":2,"step":1,"callId":"c2","name":"bash","arguments":"{}"}}
{"type":"tool/result","seq":6,"time":9,"data":{"turn":2,"step":1,"message":{"role":"user","source":{"kind":"tool","callId":"c2"},"content":[]}},"surfaceOp":"append","sourceEventSeqs":[5,1]}
{"type":"turn/end","seq":7,"time":10,"data":{"turn":2,"reason":{"kind":"completed"}}}
`,
	`{"type":"session/title","seq":8,"time":11,"data":{"title":"later"},"sourceEventSeqs":[6]}
`,
}

// TestRenumber checks the renumbering of a log two writers damaged: every
// event kept in stored order, seqs 0 to 10, the citations of the stale
// batch following the events they cited (its own call, the first turn's),
// the one of the batch before it its own event, the whole log saved first,
// dsh's reader (a full read here) then serving all of it; a second run
// changes nothing, and a dry run nothing either.
func TestRenumber(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		t.Run(string(enc), func(t *testing.T) {
			root := raceLog(t, enc, raceBatches...)
			s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
			path := filepath.Join(root, "--big--", "race", LogName(0, enc))
			before, _ := os.ReadFile(path)
			dry, err := s.Renumber(ctx, "race", seam.RenumberOptions{DryRun: true})
			if err != nil || dry.Overlaps != 1 || dry.Renumbered != 5 || dry.FirstSeq != 6 || dry.Events != 11 || dry.Backup != "" {
				t.Fatalf("dry run: %+v, %v", dry, err)
			}
			if now, _ := os.ReadFile(path); string(now) != string(before) {
				t.Fatal("a dry run changed the log")
			}
			res, err := s.Renumber(ctx, "race", seam.RenumberOptions{})
			if err != nil || res.Overlaps != 1 || res.Renumbered != 5 || res.Cites != 2 || res.Backup == "" {
				t.Fatalf("Renumber: %+v, %v", res, err)
			}
			if saved, _ := os.ReadFile(res.Backup); string(saved) != string(before) {
				t.Fatal("the backup is not the log as it was")
			}
			got, err := scanAll(t, s, "race")
			if err != nil || len(got) != 11 {
				t.Fatalf("read after renumbering: %d events, %v", len(got), err)
			}
			wantTypes := "turn/start tool/call tool/result turn/end session/title session/title turn/start tool/call tool/result turn/end session/title"
			var types []string
			for i, e := range got {
				types = append(types, e.Type)
				if e.Seq != int64(i) {
					t.Fatalf("event %d has seq %d", i, e.Seq)
				}
			}
			if strings.Join(types, " ") != wantTypes {
				t.Fatalf("types %q, want %q", types, wantTypes)
			}
			for seq, want := range map[int][]int64{2: {1}, 5: {4}, 8: {7, 1}, 10: {8}} {
				if g := got[seq].SourceEventSeqs; len(g) != len(want) || g[0] != want[0] || len(g) > 1 && g[1] != want[1] {
					t.Errorf("seq %d cites %v, want %v", seq, g, want)
				}
			}
			if again, err := s.Renumber(ctx, "race", seam.RenumberOptions{}); err != nil || again.Overlaps != 0 || again.Backup != "" {
				t.Fatalf("second Renumber: %+v, %v", again, err)
			}
			w, err := s.Open(ctx, "race", seam.Write)
			if err != nil {
				t.Fatalf("write open after renumbering: %v", err)
			}
			w.Close()
		})
	}
}

// TestRenumberRefusesOtherDamage checks that a log whose damage is not
// repeated seqs (a gap, an invalid record, a torn tail) is refused with
// ErrCorrupt and left as it is.
func TestRenumberRefusesOtherDamage(t *testing.T) {
	ctx := context.Background()
	for name, tail := range map[string]string{
		"gap":     `{"type":"session/title","seq":6,"time":5,"data":{"title":"t"}}` + "\n",
		"invalid": `{"type":"session/title","seq":4,"time":5}` + "\n",
		"torn":    `{"type":"session/title","seq":4,`,
	} {
		t.Run(name, func(t *testing.T) {
			root := raceLog(t, None, raceBatches[0], tail)
			s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
			path := filepath.Join(root, "--big--", "race", LogName(0, None))
			before, _ := os.ReadFile(path)
			_, err := s.Renumber(ctx, "race", seam.RenumberOptions{})
			if !errors.Is(err, seam.ErrCorrupt) {
				t.Fatalf("Renumber of a log with a %s: %v, want ErrCorrupt", name, err)
			}
			if now, _ := os.ReadFile(path); string(now) != string(before) {
				t.Fatal("the refused renumbering changed the log")
			}
		})
	}
}
