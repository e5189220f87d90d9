package perf

import (
	"os"
	"testing"
	"time"
)

// The benchmark reads its schedulers' usage this way; reading its own
// process checks the parsing against a live /proc.
func TestReadProcessUsage(t *testing.T) {
	before, err := readProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Touch 64 MiB and spin for 300ms of CPU time.
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	x := 0
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	after, err := readProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.PeakRSSBytes < int64(len(buf)) {
		t.Errorf("peak RSS %d bytes, want at least the %d bytes just touched", after.PeakRSSBytes, len(buf))
	}
	// Wall time is an upper bound on this goroutine's CPU time; on a busy
	// machine it gets less, but not less than a tenth.
	if d := after.CPUSeconds - before.CPUSeconds; d < 0.03 {
		t.Errorf("CPU time grew by %.2fs over a 0.3s spin, want at least 0.03s", d)
	}
	_ = x + int(buf[len(buf)-1])
}
