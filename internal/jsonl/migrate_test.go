package jsonl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestWriteOpenRereadsFolderUnderLock checks that a write open decides the
// live generation after it takes the session lock: a writer that migrated
// the log to a new generation between the open's first look at the folder
// and its lock must not make the append land in the old, dead generation
// (durability review finding 4).
func TestWriteOpenRereadsFolderUnderLock(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	body := `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n" +
		`{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	old := writeLog(t, root, "--p--", "s", "session.jsonl", headerFor("s")+body)
	oldBytes, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	s, tfs := openStore(t, root, Options{})
	migrated := filepath.Join(filepath.Dir(old), "session.v2.jsonl")
	v2 := `{"type":"session","version":2,"id":"s","createdAt":1,"cwd":"/p","isSeeded":false,"delegationDepth":0}` + "\n" + body
	var once sync.Once
	tfs.set(&tfs.beforeOpen, func(path string) error {
		if filepath.Base(path) == lockName {
			// The migration, done by a writer whose lock the open's
			// flock follows.
			once.Do(func() {
				if err := os.WriteFile(migrated, []byte(v2), 0o600); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	})
	h, err := s.Open(ctx, "s", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Append(ctx, []seam.Event{{Type: "session/title", Seq: 2, Time: 3, Data: []byte(`{"title":"after the migration"}`)}})
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(migrated)
	if err != nil || !strings.Contains(string(got), "after the migration") {
		t.Errorf("the live generation session.v2.jsonl does not hold the append (%v):\n%s", err, got)
	}
	if now, _ := os.ReadFile(old); string(now) != string(oldBytes) {
		t.Errorf("the append went to the dead generation session.jsonl:\n%s", now)
	}
	events, err := scanAll(t, s, "s")
	if err != nil || len(events) != 3 {
		t.Errorf("a read of the live log: %d events, %v; want 3", len(events), err)
	}
}
