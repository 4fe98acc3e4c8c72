package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// backupNote describes a backup file, in a JSON file beside it with the
// same name but .json: which session and log the bytes came from, where
// in it, why they were removed, when, and how to put them back. A backup
// then explains itself, and its restore can be checked (the log's size
// before the repair).
type backupNote struct {
	SessionID  string `json:"sessionId"`
	Log        string `json:"log"`
	Encoding   string `json:"encoding"`
	Generation int    `json:"generation"`
	// LogSizeBytes is the log's size before the repair; the backup holds
	// its bytes from OffsetBytes to there.
	LogSizeBytes int64      `json:"logSizeBytes"`
	OffsetBytes  int64      `json:"offsetBytes"`
	SizeBytes    int64      `json:"sizeBytes"`
	Tails        []noteTail `json:"tails"`
	// RewrittenBytes is the committed text of the first cut frame that was
	// written back as a frame of its own (0 when none).
	RewrittenBytes int64  `json:"rewrittenBytes"`
	SavedAt        string `json:"savedAt"`
	Restore        string `json:"restore"`
}

// noteTail is one removed tail and why it was removed.
type noteTail struct {
	Kind        string `json:"kind"`
	OffsetBytes int64  `json:"offsetBytes"`
	SizeBytes   int64  `json:"sizeBytes"`
	Why         string `json:"why"`
}

var tailWhy = map[string]string{
	seam.RepairTorn:        "an incomplete final line or frame, which an interrupted append left and readers ignore",
	seam.RepairUncommitted: "complete records after the committed log that no turn/end commits (store.md 4), from the first that does not continue the log",
}

// noteName is the name of the description of the backup file at path.
func noteName(path string) string { return strings.TrimSuffix(path, ".bin") + ".json" }

// describeBackup writes, and fsyncs, the description of backup: the bytes
// [cut, size) of the log, about to be removed.
func (h *handle) describeBackup(backup string) error {
	l, w, fsys := h.log, h.w, h.s.fs
	note := backupNote{SessionID: h.id, Log: l.path, Encoding: string(l.enc), Generation: l.gen,
		LogSizeBytes: w.size, OffsetBytes: w.cut, SizeBytes: w.size - w.cut, Tails: []noteTail{},
		RewrittenBytes: int64(len(w.salvage)), SavedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Restore: fmt.Sprintf("truncate -s %d %s && cat %s >> %s", w.cut, shellQuote(l.path), shellQuote(backup), shellQuote(l.path))}
	for _, t := range h.tailRepairs(backup) {
		note.Tails = append(note.Tails, noteTail{Kind: t.Kind, OffsetBytes: t.Offset, SizeBytes: t.Bytes, Why: tailWhy[t.Kind]})
	}
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false) // the restore command's >> stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(note); err != nil {
		return err
	}
	path := noteName(backup)
	err := writeNew(fsys, path, data.Bytes(), nil)
	if err == nil {
		err = syncDir(fsys, filepath.Dir(path))
	}
	if err != nil {
		fsys.Remove(path)
		fsys.Remove(backup)
		return l.ioError(fmt.Errorf("backup description %s: %w", path, err), w.cut)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
