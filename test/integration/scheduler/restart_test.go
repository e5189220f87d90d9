//go:build integration

package scheduler

import (
	"fmt"
	"sync"
	"testing"
	"time"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestRestartDuringBurst stops the scheduler while a burst of gangs is being
// created and bound, starts a new one, and checks that every gang ends up
// whole and no node holds more than it has.
func TestRestartDuringBurst(t *testing.T) {
	const ns, gangs, size = "restart", 30, 5
	createNamespace(t, ns)
	labelledNodes(t, ns, 10, "16")
	createQueue(t, queue("default", 1, nil))

	stop := startScheduler(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := range gangs {
			if err := createGangOn(t.Context(), ns, fmt.Sprintf("burst-%02d", g), size); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	poll.Eventually(t, t.Context(), 60*time.Second, "the first binds", func() (bool, string) {
		bound, total := boundPods(t, ns)
		return bound >= 20, fmt.Sprintf("%d of %d bound", bound, total)
	})
	stop()
	wg.Wait()

	stop = startScheduler(t)
	defer stop()
	poll.Eventually(t, t.Context(), 90*time.Second, "every pod bound", func() (bool, string) {
		bound, total := boundPods(t, ns)
		return bound == gangs*size && total == gangs*size, fmt.Sprintf("%d of %d bound", bound, total)
	})
	pods := listPods(t, ns)
	perGang := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			perGang[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]++
		}
	}
	for g, n := range perGang {
		if n != size {
			t.Errorf("gang %s has %d of %d pods bound", g, n, size)
		}
	}
	for node, milli := range cpuPerNode(pods) {
		if milli > 16000 {
			t.Errorf("node %s holds %dm cpu, more than its 16 cores", node, milli)
		}
	}
}
