package trace

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestReadSlice(t *testing.T) {
	f, err := os.Open("testdata/openb_nodes_slice.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := ReadNodes(f)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]int{}
	for _, n := range nodes {
		models[n.Model]++
	}
	if len(nodes) != 25 || models["G2"] != 10 || models[""] != 2 {
		t.Errorf("%d nodes, models %v", len(nodes), models)
	}
	p, err := os.Open("testdata/openb_pods_gpuspec33_slice.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tasks, err := ReadTasks(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks.Tasks)+tasks.Unscheduled != 400 {
		t.Errorf("%d tasks and %d unscheduled, 400 in the file", len(tasks.Tasks), tasks.Unscheduled)
	}
	first := tasks.Tasks[0]
	if first.Name != "openb-pod-0000" || first.Runtime != 12537496*time.Second || first.GPUMilli != 1000 {
		t.Errorf("first task %+v", first)
	}
	shared, constrained := 0, 0
	for i, task := range tasks.Tasks {
		if i > 0 && task.Arrival < tasks.Tasks[i-1].Arrival {
			t.Fatalf("task %s arrives before %s", task.Name, tasks.Tasks[i-1].Name)
		}
		if task.GPUs == 1 && task.GPUMilli < 1000 {
			shared++
		}
		if len(task.Models) > 0 {
			constrained++
		}
	}
	if shared == 0 || constrained == 0 {
		t.Errorf("%d GPU-sharing tasks, %d constrained to models", shared, constrained)
	}
}

func TestReadErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "empty file",
		"sn,cpu_milli,memory_mib,gpu\nn,1,1,1\n": `the header lacks the column "model"`,
		"sn,cpu_milli,memory_mib,gpu,model\nn,x,1,1,\n": `line 2: cpu_milli "x" is not a number`,
		"sn,cpu_milli,memory_mib,gpu,model\nn,1,1\n":    "line 2: 3 fields, the header has 5",
	} {
		if _, err := ReadNodes(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	bad := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\np,1,1,1,1000,,LS,10,5,8\n"
	if _, err := ReadTasks(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "deletion_time 5 is before scheduled_time 8") {
		t.Errorf("a task deleted before it started: %v", err)
	}
}
