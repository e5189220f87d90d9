package writeback

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Writer patches PodGroup and Queue status and records scheduling events.
// Patches are queued per object, the latest wins, and an object is only
// written when its desired status differs from what it shows.
type Writer struct {
	client   rest.Interface
	recorder events.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	pending map[string]pendingWrite
	// written is, per object, the status last queued for writing and
	// when, kept until swept (ResendAfter).
	written map[string]record
	// sweptAt is when written was last cleared of records too old to
	// matter (ResendAfter).
	sweptAt time.Time
	// reasons is the reason type last announced in events, per job.
	reasons map[api.JobID]string
	// shortSince is when each job was first seen short of pods and
	// blocked by nothing else (PodArrivalGrace).
	shortSince map[api.JobID]time.Time
	// podGroups is the UID of each job's PodGroup when last seen: one made
	// again under the job's name starts afresh (forgetRecreatedLocked).
	podGroups map[api.JobID]types.UID
	now       func() time.Time
}

// PodArrivalGrace is how long a gang that is short of pods, and blocked by
// nothing else, goes unreported: a job controller creates a gang's pods
// once its PodGroup is admitted, so every gang is short of pods for a
// moment, and reporting it (a condition and an event on every pod) would
// be noise, and writes, for nothing. A gang still short after the grace
// is reported as NotEnoughPods.
const PodArrivalGrace = 10 * time.Second

// notEnoughPods is the gang plugin's reason for a job with fewer pods than
// its minimum.
const notEnoughPods = "NotEnoughPods"

// MessageInterval is how often a PodGroup whose Unschedulable condition
// changed only in its message (the counts of a waiting gang move with every
// placement elsewhere) is rewritten. A change of reason is written at once.
const MessageInterval = 5 * time.Second

// pendingWrite is a write waiting in the queue and the time it is due:
// the queue wakes a key at the earliest time it was added for, which may
// be a hold since dropped (UntilBound), and a write woken before it is due
// waits on.
type pendingWrite struct {
	write func(context.Context) error
	due   time.Time
}

// record is a status queued for writing: what, when, and to which object
// (a PodGroup or Queue deleted and made again under its name is another).
type record struct {
	desired any
	at      time.Time
	uid     types.UID
}

// NewWriter returns a writer; call Run to start it.
func NewWriter(c rest.Interface, recorder events.EventRecorder) *Writer {
	return &Writer{
		client:   c,
		recorder: recorder,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "status"}),
		pending:    map[string]pendingWrite{},
		written:    map[string]record{},
		reasons:    map[api.JobID]string{},
		shortSince: map[api.JobID]time.Time{},
		podGroups:  map[api.JobID]types.UID{},
		now:        time.Now,
	}
}

// Run writes with the given number of workers until ctx ends.
func (w *Writer) Run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.processNext(ctx) {
			}
		}()
	}
	wg.Wait()
}

func (w *Writer) processNext(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	w.mu.Lock()
	p, ok := w.pending[key]
	if wait := p.due.Sub(w.now()); ok && wait > 0 {
		w.mu.Unlock()
		w.queue.AddAfter(key, wait)
		return true
	}
	delete(w.pending, key)
	w.mu.Unlock()
	if !ok {
		w.queue.Forget(key)
		return true
	}
	if err := p.write(ctx); err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Writing status failed; retrying", "object", key)
		w.mu.Lock()
		if _, newer := w.pending[key]; !newer {
			w.pending[key] = pendingWrite{write: p.write}
		}
		delete(w.written, key)
		w.mu.Unlock()
		w.queue.AddRateLimited(key)
		return true
	}
	w.queue.Forget(key)
	return true
}

// ResendAfter is how long a status written (or queued) is trusted to reach
// the informer: an object still shown differently after it was written is
// written again, since another writer changed it or the write was lost.
const ResendAfter = 30 * time.Second

// enqueue schedules a write of desired to the object uid under key, hold
// from now at the latest, unless it was the last desired value written or
// queued for that object, less than ResendAfter ago. A write waiting for its
// time writes whatever is desired when the time comes; a later change with
// a shorter hold brings it forward. A hold of UntilBound queues nothing and
// drops the write waiting, if any: the change is decided again, with its
// hold, once the binds it waits for are done.
func (w *Writer) enqueue(key string, uid types.UID, desired any, hold time.Duration, write func(context.Context) error) {
	w.mu.Lock()
	if hold == UntilBound {
		if _, waiting := w.pending[key]; waiting {
			// Its record goes with it: what was queued was not written,
			// and must not hold back the same change once the binds are
			// done.
			delete(w.pending, key)
			delete(w.written, key)
		}
		w.mu.Unlock()
		return
	}
	now := w.now()
	if last, ok := w.written[key]; ok && last.uid == uid && equality.Semantic.DeepEqual(last.desired, desired) && now.Sub(last.at) < ResendAfter {
		w.mu.Unlock()
		return
	}
	due := now.Add(hold)
	if p, ok := w.pending[key]; ok && p.due.Before(due) {
		due = p.due
	}
	w.written[key] = record{desired: desired, at: now, uid: uid}
	w.pending[key] = pendingWrite{write: write, due: due}
	w.mu.Unlock()
	if hold > 0 {
		w.queue.AddAfter(key, hold)
		return
	}
	w.queue.Add(key)
}

// shown drops the write still waiting for key, if any: the object shows
// the status desired now. What was last queued, and when, is kept until
// swept: a message changed soon after is held back by it.
func (w *Writer) shown(key string) {
	w.mu.Lock()
	delete(w.pending, key)
	w.mu.Unlock()
}

// lastWrittenLocked returns the status last queued for the object uid
// under key. A record for another object of the name (deleted and made
// again since) is forgotten, and its waiting write dropped.
func (w *Writer) lastWrittenLocked(key string, uid types.UID) (any, bool) {
	r, ok := w.written[key]
	if ok && r.uid != uid {
		delete(w.written, key)
		delete(w.pending, key)
		return nil, false
	}
	return r.desired, ok
}

// sweep forgets, at most once per ResendAfter, records older than it
// with no write waiting (they no longer hold a write back, and the objects
// of some are gone), and what it knew of jobs no longer in the snapshot.
// Once per ResendAfter rather than every cycle: with many jobs the walk is
// not free, and what a gone job leaves behind for a while is harmless (a
// PodGroup made again under its name has another UID: forgetRecreatedLocked).
func (w *Writer) sweep(snap *api.Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if now.Sub(w.sweptAt) < ResendAfter {
		return
	}
	w.sweptAt = now
	for key, r := range w.written {
		if _, waiting := w.pending[key]; !waiting && now.Sub(r.at) >= ResendAfter {
			delete(w.written, key)
		}
	}
	for id := range w.podGroups {
		if _, ok := snap.Jobs[id]; !ok {
			delete(w.podGroups, id)
			delete(w.reasons, id)
			delete(w.shortSince, id)
		}
	}
}

// Apply records what a cycle concluded: the status of every job it touched
// or judged, and of every queue.
func (w *Writer) Apply(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, touched map[api.JobID]bool, now metav1.Time) {
	seen := map[api.JobID]bool{}
	apply := func(id api.JobID) {
		if seen[id] {
			return
		}
		seen[id] = true
		job := snap.Jobs[id]
		if job == nil || job.PodGroup == nil {
			return
		}
		pg := job.PodGroup
		key := "podgroup/" + string(id)
		w.mu.Lock()
		w.forgetRecreatedLocked(id, pg.UID)
		outcome := w.withinPodArrivalLocked(id, outcomes[id])
		last, written := w.lastWrittenLocked(key, pg.UID)
		w.mu.Unlock()
		desired := DesiredPodGroupStatus(job, outcome, now)
		if written {
			keepTransitionTimes(&desired, last.(schedulingv1beta1.PodGroupStatus))
		}
		if equality.Semantic.DeepEqual(desired, pg.Status) {
			w.shown(key)
			return
		}
		if onlyMessageChanged(job.PodGroup.Status, desired) && w.onlyNumbersMoved(id, key, outcome) {
			return
		}
		w.recordUnschedulable(job, outcome)
		q := snap.Queues[job.Queue]
		hold := PodGroupHold(pg.Status, desired, HoldInput{
			Unstarted:   job.CountIn(api.Allocated, api.Binding, api.Bound),
			Binding:     job.CountIn(api.Allocated, api.Binding),
			PodsMissing: int32(len(job.Tasks)) < job.MinAvailable,
			QueueOpen:   q == nil || q.Open(),
		})
		w.enqueue(key, pg.UID, desired, hold, func(ctx context.Context) error {
			return w.patchStatus(ctx, podGroupStatus(pg.Namespace, pg.Name), podGroupStatusPatch(desired))
		})
	}
	w.sweep(snap)
	for id := range outcomes {
		apply(id)
	}
	for id := range touched {
		apply(id)
	}
	for id, desired := range DesiredQueueStatuses(snap) {
		q := snap.Queues[id]
		if q == nil || q.Queue == nil {
			continue
		}
		key := "queue/" + q.Name
		if queueStatusEqual(q.Queue.Status, desired) {
			w.shown(key)
			continue
		}
		w.mu.Lock()
		w.lastWrittenLocked(key, q.Queue.UID) // forgets a queue of the name deleted since
		w.mu.Unlock()
		name, cur := q.Name, q.Queue.Status.Allocated
		w.enqueue(key, q.Queue.UID, desired, SettleHold, func(ctx context.Context) error {
			return w.writeQueueStatus(ctx, name, cur, desired)
		})
	}
}

// forgetRecreatedLocked forgets what the writer knew of the job when its
// PodGroup is another than last seen (deleted and made again under its
// name, as a job aborted and resumed does): the reasons announced in
// events and when the job was first short of pods were the first's.
func (w *Writer) forgetRecreatedLocked(id api.JobID, uid types.UID) {
	if prev, ok := w.podGroups[id]; ok && prev != uid {
		delete(w.reasons, id)
		delete(w.shortSince, id)
	}
	w.podGroups[id] = uid
}

// withinPodArrivalLocked returns the outcome to report for a job: none while
// the job has been short of pods, and blocked by nothing else, for less
// than PodArrivalGrace.
func (w *Writer) withinPodArrivalLocked(id api.JobID, outcome *framework.JobOutcome) *framework.JobOutcome {
	if outcome == nil || len(outcome.Blockers) != 1 || outcome.Blockers[0].Type != notEnoughPods {
		delete(w.shortSince, id)
		return outcome
	}
	since, ok := w.shortSince[id]
	if !ok {
		since = w.now()
		w.shortSince[id] = since
	}
	if w.now().Sub(since) < PodArrivalGrace {
		return nil
	}
	return outcome
}

// recordUnschedulable emits an Unschedulable event on the job's PodGroup
// and FailedScheduling events on its pending pods when the job's reason
// changes (not when only the numbers in its message move, which would flood
// the API server while a backlog drains).
func (w *Writer) recordUnschedulable(job *api.JobInfo, outcome *framework.JobOutcome) {
	reason := outcome.Unschedulable()
	w.mu.Lock()
	if reason == nil {
		delete(w.reasons, job.UID)
		w.mu.Unlock()
		return
	}
	types := blockerTypes(outcome)
	announced := w.reasons[job.UID] == types
	w.reasons[job.UID] = types
	w.mu.Unlock()
	if w.recorder == nil || announced {
		return
	}
	msg := reason.Message
	w.recorder.Eventf(job.PodGroup, nil, corev1.EventTypeWarning, "Unschedulable", "Scheduling", "%s", msg)
	for t := range job.TasksIn(api.Pending) {
		w.recorder.Eventf(t.Pod, nil, corev1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s: %s", reason.Type, msg)
	}
}

// onlyNumbersMoved reports whether the job's blockers are of the types
// last announced (only their numbers moved) and its PodGroup's status was
// queued for writing within MessageInterval: then a message-only change
// waits.
func (w *Writer) onlyNumbersMoved(id api.JobID, key string, outcome *framework.JobOutcome) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.written[key]
	return w.reasons[id] == blockerTypes(outcome) && ok && w.now().Sub(r.at) < MessageInterval
}

// blockerTypes names an outcome's blockers in order, "" without any.
func blockerTypes(o *framework.JobOutcome) string {
	if o == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range o.Blockers {
		b.WriteString(r.Type)
		b.WriteByte(',')
	}
	return b.String()
}

// onlyMessageChanged reports whether desired differs from cur only in the
// message of a condition whose type, status and reason are unchanged.
func onlyMessageChanged(cur, desired schedulingv1beta1.PodGroupStatus) bool {
	if cur.Phase != desired.Phase || cur.Running != desired.Running || cur.Succeeded != desired.Succeeded ||
		cur.Failed != desired.Failed || len(cur.Conditions) != len(desired.Conditions) {
		return false
	}
	for i := range cur.Conditions {
		c, d := cur.Conditions[i], desired.Conditions[i]
		if c.Type != d.Type || c.Status != d.Status || c.Reason != d.Reason {
			return false
		}
	}
	return true
}

func queueStatusEqual(cur schedulingv1beta1.QueueStatus, d QueueStatus) bool {
	return equality.Semantic.DeepEqual(normalise(cur.Allocated), normalise(d.Allocated)) &&
		cur.Pending == d.Pending && cur.Inqueue == d.Inqueue && cur.Running == d.Running &&
		cur.Unknown == d.Unknown && cur.Completed == d.Completed
}

func normalise(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return nil
	}
	return rl
}

// podGroupStatusPatch spells out every field, zeros included: a merge
// patch leaves out what it does not name, and the API types omit zeros.
func podGroupStatusPatch(st schedulingv1beta1.PodGroupStatus) map[string]any {
	return map[string]any{
		"phase":      st.Phase,
		"conditions": st.Conditions,
		"running":    st.Running,
		"succeeded":  st.Succeeded,
		"failed":     st.Failed,
	}
}

// writeQueueStatus replaces the status fields of queue name that the
// scheduler owns with d. A JSON patch replaces status.allocated whole, so
// that a resource the API server shows and the informer did not yet (a
// write still on its way to the watch when d was computed) is removed too;
// a merge patch removes only the names it lists. A Queue with no status at
// all has no path to replace under: it gets a merge patch from cur.
func (w *Writer) writeQueueStatus(ctx context.Context, name string, cur corev1.ResourceList, d QueueStatus) error {
	q := queueStatus(name)
	allocated := map[string]string{}
	for res, v := range d.Allocated {
		allocated[string(res)] = v.String()
	}
	ops := []jsonPatchOp{
		{Op: "add", Path: "/status/allocated", Value: allocated},
		{Op: "add", Path: "/status/pending", Value: d.Pending},
		{Op: "add", Path: "/status/inqueue", Value: d.Inqueue},
		{Op: "add", Path: "/status/running", Value: d.Running},
		{Op: "add", Path: "/status/unknown", Value: d.Unknown},
		{Op: "add", Path: "/status/completed", Value: d.Completed},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("encoding status of queue %s: %w", name, err)
	}
	err = w.patch(ctx, q, types.JSONPatchType, data)
	if err == nil || !(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
		return err
	}
	return w.patchStatus(ctx, q, queueStatusPatch(cur, d))
}

// jsonPatchOp is one operation of an RFC 6902 JSON patch.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// queueStatusPatch is a merge patch from cur to d; resources no longer
// allocated are removed with null, as merge patches require.
func queueStatusPatch(cur corev1.ResourceList, d QueueStatus) map[string]any {
	allocated := map[string]any{}
	for name := range cur {
		allocated[string(name)] = nil
	}
	for name, q := range d.Allocated {
		allocated[string(name)] = q.String()
	}
	return map[string]any{
		"allocated": allocated,
		"pending":   d.Pending,
		"inqueue":   d.Inqueue,
		"running":   d.Running,
		"unknown":   d.Unknown,
		"completed": d.Completed,
	}
}

// WriteNomination sets the pod's status.nominatedNodeName to node, or
// clears it when node is "", so that users see where a preemptor waits and
// a restarted scheduler keeps its claim.
func (w *Writer) WriteNomination(t *api.TaskInfo, node string) {
	ns, name := t.Namespace, t.Name
	var value any
	if node != "" {
		value = node
	}
	w.enqueue("pod/"+ns+"/"+name, t.Pod.UID, node, 0, func(ctx context.Context) error {
		return w.patchStatus(ctx, podStatus(ns, name),
			map[string]any{"nominatedNodeName": value})
	})
}

// statusOf names the status subresource of an object: its path under the
// API server's root.
type statusOf []string

func podGroupStatus(namespace, name string) statusOf {
	return statusOf{"/apis", schedulingv1beta1.GroupName, "v1beta1", "namespaces", namespace, "podgroups", name, "status"}
}

func queueStatus(name string) statusOf {
	return statusOf{"/apis", schedulingv1beta1.GroupName, "v1beta1", "queues", name, "status"}
}

func podStatus(namespace, name string) statusOf {
	return statusOf{"/api", "v1", "namespaces", namespace, "pods", name, "status"}
}

func (s statusOf) name() string { return s[len(s)-2] }

// patchStatus merge-patches the status subresource obj with status.
func (w *Writer) patchStatus(ctx context.Context, obj statusOf, status any) error {
	data, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("encoding status of %s: %w", obj.name(), err)
	}
	return w.patch(ctx, obj, types.MergePatchType, data)
}

// patch sends a patch with a plain request: the response, the whole object,
// is not decoded, as the writer does not read it (its informer shows the
// write); an error answered is.
func (w *Writer) patch(ctx context.Context, obj statusOf, pt types.PatchType, data []byte) error {
	return w.client.Patch(pt).AbsPath(obj...).Body(data).Do(ctx).Error()
}

// NewStatusClient returns the client a Writer writes with, from the
// scheduler's client configuration: JSON, which custom resources are
// served in, with rate limits of its own.
func NewStatusClient(cfg *rest.Config) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return rest.UnversionedRESTClientFor(c)
}
