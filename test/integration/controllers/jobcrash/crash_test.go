//go:build integration

// Package jobcrash kills the controller manager while Jobs start and checks
// that nothing is duplicated or lost.
package jobcrash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	var nodes []controlplane.NodeSpec
	for i := range 10 {
		nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("500"),
		}})
	}
	os.Exit(framework.Main(m, framework.Options{Nodes: nodes, Setup: func(ctx context.Context, f *framework.Framework) (func(), error) {
		if err := f.Client.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
			return nil, err
		}
		stop, err := f.StartScheduler(framework.SchedulerConfig)
		if err != nil {
			return nil, err
		}
		return func() { _ = stop() }, nil
	}}, &fw))
}

func startManager(t *testing.T, n int) *controlplane.Component {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	health := fmt.Sprintf("127.0.0.1:%d", port)
	c, err := controlplane.StartComponent(t.Context(), controlplane.ComponentOptions{
		Name:   fmt.Sprintf("caldera-controller-manager-%d", n),
		Binary: filepath.Join(fw.BinDir, "caldera-controller-manager"),
		Args: []string{"--kubeconfig=" + fw.Kubeconfig(), "--leader-elect=false",
			"--health-probe-bind-address=" + health, "--metrics-bind-address=0", "--controllers=job"},
		Dir:      fw.Dir,
		ReadyURL: "http://" + health + "/readyz",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestKillDuringStart creates 100 Jobs of 3 pods while killing the
// controller manager (SIGKILL) at random moments, then checks that every
// Job runs with exactly its pods and one PodGroup.
func TestKillDuringStart(t *testing.T) {
	const ns, jobs, replicas = "crash", 100, 3
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	mgr := startManager(t, 0)
	created := make(chan struct{})
	go func() {
		defer close(created)
		for i := range jobs {
			job := &batchv1alpha1.Job{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("j%03d", i)},
				Spec: batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: "default", Tasks: []batchv1alpha1.TaskSpec{{
					Name: "w", Replicas: replicas,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}},
				}}},
			}
			if err := fw.Client.Create(context.Background(), job); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for k := 1; k <= 5; k++ {
		delay := time.Duration(200+rng.IntN(1500)) * time.Millisecond
		time.Sleep(delay)
		t.Logf("killing the controller manager after %s", delay)
		mgr.Kill()
		mgr = startManager(t, k)
	}
	<-created
	defer func() { _ = mgr.Stop() }()

	poll.Eventually(t, t.Context(), 3*time.Minute, fmt.Sprintf("%d jobs Running", jobs), func() (bool, string) {
		var list batchv1alpha1.JobList
		if err := fw.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, j := range list.Items {
			if j.Status.State.Phase == batchv1alpha1.JobRunning {
				running++
			}
		}
		return running == jobs, fmt.Sprintf("%d of %d jobs Running", running, jobs)
	})
	var pods corev1.PodList
	if err := fw.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	perJob := map[string]int{}
	for _, p := range pods.Items {
		perJob[p.Labels[batchv1alpha1.JobNameKey]]++
	}
	for i := range jobs {
		if n := perJob[fmt.Sprintf("j%03d", i)]; n != replicas {
			t.Errorf("job j%03d has %d pods, want %d", i, n, replicas)
		}
	}
	if len(pods.Items) != jobs*replicas {
		t.Errorf("%d pods in all, want %d", len(pods.Items), jobs*replicas)
	}
	var pgs schedulingv1beta1.PodGroupList
	if err := fw.Client.List(t.Context(), &pgs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pgs.Items) != jobs {
		t.Errorf("%d PodGroups, want %d", len(pgs.Items), jobs)
	}
}
