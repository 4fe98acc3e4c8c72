package main

import "testing"

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"134217728", 134217728, true},
		{"128MiB", 128 << 20, true},
		{"128 MiB", 128 << 20, true},
		{"1KiB", 1024, true},
		{"2GiB", 2 << 30, true},
		{"1TiB", 1 << 40, true},
		{"512B", 512, true},
		{"0", 0, true}, // the flags say "positive" themselves
		{"128MB", 0, false},
		{"128mib", 0, false},
		{"1.5GiB", 0, false},
		{"-1", 0, false},
		{"", 0, false},
		{"MiB", 0, false},
		{"0x10", 0, false},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"8388608TiB", 0, false}, // 2^63
	} {
		got, err := parseBytes(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for n, want := range map[int64]string{32 << 20: "32MiB", 256 << 10: "256KiB", 1000: "1000", 0: "0", 3 << 30: "3GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
