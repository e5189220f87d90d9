//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A kubelet reconciles a pod's status over and over; kwok, which stands in
// for the kubelets here, plays each stage of a pod once. When the status
// write of a stage fails with an error kwok does not retry (the connection
// reset by an API server killed mid-request, an etcd timeout answered as
// an internal error), kwok drops it, and the pod stays as it was until
// something else changes it: bound but Pending, or Running long after its
// run duration, and its job never finishes. That is the simulator's gap,
// not the product's, so the run fills it as a kubelet's resync would: a
// pod that has been bound and Pending for longer than resyncAfter, or
// Running for resyncAfter past its run duration, gets an annotation
// touched, which kwok sees as a change and plays the stage again. kwok
// counts a stage's delay (the run duration) from the change that played
// it, so a pod touched is left alone for its run duration and resyncAfter
// more: touched sooner, it would never finish. Every touch is logged and
// counted in the report.
const (
	resyncAfter      = 20 * time.Second
	resyncAnnotation = "chaos.caldera.sh/resync"
)

// resyncer remembers since when each bound Pending pod was first seen so,
// and when each pod was last touched.
type resyncer struct {
	c client.Client

	mu           sync.Mutex
	pendingSince map[types.UID]time.Time
	touchedAt    map[types.UID]time.Time
	touched      map[string]int // "namespace/name" → touches
}

func newResyncer(c client.Client) *resyncer {
	return &resyncer{c: c, pendingSince: map[types.UID]time.Time{}, touchedAt: map[types.UID]time.Time{}, touched: map[string]int{}}
}

// stuck says whether a pod is one kwok has stopped moving at now, and why.
// pendingSince is when the pod was first seen bound and Pending, touchedAt
// when the run last touched it (zero if never).
func stuck(p *corev1.Pod, pendingSince, touchedAt, now time.Time) (string, bool) {
	if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
		return "", false
	}
	switch p.Status.Phase {
	case corev1.PodPending:
		if !pendingSince.IsZero() && now.Sub(pendingSince) > resyncAfter {
			return fmt.Sprintf("bound to %s and Pending for %s", p.Spec.NodeName, now.Sub(pendingSince).Round(time.Second)), true
		}
	case corev1.PodRunning:
		run, err := time.ParseDuration(p.Annotations[RunDurationAnnotation])
		if err != nil || p.Status.StartTime == nil {
			return "", false
		}
		// A touch starts kwok's count of the run duration again.
		since := p.Status.StartTime.Time
		if touchedAt.After(since) {
			since = touchedAt
		}
		if over := now.Sub(since) - run; over > resyncAfter {
			return fmt.Sprintf("Running %s past its run duration of %s", now.Sub(p.Status.StartTime.Time).Round(time.Second)-run, run), true
		}
	}
	return "", false
}

// pass touches every stuck pod of namespace once and returns what it did.
func (r *resyncer) pass(ctx context.Context, namespace string, now time.Time) ([]string, error) {
	var pods corev1.PodList
	lctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := r.c.List(lctx, &pods, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[types.UID]bool{}
	var did []string
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.UID] = true
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName == "" {
			delete(r.pendingSince, p.UID)
		} else if _, ok := r.pendingSince[p.UID]; !ok {
			r.pendingSince[p.UID] = now
		}
		why, ok := stuck(p, r.pendingSince[p.UID], r.touchedAt[p.UID], now)
		if !ok {
			continue
		}
		key := p.Namespace + "/" + p.Name
		// The UID in the patch is a precondition: a successor of the same
		// name is left alone.
		patch := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:%q}}}`, p.UID, resyncAnnotation, strconv.Itoa(r.touched[key]+1))
		pctx, cancel := context.WithTimeout(ctx, requestTimeout)
		err := r.c.Patch(pctx, p, client.RawPatch(types.MergePatchType, []byte(patch)))
		cancel()
		if err != nil {
			did = append(did, fmt.Sprintf("%s (%s): touching it: %v", key, why, err))
			continue
		}
		r.touched[key]++
		r.touchedAt[p.UID] = now
		delete(r.pendingSince, p.UID)
		did = append(did, fmt.Sprintf("%s (%s): touched", key, why))
	}
	for uid := range r.pendingSince {
		if !seen[uid] {
			delete(r.pendingSince, uid)
		}
	}
	for uid := range r.touchedAt {
		if !seen[uid] {
			delete(r.touchedAt, uid)
		}
	}
	return did, nil
}

// run makes a pass every period until ctx ends, logging what it touched.
func (r *resyncer) run(ctx context.Context, namespace string, period time.Duration, logf func(string, ...any)) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			did, err := r.pass(ctx, namespace, now)
			if err != nil {
				continue // the API server is down: the next pass sees it back
			}
			for _, d := range did {
				logf("kubelet resync: %s", d)
			}
		}
	}
}

// summary says how many pods were touched how often.
func (r *resyncer) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.touched) == 0 {
		return "No pod was left stuck by kwok: the run touched none."
	}
	total := 0
	names := make([]string, 0, len(r.touched))
	for k, n := range r.touched {
		total += n
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("kwok dropped a stage of %d pods (their status write failed in a fault); the run touched them %d times to have it played again: %v.",
		len(names), total, first(names, 10))
}

func TestStuck(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	pod := func(node string, phase corev1.PodPhase, startedAgo time.Duration, run string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
		if run != "" {
			p.Annotations = map[string]string{RunDurationAnnotation: run}
		}
		if startedAgo > 0 {
			p.Status.StartTime = &metav1.Time{Time: now.Add(-startedAgo)}
		}
		return p
	}
	deleting := pod("n1", corev1.PodRunning, time.Hour, "10s")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	for _, tc := range []struct {
		name         string
		pod          *corev1.Pod
		pendingSince time.Time
		touchedAt    time.Time
		want         bool
	}{
		{"unbound and Pending long: the scheduler's, not kwok's", pod("", corev1.PodPending, 0, "10s"), now.Add(-time.Hour), time.Time{}, false},
		{"bound and Pending briefly", pod("n1", corev1.PodPending, 0, "10s"), now.Add(-5 * time.Second), time.Time{}, false},
		{"bound and Pending past the grace", pod("n1", corev1.PodPending, 0, "10s"), now.Add(-resyncAfter - time.Second), time.Time{}, true},
		{"bound, Pending, first seen now", pod("n1", corev1.PodPending, 0, "10s"), time.Time{}, time.Time{}, false},
		{"Running within its duration", pod("n1", corev1.PodRunning, 8*time.Second, "10s"), time.Time{}, time.Time{}, false},
		{"Running just past its duration", pod("n1", corev1.PodRunning, 10*time.Second+resyncAfter-time.Second, "10s"), time.Time{}, time.Time{}, false},
		{"Running far past its duration", pod("n1", corev1.PodRunning, 10*time.Second+resyncAfter+time.Second, "10s"), time.Time{}, time.Time{}, true},
		{"Running far past its duration, touched within it since", pod("n1", corev1.PodRunning, time.Hour, "10s"), time.Time{}, now.Add(-10*time.Second - resyncAfter + time.Second), false},
		{"Running far past its duration, touched longer ago", pod("n1", corev1.PodRunning, time.Hour, "10s"), time.Time{}, now.Add(-10*time.Second - resyncAfter - time.Second), true},
		{"Running without a duration runs until deleted", pod("n1", corev1.PodRunning, time.Hour, ""), time.Time{}, time.Time{}, false},
		{"Running with no start time yet", pod("n1", corev1.PodRunning, 0, "10s"), time.Time{}, time.Time{}, false},
		{"being deleted", deleting, time.Time{}, time.Time{}, false},
		{"Succeeded", pod("n1", corev1.PodSucceeded, time.Hour, "10s"), time.Time{}, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, got := stuck(tc.pod, tc.pendingSince, tc.touchedAt, now)
			if got != tc.want {
				t.Errorf("stuck = %v (%q), want %v", got, why, tc.want)
			}
			if got && why == "" {
				t.Error("stuck without a reason")
			}
		})
	}
}
