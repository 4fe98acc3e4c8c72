package termui

import (
	"testing"
	"time"
)

func TestRelTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{5 * time.Second, "5s ago"},
		{3 * time.Minute, "3m ago"},
		{3 * time.Hour, "3h ago"},
		{47 * time.Hour, "47h ago"},
		{3 * 24 * time.Hour, "3d ago"},
		{120 * 24 * time.Hour, "4mo ago"},
		{800 * 24 * time.Hour, "2y ago"},
		{-2 * time.Hour, "in 2h"},
	} {
		if got := RelTime(now.Add(-tc.ago).UnixMilli(), now); got != tc.want {
			t.Errorf("RelTime(-%v) = %q, want %q", tc.ago, got, tc.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 108464: "105.9 KiB", 12 << 20: "12.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
