package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
)

var ctx = context.Background()

// openStore opens a fixture root read-only; exports never write to it.
func openStore(t *testing.T, root string) seam.Service {
	t.Helper()
	// AllowUnknownTypes: an export shows a plugin's events, as cat does.
	s, err := jsonl.Open(root, jsonl.Options{AllowUnknownTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exportBytes(t *testing.T, svc seam.Service, id string, opts export.Options) ([]byte, []export.Entry) {
	t.Helper()
	var buf bytes.Buffer
	entries, err := export.Session(ctx, svc, id, &buf, opts)
	if err != nil {
		t.Fatalf("export %q: %v", id, err)
	}
	return buf.Bytes(), entries
}

// unzipped is what a ZIP holds, read back with archive/zip.
type unzipped struct {
	names []string
	files map[string][]byte
	heads map[string]zip.FileHeader
}

func readZip(t *testing.T, data []byte) unzipped {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	u := unzipped{files: map[string][]byte{}, heads: map[string]zip.FileHeader{}}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc) // checks the CRC at EOF
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		u.names = append(u.names, f.Name)
		u.files[f.Name] = b
		u.heads[f.Name] = f.FileHeader
	}
	return u
}

// unzipTest runs Info-ZIP's `unzip -t` on data, the check users run.
func unzipTest(t *testing.T, data []byte) {
	t.Helper()
	if _, err := exec.LookPath("unzip"); err != nil {
		t.Skip("unzip not installed")
	}
	f := filepath.Join(t.TempDir(), "x.zip")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("unzip", "-t", f).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No errors detected") {
		t.Fatalf("unzip -t: %v\n%s", err, out)
	}
}

// jsonLines parses text as JSONL into JSON values.
func jsonLines(t *testing.T, text []byte) []any {
	t.Helper()
	var out []any
	for i, line := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		if len(line) == 0 && i == 0 {
			break
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("line %d is not JSON: %v: %.200s", i+1, err, line)
		}
		out = append(out, v)
	}
	return out
}

func sameValues(t *testing.T, what string, got, want []any) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Fatalf("%s: line %d differs:\n got %s\nwant %s", what, i+1, g, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
}

// checkLog checks an exported log: its header line holds every field of
// the stored header line (the source of truth: the first line of the file
// dsh wrote), in the shape of its format (v0 keeps seedLength and has no
// isSeeded), delegationDepth added as 0 only where the stored line has
// none; then the events, every line ending in a newline.
func checkLog(t *testing.T, text, stored []byte) []any {
	t.Helper()
	if len(text) == 0 || text[len(text)-1] != '\n' {
		t.Fatalf("exported log does not end in a newline")
	}
	line, body, _ := bytes.Cut(text, []byte("\n"))
	var got, want map[string]any
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("header line: %v", err)
	}
	if err := json.Unmarshal(stored, &want); err != nil {
		t.Fatalf("stored header line: %v", err)
	}
	if _, ok := want["delegationDepth"]; !ok {
		want["delegationDepth"] = float64(0)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("header line %s, want the stored header %s", line, stored)
	}
	keys := []string{"type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "isSeeded", "origin", "delegationDepth", "agentPreset"}
	var order []string
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		order = append(order, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	i := 0
	for _, k := range order {
		for i < len(keys) && keys[i] != k {
			i++
		}
		if i == len(keys) {
			t.Fatalf("header line keys %q are not a subsequence of %q", order, keys)
		}
	}
	return jsonLines(t, body)
}

// fixtureStores are the dsh 0.1.0 roots, in both encodings.
var fixtureStores = []string{"jsonl-zstd", "jsonl-none"}

// TestFixtureExports exports every session dsh 0.1.0 wrote: unzip -t
// passes, the log minus its header is what dsh's reader returned, both
// encodings give the same bytes, and exporting twice gives the same bytes.
func TestFixtureExports(t *testing.T) {
	base := filepath.Join(fixture.Dir(t), "dsh-0.1.0")
	stores := map[string]seam.Service{}
	for _, s := range fixtureStores {
		stores[s] = openStore(t, filepath.Join(base, s))
	}
	entries, err := stores["jsonl-zstd"].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 10 {
		t.Fatalf("jsonl-zstd lists %d sessions, want 10", len(entries))
	}
	for _, e := range entries {
		id := e.Snapshot.Header.ID
		t.Run(export.SafeName(id), func(t *testing.T) {
			var first []byte
			for _, store := range fixtureStores {
				svc := stores[store]
				zipped, entries := exportBytes(t, svc, id, export.Options{})
				unzipTest(t, zipped)
				u := readZip(t, zipped)
				name := export.LogName(0)
				if u.names[0] != name || entries[0].Name != name || entries[0].ID != id {
					t.Fatalf("%s: first entry %q (%+v), want %q", store, u.names[0], entries[0], name)
				}
				raw, err := os.ReadFile(filepath.Join(base, "expected", store, export.SafeName(id)+".raw.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				events := checkLog(t, u.files[name], firstLine(raw))
				want, err := os.ReadFile(filepath.Join(base, "expected", store, export.SafeName(id)+".events.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				sameValues(t, store+" events", events, jsonLines(t, want))
				if entries[0].Events != int64(len(events)) {
					t.Errorf("%s: entry says %d events, the log holds %d", store, entries[0].Events, len(events))
				}
				if again, _ := exportBytes(t, svc, id, export.Options{}); !bytes.Equal(again, zipped) {
					t.Fatalf("%s: a second export differs", store)
				}
				if first == nil {
					first = zipped
				} else if !bytes.Equal(first, zipped) {
					t.Fatalf("the exports of jsonl-zstd and %s differ (%d and %d bytes)", store, len(first), len(zipped))
				}
			}
		})
	}
}

// TestFixtureSubagents: the subagent fixture session, and the fork of the
// live session, appear under their parent's subagents/, holding what their
// own export holds.
func TestFixtureSubagents(t *testing.T) {
	svc := openStore(t, filepath.Join(fixture.Dir(t), "dsh-0.1.0", "jsonl-zstd"))
	for parent, child := range map[string]string{
		"session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c": "session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
		"session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203": "session-6e7f8091-0213-4b4c-9d5e-6f7081920314",
	} {
		zipped, entries := exportBytes(t, svc, parent, export.Options{})
		u := readZip(t, zipped)
		name := "subagents/" + child + "/session.jsonl"
		if want := []string{"session.jsonl", name}; !reflect.DeepEqual(u.names, want) {
			t.Fatalf("export of %s holds %q, want %q", parent, u.names, want)
		}
		if len(entries) != 2 || entries[1].ID != child || entries[1].Name != name {
			t.Fatalf("entries %+v", entries)
		}
		own, _ := exportBytes(t, svc, child, export.Options{})
		if !bytes.Equal(u.files[name], readZip(t, own).files["session.jsonl"]) {
			t.Fatalf("%s differs from the log of %s's own export", name, child)
		}
		alone, entries := exportBytes(t, svc, parent, export.Options{NoSubagents: true})
		if got := readZip(t, alone).names; len(got) != 1 || len(entries) != 1 {
			t.Fatalf("--no-subagents export holds %q", got)
		}
	}
}

// TestFixtureV2V4 exports the format v2 to v4 logs: entry names carry the
// version, range pairs are expanded (checked against the stored lines, the
// source of truth), and the seeded subagent and its sibling sit under
// their parent.
func TestFixtureV2V4(t *testing.T) {
	root := filepath.Join(fixture.Dir(t), "dsh-v2-v4")
	svc := openStore(t, root)
	for id, want := range map[string][]string{
		"preview-showcase": {"session.v3.jsonl",
			"subagents/preview-architecture-review/session.v3.jsonl",
			"subagents/preview-follow-up-builder/session.v3.jsonl"},
		"preview-architecture-review": {"session.v3.jsonl"},
		"preview-follow-up-builder":   {"session.v3.jsonl"},
		"legacy-sdk-history":          {"session.v4.jsonl"},
	} {
		t.Run(id, func(t *testing.T) {
			zipped, entries := exportBytes(t, svc, id, export.Options{})
			unzipTest(t, zipped)
			u := readZip(t, zipped)
			if !reflect.DeepEqual(u.names, want) {
				t.Fatalf("entries %q, want %q", u.names, want)
			}
			// The plugin's log is exported whole, and flagged: dsh refuses it.
			if ut := entries[0].Unsupported; (id == "legacy-sdk-history") != (ut != nil) ||
				ut != nil && (ut.Types["roleplay/opened"] == 0 || !errors.Is(ut, seam.ErrUnsupportedFormat)) {
				t.Fatalf("Unsupported = %v", ut)
			}
			snap, err := svc.Stat(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(snap.Location.Path)
			if err != nil {
				t.Fatal(err)
			}
			events := checkLog(t, u.files[want[0]], firstLine(raw))
			stored := jsonLines(t, raw)[1:]
			for _, v := range stored {
				expandRanges(v.(map[string]any))
			}
			sameValues(t, "events", events, stored)
			h := u.heads[want[0]]
			if !h.Modified.Equal(time.UnixMilli(snap.Header.CreatedAt).Truncate(time.Second)) || h.Mode() != 0o600 {
				t.Errorf("entry time %v mode %v, want the session's creation and 0600", h.Modified, h.Mode())
			}
		})
	}
}

func firstLine(text []byte) []byte {
	line, _, _ := bytes.Cut(text, []byte("\n"))
	return line
}

// expandRanges expands a v2+ record's sourceEventSeqs range pairs.
func expandRanges(rec map[string]any) {
	list, ok := rec["sourceEventSeqs"].([]any)
	if !ok {
		return
	}
	var out []any
	for _, v := range list {
		if pair, ok := v.([]any); ok {
			for s := pair[0].(float64); s <= pair[1].(float64); s++ {
				out = append(out, s)
			}
			continue
		}
		out = append(out, v)
	}
	rec["sourceEventSeqs"] = out
}

// BenchmarkExport exports the largest fixture session (113 events, a 300
// KB tool result) with its subagent from the zstd store: list, open,
// decode, canonical JSONL, DEFLATE, ZIP. The bytes are those of the logs.
func BenchmarkExport(b *testing.B) {
	root := filepath.Join(fixture.Dir(b), "dsh-0.1.0", "jsonl-zstd")
	svc, err := jsonl.Open(root, jsonl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
	var size int64
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if _, err := export.Session(ctx, svc, id, &out, export.Options{}); err != nil {
			b.Fatal(err)
		}
		if size == 0 {
			zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
			if err != nil {
				b.Fatal(err)
			}
			for _, f := range zr.File {
				size += int64(f.UncompressedSize64)
			}
			b.SetBytes(size)
		}
	}
}
