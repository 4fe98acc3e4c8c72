package main

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// enum is the one list of values a flag takes, like gh's StringEnumFlag:
// the flag's validation, its help and its shell completion all read it,
// so they cannot disagree.
type enum struct {
	// values are offered: shown in the help and completed.
	values []string
	// also are accepted too, each as the value it maps to (a synonym, or
	// itself for a value not offered).
	also map[string]string
}

// oneOf is an enum of values.
func oneOf(values ...string) enum { return enum{values: values} }

// accept returns v's value, and whether the enum takes it.
func (en enum) accept(v string) (string, bool) {
	if slices.Contains(en.values, v) {
		return v, true
	}
	to, ok := en.also[v]
	return to, ok
}

// want words the values for an error: "a, b or c".
func (en enum) want() string {
	switch n := len(en.values); n {
	case 0:
		return ""
	case 1:
		return en.values[0]
	default:
		return strings.Join(en.values[:n-1], ", ") + " or " + en.values[n-1]
	}
}

// EnumError is a flag value outside its enum; flagError words it.
type EnumError struct{ en enum }

func (e *EnumError) Error() string { return "want " + e.en.want() }

// enumValue is a string flag of an enum (pflag.Value).
type enumValue struct {
	p  *string
	en enum
}

func (v *enumValue) Set(s string) error {
	to, ok := v.en.accept(s)
	if !ok {
		return &EnumError{v.en}
	}
	*v.p = to
	return nil
}

func (v *enumValue) String() string { return *v.p }
func (v *enumValue) Type() string   { return "string" }

// intEnumValue is an int flag of an enum of numbers.
type intEnumValue struct {
	p  *int
	en enum
}

func (v *intEnumValue) Set(s string) error {
	to, ok := v.en.accept(s)
	if !ok {
		return &EnumError{v.en}
	}
	n, err := strconv.Atoi(to)
	if err != nil {
		return err // an enum of numbers holds numbers: a build mistake
	}
	*v.p = n
	return nil
}

func (v *intEnumValue) String() string { return strconv.Itoa(*v.p) }
func (v *intEnumValue) Type() string   { return "int" }

// enumFlag defines the string flag name (-short unless "") of cmd with
// default def, taking the values of en: the usage ends with them, and the
// shell completes them.
func enumFlag(cmd *cobra.Command, p *string, name, short, def string, en enum, usage string) {
	*p = def
	cmd.Flags().VarP(&enumValue{p, en}, name, short, usage+": "+strings.Join(en.values, "|"))
	completeEnum(cmd, name, en)
}

// intEnumFlag is enumFlag for an int flag of an enum of numbers; the
// default is not shown in the help when it is 0 (not chosen).
func intEnumFlag(cmd *cobra.Command, p *int, name string, def int, en enum, usage string) {
	*p = def
	cmd.Flags().Var(&intEnumValue{p, en}, name, usage+": "+strings.Join(en.values, "|"))
	completeEnum(cmd, name, en)
}

func completeEnum(cmd *cobra.Command, name string, en enum) {
	if err := cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(en.values, cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(fmt.Sprintf("flag --%s: %v", name, err)) // a build mistake, caught by every test
	}
}

// typesValue is a repeatable --type: event types, or globs of them
// ("tool/*"), checked against the one list of types (inspect.TypePatterns),
// which the shell also completes. A name no format knows is refused: it
// would match nothing but a plugin's events, which a glob matches too.
type typesValue struct{ p *[]string }

func (v *typesValue) Set(s string) error {
	if strings.ContainsAny(s, `*?[\`) {
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Errorf("not a valid glob: %w", err)
		}
	} else if !slices.Contains(inspect.TypePatterns(), s) {
		return &UnknownTypeError{Type: s}
	}
	*v.p = append(*v.p, s)
	return nil
}

func (v *typesValue) String() string { return "[" + strings.Join(*v.p, ",") + "]" }
func (v *typesValue) Type() string   { return "stringArray" }

// UnknownTypeError is a --type that names no event type of any format.
type UnknownTypeError struct{ Type string }

func (e *UnknownTypeError) Error() string { return "no log format has this event type" }

// Hint suggests the nearest type and lists them all.
func (e *UnknownTypeError) Hint() string {
	var types []string
	for _, t := range inspect.TypePatterns() {
		if !strings.HasSuffix(t, "/*") {
			types = append(types, t)
		}
	}
	h := ""
	if near := suggest.Nearest(e.Type, types, false); len(near) > 0 {
		h = "did you mean " + strings.Join(near, " or ") + "? "
	}
	return h + "the event types are " + strings.Join(types, ", ") + "; a glob such as 'tool/*' matches a family, or a plugin's types"
}

// typesFlag defines the repeatable --type of cmd.
func typesFlag(cmd *cobra.Command, p *[]string, usage string) {
	cmd.Flags().Var(&typesValue{p}, "type", usage)
	if err := cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(inspect.TypePatterns(), cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(fmt.Sprintf("flag --type: %v", err))
	}
}

// bytesValue is a flag of a number of bytes: plain ("134217728") or with
// a binary suffix ("128MiB"; KiB, MiB, GiB, TiB, and B), as the sizes of
// dshctl's messages are written. Decimal suffixes (MB) are refused rather
// than guessed at.
type bytesValue struct{ p *int64 }

func (v *bytesValue) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (v *bytesValue) String() string { return formatBytes(*v.p) }
func (v *bytesValue) Type() string   { return "bytes" }

// byteUnits are the suffixes parseBytes takes, largest first.
var byteUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// SizeError is a bytes flag value that does not parse.
type SizeError struct{ Why string }

func (e *SizeError) Error() string { return e.Why }

// parseBytes reads a positive size: digits, then optionally one of
// byteUnits (a space between is allowed).
func parseBytes(s string) (int64, error) {
	num, shift := strings.TrimSpace(s), uint(0)
	for _, u := range byteUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, shift = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.shift
			break
		}
	}
	if strings.HasPrefix(num, "-") {
		return 0, &SizeError{"must be positive"}
	}
	if num == "" || strings.TrimLeft(num, "0123456789") != "" {
		return 0, &SizeError{"not a size: want bytes, or a number with KiB, MiB, GiB or TiB (128MiB)"}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, &SizeError{"out of range"}
	}
	return n << shift, nil
}

// formatBytes writes n as parseBytes reads it, in the largest unit that
// divides it ("32MiB").
func formatBytes(n int64) string {
	for _, u := range byteUnits {
		if u.shift > 0 && n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// bytesFlag defines a bytes flag of the flag set fs.
func bytesFlag(fs *pflag.FlagSet, p *int64, name string, def int64, usage string) {
	*p = def
	fs.Var(&bytesValue{p}, name, usage)
}

// enumListValue is a repeatable flag of an enum, each value given once or
// several joined by commas ("blank,open").
type enumListValue struct {
	p  *[]string
	en enum
}

func (v *enumListValue) Set(s string) error {
	for w := range strings.SplitSeq(s, ",") {
		to, ok := v.en.accept(strings.TrimSpace(w))
		if !ok {
			return &EnumError{v.en}
		}
		*v.p = append(*v.p, to)
	}
	return nil
}

func (v *enumListValue) String() string { return "[" + strings.Join(*v.p, ",") + "]" }
func (v *enumListValue) Type() string   { return "strings" }

// enumListFlag defines the repeatable flag name of cmd taking values of
// en, which its usage ends with and the shell completes.
func enumListFlag(cmd *cobra.Command, p *[]string, name string, en enum, usage string) {
	cmd.Flags().Var(&enumListValue{p, en}, name, usage+": "+strings.Join(en.values, "|"))
	completeEnum(cmd, name, en)
}
