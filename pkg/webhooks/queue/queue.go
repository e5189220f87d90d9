// Package queue admits scheduling.volcano.sh/v1beta1 Queues. Beyond the
// checks of a single queue (apis/scheduling/v1beta1/validation) it keeps the
// queue tree consistent, which needs the other queues:
//
//   - the parent exists (root may be implicit) and the tree has no cycle;
//   - a queue that holds work cannot become a parent, since work runs in leaf
//     queues only;
//   - the children's deserved and guarantee add up to no more than their
//     parent's, and no child's capability exceeds its parent's, for every
//     resource the parent lists;
//   - the legacy hierarchy annotation does not put a queue on the path of
//     another;
//   - a queue with children or unfinished work cannot be deleted, nor can
//     root or default.
//
// On update only what changed is checked, so that an inconsistency that
// predates the webhook does not block unrelated updates.
package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedulingvalidation "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/queueref"
)

var groupKind = schedulingv1beta1.SchemeGroupVersion.WithKind("Queue").GroupKind()

// Webhook defaults and validates Queues.
type Webhook struct {
	reader lookup.Reader
}

var (
	_ admission.Defaulter[*schedulingv1beta1.Queue] = &Webhook{}
	_ admission.Validator[*schedulingv1beta1.Queue] = &Webhook{}
)

// NewWebhook returns the Queue webhook.
func NewWebhook(reader lookup.Reader) *Webhook {
	return &Webhook{reader: reader}
}

// Default applies SetDefaults_Queue.
func (w *Webhook) Default(_ context.Context, q *schedulingv1beta1.Queue) error {
	schedulingv1beta1.SetDefaults_Queue(q)
	return nil
}

// ValidateCreate checks a new queue and its place in the tree.
func (w *Webhook) ValidateCreate(ctx context.Context, q *schedulingv1beta1.Queue) (admission.Warnings, error) {
	q = defaulted(q)
	errs := schedulingvalidation.ValidateQueue(q)
	treeErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		return validateTree(ctx, c, nil, q)
	})
	if err != nil {
		return nil, admit.Internal("checking the queue tree", err)
	}
	return nil, admit.Invalid(groupKind, q.Name, append(errs, treeErrs...))
}

// ValidateUpdate checks a changed queue and, for what changed, its place in
// the tree.
func (w *Webhook) ValidateUpdate(ctx context.Context, oldQ, newQ *schedulingv1beta1.Queue) (admission.Warnings, error) {
	oldQ, newQ = defaulted(oldQ), defaulted(newQ)
	errs := schedulingvalidation.ValidateQueueUpdate(newQ, oldQ)
	treeErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		return validateTree(ctx, c, oldQ, newQ)
	})
	if err != nil {
		return nil, admit.Internal("checking the queue tree", err)
	}
	return nil, admit.Invalid(groupKind, newQ.Name, append(errs, treeErrs...))
}

// ValidateDelete refuses to delete root, default, a queue with child queues
// and a queue that still holds unfinished work.
func (w *Webhook) ValidateDelete(ctx context.Context, q *schedulingv1beta1.Queue) (admission.Warnings, error) {
	errs := schedulingvalidation.ValidateQueueDeletion(q)
	if len(errs) == 0 {
		var err error
		errs, err = w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
			return validateDeletion(ctx, c, q)
		})
		if err != nil {
			return nil, admit.Internal("checking what the queue still holds", err)
		}
	}
	return nil, admit.Invalid(groupKind, q.Name, errs)
}

func defaulted(q *schedulingv1beta1.Queue) *schedulingv1beta1.Queue {
	q = q.DeepCopy()
	schedulingv1beta1.SetDefaults_Queue(q)
	return q
}

func validateDeletion(ctx context.Context, c client.Reader, q *schedulingv1beta1.Queue) (field.ErrorList, error) {
	namePath := field.NewPath("metadata", "name")
	children, err := queueref.Children(ctx, c, q.Name)
	if err != nil {
		return nil, err
	}
	if len(children) > 0 {
		return field.ErrorList{field.Forbidden(namePath, fmt.Sprintf(
			"queue has child queues (%s); delete them or give them another parent first", queueref.List(children)))}, nil
	}
	held, err := work(ctx, c, q.Name, false)
	if err != nil {
		return nil, err
	}
	if held != "" {
		return field.ErrorList{field.Forbidden(namePath, fmt.Sprintf(
			"queue still holds %s; delete them or wait until they finish", held))}, nil
	}
	return nil, nil
}

// tree is the queues by name, with the queue under admission in its new form.
type tree map[string]*schedulingv1beta1.Queue

func readTree(ctx context.Context, c client.Reader, q *schedulingv1beta1.Queue) (tree, error) {
	var list schedulingv1beta1.QueueList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing queues: %w", err)
	}
	t := make(tree, len(list.Items)+1)
	for i := range list.Items {
		t[list.Items[i].Name] = &list.Items[i]
	}
	t[q.Name] = q
	return t, nil
}

// children returns the queues whose parent is name, sorted by name.
func (t tree) children(name string) []*schedulingv1beta1.Queue {
	var out []*schedulingv1beta1.Queue
	for _, q := range t {
		if queueref.Parent(q) == name {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *schedulingv1beta1.Queue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (t tree) names() []string {
	var names []string
	for name := range t {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// validateTree checks q's place in the tree; old is its stored form on
// update and nil on create.
func validateTree(ctx context.Context, c client.Reader, old, q *schedulingv1beta1.Queue) (field.ErrorList, error) {
	t, err := readTree(ctx, c, q)
	if err != nil {
		return nil, err
	}
	specPath := field.NewPath("spec")
	parentName := queueref.Parent(q)
	parentChanged := old == nil || queueref.Parent(old) != parentName
	var errs field.ErrorList

	parent := t[parentName]
	switch {
	case parentName == "":
	case parent == nil && parentName == schedulingv1beta1.RootQueue:
		// Root is created by the scheduler; until then it is implicit.
	case parent == nil:
		if parentChanged {
			var existing []string
			for _, name := range t.names() {
				if name != q.Name {
					existing = append(existing, name)
				}
			}
			errs = append(errs, field.Invalid(specPath.Child("parent"), parentName,
				"queue does not exist; existing queues: "+queueref.List(existing)))
		}
	case parentChanged:
		if cycle := t.cycle(q.Name); cycle != nil {
			errs = append(errs, field.Invalid(specPath.Child("parent"), parentName,
				"the queues would form a cycle: "+strings.Join(cycle, " -> ")))
			parent = nil // its amounts say nothing about q's
			break
		}
		if parentName != schedulingv1beta1.RootQueue && len(t.children(parentName)) == 1 {
			// q is the first child: the parent turns from a leaf into a
			// parent, and must not hold work a leaf may hold.
			held, err := work(ctx, c, parentName, true)
			if err != nil {
				return nil, err
			}
			if held != "" {
				errs = append(errs, field.Invalid(specPath.Child("parent"), parentName, fmt.Sprintf(
					"queue %q cannot become a parent: it holds %s, and work runs in leaf queues only", parentName, held)))
			}
		}
	}

	if parent != nil {
		errs = append(errs, validateAgainstParent(t, old, q, parent, parentChanged)...)
	}
	errs = append(errs, validateAgainstChildren(t, old, q)...)
	errs = append(errs, validateHierarchyPath(t, old, q)...)
	return errs, nil
}

// cycle returns the chain of parents from name back to name, or nil.
func (t tree) cycle(name string) []string {
	chain := []string{name}
	seen := map[string]bool{name: true}
	for cur := queueref.Parent(t[name]); cur != ""; {
		chain = append(chain, cur)
		if cur == name {
			return chain
		}
		if seen[cur] {
			return nil // a cycle above, not through name
		}
		seen[cur] = true
		next, ok := t[cur]
		if !ok {
			return nil
		}
		cur = queueref.Parent(next)
	}
	return nil
}

// amounts names the three per-resource amounts of a queue.
type amounts struct {
	name string // as in messages
	path string // under spec
	get  func(*schedulingv1beta1.Queue) corev1.ResourceList
}

var (
	deserved   = amounts{"deserved", "deserved", func(q *schedulingv1beta1.Queue) corev1.ResourceList { return q.Spec.Deserved }}
	guarantee  = amounts{"guarantee", "guarantee.resource", func(q *schedulingv1beta1.Queue) corev1.ResourceList { return q.Spec.Guarantee.Resource }}
	capability = amounts{"capability", "capability", func(q *schedulingv1beta1.Queue) corev1.ResourceList { return q.Spec.Capability }}
)

func (a amounts) fieldPath(name corev1.ResourceName) *field.Path {
	p := field.NewPath("spec")
	for _, seg := range strings.Split(a.path, ".") {
		p = p.Child(seg)
	}
	return p.Key(string(name))
}

func (a amounts) changed(old, q *schedulingv1beta1.Queue) bool {
	return old == nil || !equality.Semantic.DeepEqual(a.get(old), a.get(q))
}

// validateAgainstParent checks that q's deserved and guarantee, added to its
// siblings', and q's capability stay within the parent's.
func validateAgainstParent(t tree, old, q, parent *schedulingv1beta1.Queue, parentChanged bool) field.ErrorList {
	var errs field.ErrorList
	siblings := t.children(parent.Name)
	for _, a := range []amounts{deserved, guarantee} {
		if !parentChanged && !a.changed(old, q) {
			continue
		}
		limits := a.get(parent)
		for _, name := range sortedNames(a.get(q)) {
			limit, ok := limits[name]
			if !ok {
				continue
			}
			sum := resource.Quantity{}
			for _, s := range siblings {
				if v, ok := a.get(s)[name]; ok {
					sum.Add(v)
				}
			}
			if sum.Cmp(limit) > 0 {
				v := a.get(q)[name]
				errs = append(errs, field.Invalid(a.fieldPath(name), v.String(), fmt.Sprintf(
					"the %s %s of the children of queue %q would add up to %s, more than its own %s %s",
					a.name, name, parent.Name, sum.String(), a.name, limit.String())))
			}
		}
	}
	if parentChanged || capability.changed(old, q) {
		limits := parent.Spec.Capability
		for _, name := range sortedNames(q.Spec.Capability) {
			limit, ok := limits[name]
			if v := q.Spec.Capability[name]; ok && v.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(capability.fieldPath(name), v.String(), fmt.Sprintf(
					"must not exceed the capability %s of parent queue %q (%s)", name, parent.Name, limit.String())))
			}
		}
	}
	return errs
}

// validateAgainstChildren checks that q, as a parent, still covers its
// children after a change of its own amounts.
func validateAgainstChildren(t tree, old, q *schedulingv1beta1.Queue) field.ErrorList {
	children := t.children(q.Name)
	if len(children) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, a := range []amounts{deserved, guarantee} {
		if !a.changed(old, q) {
			continue
		}
		for _, name := range sortedNames(a.get(q)) {
			sum := resource.Quantity{}
			for _, child := range children {
				if v, ok := a.get(child)[name]; ok {
					sum.Add(v)
				}
			}
			if v := a.get(q)[name]; sum.Cmp(v) > 0 {
				errs = append(errs, field.Invalid(a.fieldPath(name), v.String(), fmt.Sprintf(
					"must be at least the sum of the %s %s of the child queues (%s)", a.name, name, sum.String())))
			}
		}
	}
	if capability.changed(old, q) {
		for _, name := range sortedNames(q.Spec.Capability) {
			v := q.Spec.Capability[name]
			for _, child := range children {
				if cv, ok := child.Spec.Capability[name]; ok && cv.Cmp(v) > 0 {
					errs = append(errs, field.Invalid(capability.fieldPath(name), v.String(), fmt.Sprintf(
						"must be at least the capability %s of child queue %q (%s)", name, child.Name, cv.String())))
					break
				}
			}
		}
	}
	return errs
}

// validateHierarchyPath refuses a legacy hierarchy path that lies on the path
// of another queue, or has another queue on its own: in the annotation model
// queues are the leaves of the tree, and a leaf cannot sit above another.
func validateHierarchyPath(t tree, old, q *schedulingv1beta1.Queue) field.ErrorList {
	path := hierarchyPath(q)
	if path == nil || (old != nil && slices.Equal(hierarchyPath(old), path)) {
		return nil
	}
	fldPath := field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyAnnotation)
	for _, name := range t.names() {
		other := hierarchyPath(t[name])
		if name == q.Name || other == nil {
			continue
		}
		short, long := path, other
		if len(short) > len(long) {
			short, long = long, short
		}
		if slices.Equal(short, long[:len(short)]) {
			return field.ErrorList{field.Invalid(fldPath, strings.Join(path, "/"), fmt.Sprintf(
				"queue %q is at %q: one queue's path cannot be, or lie on, another's", name, strings.Join(other, "/")))}
		}
	}
	return nil
}

// hierarchyPath returns the segments of a queue's hierarchy annotation,
// rooted as defaulting roots it, or nil.
func hierarchyPath(q *schedulingv1beta1.Queue) []string {
	p := q.Annotations[schedulingv1beta1.HierarchyAnnotation]
	if p == "" {
		return nil
	}
	segments := strings.Split(p, "/")
	if segments[0] != schedulingv1beta1.RootQueue {
		segments = append([]string{schedulingv1beta1.RootQueue}, segments...)
	}
	return segments
}

// work describes the unfinished work a queue holds ("2 unfinished jobs
// (a/x, a/y) and 3 running pods"), or returns "" when it holds none. Jobs
// count until Completed, Failed or Terminated; PodGroups that no Job owns
// count until Completed; running pods are read from status.allocated when
// pods is true.
func work(ctx context.Context, c client.Reader, queue string, pods bool) (string, error) {
	var parts []string

	var jobs batchv1alpha1.JobList
	if err := c.List(ctx, &jobs); err != nil {
		return "", fmt.Errorf("listing jobs: %w", err)
	}
	var jobNames []string
	for _, j := range jobs.Items {
		if j.Spec.Queue == queue && !finished(j.Status.State.Phase) {
			jobNames = append(jobNames, j.Namespace+"/"+j.Name)
		}
	}
	if len(jobNames) > 0 {
		slices.Sort(jobNames)
		parts = append(parts, counted(len(jobNames), "unfinished job")+" ("+queueref.List(jobNames)+")")
	}

	var groups schedulingv1beta1.PodGroupList
	if err := c.List(ctx, &groups); err != nil {
		return "", fmt.Errorf("listing PodGroups: %w", err)
	}
	var groupNames []string
	for _, pg := range groups.Items {
		if pg.Spec.Queue == queue && pg.Status.Phase != schedulingv1beta1.PodGroupCompleted && !ownedByJob(&pg) {
			groupNames = append(groupNames, pg.Namespace+"/"+pg.Name)
		}
	}
	if len(groupNames) > 0 {
		slices.Sort(groupNames)
		parts = append(parts, counted(len(groupNames), "unfinished PodGroup")+" ("+queueref.List(groupNames)+")")
	}

	if pods {
		var q schedulingv1beta1.Queue
		if err := c.Get(ctx, client.ObjectKey{Name: queue}, &q); err != nil {
			return "", fmt.Errorf("reading queue %s: %w", queue, err)
		}
		if n, ok := q.Status.Allocated[corev1.ResourcePods]; ok && n.Sign() > 0 {
			parts = append(parts, counted(int(n.Value()), "running pod"))
		}
	}
	return strings.Join(parts, " and "), nil
}

func finished(phase batchv1alpha1.JobPhase) bool {
	switch phase {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated:
		return true
	}
	return false
}

func ownedByJob(pg *schedulingv1beta1.PodGroup) bool {
	for _, ref := range pg.OwnerReferences {
		if ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, batchv1alpha1.SchemeGroupVersion.Group+"/") {
			return true
		}
	}
	return false
}

func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
