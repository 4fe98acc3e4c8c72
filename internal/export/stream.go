package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/dshctl/dshctl/internal/ctxio"
	"github.com/dshctl/dshctl/internal/durable"
	"golang.org/x/term"
)

// ErrTerminal is returned for a ZIP that would go to a terminal without
// force.
var ErrTerminal = errors.New("refusing to write a ZIP to a terminal")

// streamable reports whether path names, once symbolic links are
// followed, a FIFO or a character device: a place to write into, never a
// file to replace.
func streamable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0
}

// writeStream writes what write writes into the FIFO or character device
// at path (real, resolved), opened for writing without creating or
// truncating anything. It waits for a FIFO's reader, and both that wait
// and the writes end when ctx does.
func writeStream(ctx context.Context, path, real string, force bool, write func(io.Writer) error) (int64, error) {
	f, err := openStream(ctx, real)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("open %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return 0, fmt.Errorf("open %s: %w", path, unwrapPath(err))
	case fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0:
		// Swapped for something else since it was looked at.
		return 0, fmt.Errorf("%s is %s: %w", path, durable.TypeName(fi.Mode()), ErrNotReplaced)
	case fi.Mode()&fs.ModeCharDevice != 0 && !force && term.IsTerminal(int(f.Fd())):
		return 0, fmt.Errorf("%s: %w", path, ErrTerminal)
	}
	w := ctxio.NewWriter(ctx, f)
	defer w.Close()
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 256<<10)
	if err := write(bw); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return cw.n, nil
}

// openStream opens path for writing as it is: a FIFO without a reader is
// waited for (polled, so that ctx ends the wait).
func openStream(ctx context.Context, path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|streamFlags, 0)
		if err == nil || !noReader(err) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
