package timespec

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tz := time.FixedZone("UTC+2", 2*3600)
	now := time.Date(2026, 12, 2, 15, 30, 45, 500_000_000, tz) // 13:30:45.5Z
	at := func(y int, m time.Month, d, h, mi, s, ns int, loc *time.Location) time.Time {
		return time.Date(y, m, d, h, mi, s, ns, loc)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-12-01T13:00:00Z", at(2026, 12, 1, 13, 0, 0, 0, time.UTC)},
		{"2026-12-01T13:00:00.250Z", at(2026, 12, 1, 13, 0, 0, 250_000_000, time.UTC)},
		{"2026-12-01T13:00:00+05:00", at(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{"2026-12-01 13:00:00Z", at(2026, 12, 1, 13, 0, 0, 0, time.UTC)},
		{"2026-12-01T13:00Z", at(2026, 12, 1, 13, 0, 0, 0, time.UTC)},
		// Without an offset: in loc.
		{"2026-12-01T13:00:00", at(2026, 12, 1, 13, 0, 0, 0, tz)},
		{"2026-12-01 13:00", at(2026, 12, 1, 13, 0, 0, 0, tz)},
		{"2026-12-01", at(2026, 12, 1, 0, 0, 0, 0, tz)},
		{"13:00", at(2026, 12, 2, 13, 0, 0, 0, tz)},
		{"08:15:30", at(2026, 12, 2, 8, 15, 30, 0, tz)},
		{"now", now},
		{"today", at(2026, 12, 2, 0, 0, 0, 0, tz)},
		{"Yesterday", at(2026, 12, 1, 0, 0, 0, 0, tz)},
		{"tomorrow", at(2026, 12, 3, 0, 0, 0, 0, tz)},
		{"2h", now.Add(-2 * time.Hour)},
		{"-2h", now.Add(-2 * time.Hour)},
		{"2h ago", now.Add(-2 * time.Hour)},
		{"+2h", now.Add(2 * time.Hour)},
		{"2h left", now.Add(2 * time.Hour)},
		{"3d", now.Add(-72 * time.Hour)},
		{"1w", now.Add(-7 * 24 * time.Hour)},
		{"1h30m", now.Add(-90 * time.Minute)},
		{"1h 30min", now.Add(-90 * time.Minute)},
		{"90s", now.Add(-90 * time.Second)},
		{"15 minutes ago", now.Add(-15 * time.Minute)},
		{"500ms", now.Add(-500 * time.Millisecond)},
		{"1.5h", now.Add(-90 * time.Minute)},
		{"1M", now.Add(-month)},
		{"1y", now.Add(-year)},
		{"@1785331918", time.Unix(1785331918, 0)},
		{"@1785331918.25", time.Unix(1785331918, 250_000_000)},
		{"  2h  ", now.Add(-2 * time.Hour)},
	} {
		got, err := Parse(tc.in, now, tz)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{"", "soon", "2", "2026", "2x", "h", "-", "2h ago ago", "2026-13-01", "2026-12-01T25:00", "@", "@x", "@NaN", "@1e300", "1h-", "2 h x"} {
		if got, err := Parse(in, now, tz); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, %v; want ErrSyntax", in, got, err)
		}
	}
}

func TestParseRange(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	r, err := ParseRange("2026-12-01", "1h", now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	want := Range{Since: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), HasSince: true,
		Until: now.Add(-time.Hour).UnixMilli(), HasUntil: true}
	if r != want {
		t.Errorf("ParseRange = %+v, want %+v", r, want)
	}
	if r, err := ParseRange("", "", now, time.UTC); err != nil || r.IsSet() {
		t.Errorf("no bounds: %+v, %v", r, err)
	}
	var fe *FlagError
	if _, err := ParseRange("bogus", "", now, time.UTC); !errors.As(err, &fe) || fe.Flag != "since" || !errors.Is(err, ErrSyntax) {
		t.Errorf("a bad --since: %v", err)
	}
	if _, err := ParseRange("1h", "2h", now, time.UTC); !errors.As(err, &fe) || fe.Flag != "until" || !errors.Is(err, ErrOrder) {
		t.Errorf("--until before --since: %v", err)
	}
}

func TestRange(t *testing.T) {
	r := Range{Since: 100, HasSince: true, Until: 200, HasUntil: true}
	for _, tc := range []struct {
		ms   int64
		want bool
	}{{99, false}, {100, true}, {150, true}, {200, true}, {201, false}} {
		if got := r.Contains(tc.ms); got != tc.want {
			t.Errorf("Contains(%d) = %v", tc.ms, got)
		}
	}
	for _, tc := range []struct {
		from, to int64
		want     bool
	}{{0, 99, false}, {0, 100, true}, {150, 160, true}, {200, 300, true}, {201, 300, false}, {0, 1000, true}} {
		if got := r.Meets(tc.from, tc.to); got != tc.want {
			t.Errorf("Meets(%d, %d) = %v", tc.from, tc.to, got)
		}
	}
	open := Range{Until: 50, HasUntil: true}
	if !open.Contains(-5) || open.Contains(51) || !open.Meets(40, 1000) {
		t.Error("an open --since")
	}
}
