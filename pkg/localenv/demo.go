package localenv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/agent/config"
)

// DemoJob is the name of the Job `local up` submits.
const DemoJob = "demo-training"

// colocationJSON turns colocation on for the nodes labelled for it: CPU QoS
// and burst, memory QoS, and lending 60% of what online pods requested and
// do not use as batch-cpu and batch-memory.
const colocationJSON = `{
  "globalConfig": {
    "cpuQosConfig": {"enable": true},
    "cpuBurstConfig": {"enable": true},
    "memoryQosConfig": {"enable": true, "highRatio": 0.9},
    "overSubscriptionConfig": {"enable": true, "overSubscriptionTypes": "cpu,memory", "ratio": 0.6, "safetyMargin": 0.05},
    "evictingConfig": {"evictingCPUHighWatermark": 80, "evictingMemoryHighWatermark": 60, "evictingCPULowWatermark": 30, "evictingMemoryLowWatermark": 30}
  }
}`

// colocationConfig writes the agents' ConfigMap.
func colocationConfig(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AgentNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", AgentNamespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: config.ConfigMapName},
		Data: map[string]string{config.ConfigMapKey: colocationJSON}}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the colocation ConfigMap: %w", err)
	}
	return nil
}

// submitDemo creates a distributed training Job: a parameter server and
// four GPU workers, one gang, in the default queue.
func submitDemo(ctx context.Context, c client.Client) error {
	pod := func(cpu string, gpus int64) corev1.PodTemplateSpec {
		req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi")}
		if gpus > 0 {
			req["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
		}
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Containers:    []corev1.Container{{Name: "main", Image: "demo-trainer", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
		}}
	}
	job := &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: DemoJob},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano", Queue: "default", MinAvailable: 5,
			Plugins: map[string][]string{"svc": {}, "env": {}},
			Tasks: []batchv1alpha1.TaskSpec{
				{Name: "ps", Replicas: 1, Template: pod("2", 0)},
				{Name: "worker", Replicas: 4, Template: pod("8", 2)},
			},
		},
	}
	if err := c.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating job %s: %w", DemoJob, err)
	}
	return nil
}
