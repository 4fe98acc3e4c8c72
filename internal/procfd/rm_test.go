package procfd

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unsafe"
)

// TestRMLayout checks the Restart Manager structures against
// restartmanager.h: RM_UNIQUE_PROCESS is a DWORD and a FILETIME (12
// bytes); RM_PROCESS_INFO adds two WCHAR arrays of 256 and 64 and four
// 32-bit fields, 668 bytes on every Windows architecture.
func TestRMLayout(t *testing.T) {
	var in rmProcessInfo
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof RM_UNIQUE_PROCESS", unsafe.Sizeof(in.Process), 12},
		{"sizeof RM_PROCESS_INFO", unsafe.Sizeof(in), 668},
		{"strAppName", unsafe.Offsetof(in.AppName), 12},
		{"strServiceShortName", unsafe.Offsetof(in.ServiceShortName), 12 + 256*2},
		{"ApplicationType", unsafe.Offsetof(in.ApplicationType), 12 + 256*2 + 64*2},
		{"AppStatus", unsafe.Offsetof(in.AppStatus), 656},
		{"TSSessionId", unsafe.Offsetof(in.TSSessionID), 660},
		{"bRestartable", unsafe.Offsetof(in.Restartable), 664},
		{"alignment", unsafe.Alignof(in), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

func rmInfo(pid uint32, app string) rmProcessInfo {
	in := rmProcessInfo{Process: rmUniqueProcess{PID: pid, StartLow: pid * 10}}
	copy(in.AppName[:len(in.AppName)-1], utf16.Encode([]rune(app)))
	return in
}

// TestRMHolders checks how the Restart Manager's list becomes holders:
// this process, other runs of this program and processes gone are left
// out, a pid seen for an earlier file is named once, the executable's
// name is preferred to the application name, which is decoded from
// UTF-16 up to its NUL and made printable.
func TestRMHolders(t *testing.T) {
	full := rmInfo(9, "")
	for i := range full.AppName {
		full.AppName[i] = 'z' // no NUL at all
	}
	infos := []rmProcessInfo{
		rmInfo(1, "self"),
		rmInfo(2, "Node.js JavaScript Runtime"),
		rmInfo(3, "another dshctl"),
		rmInfo(4, "gone"),
		rmInfo(5, "seen before"),
		rmInfo(6, "Édition 😀\x1b[31m"),
		full,
		{Process: rmUniqueProcess{PID: 10}, AppName: [256]uint16{'a', 0xD800, 'b'}}, // lone surrogate
	}
	describe := func(up rmUniqueProcess) rmProcess {
		if up.StartLow != up.PID*10 && up.PID != 10 {
			t.Errorf("pid %d described with another start time", up.PID)
		}
		switch up.PID {
		case 2:
			return rmProcess{Image: "node.exe"}
		case 3:
			return rmProcess{Image: "dshctl.exe", Ours: true}
		case 4:
			return rmProcess{Gone: true}
		}
		return rmProcess{}
	}
	seen := map[int]bool{5: true}
	got := rmHolders(infos, `C:\s\log`, 1, seen, describe)
	long := strings.Repeat("z", 256)
	want := []Holder{
		{PID: 2, Command: "node.exe", Path: `C:\s\log`, AnyAccess: true},
		{PID: 6, Command: "Édition 😀?[31m", Path: `C:\s\log`, AnyAccess: true},
		{PID: 9, Command: long, Path: `C:\s\log`, AnyAccess: true},
		{PID: 10, Command: "a?b", Path: `C:\s\log`, AnyAccess: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rmHolders:\n got %+v\nwant %+v", got, want)
	}
	if !seen[2] || !seen[6] || seen[3] || seen[4] {
		t.Errorf("seen after: %v", seen)
	}
	if again := rmHolders(infos[1:2], `C:\s\log-wal`, 1, seen, describe); len(again) != 0 {
		t.Errorf("a process named for one file is named again for the next: %+v", again)
	}
}
