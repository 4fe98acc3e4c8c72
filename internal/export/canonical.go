// Package export serializes a session's log from what a read handle serves,
// so that every backend gives the same bytes for the same logical session:
// the canonical JSONL log (what `cat` prints and an export archives), the
// same log as one JSON document, and the records as stored; and the
// deterministic, streamed ZIP of a session and its descendants (Session,
// ToDir).
package export

import (
	"io"

	"github.com/dshctl/dshctl/internal/seam"
)

// Canonical writes a session's canonical log to a writer: the header line
// in its format's shape (see Header), then one line per logical event (packed
// rows and sourceEventSeqs ranges expanded, keys in dsh's order), each
// ending in a newline: what cat prints and an export archives, byte for
// byte. It is an inspect.Sink, and writes each line with one Write.
type Canonical struct {
	w   io.Writer
	buf []byte
}

// NewCanonical returns a Canonical writing to w.
func NewCanonical(w io.Writer) *Canonical { return &Canonical{w: w} }

// Header writes the header line.
func (c *Canonical) Header(h *seam.Header) error {
	line := Header(*h)
	c.buf = append(line.AppendJSON(c.buf[:0]), '\n')
	_, err := c.w.Write(c.buf)
	return err
}

// Event writes the line of e.
func (c *Canonical) Event(e *seam.Event) error {
	c.buf = append(e.AppendJSON(c.buf[:0]), '\n')
	_, err := c.w.Write(c.buf)
	return err
}

// Closers does nothing: closers are written as events.
func (c *Canonical) Closers(int) error { return nil }

// End does nothing: the log ends with its last line.
func (c *Canonical) End() error { return nil }

// Flush flushes the writer, if it buffers.
func (c *Canonical) Flush() error { return flush(c.w) }

// Document writes a session's log as one JSON document:
// {"header": …, "events": [one per line], "closers": [when asked]}, the
// header and events as Canonical writes them. It is an inspect.Sink.
type Document struct {
	w     io.Writer
	buf   []byte
	first bool
}

// NewDocument returns a Document writing to w.
func NewDocument(w io.Writer) *Document { return &Document{w: w, first: true} }

// Header opens the document with the header, as Canonical writes it.
func (d *Document) Header(h *seam.Header) error {
	line := Header(*h)
	d.buf = append(d.buf[:0], `{"header":`...)
	d.buf = line.AppendJSON(d.buf)
	d.buf = append(d.buf, ",\n\"events\":["...)
	_, err := d.w.Write(d.buf)
	return err
}

// Event adds e to the current array.
func (d *Document) Event(e *seam.Event) error {
	d.buf = d.buf[:0]
	if !d.first {
		d.buf = append(d.buf, ',')
	}
	d.first = false
	d.buf = append(d.buf, "\n  "...)
	d.buf = e.AppendJSON(d.buf)
	_, err := d.w.Write(d.buf)
	return err
}

// Closers closes the events and opens the closers.
func (d *Document) Closers(int) error {
	d.first = true
	_, err := io.WriteString(d.w, "\n],\n\"closers\":[")
	return err
}

// End closes the document.
func (d *Document) End() error {
	_, err := io.WriteString(d.w, "\n]}\n")
	return err
}

// Flush flushes the writer, if it buffers.
func (d *Document) Flush() error { return flush(d.w) }

func flush(w io.Writer) error {
	if f, ok := w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
