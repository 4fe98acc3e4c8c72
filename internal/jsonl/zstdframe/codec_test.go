package zstdframe

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"testing"
)

// jsonl returns n bytes of JSONL-like text.
func jsonl(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"text":"%x"}}`+"\n", i, 1785331619000+i*7, i*i)
	}
	return b.Bytes()[:n]
}

func TestAppendFrameRoundTrip(t *testing.T) {
	dec := newTestDecoder(t)
	for _, n := range []int{0, 1, 100, 1 << 10, 128 << 10, 128<<10 + 1, 3 << 20} {
		for _, kind := range []string{"text", "random"} {
			content := jsonl(n)
			if kind == "random" {
				content = pseudoRandom(n, uint64(n))
			}
			t.Run(fmt.Sprintf("%s-%d", kind, n), func(t *testing.T) {
				prefix := []byte("keep")
				data := AppendFrame(prefix[:len(prefix):len(prefix)], content)
				if !bytes.HasPrefix(data, prefix) {
					t.Fatal("AppendFrame lost dst")
				}
				data = data[len(prefix):]
				if again := AppendFrame(nil, content); !bytes.Equal(again, data) {
					t.Fatal("AppendFrame is not deterministic")
				}
				frames, torn, err := Walk(bytes.NewReader(data), int64(len(data)))
				if err != nil || torn != (Torn{}) || len(frames) != 1 || frames[0].Size != int64(len(data)) {
					t.Fatalf("Walk = %+v, %+v, %v", frames, torn, err)
				}
				f := frames[0]
				if !f.HasChecksum || (f.ContentSize != int64(n) && !(f.ContentSize == -1 && n > 0 && n < 256)) || f.WindowSize > 2<<20 || f.Blocks != max(1, (n+128<<10-1)/(128<<10)) {
					t.Fatalf("frame %+v", f)
				}
				got, err := dec.DecodeAll(bytes.NewReader(data), f, int64(n))
				if err != nil || !bytes.Equal(got, content) {
					t.Fatalf("DecodeAll: %d bytes, %v", len(got), err)
				}
			})
		}
	}
}

func TestAppendFrameConcurrent(t *testing.T) {
	content := jsonl(300 << 10)
	want := AppendFrame(nil, content)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := AppendFrame(nil, content); !bytes.Equal(got, want) {
				t.Error("concurrent AppendFrame differs")
			}
		})
	}
	wg.Wait()
}

func TestDecoderStreamsLargeFrame(t *testing.T) {
	dec := newTestDecoder(t)
	dec.SetLimit(0) // the default, above the frame
	content := jsonl(20 << 20)
	data := AppendFrame(nil, content)
	f, err := ParseFrame(bytes.NewReader(data), 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := dec.NewReader(bytes.NewReader(data), f)
	if err != nil {
		t.Fatal(err)
	}
	h := newPrefixHash()
	n, err := io.CopyBuffer(h, rd, make([]byte, 32<<10))
	if err != nil || n != int64(len(content)) || !h.matches(content) {
		t.Fatalf("streamed %d bytes, %v", n, err)
	}
	if got, err := dec.DecodeAll(bytes.NewReader(data), f, math.MaxInt64); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("DecodeAll without limit: %d bytes, %v", len(got), err)
	}
	// DecodeAll refuses more than the limit, with or without a content size.
	if _, err := dec.DecodeAll(bytes.NewReader(data), f, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("DecodeAll over limit: %v", err)
	}
	f.ContentSize = -1
	if _, err := dec.DecodeAll(bytes.NewReader(data), f, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("DecodeAll over limit, no content size: %v", err)
	}
}

// prefixHash checks streamed output against the expected content without
// keeping it.
type prefixHash struct {
	got []byte
	n   int
}

func newPrefixHash() *prefixHash { return &prefixHash{} }

func (p *prefixHash) Write(b []byte) (int, error) {
	p.got = append(p.got[:0], b...)
	p.n += len(b)
	return len(b), nil
}

func (p *prefixHash) matches(content []byte) bool {
	return p.n == len(content) && bytes.HasSuffix(content, p.got)
}

func TestDecoderRejects(t *testing.T) {
	dec := newTestDecoder(t)
	// A 16 MiB window is valid zstd but beyond the decoder limit.
	big := cat(frameHeader(0x04, 0x70), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n")))
	f, err := ParseFrame(bytes.NewReader(big), 0, int64(len(big)))
	if err != nil || f.WindowSize != 16<<20 {
		t.Fatal(f, err)
	}
	if _, err := dec.DecodeAll(bytes.NewReader(big), f, 1<<10); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("16 MiB window: %v", err)
	}
	// Corrupt compressed data inside a structurally valid frame.
	data := AppendFrame(nil, jsonl(4<<10))
	data[len(data)/2] ^= 0xFF
	f, err = ParseFrame(bytes.NewReader(data), 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.DecodeAll(bytes.NewReader(data), f, 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged block: %v", err)
	}
	// A frame that does not match the file.
	good := AppendFrame(nil, []byte("a\n"))
	f, _ = ParseFrame(bytes.NewReader(good), 0, int64(len(good)))
	f.Size--
	if _, err := dec.NewReader(bytes.NewReader(good), f); !errors.Is(err, ErrTorn) {
		t.Fatalf("short frame: %v", err)
	}
	f.Size += 2
	if _, err := dec.NewReader(bytes.NewReader(append(good, 0)), f); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("long frame: %v", err)
	}
	if _, err := dec.NewReader(bytes.NewReader(good), Frame{}); err == nil {
		t.Fatal("zero Frame accepted")
	}
	// A reader is invalidated by the next use of its Decoder.
	f.Size--
	r1, err := dec.NewReader(bytes.NewReader(good), f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.DecodeAll(bytes.NewReader(good), f, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r1); err == nil {
		t.Fatal("stale reader still reads")
	}
}

// TestDecoderLimit checks that no path decodes more than the decoder's
// limit of one frame, whatever the frame declares or holds: a few KiB of
// RLE blocks that expand to 64 MiB cost at most the limit.
func TestDecoderLimit(t *testing.T) {
	const limit = 1 << 20
	dec := newTestDecoder(t)
	dec.SetLimit(limit)
	data := repeatFrame('\n', 64<<20)
	r := bytes.NewReader(data)
	f, err := ParseFrame(r, 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	tooLarge := func(what string, err error) {
		t.Helper()
		var fe *Error
		if !errors.Is(err, ErrTooLarge) || !errors.As(err, &fe) || fe.ContentLimit() != limit {
			t.Errorf("%s: %v, want ErrTooLarge at the limit", what, err)
		}
	}
	bounded := func(what string, op func() error) {
		t.Helper()
		before := dec.Decoded()
		tooLarge(what, op())
		if n := dec.Decoded() - before; n > limit+1 {
			t.Errorf("%s decoded %d bytes, over the limit", what, n)
		}
	}
	bounded("stream", func() error {
		rd, err := dec.NewReader(r, f)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rd)
		return err
	})
	bounded("Verify", func() error { return dec.Verify(r, f) })
	bounded("DecodeAll", func() error { _, err := dec.DecodeAll(r, f, math.MaxInt64); return err })
	bounded("LastFrame", func() error {
		_, err := LastFrame(r, int64(len(data)), LastOptions{Decoder: dec})
		return err
	})
	// A declared content size over the limit fails before any decoding.
	const blocks = testLimit/maxBlockSize + 1
	size := binary.LittleEndian.AppendUint64(nil, blocks*maxBlockSize)
	declared := frameHeader(0xc4, append([]byte{0x58}, size...)...)
	for i := range blocks {
		declared = cat(declared, blockHeader(i == blocks-1, 1, maxBlockSize), []byte("x"))
	}
	declared = cat(declared, checksumOf(bytes.Repeat([]byte("x"), blocks*maxBlockSize)))
	rd := bytes.NewReader(declared)
	df, err := ParseFrame(rd, 0, int64(len(declared)))
	if err != nil || df.ContentSize != blocks*maxBlockSize {
		t.Fatalf("declared frame: %+v, %v", df, err)
	}
	before := dec.Decoded()
	_, err = dec.NewReader(rd, df)
	tooLarge("declared size", err)
	if dec.Decoded() != before {
		t.Errorf("a frame declaring too much was decoded")
	}
}

// TestDecoderContext checks that a decoder stops when its context is
// done, before a frame and inside one.
func TestDecoderContext(t *testing.T) {
	dec := newTestDecoder(t)
	data := repeatFrame('x', 4<<20)
	r := bytes.NewReader(data)
	f, err := ParseFrame(r, 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	dec.SetContext(ctx)
	defer dec.SetContext(nil)
	rd, err := dec.NewReader(r, f)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	if _, err := rd.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := rd.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after the cancellation: %v", err)
	}
	if err := dec.Verify(r, f); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify after the cancellation: %v", err)
	}
	if _, err := LastFrame(r, int64(len(data)), LastOptions{Decoder: dec}); !errors.Is(err, context.Canceled) {
		t.Errorf("LastFrame after the cancellation: %v", err)
	}
}
