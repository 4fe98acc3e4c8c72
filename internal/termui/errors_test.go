package termui

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
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
		// A hostile store's path cannot drive the terminal or break the line.
		{WithHint(errors.New("open /s/--a\x1b[31mb\rc--/x: bad"), "see /s/\x1b]0;t\x07"), `dshctl: "open /s/--a\x1b[31mb c--/x: bad"` + "\n" + `hint: "see /s/\x1b]0;t\a"` + "\n", ExitError},
		// Invalid UTF-8 is escaped, not made U+FFFD, line breaks or not.
		{errors.New("bad \xff\nbyte"), `dshctl: "bad \xff byte"` + "\n", ExitError},
		{errors.New("bad \xff"), `dshctl: "bad \xff"` + "\n", ExitError},
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

// TestInvalidValue: a flag value that does not parse says why in words.
func TestInvalidValue(t *testing.T) {
	_, rng := strconv.ParseInt("99999999999999999999", 10, 64)
	_, syn := strconv.ParseInt("x", 10, 64)
	_, bl := strconv.ParseBool("maybe")
	for _, c := range []struct {
		kind string
		err  error
		want string
	}{
		{"int64", rng, `invalid --n "v": out of range`},
		{"int", syn, `invalid --n "v": not a number`},
		{"bool", bl, `invalid --n "v": not true or false`},
		{"duration", errors.New("bad"), `invalid --n "v": not a valid value`},
	} {
		err := InvalidValue("n", "v", c.kind, fmt.Errorf("parse: %w", c.err))
		var u UsageError
		if err.Error() != c.want || !errors.As(err, &u) {
			t.Errorf("%s: %v", c.kind, err)
		}
	}
}
