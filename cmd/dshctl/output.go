package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Output formats.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatJSONL = "jsonl"
	formatText  = "text"
)

// outputFormat returns the -o value, defaulting to def, or a usage error
// when the command does not support it.
func (g *globals) outputFormat(def string, allowed ...string) (string, error) {
	f := g.output
	if f == "" {
		return def, nil
	}
	if !slices.Contains(allowed, f) {
		return "", usagef("unsupported output format %q (want %s)", f, strings.Join(allowed, "|"))
	}
	return f, nil
}

// writeJSON writes v as indented JSON (json) or one compact line (jsonl).
func writeJSON(w io.Writer, format string, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if format == formatJSON {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// relTime renders an epoch-ms timestamp for people: "3h ago".
func relTime(ms int64, now time.Time) string {
	d := now.Sub(time.UnixMilli(ms))
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(d.Hours()))
	case d < 60*24*time.Hour:
		s = fmt.Sprintf("%dd", int(d.Hours()/24))
	case d < 365*24*time.Hour:
		s = fmt.Sprintf("%dmo", int(d.Hours()/24/30))
	default:
		s = fmt.Sprintf("%dy", int(d.Hours()/24/365))
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// humanBytes renders a size like ls -h.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// renderTable prints rows under a header as a borderless table, the way gh
// prints lists.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
			},
			Row: tw.CellConfig{Alignment: tw.CellAlignment{Global: tw.AlignLeft}},
		}),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// kv prints aligned key/value pairs for a single object.
type kv struct{ w *tabwriter.Writer }

func newKV(w io.Writer) *kv { return &kv{w: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)} }

func (k *kv) add(key, format string, args ...any) {
	fmt.Fprintf(k.w, "%s:\t%s\n", key, fmt.Sprintf(format, args...))
}

func (k *kv) flush() error { return k.w.Flush() }

// sortedKeys returns the keys of m in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// count renders n with its noun, plural when n is not 1: "1 event", "3 events".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
