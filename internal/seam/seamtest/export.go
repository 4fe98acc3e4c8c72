package seamtest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// ExportFunc writes the export of session id of svc to w: a ZIP of its
// canonical log and of its descendants' (internal/export's Session with
// default options). Point 22 runs it against the backend.
//
// The suite takes it as a parameter instead of importing internal/export:
// the contract suite sits below every consumer of the seam, and the export
// package's own tests use backends that run this suite.
type ExportFunc func(ctx context.Context, svc seam.Service, id string, w io.Writer) error

// Option configures Run.
type Option func(*suite)

// WithExport gives point 22 the export to check; without it point 22
// fails, since every backend must export the same bytes.
func WithExport(f ExportFunc) Option { return func(s *suite) { s.export = f } }

// exportGolden holds, per format version, the SHA-256 of the export of the
// logical sessions point 22 stores. Every backend must give exactly these
// bytes; that is what makes the export of a session the same whichever
// backend holds it. They change only when the export format changes (the
// entries, the ZIP layout, the DEFLATE coder or level): then point 22
// prints the new sums to put here.
var exportGolden = map[int]string{
	0: "9180af619df0ed7f21ba03c0779a4ad916026e5705120c2f7cb5f866bd23cb76",
	1: "049b763518a231984f3668285894e417321d01f5bc38c4e11ac059dc91f10a2b",
	2: "2226ee59a8eaa297b6bc847aee44189f627005db552fc66df9febaf63b7de920",
	3: "2a00e5a74e4d3c049c14489e4d3e52cbcd29abb87996964613c9fbf8e76f3ee0",
	4: "dcc5b92d2ffb909b8756d393874b1216e54a2048563f6bdd47da6f872533bbff",
}

// exportIdentity is point 22: the export of the same logical sessions (a
// session, its subagent and the subagent's own subagent) gives the same
// bytes however the backend stored them — in one batch, in many batches,
// or written as dsh would have written them (v0 packed chunk rows, v2+
// range-encoded sourceEventSeqs) — and those bytes are the golden ones
// every backend gives.
func (s *suite) exportIdentity(t *testing.T) {
	if s.export == nil {
		t.Fatal("point 22 needs the export: run the suite with seamtest.WithExport")
	}
	parent := header(s.v, "export-parent")
	child := header(s.v, "export-child")
	child.CreatedAt += 60_000
	child.ParentSession, child.Origin, child.DelegationDepth, child.AgentPreset = parent.ID, "subagent", 1, "explore"
	grandchild := header(s.v, "export-grandchild")
	grandchild.CreatedAt += 120_000
	grandchild.ParentSession, grandchild.Origin, grandchild.DelegationDepth = child.ID, "subagent", 2

	// The parent's physical records are what dsh writes: packed chunk rows
	// in v0/v1, range pairs in v2+.
	var events []seam.Event
	var body [][]byte
	if s.v < 2 {
		body, events = packedRecords(t)
	} else {
		events = script(s.v, 24)
		body = records(s.v, events)
	}
	sessions := []struct {
		h      seam.Header
		events []seam.Event
	}{{parent, events}, {child, script(s.v, 13)}, {grandchild, script(s.v, 3)}}

	forms := []struct {
		name  string
		store func(t *testing.T, dir string)
	}{
		{"one_batch", func(t *testing.T, dir string) {
			for _, ss := range sessions {
				s.storeBatches(t, dir, ss.h, ss.events, len(ss.events))
			}
		}},
		{"batches_of_4", func(t *testing.T, dir string) {
			// Children first: List's order must not matter.
			for _, ss := range slices.Backward(sessions) {
				s.storeBatches(t, dir, ss.h, ss.events, 4)
			}
		}},
		{"as_dsh_wrote_it", func(t *testing.T, dir string) {
			s.b.WriteLog(t, dir, parent, body)
			for _, ss := range sessions[1:] {
				s.b.WriteLog(t, dir, ss.h, records(s.v, ss.events))
			}
		}},
	}
	var first []byte
	for _, f := range forms {
		dir := t.TempDir()
		f.store(t, dir)
		var buf bytes.Buffer
		if err := s.export(ctx, s.service(t, dir), parent.ID, &buf); err != nil {
			t.Fatalf("%s: export: %v", f.name, err)
		}
		checkExport(t, f.name, buf.Bytes(), s.v, sessions[0].events, sessions[1].events, sessions[2].events)
		if first == nil {
			first = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), first) {
			t.Fatalf("%s: the export differs from %s's (%d and %d bytes)", f.name, forms[0].name, buf.Len(), len(first))
		}
	}
	sum := sha256.Sum256(first)
	if got, want := hex.EncodeToString(sum[:]), exportGolden[s.v]; got != want {
		t.Fatalf("the export of the v%d sessions has SHA-256 %s, want %q: every backend must give the same bytes "+
			"(if the export format changed on purpose, put the new sum in exportGolden)", s.v, got, want)
	}
}

// storeBatches stores session h on a fresh service over dir, appending
// events in batches of n.
func (s *suite) storeBatches(t *testing.T, dir string, h seam.Header, events []seam.Event, n int) {
	t.Helper()
	svc := s.b.New(t, dir)
	defer svc.Close()
	w, err := svc.Create(ctx, h, seam.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(%q): %v", h.ID, err)
	}
	defer w.Close()
	for batch := range slices.Chunk(events, n) {
		appendOK(t, w, batch)
	}
}

// checkExport fails t unless zipped holds the logs of the three sessions,
// named for version v, each a header line of its session in the shape of
// its format (isSeeded from v2 on, never before) then the events in their
// canonical JSON, one per line.
func checkExport(t *testing.T, form string, zipped []byte, v int, logs ...[]seam.Event) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatalf("%s: the export is not a ZIP: %v", form, err)
	}
	log := "session.jsonl"
	if v > 0 {
		log = fmt.Sprintf("session.v%d.jsonl", v)
	}
	names := []string{log, "subagents/export-child/" + log, "subagents/export-grandchild/" + log}
	ids := []string{"export-parent", "export-child", "export-grandchild"}
	if len(zr.File) != len(names) {
		t.Fatalf("%s: the export holds %d entries, want %q", form, len(zr.File), names)
	}
	for i, f := range zr.File {
		if f.Name != names[i] {
			t.Fatalf("%s: entry %d is %q, want %q", form, i, f.Name, names[i])
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", form, f.Name, err)
		}
		text, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %s: %v", form, f.Name, err)
		}
		line, body, _ := bytes.Cut(text, []byte("\n"))
		var hdr struct {
			Type     string
			ID       string
			Version  int
			IsSeeded *bool
		}
		if err := json.Unmarshal(line, &hdr); err != nil || hdr.Type != "session" || hdr.ID != ids[i] || hdr.Version != v || (hdr.IsSeeded != nil) != (v >= 2) {
			t.Fatalf("%s: %s: header line %s (%v)", form, f.Name, line, err)
		}
		var want []byte
		for _, e := range logs[i] {
			want = append(e.AppendJSON(want), '\n')
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("%s: %s: the events are not the logical events, one per line:\n got %.300s\nwant %.300s", form, f.Name, body, want)
		}
	}
}
