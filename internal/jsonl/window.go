package jsonl

import (
	"io"
	"sync"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
)

const (
	// smallLog is the size up to which readHeadTail reads a whole log at
	// once: a log of a few turns costs one read.
	smallLog = 64 << 10
	// headWindow is what readHeadTail reads from the start of a larger
	// log: the header line or frame 0 and the frame walker's read-ahead.
	headWindow = 16 << 10
	// tailWindow is what it reads from the end of a larger log: the first
	// chunk of the backward frame search.
	tailWindow = 64 << 10
)

// windowBufs recycles the buffers of windowFile.
var windowBufs = sync.Pool{New: func() any {
	b := make([]byte, headWindow+tailWindow)
	return &b
}}

// windowFile serves reads from the head and the tail of a file read once
// ahead of time, and reads anything else from the file. It is used for
// one metadata read of an open log, whose bytes below the size it was
// made for do not change meanwhile (logs are append-only, and a writer
// truncates only a torn tail, which readers never serve).
type windowFile struct {
	file
	head    []byte // bytes [0, len(head))
	tail    []byte // bytes [tailOff, tailOff+len(tail)), which ends at size
	tailOff int64
	size    int64
	buf     *[]byte
}

// newWindowFile reads the head and the tail of f, a file of size bytes.
// release must be called when done with it.
func newWindowFile(f file, size int64) (*windowFile, error) {
	buf := windowBufs.Get().(*[]byte)
	w := &windowFile{file: f, size: size, buf: buf}
	b := *buf
	if size <= smallLog {
		if int64(cap(b)) < size {
			b = make([]byte, size)
		}
		b = b[:size]
		if err := osfs.ReadFullAt(f, b, 0); err != nil {
			w.release()
			return nil, err
		}
		w.head, w.tail = b, b
		return w, nil
	}
	b = b[:headWindow+tailWindow]
	w.head, w.tail, w.tailOff = b[:headWindow], b[headWindow:], size-tailWindow
	if err := osfs.ReadFullAt(f, w.head, 0); err != nil {
		w.release()
		return nil, err
	}
	if err := osfs.ReadFullAt(f, w.tail, w.tailOff); err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// whole reports whether the window holds the whole file.
func (w *windowFile) whole() bool { return int64(len(w.head)) == w.size }

// ReadAt reads from the window what it holds. A read past the size the
// window was made for ends there with io.EOF, as the file's read would:
// the window is used only while the log is unchanged.
func (w *windowFile) ReadAt(p []byte, off int64) (int, error) {
	var eof error
	if off >= w.size && len(p) > 0 {
		return 0, io.EOF
	}
	if off >= 0 && off+int64(len(p)) > w.size {
		p, eof = p[:max(w.size-off, 0)], io.EOF
	}
	n := int64(len(p))
	switch {
	case off >= 0 && off+n <= int64(len(w.head)):
		return copy(p, w.head[off:]), eof
	case off >= w.tailOff && off+n <= w.tailOff+int64(len(w.tail)):
		return copy(p, w.tail[off-w.tailOff:]), eof
	}
	m, err := w.file.ReadAt(p, off)
	if err == nil {
		err = eof
	}
	return m, err
}

// release gives the buffers back; w must not be used afterwards.
func (w *windowFile) release() {
	if w.buf != nil && cap(*w.buf) >= headWindow+tailWindow && cap(*w.buf) <= 2*(headWindow+tailWindow) {
		windowBufs.Put(w.buf)
	}
	w.buf, w.head, w.tail = nil, nil, nil
}
