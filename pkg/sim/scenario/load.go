package scenario

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler/core"
	"github.com/caldera-sh/caldera/pkg/loadaware"
)

// LoadAware models what pods really use, publishes each node's usage to
// the scheduler (as caldera-agent's NodeUsage) and, when configured, runs
// the load-aware descheduler.
type LoadAware struct {
	// Use is the share of its requests a job's pods really use, drawn per
	// job uniformly between min and max, by the trace task's QoS class
	// (LS, BE, Burstable, ...); "default" for the other jobs. Default:
	// default between 0.2 and 1.
	Use map[string]UseRange `json:"use,omitempty"`
	// ReportInterval is how often each node's usage is published. Default
	// 1m.
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
	// HighWatermark is the CPU usage percentage above which the report
	// counts a node as hot. Default: the descheduler's, else 80.
	HighWatermark *float64 `json:"highWatermark,omitempty"`
	// Descheduler, when set, runs the load-aware descheduler with this
	// configuration (its file's fields; docs/load-aware.md).
	Descheduler *descheduler.Config `json:"descheduler,omitempty"`
}

// UseRange bounds the share of its requests a pod uses.
type UseRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// defaultUseClass names the range of jobs whose class has none.
const defaultUseClass = "default"

// complete defaults and checks the model.
func (l *LoadAware) complete() error {
	if len(l.Use) == 0 {
		l.Use = map[string]UseRange{defaultUseClass: {Min: 0.2, Max: 1}}
	}
	for class, r := range l.Use {
		if r.Min < 0 || r.Max < r.Min {
			return fmt.Errorf("loadAware.use[%s]: min %g and max %g must satisfy 0 <= min <= max", class, r.Min, r.Max)
		}
	}
	if l.ReportInterval == nil {
		l.ReportInterval = &metav1.Duration{Duration: time.Minute}
	}
	if l.ReportInterval.Duration <= 0 {
		return fmt.Errorf("loadAware.reportInterval: %s must be positive", l.ReportInterval.Duration)
	}
	if d := l.Descheduler; d != nil {
		d.Default()
		if errs := d.Validate(); len(errs) > 0 {
			return fmt.Errorf("loadAware.descheduler: %w", errs.ToAggregate())
		}
	}
	if l.HighWatermark == nil {
		high := 80.0
		if l.Descheduler != nil {
			high = *l.Descheduler.HighWatermark.CPU
		}
		l.HighWatermark = &high
	}
	return nil
}

// loadBook follows what the pods really use on each node.
type loadBook struct {
	cfg  *LoadAware
	seed uint64
	// nodes are the nodes' names in order; member the member of each.
	nodes  []string
	member map[string]*member
	// alloc, used and requested are each node's allocatable, real use
	// and requests: CPU in milli-CPUs, memory in bytes.
	alloc, used, requested map[string]core.Amounts
	// share is each job's share of its requests in use, by job index.
	share map[int]float64
	// next is when the next report is due, lastDeschedule when the
	// descheduler last ran (negative: never).
	next, lastDeschedule time.Duration
	// The report: sums over the report ticks.
	ticks                      int
	sumMean, sumSpread, sumHot float64
	peak                       float64
	evictions                  int
}

func newLoadBook(cfg *LoadAware, seed uint64) *loadBook {
	return &loadBook{cfg: cfg, seed: seed, member: map[string]*member{}, alloc: map[string]core.Amounts{},
		used: map[string]core.Amounts{}, requested: map[string]core.Amounts{}, share: map[int]float64{}, lastDeschedule: -1}
}

func (b *loadBook) addNode(m *member, n *corev1.Node) {
	b.nodes = append(b.nodes, n.Name)
	b.member[n.Name] = m
	b.alloc[n.Name] = core.AmountsOf(n.Status.Allocatable)
}

// shareOf is the share of its requests job i's pods use: drawn once per
// job from its class's range, the same for the same seed and job name.
func (st *state) shareOf(i int) float64 {
	b := st.load
	if v, ok := b.share[i]; ok {
		return v
	}
	j := st.jobs.jobs[i]
	r, ok := b.cfg.Use[j.qos]
	if !ok {
		r = b.cfg.Use[defaultUseClass]
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(j.name))
	rng := rand.New(rand.NewPCG(b.seed, h.Sum64()))
	v := r.Min + rng.Float64()*(r.Max-r.Min)
	b.share[i] = v
	return v
}

// podUse is what a pod really uses.
func (st *state) podUse(p *corev1.Pod) core.Amounts {
	req := core.AmountsOf(podRequests(p))
	i, ok := st.jobs.of(p)
	if !ok {
		return req
	}
	f := st.shareOf(i)
	return core.Amounts{CPU: int64(f * float64(req.CPU)), Memory: int64(f * float64(req.Memory))}
}

// useLoad adds a pod's use and requests on node (sign 1) or takes them
// away (-1).
func (st *state) useLoad(p *corev1.Pod, node string, sign int64) {
	b := st.load
	if _, ok := b.alloc[node]; !ok {
		return
	}
	use, req := st.podUse(p), core.AmountsOf(podRequests(p))
	u, r := b.used[node], b.requested[node]
	b.used[node] = core.Amounts{CPU: u.CPU + sign*use.CPU, Memory: u.Memory + sign*use.Memory}
	b.requested[node] = core.Amounts{CPU: r.CPU + sign*req.CPU, Memory: r.Memory + sign*req.Memory}
}

// loadTick publishes every node's usage at at, records the spread of
// node utilisation, and runs the descheduler when it is due.
func (st *state) loadTick(at time.Duration) {
	b := st.load
	now := start.Add(at)
	every := b.cfg.ReportInterval.Duration
	pcts := make([]float64, 0, len(b.nodes))
	for _, name := range b.nodes {
		u := b.used[name]
		b.member[name].c.SetNodeUsage(&metricsv1alpha1.NodeUsage{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Timestamp:  metav1.NewTime(now), Window: metav1.Duration{Duration: every},
			Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(u.CPU, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(u.Memory, resource.BinarySI)},
		})
		pcts = append(pcts, loadaware.Percent(float64(u.CPU), float64(b.alloc[name].CPU)))
	}
	var sum, hot float64
	for _, p := range pcts {
		sum += p
		b.peak = max(b.peak, p)
		if p > *b.cfg.HighWatermark {
			hot++
		}
	}
	if n := float64(len(pcts)); n > 0 {
		mean := sum / n
		var sq float64
		for _, p := range pcts {
			sq += (p - mean) * (p - mean)
		}
		b.ticks++
		b.sumMean += mean
		b.sumSpread += math.Sqrt(sq / n)
		b.sumHot += hot / n
	}
	if d := b.cfg.Descheduler; d != nil && (b.lastDeschedule < 0 || at-b.lastDeschedule >= d.Interval.Duration) {
		b.lastDeschedule = at
		st.deschedule(now)
	}
	b.next = at + every
}

// deschedule runs the descheduler's decision over each member's nodes
// and evicts what it chose.
func (st *state) deschedule(now time.Time) {
	b := st.load
	policy := b.cfg.Descheduler.Policy()
	for _, m := range st.order {
		in := core.Input{Now: now, Config: policy}
		byNode := map[string]*core.Node{}
		for _, name := range b.nodes {
			if b.member[name] != m {
				continue
			}
			u := b.used[name]
			in.Nodes = append(in.Nodes, core.Node{Name: name, Allocatable: b.alloc[name], Requested: b.requested[name],
				Usage: &loadaware.Usage{At: now, CPU: u.CPU, Memory: u.Memory}})
		}
		for i := range in.Nodes {
			byNode[in.Nodes[i].Name] = &in.Nodes[i]
		}
		pods := map[string]*corev1.Pod{}
		for _, p := range m.c.Pods() {
			n := byNode[p.Spec.NodeName]
			if n == nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			key := p.Namespace + "/" + p.Name
			cp := core.Pod{Key: key, UID: string(p.UID), Request: core.AmountsOf(podRequests(p)), Usage: st.podUse(p), Leaving: p.DeletionTimestamp != nil}
			if p.Spec.Priority != nil {
				cp.Priority = *p.Spec.Priority
			}
			if i, ok := st.jobs.of(p); ok && st.jobs.jobs[i].min > 1 {
				cp.Unmovable = fmt.Sprintf("gang member (minMember %d)", st.jobs.jobs[i].min)
			}
			n.Pods = append(n.Pods, cp)
			pods[key] = p
		}
		for _, e := range core.Decide(in).Evictions {
			m.c.Evict(pods[e.Pod].UID)
			b.evictions++
		}
	}
}

// LoadSummary is the spread of the nodes' real CPU use over a run, from
// the report ticks.
type LoadSummary struct {
	// Mean is the mean node's CPU use in percent, Spread the standard
	// deviation across nodes in percentage points, Hot the share of nodes
	// above the high watermark: each averaged over the ticks. Peak is the
	// highest node's use seen.
	Mean, Spread, Hot, Peak float64
	HighWatermark           float64
	// Evictions counts the descheduler's evictions.
	Evictions int
}

func (b *loadBook) summary() *LoadSummary {
	s := &LoadSummary{Peak: b.peak, HighWatermark: *b.cfg.HighWatermark, Evictions: b.evictions}
	if b.ticks > 0 {
		n := float64(b.ticks)
		s.Mean, s.Spread, s.Hot = b.sumMean/n, b.sumSpread/n, b.sumHot/n
	}
	return s
}
