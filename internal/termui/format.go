package termui

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// Timestamp renders epoch ms the way dshctl's JSON and plain output give
// every time: RFC 3339 in UTC with exactly three fraction digits
// ("2026-07-29T13:31:58.180Z"), so that string order is time order.
func Timestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// JSONTime returns the two JSON fields of a time dsh keeps as epoch ms: the
// Timestamp and its "…Ms" twin, both null (nil) when ok is false because
// the time is unknown or there is none. A JSON type declares the pair as
//
//	CreatedAt   *string `json:"createdAt"`
//	CreatedAtMs *int64  `json:"createdAtMs"`
//
// and sets it with v.CreatedAt, v.CreatedAtMs = termui.JSONTime(ms, true).
func JSONTime(ms int64, ok bool) (*string, *int64) {
	if !ok {
		return nil, nil
	}
	s := Timestamp(ms)
	return &s, &ms
}

// RelTime renders an epoch-ms time for people: "3h ago".
func RelTime(ms int64, now time.Time) string {
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

// Bytes renders a size for people, like ls -h.
func Bytes(n int64) string {
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

// Count renders n with its noun, plural when n is not 1: "1 event",
// "3 events".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// OrNull is s as a JSON string member that is always present: null when
// s is empty.
func OrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// WriteJSON writes v as indented JSON, or as one compact line.
func WriteJSON(w io.Writer, indent bool, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// SortedKeys returns the keys of m in order, for stable output.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
