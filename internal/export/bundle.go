package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

// The entries a bug-report ZIP adds to an export (see Bundle).
const (
	// ManifestName is the bundle's description, its last entry.
	ManifestName = "manifest.json"
	// storedDir holds a session's stored bytes, beside its log.
	storedDir = "stored/"
	// rowsName is the entry of the rows of a store of rows (SQLite), as
	// `cat --raw` prints them.
	rowsName = "rows.jsonl"
)

// BundleOptions configure Bundle.
type BundleOptions struct {
	Options
	// Describe returns what the manifest says of a session besides its
	// entries (its stat and verify reports, as JSON values), and whether
	// it found the session damaged. Nil describes nothing.
	Describe func(ctx context.Context, svc seam.Service, id string) (report any, damaged bool)
	// Build is what the manifest says of the program that wrote it.
	Build any
}

// BundleResult says what Bundle wrote.
type BundleResult struct {
	// Entries are the canonical logs, the named session's first; a log
	// read in part has the events before the damage.
	Entries []Entry
	// Damaged says the ZIP holds less than the export of a sound session
	// would (a log not read whole, stored bytes not copied), or Describe
	// found damage: the manifest says what.
	Damaged bool
}

// Bundle writes a bug-report ZIP of session id of svc to w: what an export
// holds (Session), as far as each log can be read, and beside each log its
// stored bytes as they are (the log files, every generation, of a store of
// files; the rows of a store of rows), then ManifestName: for each
// session, how far its log was read and why it stopped, the stored
// entries with their sizes and SHA-256, and what Describe says. It fails
// only when the ZIP cannot be written or ctx ends; a session that cannot
// be read is described in the ZIP, never a reason to write none. The ZIP
// is deterministic for the same stored sessions and Describe reports.
// Memory stays bounded: every entry is streamed.
func Bundle(ctx context.Context, svc seam.Service, id string, w io.Writer, o BundleOptions) (BundleResult, error) {
	var res BundleResult
	m := manifestJSON{Format: "dshctl-bug-report/1", Build: o.Build, Session: id, Complete: true, Sessions: []bundleSessionJSON{}}
	ids := []string{id}
	if !o.NoSubagents {
		entries, err := svc.List(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			m.SubagentsError = errText(err)
			m.Complete = false
		} else {
			ids = append(ids, Descendants(entries, id)...)
		}
	}
	var progress func(int64)
	if o.Progress != nil {
		var total, written int64
		for _, sid := range ids {
			if snap, err := svc.Stat(ctx, sid); err == nil {
				total += snap.EventCount
			}
		}
		progress = func(n int64) {
			written += n
			o.Progress(written, max(total, written))
		}
		o.Progress(0, total)
	}
	a := newArchive(w)
	names := newNamer()
	created := minZipTime
	for i, sid := range ids {
		dir := ""
		if i > 0 {
			dir = subagentsDir + names.name(sid) + "/"
		}
		s, at, err := bundleSession(ctx, a, svc, sid, dir, progress)
		if err != nil {
			return res, err
		}
		if i == 0 {
			created = at
		}
		if s.Log != nil {
			res.Entries = append(res.Entries, Entry{ID: sid, Name: *s.Log, Version: s.version, Events: s.EventCount})
		}
		damaged := !s.Complete || s.StoredError != nil
		if o.Describe != nil {
			// Describe reads the log again: what the read above let go
			// (up to a zstd frame's content) is collected first, so that
			// the peak is one read's, not two (64 MiB frame: 93 → 62 MB).
			runtime.GC()
			var bad bool
			s.Report, bad = o.Describe(ctx, svc, sid)
			damaged = damaged || bad
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m.Complete = m.Complete && s.Complete && s.StoredError == nil
		res.Damaged = res.Damaged || damaged
		m.Sessions = append(m.Sessions, s)
	}
	zw, err := a.create(ManifestName, created)
	if err != nil {
		return res, err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return res, err
	}
	if _, err := zw.Write(append(b, '\n')); err != nil {
		return res, err
	}
	return res, a.close()
}

// manifestJSON is the bundle's manifest: every field present, null when
// unknown, [] when empty.
type manifestJSON struct {
	Format string `json:"format"`
	Build  any    `json:"dshctl"`
	// Session is the session named; Sessions are it and its descendants.
	Session string `json:"session"`
	// Complete says every log was read whole and every stored file copied.
	Complete       bool                `json:"complete"`
	SubagentsError *string             `json:"subagentsError"`
	Sessions       []bundleSessionJSON `json:"sessions"`
}

// bundleSessionJSON is what the manifest says of one session.
type bundleSessionJSON struct {
	ID string `json:"id"`
	// Log is the entry of its canonical log, null when the log could not
	// be opened; EventCount the events in it.
	Log        *string `json:"log"`
	EventCount int64   `json:"eventCount"`
	// Complete says the log was read to its end; Error why it was not.
	Complete bool    `json:"complete"`
	Error    *string `json:"error"`
	// Unsupported names event types the log's format does not know (a
	// plugin's): the log is whole, but dsh refuses it.
	Unsupported *string      `json:"unsupported"`
	Stored      []storedJSON `json:"stored"`
	StoredError *string      `json:"storedError"`
	Report      any          `json:"report"`
	version     int
}

// storedJSON is an entry of stored bytes.
type storedJSON struct {
	Entry string `json:"entry"`
	// Kind is "file" (Name is its name in the session's folder) or "rows"
	// (the rows of a store of rows: Name is null).
	Kind      string  `json:"kind"`
	Name      *string `json:"name"`
	SizeBytes int64   `json:"sizeBytes"`
	SHA256    string  `json:"sha256"`
}

func errText(err error) *string {
	s := err.Error()
	return &s
}

// bundleSession adds to a, in folder dir, the canonical log of session id
// as far as it reads and its stored bytes, and returns what the manifest
// says of them, and the session's creation time (the entries' time). Its
// error is a failure to write the ZIP, or ctx's end.
func bundleSession(ctx context.Context, a *archive, svc seam.Service, id, dir string, progress func(int64)) (bundleSessionJSON, time.Time, error) {
	s := bundleSessionJSON{ID: id, Stored: []storedJSON{}}
	at := minZipTime
	if snap, err := svc.Stat(ctx, id); err == nil && snap.Header.CreatedAt > 0 {
		at = time.UnixMilli(snap.Header.CreatedAt)
	}
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		if ctx.Err() != nil {
			return s, at, ctx.Err()
		}
		s.Error = errText(err)
	} else {
		err := bundleLog(ctx, a, h, dir, &s, progress)
		var raw seam.RawReader
		if rr, ok := h.(seam.RawReader); ok && err == nil {
			raw = rr
		}
		if err == nil {
			if _, files := svc.(seam.FileStorer); !files && raw != nil {
				err = bundleRows(ctx, a, raw, dir, at, &s)
			}
		}
		h.Close()
		if err != nil {
			return s, at, err
		}
	}
	if fst, ok := svc.(seam.FileStorer); ok {
		files, err := fst.SessionFiles(ctx, id)
		if err != nil && ctx.Err() == nil {
			s.StoredError = errText(err)
		}
		for _, f := range files {
			werr, rerr := bundleFile(ctx, a, f, dir, at, &s)
			if werr != nil {
				return s, at, werr
			}
			if rerr != nil && s.StoredError == nil {
				s.StoredError = errText(fmt.Errorf("%s: %w", f.Name, rerr))
			}
		}
	} else if s.Log == nil && s.StoredError == nil {
		s.StoredError = errText(errors.New("the session could not be opened to read its rows"))
	}
	return s, at, ctx.Err()
}

// bundleLog adds the canonical log h reads to a, as far as it reads: a
// read that fails keeps the events before it and says why in s. Its error
// is a failure to write, or ctx's end.
func bundleLog(ctx context.Context, a *archive, h seam.Handle, dir string, s *bundleSessionJSON, progress func(int64)) error {
	hdr := h.Header()
	name := dir + LogName(hdr.Version)
	zw, err := a.create(name, time.UnixMilli(hdr.CreatedAt))
	if err != nil {
		return err
	}
	s.Log, s.version = &name, hdr.Version
	p := newPipe(zw)
	sink := &logSink{Canonical: NewCanonical(p), progress: progress}
	_, err = inspect.Stream(ctx, h, inspect.StreamOptions{}, sink)
	s.EventCount = sink.events
	sink.report()
	if ut := (*inspect.UnknownTypesError)(nil); errors.As(err, &ut) {
		s.Unsupported, err = errText(ut), nil
	}
	if werr := p.failed(); werr != nil || ctx.Err() != nil {
		p.abort()
		return cmpErr(werr, ctx.Err())
	}
	if err != nil {
		// The events before the damage are the entry.
		s.Error = errText(err)
	}
	s.Complete = err == nil
	return p.Close()
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// bundleFile copies stored file f into a, under dir's stored folder. werr
// is a failure to write (or ctx's end), rerr one to read f: the entry
// then holds what was read, and s says so.
func bundleFile(ctx context.Context, a *archive, f seam.StoredFile, dir string, at time.Time, s *bundleSessionJSON) (werr, rerr error) {
	r, err := f.Open()
	if err != nil {
		return ctx.Err(), err
	}
	defer r.Close()
	name := f.Name
	return bundleCopy(ctx, a, dir+storedDir+f.Name, "file", &name, r, at, s)
}

// bundleRows writes the rows of a store of rows, as stored (seam.RawReader:
// every row, nothing decoded), into a.
func bundleRows(ctx context.Context, a *archive, raw seam.RawReader, dir string, at time.Time, s *bundleSessionJSON) error {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		for rec, rerr := range raw.Raw(ctx) {
			if err = rerr; err != nil {
				break
			}
			if _, err = pw.Write(rec.Line); err != nil {
				break
			}
		}
		pw.CloseWithError(err)
	}()
	werr, rerr := bundleCopy(ctx, a, dir+storedDir+rowsName, "rows", nil, pr, at, s)
	// A copy that stopped early stops the reader; the handle is closed
	// only once it is done with it.
	pr.CloseWithError(io.ErrClosedPipe)
	<-done
	if rerr != nil && s.StoredError == nil {
		s.StoredError = errText(rerr)
	}
	return werr
}

// bundleCopy copies r into the entry name of a, noting it in s. werr is a
// failure to write (or ctx's end), rerr one to read r.
func bundleCopy(ctx context.Context, a *archive, name, kind string, fileName *string, r io.Reader, at time.Time, s *bundleSessionJSON) (werr, rerr error) {
	zw, err := a.create(name, at)
	if err != nil {
		return err, nil
	}
	p := newPipe(zw)
	sum := sha256.New()
	n, rerr := copyCtx(ctx, io.MultiWriter(p, sum), r)
	if werr := p.failed(); werr != nil || ctx.Err() != nil {
		p.abort()
		return cmpErr(werr, ctx.Err()), nil
	}
	if err := p.Close(); err != nil {
		return err, nil
	}
	s.Stored = append(s.Stored, storedJSON{Entry: name, Kind: kind, Name: fileName, SizeBytes: n, SHA256: hexSum(sum)})
	return nil, rerr
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// copyCtx is io.Copy that stops when ctx ends, checked between blocks.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, nil // the writer's error is the pipe's: the caller reads it there
			}
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// BundleToFile writes the bug-report ZIP of session id of svc (see
// Bundle) to the file out names (see OutputPath) through WriteFile, and
// says what it wrote and whether the session was found damaged; the
// Result's Err is not set, the error is returned (nothing is written then).
func BundleToFile(ctx context.Context, svc seam.Service, id, out string, force bool, o BundleOptions) (Result, bool, error) {
	if out != "" { // before OutputPath makes a folder
		if _, err := CheckPath(out, svc); err != nil {
			return Result{}, false, err
		}
	}
	path, err := OutputPath(out, id)
	if err != nil {
		return Result{}, false, err
	}
	r := Result{ID: id, Path: path}
	var damaged bool
	r.Bytes, err = WriteFile(ctx, path, force, svc, func(w io.Writer) error {
		b, err := Bundle(ctx, svc, id, w, o)
		r.Entries, damaged = b.Entries, b.Damaged
		return err
	})
	return r, damaged, err
}
