package zstdframe

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestLastFrameKeepContent checks that LastFrame hands out the content it
// verified when asked, within the limit, and nil past it.
func TestLastFrameKeepContent(t *testing.T) {
	small := []byte("{\"type\":\"session\"}\n")
	last := bytes.Repeat([]byte("{\"type\":\"turn/end\"}\n"), 50)
	file := AppendFrame(AppendFrame(nil, small), last)
	torn := append(bytes.Clone(file), AppendFrame(nil, last)[:7]...)
	for _, data := range [][]byte{file, torn} {
		r := bytes.NewReader(data)
		var content []byte
		got, err := LastFrame(r, int64(len(data)), LastOptions{KeepContent: 1 << 20, Content: &content})
		if err != nil {
			t.Fatal(err)
		}
		if got.Frame.Offset != int64(len(AppendFrame(nil, small))) {
			t.Fatalf("last frame at %d", got.Frame.Offset)
		}
		if !bytes.Equal(content, last) {
			t.Fatalf("content %q, want %q", content, last)
		}
		content = []byte("stale")
		if _, err := LastFrame(r, int64(len(data)), LastOptions{KeepContent: int64(len(last)) - 1, Content: &content}); err != nil {
			t.Fatal(err)
		}
		if content != nil {
			t.Fatalf("content past the limit: %d bytes", len(content))
		}
	}
	// A frame with damaged content is not confirmed and yields nothing.
	bad := bytes.Clone(file)
	bad[len(bad)-2] ^= 0xff
	var content []byte
	if _, err := LastFrame(bytes.NewReader(bad), int64(len(bad)), LastOptions{KeepContent: 1 << 20, Content: &content}); err == nil {
		t.Fatal("LastFrame confirmed a frame with a bad checksum")
	}
	if content != nil {
		t.Fatalf("content of an unconfirmed frame: %q", content)
	}
}

// TestLastMagic checks lastMagic against bytes.LastIndex.
func TestLastMagic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = magicBytes[rng.IntN(4)] // dense partial matches
		}
		if want, got := bytes.LastIndex(b, magicBytes), lastMagic(b); got != want {
			t.Fatalf("lastMagic(% x) = %d, want %d", b, got, want)
		}
	}
}
