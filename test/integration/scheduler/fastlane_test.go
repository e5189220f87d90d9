//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

const fastLaneConf = "../../../examples/scheduler/fast-lane.conf"

// TestFastLaneExample runs the documented fast lane (docs/scheduler.md):
// under examples/scheduler/fast-lane.conf, the pod of
// examples/fast-lane/agent-pod.yaml is bound by the fast lane. Then a gang
// of the scheduling cycle and a burst of fast-lane pods (by schedulerName
// and by queue) arrive together for more room than three nodes have: the
// two loops race for the same nodes, every slot is taken, no node is given
// more than it has, and the gang is placed whole or not at all.
func TestFastLaneExample(t *testing.T) {
	const ns = "fastlane"
	createNamespace(t, ns)
	createQueue(t, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	createQueue(t, queue("agents", 1, nil))
	labelledNodes(t, ns, 3, "4")
	runSchedulerFile(t, fastLaneConf)

	example := readExample[corev1.Pod](t, "../../../examples/fast-lane/agent-pod.yaml")
	example.Namespace = ns
	example.Spec.NodeSelector = map[string]string{"test": ns}
	if err := fw.Client.Create(t.Context(), example); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the example pod bound", func() (bool, string) {
		p, err := getPod(t, ns, example.Name)
		return err == nil && p.Spec.NodeName != "", fmt.Sprintf("node %q, err %v", p.Spec.NodeName, err)
	})
	if err := fw.Client.Delete(t.Context(), example, &client.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the example pod gone", func() (bool, string) {
		_, err := getPod(t, ns, example.Name)
		return err != nil, fmt.Sprint(err)
	})

	// 12 one-cpu slots; a gang of 6 and 12 fast pods ask for 18. Whichever
	// loop wins which node, every slot is taken.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- createGangOn(ctx, ns, "train", 6) }()
	go func() {
		for i := range 12 {
			spec := podSpec(ns, "1")
			annotations := map[string]string{}
			if i%2 == 0 {
				spec.SchedulerName = "caldera-fast"
			} else {
				annotations[schedulingv1beta1.QueueNameAnnotation] = "agents"
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("agent-%d", i), Annotations: annotations}, Spec: spec}
			if err := fw.Client.Create(ctx, pod); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var pods []corev1.Pod
	poll.Eventually(t, t.Context(), 60*time.Second, "every slot taken", func() (bool, string) {
		pods = listPods(t, ns)
		bound := 0
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == 12, describePods(pods)
	})
	for node, cpu := range cpuPerNode(pods) {
		if cpu > 4000 {
			t.Errorf("node %s was given %dm cpu of 4000m:\n%s", node, cpu, describePods(pods))
		}
	}
	gang, fast := 0, 0
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if strings.HasPrefix(p.Name, "train-") {
			gang++
		} else {
			fast++
		}
	}
	t.Logf("bound: %d of the gang, %d fast-lane pods", gang, fast)
	if gang != 0 && gang != 6 {
		t.Errorf("%d of the gang's 6 pods bound: a gang is placed whole or not at all", gang)
	}
	if gang+fast != 12 || fast < 6 {
		t.Errorf("bound: %d of the gang, %d fast-lane pods; want every slot taken, at least half by fast pods", gang, fast)
	}
}
