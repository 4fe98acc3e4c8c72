package procfd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	rstrtmgr                = windows.NewLazySystemDLL("rstrtmgr.dll")
	procRmStartSession      = rstrtmgr.NewProc("RmStartSession")
	procRmRegisterResources = rstrtmgr.NewProc("RmRegisterResources")
	procRmGetList           = rstrtmgr.NewProc("RmGetList")
	procRmEndSession        = rstrtmgr.NewProc("RmEndSession")
)

// rmMaxProcesses bounds the list asked of the Restart Manager: more
// processes than that with one file open is not a session log's case.
const rmMaxProcesses = 4096

// Writers returns the processes, other than this one and other runs of
// this program's executable (which take the session's lock instead), that
// have one of paths open, as the Restart Manager lists them. It does not
// say in which mode a file is open, so a process that only reads one
// counts too (Holder.AnyAccess). Files that do not exist are skipped.
// ErrCannotTell: the Restart Manager failed (or is missing).
func Writers(ctx context.Context, paths ...string) ([]Holder, error) {
	self := os.Getpid()
	var exe os.FileInfo
	if p, err := os.Executable(); err == nil {
		exe, _ = os.Stat(p)
	}
	image := make([]uint16, windows.MAX_LONG_PATH)
	describe := func(up rmUniqueProcess) rmProcess {
		return describeProcess(up, exe, image)
	}
	var out []Holder
	seen := map[int]bool{}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		infos, err := rmList(p)
		if err != nil {
			return nil, fmt.Errorf("%w: Restart Manager: %w", ErrCannotTell, err)
		}
		out = append(out, rmHolders(infos, p, self, seen, describe)...)
	}
	return out, nil
}

// rmList returns the Restart Manager's list of the processes that have
// path open, from a session of its own.
func rmList(path string) ([]rmProcessInfo, error) {
	if err := procRmGetList.Find(); err != nil {
		return nil, err
	}
	var session uint32
	var key [rmSessionKeyLen + 1]uint16
	if r, _, _ := procRmStartSession.Call(uintptr(unsafe.Pointer(&session)), 0, uintptr(unsafe.Pointer(&key[0]))); r != 0 {
		return nil, fmt.Errorf("RmStartSession: %w", syscall.Errno(r))
	}
	defer procRmEndSession.Call(uintptr(session))

	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	names := []*uint16{name}
	r, _, _ := procRmRegisterResources.Call(uintptr(session), 1, uintptr(unsafe.Pointer(&names[0])), 0, 0, 0, 0)
	runtime.KeepAlive(names)
	runtime.KeepAlive(name)
	if r != 0 {
		return nil, fmt.Errorf("RmRegisterResources: %w", syscall.Errno(r))
	}

	// The list can grow between a call that says how long it is and the
	// next: ask again, a few times, with the length asked for.
	infos := make([]rmProcessInfo, 4)
	for range 5 {
		var needed, reasons uint32
		n := uint32(len(infos))
		r, _, _ := procRmGetList.Call(uintptr(session), uintptr(unsafe.Pointer(&needed)), uintptr(unsafe.Pointer(&n)),
			uintptr(unsafe.Pointer(&infos[0])), uintptr(unsafe.Pointer(&reasons)))
		switch syscall.Errno(r) {
		case 0:
			return infos[:min(int(n), len(infos))], nil
		case windows.ERROR_MORE_DATA:
			if needed > rmMaxProcesses {
				return nil, fmt.Errorf("RmGetList: %d processes have it open", needed)
			}
			infos = make([]rmProcessInfo, max(int(needed), len(infos)+1)+2)
		default:
			return nil, fmt.Errorf("RmGetList: %w", syscall.Errno(r))
		}
	}
	return nil, fmt.Errorf("RmGetList: the list kept growing")
}

// describeProcess tells about the process up names: its executable's file
// name, whether that is exe, and whether the process has gone since the
// Restart Manager listed it (its pid then names another process, or
// none). A process this user may not query is described by nothing.
func describeProcess(up rmUniqueProcess, exe os.FileInfo, buf []uint16) rmProcess {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, up.PID)
	if err != nil {
		return rmProcess{Gone: errors.Is(err, windows.ERROR_INVALID_PARAMETER)} // no such pid
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) == nil &&
		(created.LowDateTime != up.StartLow || created.HighDateTime != up.StartHigh) {
		return rmProcess{Gone: true}
	}
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) != nil {
		return rmProcess{}
	}
	path := windows.UTF16ToString(buf[:n])
	p := rmProcess{Image: filepath.Base(path)}
	if st, err := os.Stat(path); err == nil && exe != nil {
		p.Ours = os.SameFile(st, exe)
	}
	return p
}
