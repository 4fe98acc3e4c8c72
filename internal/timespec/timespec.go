// Package timespec reads the times users give on the command line
// (--since and --until), in the forms journalctl takes, and the spans of
// time they make.
package timespec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Forms describes the forms Parse accepts, for error messages and help.
const Forms = `a time (2026-12-01T13:00:00Z or with an offset, "2026-12-01 13:00", 13:00 today), a date (2026-12-01, at 00:00), ` +
	`a time ago (90s, 15m, 2h, 3d, 1w, "1h30m ago"; +2h from now), now, today, yesterday, tomorrow, or @EPOCH-SECONDS`

// ErrSyntax is the error of a string that is none of the forms.
var ErrSyntax = errors.New("not a time")

// Parse reads s as a point in time, relative to now; dates and times
// without an offset are in loc:
//
//   - RFC 3339 (2026-12-01T13:00:00Z, 2026-12-01T13:00:00.250+02:00), a
//     space allowed for the T, seconds and the offset optional
//     ("2026-12-01 13:00" is 13:00 in loc);
//   - a date, 2026-12-01: its first instant, 00:00:00 in loc (as
//     journalctl: --until 2026-12-01 ends before that day);
//   - a time of day, 13:00 or 13:00:05: today in loc;
//   - now, today, yesterday, tomorrow (the last three at 00:00 in loc);
//   - a span before now: 2h, 3d, 1h30m, "2h ago", -2h; after now: +2h. The
//     units are us, ms, s, m (min), h, d, w, M (month, 30.44 days) and y
//     (365.25 days), with their long names (sec, seconds, minutes, hours,
//     days, weeks, months, years);
//   - @N: N seconds (a fraction allowed) after the Unix epoch.
func Parse(s string, now time.Time, loc *time.Location) (time.Time, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return time.Time{}, ErrSyntax
	}
	now = now.In(loc)
	midnight := func(days int) time.Time {
		y, m, d := now.Date()
		return time.Date(y, m, d+days, 0, 0, 0, 0, loc)
	}
	switch strings.ToLower(in) {
	case "now":
		return now, nil
	case "today":
		return midnight(0), nil
	case "yesterday":
		return midnight(-1), nil
	case "tomorrow":
		return midnight(1), nil
	}
	if rest, ok := strings.CutPrefix(in, "@"); ok {
		f, err := strconv.ParseFloat(rest, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e13 || rest != strings.TrimSpace(rest) {
			return time.Time{}, ErrSyntax
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))).In(loc), nil
	}
	if t, ok := parseAbsolute(in, now, loc); ok {
		return t, nil
	}
	sign, body := -1, in
	switch {
	case strings.HasPrefix(in, "-"):
		body = in[1:]
	case strings.HasPrefix(in, "+"):
		sign, body = 1, in[1:]
	default:
		if b, ok := strings.CutSuffix(in, " ago"); ok {
			body = b
		} else if b, ok := strings.CutSuffix(in, " left"); ok {
			sign, body = 1, b
		}
	}
	d, err := parseSpan(strings.TrimSpace(body))
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(time.Duration(sign) * d), nil
}

// absoluteLayouts are the layouts of dates and times Parse reads, with
// an offset (first) or without one (in loc).
var (
	zoned = []string{
		time.RFC3339Nano,
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04Z07:00",
		"2006-01-02 15:04Z07:00",
	}
	local = []string{
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04",
		"2006-01-02 15:04",
		"2006-01-02",
	}
	clock = []string{"15:04:05.999999999", "15:04"}
)

func parseAbsolute(s string, now time.Time, loc *time.Location) (time.Time, bool) {
	for _, l := range zoned {
		if t, err := time.Parse(l, s); err == nil {
			return t.In(loc), true
		}
	}
	for _, l := range local {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	for _, l := range clock {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc), true
		}
	}
	return time.Time{}, false
}

// units are the span units and their lengths, as systemd.time(7) defines
// them.
var units = map[string]time.Duration{
	"us": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	"M": month, "month": month, "months": month,
	"y": year, "year": year, "years": year,
}

const (
	month = 2629800 * time.Second  // 30.44 days
	year  = 31557600 * time.Second // 365.25 days
)

// parseSpan reads a span: numbers each followed by a unit ("1h30m", "2 h
// 30 min"). Unlike systemd.time(7), a number needs its unit: 2026 alone
// would be seconds, not a year.
func parseSpan(s string) (time.Duration, error) {
	if s == "" {
		return 0, ErrSyntax
	}
	var total time.Duration
	for s != "" {
		s = strings.TrimLeft(s, " ")
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, ErrSyntax
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, ErrSyntax
		}
		s = strings.TrimLeft(s[i:], " ")
		j := 0
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		if j == 0 {
			return 0, ErrSyntax
		}
		unit, ok := units[s[:j]]
		if !ok {
			if unit, ok = units[strings.ToLower(s[:j])]; !ok {
				return 0, fmt.Errorf("%w: unknown unit %q", ErrSyntax, s[:j])
			}
		}
		s = s[j:]
		d := n * float64(unit)
		if d > float64(math.MaxInt64)-float64(total) {
			return 0, fmt.Errorf("%w: span too long", ErrSyntax)
		}
		total += time.Duration(d)
	}
	return total, nil
}

// Range is the span of time --since and --until give: the instants at or
// after Since and at or before Until (both in epoch ms, both included, as
// journalctl's). An unset bound is open.
type Range struct {
	Since, Until       int64
	HasSince, HasUntil bool
}

// ParseRange reads --since and --until (either may be empty: an open
// bound) relative to now. A bound that is not a time is a *FlagError,
// and so is a Since after Until.
func ParseRange(since, until string, now time.Time, loc *time.Location) (Range, error) {
	var r Range
	if since != "" {
		t, err := Parse(since, now, loc)
		if err != nil {
			return r, &FlagError{Flag: "since", Value: since, Err: err}
		}
		r.Since, r.HasSince = floorMs(t), true
	}
	if until != "" {
		t, err := Parse(until, now, loc)
		if err != nil {
			return r, &FlagError{Flag: "until", Value: until, Err: err}
		}
		r.Until, r.HasUntil = floorMs(t), true
	}
	if r.HasSince && r.HasUntil && r.Since > r.Until {
		return r, &FlagError{Flag: "until", Value: until, Err: fmt.Errorf("%w: it is before --since %s", ErrOrder, since)}
	}
	return r, nil
}

// ErrOrder is the error of an --until before --since.
var ErrOrder = errors.New("the span is empty")

// floorMs is t in epoch ms, rounded down: an event at 13:00:00.250 is at
// or after a --since of 13:00:00.250999.
func floorMs(t time.Time) int64 { return t.UnixMilli() }

// IsSet reports whether r bounds anything.
func (r Range) IsSet() bool { return r.HasSince || r.HasUntil }

// Contains reports whether the instant ms (epoch ms) is in r.
func (r Range) Contains(ms int64) bool {
	return (!r.HasSince || ms >= r.Since) && (!r.HasUntil || ms <= r.Until)
}

// Meets reports whether the span from..to (epoch ms, from <= to) has an
// instant in r: it starts at or before Until and ends at or after Since.
func (r Range) Meets(from, to int64) bool {
	return (!r.HasSince || to >= r.Since) && (!r.HasUntil || from <= r.Until)
}

// FlagError is a --since or --until that cannot be used.
type FlagError struct {
	Flag, Value string
	Err         error
}

func (e *FlagError) Error() string {
	if errors.Is(e.Err, ErrOrder) {
		return fmt.Sprintf("--%s %q: %v", e.Flag, e.Value, e.Err)
	}
	return fmt.Sprintf("--%s %q: %v: want %s", e.Flag, e.Value, e.Err, Forms)
}

func (e *FlagError) Unwrap() error { return e.Err }
