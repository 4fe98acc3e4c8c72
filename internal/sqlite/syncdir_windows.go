package sqlite

// syncDir does nothing on Windows, which cannot fsync a directory; NTFS
// journals the directory entry itself.
func syncDir(string) error { return nil }
