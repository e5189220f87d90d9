//go:build integration

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// kernel lays out a cgroup v2 tree in a directory and keeps its usage
// files as the kernel would: cpu.stat's usage_usec grows at each cgroup's
// set rate, memory.current holds its set usage, and a meminfo file the
// node's memory. Its time is the agent's clock: advance moves the counters
// on by a span of it, so that the rates the agent reads are exact however
// late the test's goroutines run.
type kernel struct {
	t     *testing.T
	root  string
	mu    sync.Mutex
	rates map[string]float64 // cgroup dir → CPUs in use
	usage map[string]float64 // cgroup dir → usage_usec so far
}

func newKernel(t *testing.T) *kernel {
	k := &kernel{t: t, root: t.TempDir(), rates: map[string]float64{}, usage: map[string]float64{}}
	k.cgroup(k.root)
	return k
}

// advance runs the cgroups at their rates for d.
func (k *kernel) advance(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for dir, cpus := range k.rates {
		k.usage[dir] += cpus * float64(d.Microseconds())
		k.write(filepath.Join(dir, "cpu.stat"), fmt.Sprintf("usage_usec %d\nuser_usec 0\nsystem_usec 0\n", int64(k.usage[dir])))
	}
}

func (k *kernel) meminfo() string { return filepath.Join(k.root, "meminfo") }

// cgroup makes a cgroup directory with the interface files the agent
// reads and writes.
func (k *kernel) cgroup(dir string) {
	k.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		k.t.Fatal(err)
	}
	for file, v := range map[string]string{
		"cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n", "memory.current": "0\n",
		"cpu.weight": "100\n", "cpu.idle": "0\n", "cpu.max": "max 100000\n", "cpu.max.burst": "0\n",
		"memory.max": "max\n", "memory.high": "max\n",
	} {
		if dir == k.root && file != "cpu.stat" {
			continue
		}
		k.write(filepath.Join(dir, file), v)
	}
	k.mu.Lock()
	k.rates[dir] = 0
	k.mu.Unlock()
}

// setCPU makes the cgroup use cpus CPUs from now on.
func (k *kernel) setCPU(dir string, cpus float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rates[dir] = cpus
}

func (k *kernel) setMemory(dir string, bytes int64) {
	k.write(filepath.Join(dir, "memory.current"), fmt.Sprintf("%d\n", bytes))
}

// setNodeMemory writes meminfo for a node with total bytes, used in use.
func (k *kernel) setNodeMemory(total, used int64) {
	k.write(k.meminfo(), fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\n", total/1024, (total-used)/1024, (total-used)/1024))
}

func (k *kernel) read(dir, file string) string {
	k.t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b[:len(b)-1])
}

func (k *kernel) write(path, v string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(v), 0o644); err != nil {
		k.t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		k.t.Error(err)
	}
}
