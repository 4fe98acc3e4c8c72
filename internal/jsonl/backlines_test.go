package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBackLinesBlankRuns reads, last to first, texts whose run of empty
// lines starts, ends or fills a block exactly, and checks each line and
// run against a forward split. A run that filled its block exactly, after
// a line without a newline in the block before, once sliced past the
// buffer (FuzzReadPlain).
func TestBackLinesBlankRuns(t *testing.T) {
	const block = 8
	for _, before := range []string{"", "x", "ab\n", strings.Repeat("y", block-1), strings.Repeat("z", block+3) + "\n"} {
		for run := 1; run <= 4*block+1; run++ {
			for _, after := range []string{"", "q\n", strings.Repeat("w", block) + "\n"} {
				text := before + strings.Repeat("\n", run) + after
				want := forwardLines(text)
				b := newBackLines(context.Background(), bytes.NewReader([]byte(text)), 0, int64(len(text)), block, 0, 1<<20)
				var got []string
				for {
					line, off, err := b.prev()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("%q: %v", text, err)
					}
					if string(line) == "\n" && b.run > 1 {
						for i := int64(0); i < b.run; i++ {
							got = append(got, "\n")
						}
					} else {
						got = append(got, string(line))
					}
					if !strings.HasPrefix(text[off:], string(line)) {
						t.Fatalf("%q: line %q is not at offset %d", text, line, off)
					}
				}
				for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
					got[i], got[j] = got[j], got[i]
				}
				if strings.Join(got, "|") != strings.Join(want, "|") {
					t.Fatalf("%q: read back %q, want %q", text, got, want)
				}
			}
		}
	}
}

// forwardLines splits text into its lines, each with its '\n' (the last
// without one when text does not end with '\n').
func forwardLines(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}
