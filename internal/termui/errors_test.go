package termui

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestReport: an error is one line after "dshctl: ", then its hint; a usage
// error points to the command's help and exits 2; findings print nothing
// (the report said them) and exit 3.
func TestReport(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
		code int
	}{
		{nil, "", ExitOK},
		{errors.New("two\nlines"), "dshctl: two lines\n", ExitError},
		{WithHint(errors.New("gone"), "look elsewhere"), "dshctl: gone\nhint: look elsewhere\n", ExitError},
		{Usagef("bad %s", "flag"), "dshctl: bad flag\nhint: run 'dshctl cat --help' for usage\n", ExitUsage},
		{Usage(WithHint(errors.New("bad"), "try this")), "dshctl: bad\nhint: try this\nhint: run 'dshctl cat --help' for usage\n", ExitUsage},
		{fmt.Errorf("wrapped: %w", Findings("2 errors")), "", ExitFindings},
	} {
		var w bytes.Buffer
		if code := Report(&w, c.err, "dshctl cat"); code != c.code || w.String() != c.want {
			t.Errorf("%v: exit %d, printed %q; want %d, %q", c.err, code, w.String(), c.code, c.want)
		}
	}
}
