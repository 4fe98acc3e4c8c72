package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

func TestWriterPassesWritesThrough(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(context.Background(), &b)
	for _, s := range []string{"one ", "", "two"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	w.Close()
	w.Close()
	if b.String() != "one two" {
		t.Errorf("wrote %q", b.String())
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
}

// TestWriterStopsOnCancel checks that a write blocked on a pipe nobody
// reads returns once the context ends, and every later write fails alike
// (issue 24 item 6).
func TestWriterStopsOnCancel(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	if !MayBlock(pw) {
		t.Errorf("MayBlock(pipe) = false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWriter(ctx, pw)
	defer w.Close()
	errc := make(chan error, 1)
	go func() {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				errc <- err
				return
			}
		}
	}()
	select {
	case err := <-errc:
		t.Fatalf("a write to a full pipe failed: %v", err)
	case <-time.After(200 * time.Millisecond): // the pipe is full by now
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("blocked write ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a blocked write did not return after the context ended")
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %v", err)
	}
	// The goroutine is still blocked in the pipe: unblock it.
	go io.Copy(io.Discard, r)
}

func TestMayBlock(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if MayBlock(f) {
		t.Errorf("MayBlock(regular file) = true")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if MayBlock(null) {
			t.Errorf("MayBlock(%s) = true", os.DevNull)
		}
	}
}
