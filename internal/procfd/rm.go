package procfd

import "unicode/utf16"

// The Restart Manager's structures (restartmanager.h), laid out as
// Windows lays them out; Writers uses them on Windows, and they are
// plain data so that their layout and decoding are tested everywhere.
const (
	rmSessionKeyLen = 32  // CCH_RM_SESSION_KEY
	rmMaxAppName    = 255 // CCH_RM_MAX_APP_NAME
	rmMaxSvcName    = 63  // CCH_RM_MAX_SVC_NAME
)

// rmUniqueProcess is RM_UNIQUE_PROCESS: a pid and the process's start
// time (a FILETIME), which together name one process even once the pid
// is reused.
type rmUniqueProcess struct {
	PID                 uint32
	StartLow, StartHigh uint32
}

// rmProcessInfo is RM_PROCESS_INFO (668 bytes).
type rmProcessInfo struct {
	Process          rmUniqueProcess
	AppName          [rmMaxAppName + 1]uint16
	ServiceShortName [rmMaxSvcName + 1]uint16
	ApplicationType  uint32 // RM_APP_TYPE
	AppStatus        uint32
	TSSessionID      uint32
	Restartable      int32 // BOOL
}

// rmProcess is what Writers learns of a listed process beyond the
// Restart Manager's entry: its executable's file name (empty when it may
// not be read), whether that executable is this program's, and whether
// the process has gone (or its pid is another's now).
type rmProcess struct {
	Image string
	Ours  bool
	Gone  bool
}

// rmHolders turns the Restart Manager's list for path into holders,
// leaving out process self, processes running this program (another
// dshctl), those gone, and pids in seen (noting the others there);
// describe tells about a process.
func rmHolders(infos []rmProcessInfo, path string, self int, seen map[int]bool, describe func(rmUniqueProcess) rmProcess) []Holder {
	var out []Holder
	for _, in := range infos {
		pid := int(in.Process.PID)
		if pid == self || seen[pid] {
			continue
		}
		p := describe(in.Process)
		if p.Ours || p.Gone {
			continue
		}
		seen[pid] = true
		cmd := p.Image
		if cmd == "" {
			cmd = utf16String(in.AppName[:])
		}
		out = append(out, Holder{PID: pid, Command: printable(cmd), Path: path, AnyAccess: true})
	}
	return out
}

// utf16String decodes a NUL-terminated UTF-16 string from s (all of s
// when it has no NUL).
func utf16String(s []uint16) string {
	for i, c := range s {
		if c == 0 {
			s = s[:i]
			break
		}
	}
	return string(utf16.Decode(s))
}
