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
