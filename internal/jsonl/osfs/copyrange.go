package osfs

import "context"

// CopyRange writes the bytes [from, to) of src to dst, at dst's offset,
// until ctx is done. Where the system can (copyKernel), the kernel copies
// them from file to file; elsewhere they go through a buffer.
func CopyRange(ctx context.Context, dst File, src File, from, to int64) error {
	done, err := copyKernel(ctx, dst, src, from, to)
	if err != errNoKernelCopy {
		return err
	}
	return copyBuffered(ctx, dst, src, from+done, to)
}

// copyBuffered is CopyRange through a buffer of at most 1 MiB.
func copyBuffered(ctx context.Context, dst File, src File, from, to int64) error {
	buf := make([]byte, min(to-from, 1<<20))
	for off := from; off < to; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), to-off)
		if err := ReadFullAt(src, buf[:n], off); err != nil {
			return err
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return err
		}
		off += n
	}
	return nil
}
