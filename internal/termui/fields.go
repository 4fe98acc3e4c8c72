package termui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Fields are a single object's fields, each with a value for people and
// one for scripts. Printed for people, they are aligned "key: value" lines;
// for scripts, "key:<TAB>value" lines with machine values.
type Fields []Field

// Field is one of Fields.
type Field struct {
	Key, Human, Plain string
	// Quiet fields are left out for people: an absent value.
	Quiet bool
}

// Add adds a field.
func (f *Fields) Add(key, human, plain string) {
	*f = append(*f, Field{Key: key, Human: human, Plain: plain})
}

// Opt adds a field people see only when it has a value; scripts always
// get the key, so that every report has the same lines.
func (f *Fields) Opt(key, human, plain string) {
	*f = append(*f, Field{Key: key, Human: human, Plain: plain, Quiet: human == ""})
}

// Time adds a time: "3h ago (2026-07-29T13:31:58.180Z)" and a note for
// people, the Timestamp for scripts.
func (f *Fields) Time(key string, ms int64, now time.Time, note string) {
	f.Add(key, fmt.Sprintf("%s (%s)%s", RelTime(ms, now), Timestamp(ms), note), Timestamp(ms))
}

// Int adds a number, the same for people and scripts.
func (f *Fields) Int(key string, n int64) {
	v := strconv.FormatInt(n, 10)
	f.Add(key, v, v)
}

// Size adds a size in bytes: "105.9 KiB (108464 bytes)" for people.
func (f *Fields) Size(key string, n int64) {
	f.Add(key, fmt.Sprintf("%s (%d bytes)", Bytes(n), n), strconv.FormatInt(n, 10))
}

// Print writes the fields to w, for people when tty.
func (f Fields) Print(w io.Writer, tty bool) error {
	if !tty {
		var b strings.Builder
		for _, fd := range f {
			b.WriteString(strings.TrimSpace(fd.Key) + ":\t" + PlainField(fd.Plain) + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, fd := range f {
		if !fd.Quiet {
			fmt.Fprintf(tw, "%s:\t%s\n", fd.Key, OneLine(fd.Human))
		}
	}
	return tw.Flush()
}
