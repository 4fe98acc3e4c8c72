package jsonl

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// TestV2V4Fixtures reads the format v2 to v4 logs of public dsh
// repositories: the highest generation is live, a seeded subagent's
// inherited count comes from its marker, and a plugin's v4 log is refused
// unless unknown types are allowed.
func TestV2V4Fixtures(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(fixturesDir(t), "dsh-v2-v4")
	s, _ := openStore(t, root, Options{})
	if s.Encoding() != None {
		t.Fatalf("encoding %s", s.Encoding())
	}
	for _, c := range []struct {
		id        string
		inherited int64
		events    int64
	}{
		{"preview-showcase", 0, -1},
		{"preview-follow-up-builder", 0, -1},
		{"preview-architecture-review", -1, -1},
	} {
		t.Run(c.id, func(t *testing.T) {
			snap, err := s.Stat(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Location.Generation != 3 || len(snap.Location.OlderGenerations) != 1 || snap.Location.OlderGenerations[0] != 2 ||
				!strings.HasSuffix(snap.Location.Path, "session.v3.jsonl") || snap.Header.Version != 3 {
				t.Errorf("location %+v, version %d", snap.Location, snap.Header.Version)
			}
			h, err := s.Open(ctx, c.id, seam.Read)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			events, err := h.Read(ctx, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(events)) != snap.EventCount {
				t.Errorf("read %d events, Stat says %d", len(events), snap.EventCount)
			}
			var marker int64
			for _, e := range events {
				if e.Type == "session/end-seed" && strings.Contains(string(e.Data), `"inherited":true`) {
					marker = e.Seq
				}
			}
			if c.inherited < 0 {
				if marker == 0 || h.InheritedEventCount() != marker {
					t.Errorf("inherited %d, marker at %d", h.InheritedEventCount(), marker)
				}
			} else if h.InheritedEventCount() != c.inherited {
				t.Errorf("inherited %d, want %d", h.InheritedEventCount(), c.inherited)
			}
		})
	}
	t.Run("legacy-sdk-history", func(t *testing.T) {
		_, err := s.Open(ctx, "legacy-sdk-history", seam.Read)
		wantKind(t, err, seam.ErrUnsupportedFormat)
		if !strings.HasSuffix(err.Error(), filepath.Join("legacy-sdk-history", "session.v4.jsonl")+")") {
			t.Errorf("error %q does not end with the raw log path", err)
		}
		snap, err := s.Stat(ctx, "legacy-sdk-history")
		if err != nil {
			t.Fatal(err)
		}
		lenient, _ := openStore(t, root, Options{AllowUnknownTypes: true})
		events, err := scanAll(t, lenient, "legacy-sdk-history")
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(events)) != snap.EventCount || len(events) == 0 {
			t.Fatalf("lenient read %d events, Stat says %d", len(events), snap.EventCount)
		}
		for _, e := range events {
			if !strings.HasPrefix(e.Type, "roleplay/") {
				t.Errorf("event %d has type %s", e.Seq, e.Type)
			}
		}
		writable, _ := openStore(t, fixture.Copy(t, root), Options{AllowUnknownTypes: true})
		_, err = writable.Open(ctx, "legacy-sdk-history", seam.Write)
		wantKind(t, err, seam.ErrUnsupportedFormat)
	})
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("List returned %d entries", len(entries))
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Errorf("List: %v", e.Err)
		}
	}
}

// TestV2V4ZstdCopies re-encodes the v2 to v4 fixtures as zstd logs (a
// header frame, then frames of a few lines and one large frame) and checks
// that both encodings read to the same events.
func TestV2V4ZstdCopies(t *testing.T) {
	ctx := context.Background()
	plainRoot := filepath.Join(fixturesDir(t), "dsh-v2-v4")
	zroot := t.TempDir()
	err := filepath.WalkDir(plainRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		gen, enc, ok := ParseLogName(d.Name())
		if !ok || enc != None {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(data), "\n")
		out := zstdframe.AppendFrame(nil, []byte(lines[0]))
		body := lines[1:]
		for len(body) > 0 {
			n := min(len(body), 1+len(body)/3)
			out = zstdframe.AppendFrame(out, []byte(strings.Join(body[:n], "")))
			body = body[n:]
		}
		rel, _ := filepath.Rel(plainRoot, filepath.Dir(path))
		dir := filepath.Join(zroot, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, LogName(gen, Zstd)), out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := openStore(t, plainRoot, Options{AllowUnknownTypes: true})
	z, _ := openStore(t, zroot, Options{AllowUnknownTypes: true})
	if z.Encoding() != Zstd {
		t.Fatalf("encoding %s", z.Encoding())
	}
	for _, id := range []string{"preview-showcase", "preview-follow-up-builder", "preview-architecture-review", "legacy-sdk-history"} {
		want, err := scanAll(t, plain, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scanAll(t, z, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		sameEvents(t, got, jsonValues(t, want))
		ps, _ := plain.Stat(ctx, id)
		zs, err := z.Stat(ctx, id)
		if err != nil || zs.EventCount != ps.EventCount || zs.Location.Generation != ps.Location.Generation {
			t.Errorf("%s: zstd Stat %+v, plain %+v, %v", id, zs, ps, err)
		}
	}
}

// TestWriteOpenSeededMarkerBeforeTail: a write open reads only the tail
// (from the last turn/end), so for preview-architecture-review, whose
// session/end-seed comes before its last turn/end, it looks for the marker
// as a read open does; both open the same count of inherited events, and
// an append lands after them.
func TestWriteOpenSeededMarkerBeforeTail(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join(fixturesDir(t), "dsh-v2-v4"))); err != nil {
		t.Fatal(err)
	}
	const id = "preview-architecture-review"
	s, _ := openStore(t, root, Options{AllowUnknownTypes: true, BackupDir: t.TempDir()})
	r, err := s.Open(ctx, id, seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	want := r.InheritedEventCount()
	r.Close()
	if want == 0 {
		t.Fatal("the fixture is not seeded")
	}
	w, err := s.Open(ctx, id, seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.InheritedEventCount(); got != want {
		t.Fatalf("write open: %d inherited events, read open %d", got, want)
	}
	snap, err := w.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := seam.Event{Type: "session/title", Seq: snap.EventCount, Time: 1787472200000, Data: []byte(`{"title":"t"}`)}
	if err := w.Append(ctx, []seam.Event{e}); err != nil {
		t.Fatal(err)
	}
	events, err := scanAll(t, s, id)
	if err != nil || int64(len(events)) != snap.EventCount+1 {
		t.Fatalf("after the append: %d events, %v; want %d", len(events), err, snap.EventCount+1)
	}
}
