package termui

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestFitWidths(t *testing.T) {
	header := []string{"ID", "PATH", "NOTE"}
	rows := [][]string{{"abcdef", strings.Repeat("p", 40), strings.Repeat("n", 30)}}
	for _, c := range []struct {
		width int
		keep  []bool
		floor []int
		want  []int
	}{
		{200, []bool{true, false, false}, nil, []int{6, 40, 30}}, // fits: untouched
		{70, []bool{true, false, false}, nil, []int{6, 30, 30}},  // the widest shrinks first, then both by turns
		{20, []bool{true, false, false}, nil, []int{6, minCut, minCut}},
		{60, []bool{true, true, false}, nil, []int{6, 40, 10}},                  // a kept column is never cut
		{10, []bool{true, true, true}, nil, []int{6, 40, 30}},                   // nothing may give way
		{20, []bool{true, false, false}, []int{0, 0, 12}, []int{6, minCut, 12}}, // no narrower than a short form
	} {
		floor := c.floor
		if floor == nil {
			floor = make([]int, len(header))
		}
		got := fitWidths(header, rows, c.keep, floor, c.width)
		if !slices.Equal(got, c.want) {
			t.Errorf("fitWidths(width %d, keep %v) = %v, want %v", c.width, c.keep, got, c.want)
		}
	}
}

func TestTable(t *testing.T) {
	render := func(tty bool, width int) string {
		var b bytes.Buffer
		tb := NewTable(&b, tty, width, "ID", "PROJECT", "SIZE")
		tb.GiveWay(1)
		tb.Row("session-4f1c2a9e", "/home/dev/a\tlong/project/path", "108464")
		tb.Row("s2", "-", "3")
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got, want := render(false, 0), "session-4f1c2a9e\t/home/dev/a long/project/path\t108464\ns2\t-\t3\n"; got != want {
		t.Errorf("plain:\n%q\nwant\n%q", got, want)
	}
	want := "ID                PROJECT      SIZE\nsession-4f1c2a9e  /home/dev/…  108464\ns2                -            3\n"
	if got := render(true, 37); got != want {
		t.Errorf("table:\n%s\nwant\n%s", got, want)
	}
}

func TestTimestamp(t *testing.T) {
	for ms, want := range map[int64]string{
		1785331918180: "2026-07-29T13:31:58.180Z",
		1785331918000: "2026-07-29T13:31:58.000Z",
		1785331918207: "2026-07-29T13:31:58.207Z",
		0:             "1970-01-01T00:00:00.000Z",
	} {
		if got := Timestamp(ms); got != want {
			t.Errorf("Timestamp(%d) = %s, want %s", ms, got, want)
		}
	}
	if s, m := JSONTime(5, false); s != nil || m != nil {
		t.Errorf("JSONTime of an unknown time: %v, %v; want null, null", s, m)
	}
}

// TestTableDrop: columns of low value are left out, in the order given,
// only while the table does not fit once cut.
func TestTableDrop(t *testing.T) {
	render := func(width int) string {
		var b bytes.Buffer
		tb := NewTable(&b, true, width, "ID", "PATH", "A", "B")
		tb.GiveWay(1)
		tb.Drop(3, 2)
		tb.Row("id1", "/a/long/path/to/somewhere", "aaaa", "bbbb")
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for width, want := range map[int]string{
		100: "ID   PATH                       A     B\nid1  /a/long/path/to/somewhere  aaaa  bbbb\n",
		30:  "ID   PATH           A     B\nid1  /a/long/path…  aaaa  bbbb\n",
		22:  "ID   PATH         A\nid1  /a/long/pa…  aaaa\n",
		15:  "ID   PATH\nid1  /a/long/p…\n",
	} {
		if got := render(width); got != want {
			t.Errorf("width %d:\n%s\nwant\n%s", width, got, want)
		}
	}
}

func TestTableShort(t *testing.T) {
	render := func(width int) string {
		var b bytes.Buffer
		tb := NewTable(&b, true, width, "ID", "PROJECT", "PARENT")
		tb.GiveWay(1, 2)
		tb.Row("s1", "/home/dev/projects/demo-app", "subagent of session-4f1c")
		tb.Short(2, "session-4f1c")
		tb.Row("s2", "/srv/repo", "-")
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	wide := render(80)
	if !strings.Contains(wide, "subagent of session-4f1c") {
		t.Errorf("wide table cut the cell:\n%s", wide)
	}
	// Too narrow for the cell: its short form, never a cut id.
	narrow := render(30)
	if !strings.Contains(narrow, "s1  /home/dev/p…  session-4f1c\n") {
		t.Errorf("narrow table:\n%s", narrow)
	}
}
