//go:build unix

package main

// What the tests of how soon dshctl stops after a signal share: on a busy
// machine the time from a signal to the exit is mostly the wait for a CPU,
// which a test of dshctl must not measure.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// urgentNice is the priority urgent asks for: the highest.
const urgentNice = -20

// urgent raises the test process, until the test ends, to the highest
// priority the user may give (root or CAP_SYS_NICE; otherwise it stays as
// it is), and with it the dshctl processes it starts, which inherit it:
// a test timing how soon dshctl stops after a signal then times dshctl,
// the test's signal and its wait, not the other processes that share the
// CPU. On Linux a priority is a thread's: each thread is raised (those
// started later inherit it from the thread that starts them).
func urgent(t *testing.T) {
	t.Helper()
	was := map[int]int{} // thread (0: the process) -> its priority (nice) before
	for pass := 0; pass < 3; pass++ {
		for _, tid := range threads() {
			if _, ok := was[tid]; ok {
				continue
			}
			nice, err := getNice(tid)
			if err == nil {
				err = syscall.Setpriority(syscall.PRIO_PROCESS, tid, urgentNice)
			}
			if err != nil {
				t.Logf("dshctl runs at the test's own priority (nice %d: %v): a busy machine's wait for a CPU adds to the times", urgentNice, err)
				restore(was)
				return
			}
			was[tid] = nice
		}
	}
	t.Logf("the test and dshctl run at nice %d", urgentNice)
	t.Cleanup(func() { restore(was) })
}

func restore(was map[int]int) {
	for tid, nice := range was {
		syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
	}
}

// threads are the threads of this process whose priority is set one by
// one: on Linux each thread, elsewhere the process (0).
func threads() []int {
	if runtime.GOOS != "linux" {
		return []int{0}
	}
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return []int{0}
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// getNice is the priority (nice) of a thread (0: this one, or the process).
func getNice(tid int) (int, error) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if runtime.GOOS == "linux" {
		p = 20 - p // the system call gives 20 - nice
	}
	return p, err
}

// waitBlocked returns once process pid waits for something (input, a
// reader, a lock): on Linux, when every thread of it is asleep at three
// looks in a row, 10 ms apart. A process that waits is past its start-up,
// which sets its signal handler; one that only waits for a CPU is not
// asleep (state R). It also returns once the process has ended. Where
// /proc cannot tell, it waits a second. Only a process that never blocks
// in a minute fails the test.
func waitBlocked(t *testing.T, pid int) {
	t.Helper()
	tasks := fmt.Sprintf("/proc/%d/task", pid)
	if _, err := os.Stat(tasks); err != nil {
		time.Sleep(time.Second)
		return
	}
	asleep := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		switch threadStates(tasks) {
		case "ended":
			return
		case "asleep":
			if asleep++; asleep == 3 {
				return
			}
		default:
			asleep = 0
		}
	}
	t.Fatalf("process %d never waited for anything in a minute", pid)
}

// threadStates says whether the threads under tasks (/proc/PID/task) are
// all "asleep" (state S), the process has "ended" (gone, or a zombie), or
// some thread still runs or waits for a CPU ("running").
func threadStates(tasks string) string {
	entries, err := os.ReadDir(tasks)
	if err != nil || len(entries) == 0 {
		return "ended"
	}
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join(tasks, e.Name(), "stat"))
		if err != nil {
			continue // a thread that ended
		}
		// pid (comm) state ...: comm may hold anything, the state follows
		// its last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			return "running"
		}
		switch s[i+2] {
		case 'S':
		case 'Z', 'X':
			return "ended"
		default:
			return "running"
		}
	}
	return "asleep"
}
