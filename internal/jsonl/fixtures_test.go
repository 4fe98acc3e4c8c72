package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

type manifestFrame struct {
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Records   int    `json:"records"`
	FirstType string `json:"firstType"`
}

type manifestSession struct {
	ID         string          `json:"id"`
	Path       string          `json:"path"`
	SizeBytes  int64           `json:"sizeBytes"`
	EventCount int64           `json:"eventCount"`
	Frames     []manifestFrame `json:"frames"`
}

func loadManifest(t *testing.T, store string) []manifestSession {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesDir(t), "dsh-0.1.0", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Stores map[string]struct {
			Oracle struct {
				Sessions []manifestSession `json:"sessions"`
			} `json:"oracle"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Stores[store].Oracle.Sessions
}

// TestFixtureStores reads every session dsh 0.1.0 wrote, in both encodings,
// and compares with what dsh's own reader returned.
func TestFixtureStores(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"jsonl-zstd", "jsonl-none"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(fixturesDir(t), "dsh-0.1.0", store)
			expected := filepath.Join(fixturesDir(t), "dsh-0.1.0", "expected", store)
			s, _ := openStore(t, root, Options{})
			wantEnc := map[string]Encoding{"jsonl-zstd": Zstd, "jsonl-none": None}[store]
			if s.Encoding() != wantEnc {
				t.Fatalf("detected encoding %s, want %s", s.Encoding(), wantEnc)
			}
			sessions := loadManifest(t, store)
			if len(sessions) != 10 {
				t.Fatalf("manifest lists %d sessions", len(sessions))
			}
			entries, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]seam.Snapshot{}
			for _, e := range entries {
				if e.Err != nil {
					t.Errorf("List: %s: %v", e.Snapshot.Location.Path, e.Err)
				}
				listed[e.Snapshot.Header.ID] = e.Snapshot
			}
			if len(listed) != len(sessions) {
				t.Errorf("List returned %d sessions, want %d", len(listed), len(sessions))
			}
			for _, ms := range sessions {
				t.Run(SafeName(ms.ID), func(t *testing.T) {
					checkFixtureSession(t, s, ms, expected, listed[ms.ID])
				})
			}
		})
	}
}

func checkFixtureSession(t *testing.T, s *Store, ms manifestSession, expected string, listed seam.Snapshot) {
	ctx := context.Background()
	want := readJSONL(t, filepath.Join(expected, SafeName(ms.ID)+".events.jsonl"))
	got, err := scanAll(t, s, ms.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)

	snap, err := s.Stat(ctx, ms.ID)
	if err != nil {
		t.Fatal(err)
	}
	if snap.EventCount != int64(len(want)) || snap.EventCount != ms.EventCount {
		t.Errorf("Stat EventCount %d, want %d", snap.EventCount, len(want))
	}
	if snap.SizeBytes != ms.SizeBytes {
		t.Errorf("Stat SizeBytes %d, want %d", snap.SizeBytes, ms.SizeBytes)
	}
	if !strings.HasSuffix(snap.Location.Path, filepath.FromSlash(ms.Path)) {
		t.Errorf("Location.Path %s, want …/%s", snap.Location.Path, ms.Path)
	}
	if snap.Revision != listed.Revision || snap.EventCount != listed.EventCount {
		t.Errorf("Stat and List disagree: %+v vs %+v", snap, listed)
	}
	if snap.Header.ID != ms.ID || snap.Location.TornBytes != 0 || snap.Location.Generation != 0 {
		t.Errorf("Stat: %+v", snap)
	}

	h, err := s.Open(ctx, ms.ID, seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Raw records, concatenated, are the decompressed artifact.
	var raw bytes.Buffer
	var frames []manifestFrame
	for r, err := range h.(seam.RawReader).Raw(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset != int64(raw.Len()) {
			t.Fatalf("raw record at %d has Offset %d", raw.Len(), r.Offset)
		}
		raw.Write(r.Line)
		g := r.Group
		if g == nil {
			continue
		}
		if g.Index == len(frames) {
			var head struct{ Type string }
			json.Unmarshal(r.Line, &head)
			frames = append(frames, manifestFrame{Start: g.Offset, End: g.Offset + g.Size, FirstType: head.Type})
		}
		frames[g.Index].Records++
	}
	wantRaw, err := os.ReadFile(filepath.Join(expected, SafeName(ms.ID)+".raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Bytes(), wantRaw) {
		t.Errorf("raw records differ from the artifact (%d vs %d bytes)", raw.Len(), len(wantRaw))
	}
	if len(ms.Frames) > 0 && !slices.Equal(frames, ms.Frames) {
		t.Errorf("frames\n got %+v\nwant %+v", frames, ms.Frames)
	}

	// Reverse is forward reversed; Read slices agree.
	var rev []seam.Event
	for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true}) {
		if err != nil {
			t.Fatal(err)
		}
		rev = append(rev, e)
	}
	slices.Reverse(rev)
	sameEvents(t, rev, want)
	if n := int64(len(want)); n > 4 {
		part, err := h.Read(ctx, n/2, 3)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, part, want[n/2:n/2+3])
		rest, err := h.Read(ctx, n-2, -1)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, rest, want[n-2:])
		var below []seam.Event
		for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true, From: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			below = append(below, e)
		}
		slices.Reverse(below)
		sameEvents(t, below, want[:3])
	}
	if past, err := h.Read(ctx, int64(len(want))+5, -1); err != nil || len(past) != 0 {
		t.Errorf("Read past the end: %d events, %v", len(past), err)
	}
	var seed int64
	if snap.Header.SeedLength != nil {
		seed = *snap.Header.SeedLength
	}
	if h.Header().ID != ms.ID || h.InheritedEventCount() != seed {
		t.Errorf("handle identity: %q inherited %d", h.Header().ID, h.InheritedEventCount())
	}
}

// damagedCase is one case of damaged/cases.json.
type damagedCase struct {
	SessionID string `json:"sessionId"`
	DshRead   struct {
		Listed     []string `json:"listed"`
		ListErrors []struct {
			Error struct{ Message string } `json:"error"`
		} `json:"listErrors"`
		Sessions []struct {
			ID         string `json:"id"`
			EventCount int64  `json:"eventCount"`
			Error      *struct {
				Name    string `json:"name"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"sessions"`
	} `json:"dshRead"`
}

// damagedCases returns the folder of the damaged stores and its
// cases.json.
func damagedCases(tb testing.TB) (string, map[string]damagedCase) {
	dir := filepath.Join(fixturesDir(tb), "dsh-0.1.0", "damaged")
	data, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cases map[string]damagedCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatal(err)
	}
	return dir, cases
}

// TestDamagedFixtures reads every damaged store: the same events as dsh
// where dsh read the log (except a torn final zstd frame, discarded whole),
// the same kind of error where dsh refused it.
func TestDamagedFixtures(t *testing.T) {
	ctx := context.Background()
	dir, cases := damagedCases(t)
	intact := filepath.Join(fixturesDir(t), "dsh-0.1.0", "expected", "jsonl-none")
	// What dshctl reports where it differs from, or refines, dsh 0.1.0.
	type outcome struct {
		events  int64  // events served (and Stat's count); -1 when refused
		kind    error  // the error of a full read
		message string // a phrase of that error
		stat    error  // the error of Stat, if any
		listed  bool   // List returns the session
		torn    int64  // Stat's TornBytes
		// uncommitted is Stat's UncommittedBytes: the bad line's 35 bytes.
		uncommitted int64
	}
	want := map[string]outcome{
		// dsh 0.1.0 salvaged the records of the torn frame (113 events);
		// the current rule discards the torn frame whole.
		"zstd-torn-final-frame-checksum":            {events: 98, listed: true, torn: 916 - 2},
		"zstd-torn-final-frame-header":              {events: 98, listed: true, torn: 5},
		"none-torn-final-line":                      {events: 112, listed: true, torn: 106},
		"none-corrupt-line-after-last-turn-end":     {events: 38, listed: true, uncommitted: 35},
		"variant-zstd-cli-frames-with-content-size": {events: 113, listed: true},
		"none-corrupt-line-before-turn-end": {events: -1, kind: seam.ErrCorrupt, listed: true,
			message: "unparsable committed event at line 4"},
		"zstd-bad-checksum-middle-frame": {events: -1, kind: seam.ErrCorrupt, listed: true,
			message: "frame at byte 796 failed validation"},
		"zstd-skippable-frame": {events: -1, kind: seam.ErrCorrupt, listed: true,
			message: "invalid frame magic at byte 796"},
		"zstd-header-frame-not-single-line": {events: -1, kind: seam.ErrCorrupt, stat: seam.ErrCorrupt, listed: true,
			message: "first frame is not exactly one header line"},
		// A v3 header in a generation-0 file: newer than the file's name
		// promises, so unsupported (checked before the header's shape).
		"none-future-version-header": {events: -1, kind: seam.ErrUnsupportedFormat, stat: seam.ErrUnsupportedFormat, listed: true,
			message: "log format v3 in session.jsonl, which holds format v0: written by a newer dsh"},
		"none-unknown-event-type": {events: -1, kind: seam.ErrUnsupportedFormat, listed: true,
			message: `"mystery/event"`},
		"mixed-encoding": {events: -1, kind: seam.ErrCorrupt, stat: seam.ErrCorrupt, listed: true,
			message: "uses .jsonl, but this store holds .jsonl.zstd logs"},
		// dsh 0.1.0 leaves an empty log out of its listing; dshctl lists
		// it as unreadable, like every other damaged log.
		"zstd-empty-file": {events: -1, kind: seam.ErrCorrupt, stat: seam.ErrCorrupt, listed: true,
			message: "empty or header-less Zstandard session log"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for case %s", name)
			}
			root := filepath.Join(dir, name)
			s, _ := openStore(t, root, Options{})
			id := c.SessionID
			events, err := scanAll(t, s, id)
			if w.events >= 0 {
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if len(c.DshRead.Sessions) == 1 && c.DshRead.Sessions[0].EventCount == w.events {
					exp := readJSONL(t, filepath.Join(intact, SafeName(id)+".events.jsonl"))
					sameEvents(t, events, exp[:w.events])
				} else if int64(len(events)) != w.events {
					t.Fatalf("read %d events, want %d", len(events), w.events)
				}
			} else {
				wantKind(t, err, w.kind)
				if !strings.Contains(err.Error(), w.message) {
					t.Errorf("error %q does not say %q", err, w.message)
				}
				if errors.Is(err, seam.ErrUnsupportedFormat) && !strings.HasSuffix(err.Error(), "session.jsonl)") {
					t.Errorf("unsupported error %q does not end with the raw log path", err)
				}
			}
			snap, err := s.Stat(context.Background(), id)
			switch {
			case w.stat != nil:
				wantKind(t, err, w.stat)
			case err != nil:
				t.Fatalf("Stat: %v", err)
			case w.events >= 0 && snap.EventCount != w.events:
				t.Errorf("Stat EventCount %d, want %d", snap.EventCount, w.events)
			case snap.Location.TornBytes != w.torn:
				t.Errorf("Stat TornBytes %d, want %d", snap.Location.TornBytes, w.torn)
			case snap.Location.UncommittedBytes != w.uncommitted:
				t.Errorf("Stat UncommittedBytes %d, want %d", snap.Location.UncommittedBytes, w.uncommitted)
			}
			entries, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(entries) == 1; got != w.listed {
				t.Fatalf("List returned %d entries, want listed=%v", len(entries), w.listed)
			}
			if w.listed && (entries[0].Err != nil) != (w.stat != nil) {
				t.Errorf("List entry error %v, want kind %v", entries[0].Err, w.stat)
			}
		})
	}
}
