package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Output formats.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatJSONL = "jsonl"
	formatText  = "text"
)

// Formats of the commands, for -o and its completion (setFormats).
var (
	listFormats = []string{formatTable, formatJSON, formatJSONL}
	catFormats  = []string{formatJSONL, formatJSON, formatText}
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

// timestamp renders epoch ms the way dshctl's JSON and plain output give
// every time: RFC 3339 in UTC with exactly three fraction digits
// ("2026-07-29T13:31:58.180Z"), so that string order is time order.
func timestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// jsonTime returns the two JSON fields of a time dsh keeps as epoch ms: the
// timestamp and its "…Ms" twin, both null (nil) when ok is false because
// the time is unknown or there is none. A JSON type declares the pair as
//
//	CreatedAt   *string `json:"createdAt"`
//	CreatedAtMs *int64  `json:"createdAtMs"`
//
// and sets it with v.CreatedAt, v.CreatedAtMs = jsonTime(ms, true).
func jsonTime(ms int64, ok bool) (*string, *int64) {
	if !ok {
		return nil, nil
	}
	s := timestamp(ms)
	return &s, &ms
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

// fieldList is a single object's fields, each with a value for people and
// one for scripts.
type fieldList []field

type field struct {
	key, human, plain string
	// quiet fields are left out for people: an absent value.
	quiet bool
}

func (f *fieldList) add(key, human, plain string) {
	*f = append(*f, field{key: key, human: human, plain: plain})
}

// opt adds a field people see only when it has a value; scripts always
// get the key, so that every report has the same lines.
func (f *fieldList) opt(key, human, plain string) {
	*f = append(*f, field{key: key, human: human, plain: plain, quiet: human == ""})
}

// time adds a time: "3h ago (2026-07-29T13:31:58.180Z)" for people.
func (f *fieldList) time(key string, ms int64, now time.Time, note string) {
	f.add(key, fmt.Sprintf("%s (%s)%s", relTime(ms, now), timestamp(ms), note), timestamp(ms))
}

// tail adds a tail's size: "none", or its bytes and what becomes of them.
func (f *fieldList) tail(key string, n int64, fate string) {
	human := "none"
	if n > 0 {
		human = fmt.Sprintf("%d bytes (%s)", n, fate)
	}
	f.add(key, human, strconv.FormatInt(n, 10))
}

// print writes the fields: aligned for a terminal, tab-separated otherwise.
func (f *fieldList) print(e *env) error {
	if !e.stdoutTTY {
		var b strings.Builder
		for _, fd := range *f {
			b.WriteString(strings.TrimSpace(fd.key) + ":\t" + plainField(fd.plain) + "\n")
		}
		_, err := io.WriteString(e.stdout, b.String())
		return err
	}
	k := newKV(e.stdout)
	for _, fd := range *f {
		if !fd.quiet {
			k.add(fd.key, "%s", oneLineCell(fd.human))
		}
	}
	return k.flush()
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
