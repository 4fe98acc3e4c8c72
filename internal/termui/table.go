package termui

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table prints rows the way gh does. On a terminal: an aligned table under
// a header, fitted to the terminal's width by cutting the widest of the
// columns that may give way (by default all but the first, which is the
// id). Otherwise: one line per row of
// tab-separated fields, no header, no padding, so that cut -f and
// awk -F'\t' work; the caller gives machine values then (full ids, RFC 3339
// times, integer bytes, one-word states), deciding by TTY().
type Table struct {
	w      io.Writer
	isTTY  bool
	width  int
	header []string
	// keep marks the columns that fitting never cuts.
	keep []bool
	// drop are the columns left out, in this order, while the table is
	// still too wide once cut.
	drop []int
	rows [][]string
	// short are the cells' shorter forms, by row and column (Short).
	short map[[2]int]string
}

// NewTable returns a table with the given column names for w: for people
// when tty, then fitted to width columns.
func NewTable(w io.Writer, tty bool, width int, header ...string) *Table {
	t := &Table{w: w, isTTY: tty, width: width, header: header, keep: make([]bool, len(header))}
	if len(header) > 0 {
		t.keep[0] = true
	}
	return t
}

// TTY reports whether the table is for people: then cells hold human
// values, else machine values.
func (t *Table) TTY() bool { return t.isTTY }

// GiveWay says which columns may be cut to fit the terminal (long text,
// like paths), instead of all but the first; the others are never cut.
func (t *Table) GiveWay(cols ...int) {
	for j := range t.keep {
		t.keep[j] = true
	}
	for _, c := range cols {
		t.keep[c] = false
	}
}

// Drop says which columns of low value are left out, in the order given,
// while the table does not fit the terminal even with the give-way
// columns cut to their minimum (as kubectl and gh do).
func (t *Table) Drop(cols ...int) { t.drop = cols }

// Row adds a row; it must have a cell per column.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Short gives the cell of column col of the last row a shorter form,
// shown instead of cutting the cell when the column is too narrow for it:
// fitting cuts that column no narrower than its short forms.
func (t *Table) Short(col int, short string) {
	if t.short == nil {
		t.short = map[[2]int]string{}
	}
	t.short[[2]int{len(t.rows) - 1, col}] = short
}

// Render writes the table.
func (t *Table) Render() error {
	if !t.isTTY {
		return t.renderPlain()
	}
	rows := make([][]string, len(t.rows))
	short := make([][]string, len(t.rows)) // by row and column, "" for none
	floor := make([]int, len(t.header))    // the widest short form of each column
	for i, r := range t.rows {
		rows[i], short[i] = make([]string, len(r)), make([]string, len(r))
		for j, c := range r {
			rows[i][j] = OneLine(c)
			if s, ok := t.short[[2]int{i, j}]; ok {
				short[i][j] = OneLine(s)
				floor[j] = max(floor[j], twwidth.Width(short[i][j]))
			}
		}
	}
	header, keep := t.header, t.keep
	widths := fitWidths(header, rows, keep, floor, t.width)
	cols := make([]int, len(header)) // the columns left, by index in t.header
	for j := range cols {
		cols[j] = j
	}
	for _, d := range t.drop {
		at := slices.Index(cols, d)
		if tableWidth(widths) <= t.width || at < 0 {
			break
		}
		cols = slices.Delete(cols, at, at+1)
		header, keep = slices.Delete(slices.Clone(header), at, at+1), slices.Delete(slices.Clone(keep), at, at+1)
		floor = slices.Delete(slices.Clone(floor), at, at+1)
		for i := range rows {
			rows[i], short[i] = slices.Delete(rows[i], at, at+1), slices.Delete(short[i], at, at+1)
		}
		widths = fitWidths(header, rows, keep, floor, t.width)
	}
	for i, r := range rows {
		for j := range r {
			switch {
			case twwidth.Width(r[j]) <= widths[j]:
			case short[i][j] != "" && twwidth.Width(short[i][j]) <= widths[j]:
				r[j] = short[i][j]
			default:
				r[j] = twwidth.Truncate(r[j], widths[j], "…")
			}
		}
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Right: "  ", Overwrite: true}},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Right: "  ", Overwrite: true}},
			},
		}),
	)
	tbl.Header(header)
	if err := tbl.Bulk(rows); err != nil {
		return err
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	// The padding after the last column is no part of the table.
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	var out bytes.Buffer
	for _, l := range lines {
		if len(l) == 0 {
			continue
		}
		out.Write(bytes.TrimRight(l, " \n"))
		out.WriteByte('\n')
	}
	_, err := t.w.Write(out.Bytes())
	return err
}

// renderPlain writes the rows as tab-separated fields.
func (t *Table) renderPlain() error {
	var b bytes.Buffer
	for _, r := range t.rows {
		for j, c := range r {
			if j > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(PlainField(c))
		}
		b.WriteByte('\n')
	}
	_, err := t.w.Write(b.Bytes())
	return err
}

// PlainField keeps a field on its line and in its column: tabs and line
// breaks (which a cwd may hold) become spaces.
func PlainField(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// OneLine makes a value one line of printable text for a terminal: a line
// break would break a table, and a control character could move the
// cursor.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '\uFFFD'
		}
		return r
	}, s)
}

// columnGap is the space between the columns of a table for people.
const columnGap = 2

// minCut is the narrowest a cut column becomes, unless its values are
// narrower.
const minCut = 8

// tableWidth is the width of a table of columns this wide.
func tableWidth(widths []int) int {
	total := columnGap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	return total
}

// fitWidths returns the width of each column so that the table fits width:
// every column as wide as its widest cell; when that is too wide, the
// widest columns not marked keep are cut down, the widest first, to no less
// than minCut or their floor (the widest short form of their cells). A
// table of kept columns wider than the terminal stays wide.
func fitWidths(header []string, rows [][]string, keep []bool, floor []int, width int) []int {
	widths := make([]int, len(header))
	for j, h := range header {
		widths[j] = twwidth.Width(h)
	}
	for _, r := range rows {
		for j, c := range r {
			widths[j] = max(widths[j], twwidth.Width(c))
		}
	}
	total := tableWidth(widths)
	for total > width {
		// Cut the widest cuttable column down to the next widest (or by
		// just enough); columns of equal width shrink by turns.
		widest, next := -1, 0
		for j, w := range widths {
			if keep[j] || w <= max(minCut, floor[j]) {
				continue
			}
			if widest < 0 || w > widths[widest] {
				widest = j
			}
		}
		if widest < 0 {
			break
		}
		for j, w := range widths {
			if j != widest && !keep[j] {
				next = max(next, w)
			}
		}
		cut := min(widths[widest]-max(next, minCut, floor[widest]), total-width)
		if cut <= 0 {
			cut = 1 // ties: shrink one at a time
		}
		widths[widest] -= cut
		total -= cut
	}
	return widths
}
