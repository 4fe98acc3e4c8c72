package termui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Exit statuses, as cli.md defines them.
const (
	ExitOK       = 0
	ExitError    = 1 // operational: not found, I/O, lock busy, corrupt store
	ExitUsage    = 2 // unknown flag, bad argument
	ExitFindings = 3 // the check ran and found problems
)

// UsageError marks an error as the user's misuse of the command line.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usage marks err as the user's misuse of the command line.
func Usage(err error) error { return UsageError{err} }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// FindingsError says a check ran and found problems. Its message has been
// printed already, as part of the report.
type FindingsError struct{ Summary string }

func (f FindingsError) Error() string { return f.Summary }

// Findings is a FindingsError: the report said it, the status is ExitFindings.
func Findings(summary string) error { return FindingsError{summary} }

// SilentError ends a command with ExitError and no message: a search that
// found nothing, which grep says by its status alone.
type SilentError struct{ Reason string }

func (s SilentError) Error() string { return s.Reason }

// Silent is a SilentError: exit status ExitError, nothing printed.
func Silent(reason string) error { return SilentError{reason} }

// HintError adds a second line telling the user what to do next.
type HintError struct {
	Err  error
	Hint string
}

func (h HintError) Error() string { return h.Err.Error() }
func (h HintError) Unwrap() error { return h.Err }

// WithHint is err with a hint line.
func WithHint(err error, hint string) error { return HintError{err, hint} }

// InvalidValue is the usage error of a flag value that does not parse:
// name and value as given, kind the flag's type ("int", "bool", …), err
// what parsing said. It says what is wrong, not strconv's message.
func InvalidValue(name, value, kind string, err error) error {
	why := "not a valid value"
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange):
		why = "out of range"
	case errors.As(err, &ne) && strings.HasPrefix(kind, "bool"):
		why = "not true or false"
	case errors.As(err, &ne):
		why = "not a number"
	}
	return Usagef("invalid --%s %q: %s", name, value, why)
}

// OneLineError is err's message as errors are printed: on one line, with
// no control characters (OneLine), whatever paths or values of a hostile
// store it quotes.
func OneLineError(err error) string { return OneLine(err.Error()) }

// Hint is the hint err carries (WithHint, or an error with a Hint
// method: one that knows its fix), on one line; "" when it has none.
func Hint(err error) string {
	var h HintError
	var hinted interface{ Hint() string }
	switch {
	case errors.As(err, &h) && h.Hint != "":
		return OneLine(h.Hint)
	case errors.As(err, &hinted):
		return OneLine(hinted.Hint())
	}
	return ""
}

// Report prints err to w the way cli.md asks, "dshctl: " and one line,
// then its hint line, and returns the exit status: ExitFindings (nothing
// printed: the report said it), ExitError for a SilentError (nothing
// printed), ExitUsage (with a hint to run helpCmd
// --help), else ExitError; ExitOK for nil.
func Report(w io.Writer, err error, helpCmd string) int {
	if err == nil {
		return ExitOK
	}
	var f FindingsError
	if errors.As(err, &f) {
		return ExitFindings
	}
	var q SilentError
	if errors.As(err, &q) {
		return ExitError
	}
	msg := OneLineError(err)
	if errors.Is(err, context.Canceled) {
		// Ctrl-C or SIGTERM: reads stop where they are, and a write has
		// either finished or not started.
		msg = "interrupted"
	}
	fmt.Fprintf(w, "dshctl: %s\n", msg)
	if h := Hint(err); h != "" {
		fmt.Fprintf(w, "hint: %s\n", h)
	}
	var u UsageError
	if errors.As(err, &u) {
		fmt.Fprintf(w, "hint: run '%s --help' for usage\n", helpCmd)
		return ExitUsage
	}
	return ExitError
}
