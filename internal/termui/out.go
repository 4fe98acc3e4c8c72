package termui

import (
	"io"
	"time"
)

// Output formats: the values of -o.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatJSONL = "jsonl"
	FormatText  = "text"
)

// Out is where a command prints and what it knows of the terminal, for
// the packages that print its results: they decide what is shown, the
// command line where.
type Out struct {
	Stdout, Stderr io.Writer
	// TTY and ErrTTY say whether Stdout and Stderr are terminals.
	TTY, ErrTTY bool
	// Width is the width output for people fits (Columns); Colour says
	// whether it may be coloured (Colour).
	Width  int
	Colour bool
	Now    func() time.Time
	// Format is the -o value: FormatTable, FormatJSON, FormatJSONL or
	// FormatText.
	Format string
}

// IsJSON reports whether the format is FormatJSON or FormatJSONL.
func (o Out) IsJSON() bool { return o.Format == FormatJSON || o.Format == FormatJSONL }

// NewTable is a table on w (Stdout, or a buffer in front of it).
func (o Out) NewTable(w io.Writer, header ...string) *Table {
	return NewTable(w, o.TTY, o.Width, header...)
}

// NewProgress is a bar of total items on Stderr, for people only: never
// when Stderr is not a terminal or the output is JSON.
func (o Out) NewProgress(what string, total int) *Progress {
	return NewProgress(o.Stderr, o.ErrTTY && !o.IsJSON(), o.Now, what, total)
}

// WriteJSON writes v as the format asks: indented for FormatJSON, one
// line for FormatJSONL.
func (o Out) WriteJSON(w io.Writer, v any) error { return WriteJSON(w, o.Format == FormatJSON, v) }

// Bar is a progress bar made once the size of the work is known (see
// NewProgress): Start, or the first Track, makes it.
type Bar struct {
	o    Out
	what string
	p    *Progress
	done int64
}

// NewBar is a Bar named what.
func (o Out) NewBar(what string) *Bar { return &Bar{o: o, what: what} }

// Start makes the bar for total items and returns Step, to call as each is
// done.
func (b *Bar) Start(total int) func() {
	b.p, b.done = b.o.NewProgress(b.what, total), 0
	return b.Step
}

// Step records one more item done.
func (b *Bar) Step() { b.p.Add(1) }

// Track records that done of total items are done, making the bar at its
// first call.
func (b *Bar) Track(done, total int64) {
	if b.p == nil {
		b.p = b.o.NewProgress(b.what, int(total))
	}
	b.p.Add(int(done - b.done))
	b.done = done
}

// Finish clears the bar, if one was shown.
func (b *Bar) Finish() { b.p.Finish() }
