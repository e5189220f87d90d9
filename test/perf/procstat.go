package perf

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat. It is 100 on
// every Linux architecture Go supports (the kernel's USER_HZ, fixed in the
// ABI), which saves asking sysconf through cgo.
const userHZ = 100

// processUsage is a process's CPU time so far and its peak resident memory.
type processUsage struct {
	CPUSeconds   float64
	PeakRSSBytes int64
}

// readProcessUsage reads user+system CPU time from /proc/<pid>/stat and the
// resident set's high-water mark (VmHWM) from /proc/<pid>/status.
func readProcessUsage(pid int) (processUsage, error) {
	var u processUsage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// fields are counted after its closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return u, err
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	if err != nil {
		return u, err
	}
	u.CPUSeconds = float64(utime+stime) / userHZ

	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	defer status.Close()
	s := bufio.NewScanner(status)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status VmHWM: %w", pid, err)
		}
		u.PeakRSSBytes = kb * 1024
		return u, nil
	}
	if err := s.Err(); err != nil {
		return u, err
	}
	return u, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}
