package termui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestJQ(t *testing.T) {
	for _, tc := range []struct {
		expr, in string
		pretty   bool
		want     string
	}{
		{".[].id", `[{"id":"a"},{"id":"b"}]`, false, "a\nb\n"},                                    // strings raw
		{".n", "{\"n\":1}\n{\"n\":2}\n", false, "1\n2\n"},                                         // a value at a time
		{"{id}", `{"id":"a","x":1}`, false, "{\"id\":\"a\"}\n"},                                   // compact piped
		{"{id}", `{"id":"a","x":1}`, true, "{\n  \"id\": \"a\"\n}\n"},                             // indented for people
		{".n", `{"n":123456789012345678901234567890}`, false, "123456789012345678901234567890\n"}, // digits kept
		{".s", `{"s":"<&>"}`, false, "<&>\n"},                                                     // no HTML escapes
		{"empty", `[1]`, false, ""},
		{".[], halt", `[1,2]` + "\n" + `[3]`, false, "1\n2\n"}, // halt ends it all
	} {
		q, err := CompileJQ(tc.expr)
		if err != nil {
			t.Fatalf("CompileJQ(%q): %v", tc.expr, err)
		}
		var out bytes.Buffer
		w := q.Writer(context.Background(), &out, tc.pretty)
		if _, err := io.WriteString(w, tc.in); err != nil {
			t.Fatalf("%q: write: %v", tc.expr, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%q on %s: %v", tc.expr, tc.in, err)
		}
		if out.String() != tc.want {
			t.Errorf("%q on %s (pretty %v) = %q, want %q", tc.expr, tc.in, tc.pretty, out.String(), tc.want)
		}
	}
}

func TestJQErrors(t *testing.T) {
	var je *JQError
	if _, err := CompileJQ(".["); !errors.As(err, &je) {
		t.Errorf("CompileJQ(.[): %v, want a *JQError", err)
	}
	if _, err := CompileJQ("nosuchfunc(1)"); !errors.As(err, &je) {
		t.Errorf("CompileJQ(nosuchfunc(1)): %v, want a *JQError", err)
	}
	run := func(q *JQ, in string) error {
		w := q.Writer(context.Background(), io.Discard, false)
		io.WriteString(w, in) // fails once the filter stopped: Close says why
		return w.Close()
	}
	q, _ := CompileJQ(".foo")
	var re *JQRunError
	if err := run(q, `[1]`); !errors.As(err, &re) {
		t.Errorf(".foo on an array: %v, want a *JQRunError", err)
	}
	var ie *JQInputError
	q, _ = CompileJQ(".")
	if err := run(q, `{"a":`); !errors.As(err, &ie) {
		t.Errorf("a truncated document: %v, want a *JQInputError", err)
	}
	// A document over the bound is refused before it is held whole; the
	// values before it were filtered.
	q.maxDoc = 1 << 10
	var out bytes.Buffer
	w := q.Writer(context.Background(), &out, false)
	io.WriteString(w, "1\n[\""+strings.Repeat("x", 4<<10)+"\"]")
	if err := w.Close(); !errors.Is(err, ErrJQDocumentTooLarge) {
		t.Errorf("a document over the bound: %v, want ErrJQDocumentTooLarge", err)
	}
	if out.String() != "1\n" {
		t.Errorf("before the large document: %q, want 1", out.String())
	}
	// Many documents, each under the bound, are fine however many.
	w = q.Writer(context.Background(), io.Discard, false)
	for range 1000 {
		io.WriteString(w, "[\""+strings.Repeat("x", 500)+"\"]\n")
	}
	if err := w.Close(); err != nil {
		t.Errorf("small documents: %v", err)
	}
}

// TestJQStreams checks that a value's results are printed as soon as it
// is written, before the input ends (cat -f --jq).
func TestJQStreams(t *testing.T) {
	q, _ := CompileJQ(".n")
	pr, pw := io.Pipe()
	w := q.Writer(context.Background(), pw, false)
	go io.WriteString(w, "{\"n\":1}\n")
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		n, _ := pr.Read(b)
		got <- string(b[:n])
	}()
	select {
	case s := <-got:
		if s != "1\n" {
			t.Errorf("streamed %q, want 1", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the result of a value was not printed before the input ended")
	}
	go io.Copy(io.Discard, pr)
	w.Close()
}

// TestJQCancel checks that an expression that never ends stops with ctx.
func TestJQCancel(t *testing.T) {
	q, _ := CompileJQ("repeat(.)")
	ctx, cancel := context.WithCancel(context.Background())
	w := q.Writer(ctx, io.Discard, false)
	io.WriteString(w, "1")
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- w.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the expression did not stop when its context ended")
	}
}
