// Package trace reads workload traces into the simulator's terms: nodes
// with their resources and labels, and tasks with their arrival, runtime
// and requests.
//
// The Alibaba GPU cluster trace of 2023 ("openb", alibaba/clusterdata,
// cluster-trace-gpu-v2023) has a node list (sn, cpu_milli, memory_mib,
// gpu, model) and task lists (name, cpu_milli, memory_mib, num_gpu,
// gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time,
// scheduled_time; times in seconds). A task arrives at creation_time and
// runs for deletion_time − scheduled_time; a task the trace never
// scheduled (no scheduled_time) is set apart (Never) and counted. GPUs
// are counted in milli-GPUs (GPUMilli): a node of 8 GPUs holds 8000, a
// task asks num_gpu × 1000, or gpu_milli when it shares one GPU; whether
// a share must fit one card is the scenario's choice (gpuCards).
// gpu_spec, the GPU models a task may use, becomes a required node
// affinity on GPUModelLabel.
package trace

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Resource and label names the imported nodes and tasks use.
const (
	// GPUMilli is a node's GPUs and a task's GPU request, in thousandths
	// of a GPU.
	GPUMilli = "alibaba.com/gpu-milli"
	// GPUModelLabel is a node's GPU model (G1, T4, V100M32, ...).
	GPUModelLabel = "alibaba.com/gpu-model"
)

// Node is a node of the trace.
type Node struct {
	Name      string
	CPUMilli  int64
	MemoryMiB int64
	GPUs      int64
	Model     string
}

// Task is a task (a pod) of the trace.
type Task struct {
	Name      string
	CPUMilli  int64
	MemoryMiB int64
	// GPUs is num_gpu; GPUMilli the whole request in milli-GPUs.
	GPUs     int64
	GPUMilli int64
	// Models are the GPU models the task may use; empty means any.
	Models  []string
	QoS     string
	Arrival time.Duration
	Runtime time.Duration
}

// Tasks is a task list and what was left out of it.
type Tasks struct {
	Tasks []Task
	// Unscheduled counts the tasks the trace never scheduled.
	Unscheduled int
	// Never are those tasks, without a runtime: a replay leaves them out,
	// but an experiment that only places tasks (filling a cluster) may
	// draw from them too.
	Never []Task
}

// ReadNodes reads a node list.
func ReadNodes(r io.Reader) ([]Node, error) {
	rows, err := read(r, "sn", "cpu_milli", "memory_mib", "gpu", "model")
	if err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(rows))
	for _, row := range rows {
		n := Node{Name: row.get("sn"), Model: row.get("model")}
		if n.CPUMilli, err = row.int("cpu_milli"); err != nil {
			return nil, err
		}
		if n.MemoryMiB, err = row.int("memory_mib"); err != nil {
			return nil, err
		}
		if n.GPUs, err = row.int("gpu"); err != nil {
			return nil, err
		}
		if n.Name == "" {
			return nil, fmt.Errorf("line %d: sn is empty", row.line)
		}
		out = append(out, n)
	}
	return out, nil
}

// ReadTasks reads a task list, in arrival order (then name).
func ReadTasks(r io.Reader) (*Tasks, error) {
	rows, err := read(r, "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "creation_time", "deletion_time", "scheduled_time")
	if err != nil {
		return nil, err
	}
	out := &Tasks{}
	for _, row := range rows {
		t := Task{Name: row.get("name"), QoS: row.get("qos")}
		if t.Name == "" {
			return nil, fmt.Errorf("line %d: name is empty", row.line)
		}
		never := row.get("scheduled_time") == ""
		var created, deleted, scheduled, gpuMilli int64
		for _, f := range []struct {
			col string
			to  *int64
		}{{"cpu_milli", &t.CPUMilli}, {"memory_mib", &t.MemoryMiB}, {"num_gpu", &t.GPUs}, {"gpu_milli", &gpuMilli},
			{"creation_time", &created}, {"deletion_time", &deleted}, {"scheduled_time", &scheduled}} {
			if *f.to, err = row.int(f.col); err != nil {
				return nil, err
			}
		}
		if !never && deleted < scheduled {
			return nil, fmt.Errorf("line %d: deletion_time %d is before scheduled_time %d", row.line, deleted, scheduled)
		}
		t.Arrival = time.Duration(created) * time.Second
		if !never {
			t.Runtime = time.Duration(deleted-scheduled) * time.Second
		}
		switch {
		case t.GPUs == 1 && gpuMilli > 0 && gpuMilli < 1000:
			t.GPUMilli = gpuMilli
		default:
			t.GPUMilli = t.GPUs * 1000
		}
		if spec := row.get("gpu_spec"); spec != "" {
			t.Models = strings.Split(spec, "|")
		}
		if never {
			out.Unscheduled++
			out.Never = append(out.Never, t)
			continue
		}
		out.Tasks = append(out.Tasks, t)
	}
	sortTasks(out.Tasks)
	sortTasks(out.Never)
	return out, nil
}

func sortTasks(ts []Task) {
	slices.SortFunc(ts, func(a, b Task) int {
		return cmp.Or(cmp.Compare(a.Arrival, b.Arrival), strings.Compare(a.Name, b.Name))
	})
}

type row struct {
	line   int
	index  map[string]int
	fields []string
}

func (r row) get(col string) string { return strings.TrimSpace(r.fields[r.index[col]]) }

func (r row) int(col string) (int64, error) {
	s := r.get(col)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return int64(f), nil
		}
		return 0, fmt.Errorf("line %d: %s %q is not a number", r.line, col, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("line %d: %s %d is negative", r.line, col, v)
	}
	return v, nil
}

// read reads a CSV with a header that has at least the columns wanted.
func read(r io.Reader, want ...string) ([]row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("empty file: a header with %s is expected", strings.Join(want, ", "))
	}
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, h := range header {
		index[strings.TrimSpace(h)] = i
	}
	for _, w := range want {
		if _, ok := index[w]; !ok {
			return nil, fmt.Errorf("the header lacks the column %q (has %s)", w, strings.Join(header, ", "))
		}
	}
	var rows []row
	for line := 2; ; line++ {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		if len(fields) != len(header) {
			return nil, fmt.Errorf("line %d: %d fields, the header has %d", line, len(fields), len(header))
		}
		rows = append(rows, row{line: line, index: index, fields: fields})
	}
}
