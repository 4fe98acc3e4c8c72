package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/verify"
)

// FuzzAppendVerify: whatever batch Append takes, verify --mode strict
// accepts the log it leaves (#24 item 3): append holds a batch to verify's
// own rules. Each input is appended, as given and with --assign-seq, to a
// session of one closed turn and to one left in an open turn.
func FuzzAppendVerify(f *testing.F) {
	for _, seed := range []string{
		turn,
		`{"type":"session/title","data":{"title":"t"}}`,
		`{"type":"session/title","type":"turn/end","data":{"title":"x"}}`,
		`{"type":"turn/end","data":{}}`,
		"{\"type\":\"session/title\",\"data\":{\"title\":\"\xff\"}}",
		`{"type":"turn/start","data":{"turn":2}}` + "\n" + `{"type":"tool/call","data":{"turn":2,"step":1,"callId":"c","name":"x","arguments":"{}"}}`,
		`{"type":"turn/start","data":{"turn":2}}` + "\n" + `{"type":"step/start","data":{"turn":2,"step":1}}` + "\n" + `{"type":"turn/end","data":{"turn":2,"reason":{"kind":"completed"}}}`,
		`{"type":"step/end","data":{"turn":1,"step":1}}`,
		`{"type":"session/title","seq":2,"time":1,"data":{"title":"t","a":{"b":1,"b":2}}}`,
	} {
		f.Add(seed, true)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, input string, assign bool) {
		root := filepath.Join(t.TempDir(), "store")
		svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{Create: true, BackupDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		open := `{"type":"turn/start","data":{"turn":1}}` + "\n"
		for id, base := range map[string]string{"closed": turn, "open": open} {
			if _, err := Append(ctx, svc, id, Options{Create: &seam.Header{Version: Latest, CreatedAt: 1, Cwd: "/w"},
				Input: strings.NewReader(base), AssignSeq: true, Now: 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := Append(ctx, svc, id, Options{Input: strings.NewReader(input), AssignSeq: assign, Now: 1}); err != nil {
				continue
			}
			_, err := verify.Run(ctx, svc, []string{id}, verify.Options{Mode: verify.ModeStrict, Report: func(r *verify.SessionReport) error {
				for _, f := range r.Findings {
					if f.Severity == verify.SeverityError {
						return errors.New(f.Code + ": " + f.Message)
					}
				}
				return r.Err
			}})
			if err != nil {
				t.Fatalf("append took %q (session %s), and verify --mode strict says: %v", input, id, err)
			}
		}
	})
}
