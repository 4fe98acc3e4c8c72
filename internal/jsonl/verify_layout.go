package jsonl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.LayoutVerifier = (*Store)(nil)

// VerifyLayout checks how the root is laid out (seam.LayoutVerifier): it
// returns the sessions whose logs VerifyLog checks, in path order (with
// the session folders it cannot read, whose checks fail), and the entries
// that are not readable sessions: log files in the old flat layout, folder
// names that are not encoded ids, ids stored in several project folders,
// and folders that hold only temp files.
func (s *Store) VerifyLayout(ctx context.Context) (seam.StoreLayout, error) {
	var out seam.StoreLayout
	if err := s.check(ctx, "verify"); err != nil {
		return out, err
	}
	dirents, err := s.projectEntries()
	if err != nil {
		return out, err
	}
	type folder struct{ project, name, path string }
	byID := map[string][]folder{}
	var ids []string
	for _, de := range dirents {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if de.err != nil {
			// A project folder that is a symbolic link, or unreadable:
			// none of its sessions can be checked.
			path := filepath.Join(s.root, de.project)
			f := layoutFinding(de.err, path, "project folder %s is %v, so its sessions are not checked", path, ErrSymlink)
			if f.Code != "symlink" {
				cause := causeOf(de.err)
				if pe := (*fs.PathError)(nil); errors.As(cause, &pe) {
					cause = pe.Err
				}
				f.Message = fmt.Sprintf("project folder %s cannot be read (%v), so its sessions are not checked", path, cause)
			}
			out.Strays = append(out.Strays, seam.Stray{Name: de.project, Path: path, Findings: []seam.Finding{f}})
			continue
		}
		name := de.e.Name()
		path := filepath.Join(s.root, de.project, name)
		p := seam.PathPos(path)
		if de.e.Type()&fs.ModeSymlink != 0 {
			if id, err := DecodeSegment(name); err == nil {
				out.Strays = append(out.Strays, seam.Stray{Name: id, Path: path, Findings: []seam.Finding{
					layoutFinding(ErrSymlink, path, "session folder %s is %v, so it is not checked (append and repair refuse it too)", path, ErrSymlink)}})
			}
			continue
		}
		if !de.e.IsDir() {
			if isFlatLog(name) {
				out.Strays = append(out.Strays, seam.Stray{Name: name, Path: path, Findings: []seam.Finding{{
					Class: seam.ClassDamage, Code: "flat-file", Pos: p,
					Message: "log file placed directly in a project folder (old flat layout): dsh does not read it as a session"}}})
			}
			continue
		}
		id, err := DecodeSegment(name)
		if err != nil {
			out.Strays = append(out.Strays, seam.Stray{Name: name, Path: path, Findings: []seam.Finding{{
				Class: seam.ClassDamage, Code: "folder-name", Pos: p, Message: err.Error()}}})
			continue
		}
		if _, seen := byID[id]; !seen {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], folder{de.project, name, path})
	}
	for _, id := range ids {
		folders := byID[id]
		if len(folders) > 1 {
			dirs := []string{folders[0].path, folders[1].path}
			for _, f := range folders {
				out.Strays = append(out.Strays, seam.Stray{Name: id, Path: f.path,
					Findings: []seam.Finding{duplicateFinding(id, f.path, len(folders), dirs...)}})
			}
			continue
		}
		fc, err := s.checkFolder(folders[0].project, folders[0].name)
		switch {
		case err != nil:
			// A session folder that cannot be read (mode 000): its check
			// fails on its own, as VerifyLog says why, and the rest of
			// the store is checked.
			out.Sessions = append(out.Sessions, id)
		case fc.logs > 0:
			out.Sessions = append(out.Sessions, id)
		case len(fc.findings) > 0:
			out.Strays = append(out.Strays, seam.Stray{Name: id, Path: folders[0].path, Findings: fc.findings})
		}
	}
	return out, nil
}

// layoutFinding is the damage finding of an entry verify cannot check: a
// symbolic link ("symlink") or a folder it cannot read ("unreadable").
func layoutFinding(err error, path, format string, args ...any) seam.Finding {
	code := "unreadable"
	if errors.Is(err, ErrSymlink) {
		code = "symlink"
	}
	return seam.Finding{Class: seam.ClassDamage, Code: code, Message: fmt.Sprintf(format, args...),
		Pos: seam.PathPos(path)}
}

// folderCheck is what verify finds in a session folder.
type folderCheck struct {
	sessionDir
	logs     int // files named as logs, of any encoding
	findings []seam.Finding
}

func (fc *folderCheck) add(class seam.FindingClass, code, path, format string, args ...any) {
	fc.findings = append(fc.findings, seam.Finding{Class: class, Code: code, Message: fmt.Sprintf(format, args...),
		Pos: seam.PathPos(path)})
}

// fileType says what the file of the last finding is, one that is not a
// regular file.
func (fc *folderCheck) fileType(name string) { fc.findings[len(fc.findings)-1].FileType = name }

// checkFolder reads a session folder as inspect does, but reports every
// problem instead of failing on the first: logs of the other encoding,
// logs that are not regular files, temp files, names that look like logs
// but name no generation, and older generations.
func (s *Store) checkFolder(project, seg string) (folderCheck, error) {
	dir := filepath.Join(s.root, project, seg)
	fc := folderCheck{sessionDir: sessionDir{project: project, dir: dir, live: -1}}
	entries, err := s.fs.ReadDir(dir)
	if err != nil {
		return fc, err
	}
	enc := s.Encoding()
	var gens []int
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		gen, genc, ok := ParseLogName(name)
		if ok {
			fc.logs++
		}
		switch {
		case ok && genc != enc:
			fc.add(seam.ClassDamage, "encoding-mismatch", path,
				"encoding mismatch: session artifact %q uses %s, but this store holds %s logs; dsh refuses the session (use a separate root or select the matching compression)",
				path, genc.suffix(), enc.suffix())
		case ok && !e.Type().IsRegular():
			fc.add(seam.ClassDamage, "not-regular-file", path, "%s is %s, not a regular file: dshctl does not read or write it in a store, so the log is not checked", path, durable.TypeName(e.Type()))
			fc.fileType(durable.TypeName(e.Type()))
		case ok:
			gens = append(gens, gen)
		case name == lockName && !e.Type().IsRegular():
			fc.add(seam.ClassDamage, "lock-not-regular", path,
				"%s is %s, not a regular file: neither dsh nor dshctl can lock the session to write it (replace it with an empty file)", path, durable.TypeName(e.Type()))
			fc.fileType(durable.TypeName(e.Type()))
		case isStaleTemp(name):
			fc.add(seam.ClassIrregular, "stray-temp-file", path,
				"temp file %s was left by a killed writer: dsh ignores it, and the next write (an append or a repair) removes it", name)
		case strings.HasSuffix(name, ".tmp"):
			fc.add(seam.ClassIrregular, "stray-temp-file", path, "temp file %s: dsh ignores it", name)
		case strings.HasPrefix(name, "session") && strings.Contains(name, ".jsonl"):
			fc.add(seam.ClassIrregular, "generation-name", path,
				"%s is not the name of a log generation (session.jsonl or session.vN.jsonl, .zstd when compressed): dsh ignores it", name)
		}
	}
	if len(gens) == 0 {
		return fc, nil
	}
	slices.Sort(gens)
	fc.live, fc.older = gens[len(gens)-1], gens[:len(gens)-1]
	if len(fc.older) == 0 {
		fc.older = nil
		return fc, nil
	}
	names := make([]string, len(fc.older))
	for i, g := range fc.older {
		names[i] = "v" + strconv.Itoa(g)
	}
	fc.add(seam.ClassNote, "older-generation", filepath.Join(dir, LogName(fc.live, enc)),
		"older generations kept beside the live v%d log: %s (dsh reads only the live one)", fc.live, strings.Join(names, ", "))
	return fc, nil
}

// duplicateFinding reports an id named by session folders in n project
// folders, at path; dirs are two of them.
func duplicateFinding(id, path string, n int, dirs ...string) seam.Finding {
	return seam.Finding{Class: seam.ClassDamage, Code: "duplicate-id",
		Pos:     seam.PathPos(path),
		Message: fmt.Sprintf("session id %q found in %d project folders (%s and %s): dsh refuses both", id, n, dirs[0], dirs[1])}
}
