package jsonl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// TestBigFrameVerifiedBeforeServed checks that a frame whose content is
// over frameMemLimit is served only after its checksum verified: with one
// checksum byte flipped, a forward scan yields not one of its records.
func TestBigFrameVerifiedBeforeServed(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a frame of more than 16 MiB")
	}
	ctx := context.Background()
	s, _ := openStore(t, t.TempDir(), Options{Compression: Zstd})
	w, err := s.Create(ctx, header("big", 0), seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()
	snap, _ := s.Stat(ctx, "big")
	pad := strings.Repeat("x", 1000)
	var b strings.Builder
	n := int64(0)
	for ; b.Len() <= frameMemLimit+(1<<20); n++ {
		fmt.Fprintf(&b, `{"type":"session/title","seq":%d,"time":1,"data":{"title":"t%d %s"}}`+"\n", n, n, pad)
	}
	big := zstdframe.AppendFrame(nil, []byte(b.String()))
	last := zstdframe.AppendFrame(nil, fmt.Appendf(nil, `{"type":"session/title","seq":%d,"time":1,"data":{"title":"last"}}`+"\n", n))
	appendFile(t, snap.Location.Path, big)
	appendFile(t, snap.Location.Path, last)

	scan := func() (int64, error) {
		h, err := s.Open(ctx, "big", seam.Read)
		if err != nil {
			return 0, err
		}
		defer h.Close()
		var got int64
		for _, err := range h.Scan(ctx, seam.ScanOptions{}) {
			if err != nil {
				return got, err
			}
			got++
		}
		return got, nil
	}
	if got, err := scan(); err != nil || got != n+1 {
		t.Fatalf("intact: read %d events, %v; want %d", got, err, n+1)
	}
	// Flip a byte of the big frame's checksum (its last 4 bytes).
	f, err := os.OpenFile(snap.Location.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := snap.SizeBytes + int64(len(big)) - 1
	one := []byte{0}
	if _, err := f.ReadAt(one, off); err != nil {
		t.Fatal(err)
	}
	one[0] ^= 0xff
	if _, err := f.WriteAt(one, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := scan()
	if got != 0 {
		t.Errorf("served %d records of a frame that fails its checksum", got)
	}
	wantKind(t, err, seam.ErrCorrupt)
	if !strings.Contains(err.Error(), fmt.Sprintf("frame at byte %d", snap.SizeBytes)) {
		t.Errorf("error %v does not name the frame", err)
	}
}
