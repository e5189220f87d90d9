package model

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/cli/explain/narrate"
)

// Kinds of rows in the job list.
const (
	KindJob      = "Job"
	KindPodGroup = "PodGroup"
)

// PhaseNotStarted is the phase shown for a Job the job controller has not
// given one yet.
const PhaseNotStarted = "NotStarted"

// Job is a row of the job list: a batch Job, or a PodGroup no Job owns
// (made by another operator, or by hand for plain pods).
type Job struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Queue     string `json:"queue"`
	// Phase is the Job's phase, or the PodGroup's for a PodGroup row.
	Phase         string `json:"phase"`
	PodGroup      string `json:"podGroup,omitempty"`
	PodGroupPhase string `json:"podGroupPhase,omitempty"`
	MinMember     int32  `json:"minMember"`
	// Pods counts the pods of the PodGroup by phase.
	Pods    PodCounts `json:"pods"`
	Created time.Time `json:"created"`
	// Waiting is why the scheduler has not placed the group, in its words
	// (its Unschedulable condition), while it waits; "" otherwise.
	Waiting string `json:"waiting,omitempty"`
}

// PodCounts counts pods by phase.
type PodCounts struct {
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

func (c *PodCounts) add(p *corev1.Pod) {
	switch p.Status.Phase {
	case corev1.PodRunning:
		c.Running++
	case corev1.PodSucceeded:
		c.Succeeded++
	case corev1.PodFailed:
		c.Failed++
	default:
		c.Pending++
	}
}

func (m *Model) buildJobs(in Input, pods podIndex) {
	groups := map[string]*schedulingv1beta1.PodGroup{}
	for _, pg := range in.PodGroups {
		groups[key(pg.Namespace, pg.Name)] = pg
	}
	owned := map[string]bool{}
	entries := make([]*jobEntry, 0, len(in.Jobs)+len(in.PodGroups))
	for _, j := range in.Jobs {
		e := &jobEntry{job: j}
		row := &Job{Kind: KindJob, Namespace: j.Namespace, Name: j.Name, Queue: orDefaultQueue(j.Spec.Queue),
			Phase: string(j.Status.State.Phase), MinMember: j.Spec.MinAvailable, Created: j.CreationTimestamp.Time}
		if row.Phase == "" {
			row.Phase = PhaseNotStarted
		}
		if pgKey := key(j.Namespace, podGroupName(j)); groups[pgKey] != nil {
			owned[pgKey] = true
			e.podGroup = groups[pgKey]
			e.pods = pods.byGroup[pgKey]
		}
		e.row = row
		entries = append(entries, e)
	}
	for k, pg := range groups {
		if owned[k] {
			continue
		}
		e := &jobEntry{podGroup: pg, pods: pods.byGroup[k]}
		e.row = &Job{Kind: KindPodGroup, Namespace: pg.Namespace, Name: pg.Name, Queue: orDefaultQueue(pg.Spec.Queue),
			Phase: string(pg.Status.Phase), Created: pg.CreationTimestamp.Time}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *jobEntry) int {
		return cmp.Or(cmp.Compare(a.row.Namespace, b.row.Namespace), cmp.Compare(a.row.Name, b.row.Name), cmp.Compare(a.row.Kind, b.row.Kind))
	})
	m.jobs = make([]Job, len(entries))
	for i, e := range entries {
		if pg := e.podGroup; pg != nil {
			e.row.PodGroup = pg.Name
			e.row.PodGroupPhase = string(pg.Status.Phase)
			e.row.MinMember = pg.Spec.MinMember
			e.row.Waiting = waiting(pg)
		}
		for _, p := range e.pods {
			e.row.Pods.add(p)
		}
		m.jobs[i] = *e.row
		e.row = &m.jobs[i]
		m.jobByKey[jobKey(e.row.Kind, e.row.Namespace, e.row.Name)] = e
	}
}

func jobKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func orDefaultQueue(q string) string {
	if q == "" {
		return schedulingv1beta1.DefaultQueue
	}
	return q
}

// waiting is the scheduler's reason a PodGroup is not placed, while it is
// Pending or Inqueue.
func waiting(pg *schedulingv1beta1.PodGroup) string {
	switch pg.Status.Phase {
	case schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupInqueue, "":
	default:
		return ""
	}
	for _, c := range pg.Status.Conditions {
		if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
			return cmp.Or(c.Message, c.Reason)
		}
	}
	return ""
}

// JobFilter selects and pages the job list.
type JobFilter struct {
	Queue, Namespace, Phase, Kind string
	// Search keeps the rows whose name contains it.
	Search string
	// Sort is "name" (namespace, then name: the default) or "newest".
	Sort string
	// Page counts from 1; PageSize is at most MaxPageSize, DefaultPageSize
	// when 0.
	Page, PageSize int
}

// Page sizes.
const (
	DefaultPageSize = 100
	MaxPageSize     = 500
)

// JobPage is a page of the job list.
type JobPage struct {
	// Total counts the rows the filter selects, over every page.
	Total int   `json:"total"`
	Page  int   `json:"page"`
	Items []Job `json:"items"`
}

// Jobs returns a page of the rows the filter selects.
func (m *Model) Jobs(f JobFilter) JobPage {
	var sel []int
	for i, j := range m.jobs {
		if (f.Queue == "" || j.Queue == f.Queue) && (f.Namespace == "" || j.Namespace == f.Namespace) &&
			(f.Phase == "" || j.Phase == f.Phase) && (f.Kind == "" || j.Kind == f.Kind) &&
			(f.Search == "" || strings.Contains(j.Name, f.Search)) {
			sel = append(sel, i)
		}
	}
	if f.Sort == "newest" {
		slices.SortStableFunc(sel, func(a, b int) int { return m.jobs[b].Created.Compare(m.jobs[a].Created) })
	}
	page, idx := paginate(sel, f.Page, f.PageSize)
	items := make([]Job, len(idx))
	for i, j := range idx {
		items[i] = m.jobs[j]
	}
	return JobPage{Total: len(sel), Page: page, Items: items}
}

// paginate returns the page (from 1, clamped to the pages there are) and
// its items.
func paginate[T any](all []T, page, size int) (int, []T) {
	if size <= 0 {
		size = DefaultPageSize
	}
	size = min(size, MaxPageSize)
	pages := max(1, (len(all)+size-1)/size)
	page = min(max(page, 1), pages)
	lo := (page - 1) * size
	hi := min(lo+size, len(all))
	return page, all[lo:hi]
}

// JobDetail is a job's page.
type JobDetail struct {
	Job Job `json:"job"`
	// Explanation is what `calderactl explain` says of the job.
	Explanation []string `json:"explanation"`
	Pods        []Pod    `json:"pods"`
}

// Pod is a pod of a job's page.
type Pod struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	Node  string `json:"node,omitempty"`
	// Cards are the GPU cards the scheduler gave the pod.
	Cards []int `json:"cards,omitempty"`
}

// EventSubjects are the UIDs whose events a job's explanation reads: the
// Job's, its PodGroup's and its pods'. False when there is no such row.
func (m *Model) EventSubjects(kind, namespace, name string) ([]types.UID, bool) {
	e := m.jobByKey[jobKey(kind, namespace, name)]
	if e == nil {
		return nil, false
	}
	var uids []types.UID
	if e.job != nil {
		uids = append(uids, e.job.UID)
	}
	if e.podGroup != nil {
		uids = append(uids, e.podGroup.UID)
	}
	for _, p := range e.pods {
		uids = append(uids, p.UID)
	}
	return uids, true
}

// JobDetail returns a job's page, its explanation made from the events of
// its EventSubjects. False when there is no such row.
func (m *Model) JobDetail(kind, namespace, name string, events []corev1.Event) (JobDetail, bool) {
	e := m.jobByKey[jobKey(kind, namespace, name)]
	if e == nil {
		return JobDetail{}, false
	}
	facts := &narrate.Facts{Now: m.now, Job: e.job, PodGroup: e.podGroup, Queue: m.queueByKey[e.row.Queue], Events: events}
	d := JobDetail{Job: *e.row, Explanation: orEmpty(narrate.Job(facts)), Pods: make([]Pod, 0, len(e.pods))}
	for _, p := range e.pods {
		d.Pods = append(d.Pods, Pod{Name: p.Name, Phase: string(p.Status.Phase), Node: p.Spec.NodeName, Cards: cardsOf(p)})
	}
	return d, true
}
