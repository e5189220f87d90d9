package global

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/config/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	"github.com/caldera-sh/caldera/test/luatest"
)

// customization reads an interpreter customization of this directory,
// strictly, into the Karmada mirror types.
func customization(t *testing.T, file string) *configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	raw, err := Manifests.ReadFile("karmada/" + file)
	if err != nil {
		t.Fatal(err)
	}
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.UnmarshalStrict(raw, ric); err != nil {
		t.Fatal(err)
	}
	return ric
}

// call runs script and calls fn with args.
func call(t *testing.T, script, fn string, nret int, args ...any) []any {
	t.Helper()
	out, err := luatest.Call(script, fn, nret, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// object decodes JSON into plain Go values, as Karmada hands objects to
// its scripts.
func object(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestJobReplicas: a Job is one replica requiring all its tasks: here a
// parameter server of 2 CPUs and 4Gi and four workers of 1.5 CPUs, 8Gi and
// two GPUs each (their init container's 3 CPUs count as the larger), and a
// task of a quarter CPU, written in milli-CPUs.
func TestJobReplicas(t *testing.T) {
	ric := customization(t, "job-interpreter.yaml")
	job := object(t, `{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {
		"priorityClassName": "high",
		"tasks": [
			{"name": "ps", "replicas": 1, "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}},
			{"name": "worker", "replicas": 4, "template": {"spec": {
				"initContainers": [{"resources": {"requests": {"cpu": "3"}}}],
				"containers": [
					{"resources": {"requests": {"cpu": "500m", "memory": "6Gi"}, "limits": {"nvidia.com/gpu": 1}}},
					{"resources": {"limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": 1}}}
				]}}},
			{"name": "log", "replicas": 1, "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "250m"}}}]}}}
		]}}`)
	got := call(t, ric.Spec.Customizations.ReplicaResource.LuaScript, "GetReplicas", 2, job)
	want := []any{1.0, map[string]any{
		"priorityClassName": "high",
		"resourceRequest": map[string]any{
			// 2 + 4 × max(0.5+1, 3) + 0.25 CPUs; 4Gi + 4 × 8Gi; 4 × 2 GPUs
			// (a limit stands for an unset request, container by container).
			"cpu": "14250m", "memory": "38654705664", "nvidia.com/gpu": "8",
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetReplicas (-want,+got):\n%s", diff)
	}
}

// TestJobComponents: with Karmada's multiple-pod-template scheduling,
// each task is a component of its replicas and one pod's requests.
func TestJobComponents(t *testing.T) {
	ric := customization(t, "job-interpreter.yaml")
	job := object(t, `{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {
		"tasks": [
			{"name": "ps", "replicas": 1, "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}},
			{"name": "worker", "replicas": 4, "template": {"spec": {
				"initContainers": [{"resources": {"requests": {"cpu": "3"}}}],
				"containers": [{"resources": {"requests": {"cpu": "500m"}, "limits": {"nvidia.com/gpu": 1}}}]}}},
			{"name": "log", "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "250m"}}}]}}}
		]}}`)
	got := call(t, ric.Spec.Customizations.ComponentResource.LuaScript, "GetComponents", 1, job)[0]
	want := object(t, `[
		{"name": "ps", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "2", "memory": "4294967296"}}},
		{"name": "worker", "replicas": 4, "replicaRequirements": {"resourceRequest": {"cpu": "3", "nvidia.com/gpu": "1"}}},
		{"name": "log", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "250m"}}}
	]`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetComponents (-want,+got):\n%s", diff)
	}
}

// TestHyperJob: components are each replicated Job's tasks, times its
// replicas; statuses merge per replicated Job; a Failed condition makes
// it unhealthy.
func TestHyperJob(t *testing.T) {
	c := customization(t, "hyperjob-interpreter.yaml").Spec.Customizations
	hj := object(t, `{"apiVersion": "training.volcano.sh/v1alpha1", "kind": "HyperJob", "spec": {"replicatedJobs": [
		{"name": "trainer", "replicas": 2, "templateSpec": {"priorityClassName": "high", "tasks": [
			{"name": "worker", "replicas": 8, "template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "32"}}}]}}}]}},
		{"name": "evaluator", "templateSpec": {"tasks": [
			{"name": "eval", "replicas": 1, "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "1500m"}}}]}}}]}}
	]}}`)
	got := call(t, c.ComponentResource.LuaScript, "GetComponents", 1, hj)[0]
	want := object(t, `[
		{"name": "trainer-worker", "replicas": 16, "replicaRequirements": {"priorityClassName": "high", "resourceRequest": {"cpu": "32", "nvidia.com/gpu": "8"}}},
		{"name": "evaluator-eval", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "1500m"}}}
	]`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetComponents (-want,+got):\n%s", diff)
	}

	items := object(t, `[
		{"clusterName": "a", "status": {
			"replicatedJobsStatus": [{"name": "trainer", "running": 8, "jobStates": {"hj-trainer-0": {"phase": "Running"}}}],
			"conditions": [{"type": "Completed", "status": "True", "reason": "AllDone"}, {"type": "Failed", "status": "False", "reason": "None"}]}},
		{"clusterName": "b", "status": {
			"replicatedJobsStatus": [{"name": "trainer", "running": 6, "pending": 2, "jobStates": {"hj-trainer-1": {"phase": "Pending"}}}],
			"conditions": [{"type": "Failed", "status": "True", "reason": "PodFailed", "message": "worker-3 failed"}]}}
	]`)
	agg := call(t, c.StatusAggregation.LuaScript, "AggregateStatus", 1, object(t, `{"spec": {}}`), items)[0]
	wantAgg := object(t, `{"spec": {}, "status": {
		"replicatedJobsStatus": [{"name": "trainer", "pending": 2, "running": 14, "succeeded": 0, "failed": 0, "terminating": 0, "unknown": 0,
			"jobStates": {"hj-trainer-0": {"phase": "Running"}, "hj-trainer-1": {"phase": "Pending"}}}],
		"conditions": [
			{"type": "Completed", "status": "False", "reason": "AllDone"},
			{"type": "Failed", "status": "True", "reason": "PodFailed", "message": "worker-3 failed"}
		]}}`)
	if diff := cmp.Diff(wantAgg, agg); diff != "" {
		t.Errorf("AggregateStatus (-want,+got):\n%s", diff)
	}
	if got := call(t, c.HealthInterpretation.LuaScript, "InterpretHealth", 1, agg)[0]; got != false {
		t.Errorf("InterpretHealth of a failed HyperJob = %v", got)
	}
	if got := call(t, c.HealthInterpretation.LuaScript, "InterpretHealth", 1, items.([]any)[0])[0]; got != true {
		t.Errorf("InterpretHealth of a running HyperJob = %v", got)
	}
}

func TestJobStatusAndHealth(t *testing.T) {
	ric := customization(t, "job-interpreter.yaml")
	c := ric.Spec.Customizations
	items := object(t, `[
		{"clusterName": "a", "status": {"minAvailable": 3, "pending": 1, "running": 2, "state": {"phase": "Running"}}},
		{"clusterName": "b", "status": {"minAvailable": 3, "running": 1, "succeeded": 2, "state": {"phase": "Completed"}}}
	]`)
	got := call(t, c.StatusAggregation.LuaScript, "AggregateStatus", 1, object(t, `{"spec": {}}`), items)[0]
	want := object(t, `{"spec": {}, "status": {"minAvailable": 3, "pending": 1, "running": 3, "succeeded": 2, "failed": 0,
		"terminating": 0, "unknown": 0, "state": {"phase": "Running"}}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AggregateStatus (-want,+got):\n%s", diff)
	}
	for phase, healthy := range map[string]bool{"Running": true, "Completed": true, "Failed": false, "Aborted": false} {
		obj := object(t, `{"status": {"state": {"phase": "`+phase+`"}}}`)
		if got := call(t, c.HealthInterpretation.LuaScript, "InterpretHealth", 1, obj)[0]; got != healthy {
			t.Errorf("InterpretHealth(%s) = %v, want %v", phase, got, healthy)
		}
	}
	observed := object(t, `{"status": {"running": 2}}`)
	if got := call(t, c.StatusReflection.LuaScript, "ReflectStatus", 1, observed)[0]; !cmp.Equal(got, object(t, `{"running": 2}`)) {
		t.Errorf("ReflectStatus = %v", got)
	}
}

func TestQueueStatus(t *testing.T) {
	c := customization(t, "queue-interpreter.yaml").Spec.Customizations
	items := object(t, `[{"clusterName": "a", "status": {"state": "Open", "running": 2, "pending": 1}},
		{"clusterName": "b", "status": {"state": "Closed", "running": 1, "inqueue": 4}}]`)
	got := call(t, c.StatusAggregation.LuaScript, "AggregateStatus", 1, object(t, `{}`), items)[0]
	want := object(t, `{"status": {"state": "Closed", "running": 3, "pending": 1, "inqueue": 4, "completed": 0, "unknown": 0}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AggregateStatus (-want,+got):\n%s", diff)
	}
}

func TestPropagationPolicy(t *testing.T) {
	raw, err := Manifests.ReadFile("karmada/propagate-queues.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cpp policyv1alpha1.ClusterPropagationPolicy
	if err := yaml.UnmarshalStrict(raw, &cpp); err != nil {
		t.Fatal(err)
	}
	if len(cpp.Spec.ResourceSelectors) != 2 || cpp.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		t.Errorf("policy %+v", cpp.Spec)
	}
}

// TestReflectStatusOfNewObjects: Karmada wants a table back from
// ReflectStatus, also for an object a member made a moment ago, with no
// status yet (nil makes it fail to reflect the status at all).
func TestReflectStatusOfNewObjects(t *testing.T) {
	for _, file := range []string{"job-interpreter.yaml", "hyperjob-interpreter.yaml", "queue-interpreter.yaml"} {
		t.Run(file, func(t *testing.T) {
			script := customization(t, file).Spec.Customizations.StatusReflection.LuaScript
			if got := call(t, script, "ReflectStatus", 1, object(t, `{"metadata": {"name": "new"}, "spec": {}}`))[0]; got == nil {
				t.Errorf("ReflectStatus of an object with no status = nil, want a table")
			}
		})
	}
}
