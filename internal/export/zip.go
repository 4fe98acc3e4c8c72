package export

import (
	"archive/zip"
	"io"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
)

// Level is the DEFLATE level of every entry: zip's default (zip -6). It is
// fixed, because the same logical session must always give the same bytes.
const Level = 6

// entryMode is the mode of every entry: a regular file only its owner
// reads, as dsh keeps its logs.
const entryMode = 0o600

// The times a ZIP can hold: MS-DOS dates start in 1980, and the extended
// timestamp Info-ZIP reads is an unsigned 32-bit count of seconds.
var (
	minZipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	maxZipTime = time.Unix(1<<32-1, 0).UTC()
)

// archive writes a deterministic ZIP: entries in the order they are
// created, each a regular file of mode 0600 whose time is given (the
// session's creation), DEFLATE at Level. Nothing of the machine, the clock
// or the user that exports shows in the bytes. Entries are streamed: the
// sizes and checksum follow the data in a data descriptor, so no entry is
// ever held whole.
type archive struct {
	zw *zip.Writer
}

func newArchive(w io.Writer) *archive {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, newDeflater)
	return &archive{zw: zw}
}

// create starts the entry name, modified at mod (clamped to what a ZIP can
// hold); the returned writer is valid until the next create or close.
func (a *archive) create(name string, mod time.Time) (io.Writer, error) {
	fh := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipTime(mod)}
	fh.SetMode(entryMode)
	return a.zw.CreateHeader(fh)
}

// close writes the central directory.
func (a *archive) close() error { return a.zw.Close() }

// zipTime returns t in UTC, whole seconds, within the range a ZIP holds.
// UTC matters: archive/zip writes the MS-DOS time in t's location, which
// must not depend on the exporting machine's zone.
func zipTime(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Second)
	switch {
	case t.Before(minZipTime):
		return minZipTime
	case t.After(maxZipTime):
		return maxZipTime
	}
	return t
}

// deflaters keeps the klauspost/compress DEFLATE coders between entries:
// one costs about a megabyte of tables to make, and an export of a whole
// store makes one per session.
var deflaters sync.Pool

// deflater is a pooled coder; Close returns it to the pool.
type deflater struct{ *flate.Writer }

func newDeflater(w io.Writer) (io.WriteCloser, error) {
	if fw, ok := deflaters.Get().(*flate.Writer); ok {
		fw.Reset(w)
		return deflater{fw}, nil
	}
	fw, err := flate.NewWriter(w, Level)
	if err != nil {
		return nil, err
	}
	return deflater{fw}, nil
}

func (d deflater) Close() error {
	err := d.Writer.Close()
	if err == nil {
		deflaters.Put(d.Writer)
	}
	return err
}
