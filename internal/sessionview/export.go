package sessionview

import (
	"context"
	"strconv"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/verify"
)

// ExportJSON is what export says about one ZIP, and its JSON shape.
type ExportJSON struct {
	ID        string      `json:"id"`
	Path      string      `json:"path"`
	SizeBytes int64       `json:"sizeBytes"`
	Events    int64       `json:"eventCount"`
	Entries   []entryJSON `json:"entries"`
}

// entryJSON is a log in the ZIP (export.Entry).
type entryJSON struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Version    int    `json:"version"`
	EventCount int64  `json:"eventCount"`
}

// NewExports are the ZIPs of results, as export prints them.
func NewExports(results []export.Result) []ExportJSON {
	items := make([]ExportJSON, len(results))
	for i, r := range results {
		items[i] = ExportJSON{ID: r.ID, Path: r.Path, SizeBytes: r.Bytes, Entries: make([]entryJSON, len(r.Entries))}
		for j, en := range r.Entries {
			items[i].Events += en.Events
			items[i].Entries[j] = entryJSON{ID: en.ID, Name: en.Name, Version: en.Version, EventCount: en.Events}
		}
	}
	return items
}

// ExportColumns are the columns of export's table (see AddExportRows).
var ExportColumns = []string{"SESSION", "FILE", "EVENTS", "SUBAGENTS", "SIZE"}

// ExportFields are what export tells people about the one ZIP it wrote.
func ExportFields(it ExportJSON) termui.Fields {
	var f termui.Fields
	f.Add("session", it.ID, it.ID)
	f.Add("file", it.Path, it.Path)
	f.Int("events", it.Events)
	f.Int("subagents", int64(len(it.Entries)-1))
	f.Size("size", it.SizeBytes)
	return f
}

// AddExportRows adds a row per ZIP to t, a table of ExportColumns: for
// people short unique ids and human sizes, fitted by cutting the path; for
// scripts the full id, path, events, subagents and size in bytes.
func AddExportRows(t *termui.Table, items []ExportJSON) {
	t.GiveWay(1)
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = items[i].ID
	}
	if t.TTY() {
		ids = store.ShortIDs(ids, 12)
	}
	for i, it := range items {
		size := strconv.FormatInt(it.SizeBytes, 10)
		if t.TTY() {
			size = termui.Bytes(it.SizeBytes)
		}
		t.Row(ids[i], it.Path, strconv.FormatInt(it.Events, 10), strconv.Itoa(len(it.Entries)-1), size)
	}
}

// BugReportJSON is what the manifest of export --include-raw says of a
// session besides its entries: stat's JSON (its exact counts included)
// and verify's (tolerate-tail mode), each null when it could not run, with
// the reason.
type BugReportJSON struct {
	Stat        *StatJSON   `json:"stat"`
	StatError   *string     `json:"statError"`
	Verify      *VerifyJSON `json:"verify"`
	VerifyError *string     `json:"verifyError"`
}

// DescribeSession is export.BundleOptions.Describe: session id of svc as
// stat --exact and verify report it, and whether verify found an error
// (or could not check it).
func DescribeSession(ctx context.Context, svc seam.Service, id string) (any, bool) {
	var d BugReportJSON
	damaged := false
	r, err := inspect.Stat(ctx, svc, id, inspect.StatOptions{Exact: true})
	if r != nil {
		// A session dsh would refuse is described as far as it can be
		// read, the reason in its error field.
		s := NewStatJSON(r, Reason)
		d.Stat = &s
	} else if err != nil {
		d.StatError = ptr(Reason(err))
	}
	_, err = verify.Run(ctx, svc, []string{id}, verify.Options{Mode: verify.ModeTolerateTail, Jobs: 1,
		Report: func(r *verify.SessionReport) error {
			v := NewVerifyJSON(r)
			d.Verify = &v
			damaged = r.Status == verify.StatusErrors || r.Status == verify.StatusFailed
			return nil
		}})
	if err != nil {
		d.VerifyError, damaged = ptr(Reason(err)), true
	}
	return d, damaged
}
