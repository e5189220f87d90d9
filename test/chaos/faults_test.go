//go:build chaos

package chaos

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/test/poll"
)

// fault is one kind of fault: it breaks something and returns once what it
// broke has been set going again, with how long that took to be ready.
type fault struct {
	name   string
	inject injector
}

type injector func(ctx context.Context, e *env, rng *rand.Rand) (ready time.Duration, err error)

// restarter is a process the suite can kill and start again.
type restarter interface {
	Restart(context.Context) error
}

var faults = []fault{
	{"kill -9 kube-apiserver", restart(func(e *env) restarter { return e.APIServer() })},
	{"kill -9 etcd", restart(func(e *env) restarter { return e.Etcd() })},
	{"kill -9 caldera-scheduler", kill(localenv.ComponentScheduler)},
	{"kill -9 caldera-controller-manager", kill(localenv.ComponentControllerManager)},
	{"kill -9 caldera-webhook", kill(localenv.ComponentWebhook)},
	{"kill -9 caldera-agent", kill(localenv.ComponentAgent)},
	{"kill -9 caldera-scheduler and caldera-controller-manager", kill(localenv.ComponentScheduler, localenv.ComponentControllerManager)},
	{"watch too old (API server restarted, etcd compacted)", watchTooOld},
	{"caldera-webhook slow (stopped 12 s)", pause(localenv.ComponentWebhook, 12*time.Second)},
	{"caldera-webhook refusing (down 8 s)", down(localenv.ComponentWebhook, 8*time.Second)},
	{"caldera-webhook certificate rotated", rotateWebhookCertificate},
	{"node of a running gang deleted", deleteGangNode},
	{"node flapping NotReady", flapNode},
}

// kill is a fault that kills components with SIGKILL, as a crash or an
// OOM kill would, and starts them again at once, as a kubelet restarts a
// crashed container (without its back-off), waiting until they are ready.
func kill(names ...string) injector {
	return func(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
		start := time.Now()
		var killed []*controlplane.Component
		for _, n := range names {
			c, err := e.pick(n, rng)
			if err != nil {
				return 0, err
			}
			c.Kill()
			killed = append(killed, c)
		}
		for _, c := range killed {
			if err := c.Restart(ctx); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
}

// restart is a fault that kills a control-plane process with SIGKILL and
// starts it again at once on the same data, ports and certificates.
func restart(what func(e *env) restarter) injector {
	return func(ctx context.Context, e *env, _ *rand.Rand) (time.Duration, error) {
		start := time.Now()
		if err := what(e).Restart(ctx); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
}

// down kills a component and leaves it down for hold (so that its callers
// meet a refused connection) before starting it again.
func down(name string, hold time.Duration) injector {
	return func(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
		c, err := e.pick(name, rng)
		if err != nil {
			return 0, err
		}
		c.Kill()
		if err := holdFor(ctx, hold); err != nil {
			return 0, err
		}
		start := time.Now()
		if err := c.Restart(ctx); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
}

// pause stops a component with SIGSTOP for hold, as a process starved of
// CPU or stuck in a long pause: connections to it are accepted and never
// answered, so callers time out. It then resumes it and waits until it is
// ready, starting it again if it exited meanwhile (as a kubelet would).
func pause(name string, hold time.Duration) injector {
	return func(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
		c, err := e.pick(name, rng)
		if err != nil {
			return 0, err
		}
		if err := c.Signal(syscall.SIGSTOP); err != nil {
			return 0, err
		}
		held := holdFor(ctx, hold)
		if err := c.Signal(syscall.SIGCONT); err != nil && !c.Exited() {
			return 0, err
		}
		if held != nil {
			return 0, held
		}
		start := time.Now()
		if _, err := e.waitReady(ctx, c); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
}

// holdFor is how long a fault lasts: the time it holds something broken.
func holdFor(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(d):
		return nil
	}
}

// watchTooOld makes the watches of the scheduler or the controller-manager
// fall behind what the API server can answer: the component is stopped,
// the API server restarted (its watch cache then starts at etcd's current
// revision) and etcd compacted; resumed, the component's watches resume
// from revisions that are gone and are answered "too old resource
// version", and its informers must list again without losing or repeating
// work.
func watchTooOld(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
	name := []string{localenv.ComponentScheduler, localenv.ComponentControllerManager}[rng.IntN(2)]
	c := e.Component(name)
	logged, err := os.Stat(c.LogPath())
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := c.Signal(syscall.SIGSTOP); err != nil {
		return 0, err
	}
	err = e.APIServer().Restart(ctx)
	if err == nil {
		_, err = e.Etcd().Compact(ctx)
	}
	if err == nil {
		// A restarted API server refuses everything for a moment after
		// /readyz, until its RBAC caches fill; a watch refused then makes
		// the informer list afresh instead of resuming. Resume the
		// component once its own identity is served.
		err = e.waitAuthorized(ctx, name)
	}
	resumed, statErr := os.Stat(c.LogPath())
	if err := c.Signal(syscall.SIGCONT); err != nil && !c.Exited() {
		return 0, err
	}
	if err != nil {
		return 0, err
	}
	if statErr != nil {
		return 0, statErr
	}
	exited, err := e.waitReady(ctx, c)
	if err != nil {
		return 0, err
	}
	if exited != "" {
		// It runs without leader election, so has no lease to lose:
		// exiting is a failure to survive the expired watches.
		return 0, fmt.Errorf("%s exited after it was resumed; its log ended:\n%s", name, exited)
	}
	ready := time.Since(start)
	// The reflectors log the expired watch at level 4: proof that the
	// fault happened, not only that the component survived a restart. A
	// reflector whose watch broke with an error it does not retry lists
	// afresh instead, and is never told "too old"; its completed list
	// after the resume is the other proof that the component rebuilt
	// what it knew. The run counts each outcome.
	if *verbosity >= 4 {
		outcome := ""
		err := poll.Until(ctx, recoveryTimeout, name+" told its watch was too old, or listing afresh", func() (bool, string) {
			since, err := readFrom(c.LogPath(), logged.Size())
			if err != nil {
				return false, err.Error()
			}
			afterResume, err := readFrom(c.LogPath(), resumed.Size())
			if err != nil {
				return false, err.Error()
			}
			switch {
			case strings.Contains(since, "too old"):
				outcome = watchAnsweredTooOld
			case strings.Contains(afterResume, "Caches populated"):
				outcome = watchListedAfresh
			default:
				return false, "no watch answered \"too old resource version\" and no list completed since the fault; what its informers logged: " + linesWith(since, "reflector", 8)
			}
			return true, ""
		})
		if err != nil {
			return 0, err
		}
		watchOutcomes[outcome]++
	}
	return ready, nil
}

// How the watch-too-old fault ended, counted over the run.
const (
	watchAnsweredTooOld = "answered \"too old resource version\""
	watchListedAfresh   = "listed afresh without being told \"too old\""
)

var watchOutcomes = map[string]int{}

// waitAuthorized waits until the API server serves the component's service
// account (a list of one pod).
func (e *env) waitAuthorized(ctx context.Context, component string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(e.Dir, "identities", component+".kubeconfig"))
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return poll.Until(ctx, recoveryTimeout, component+"'s identity served", func() (bool, string) {
		_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, fmt.Sprint(err)
	})
}

// rotateWebhookCertificate asks caldera-webhook (SIGHUP) for a new CA and
// serving certificate mid-run; ready is when it serves the new CA's
// certificate. An admission call the API server made meanwhile that failed
// on trust (x509) is a violation the load records.
func rotateWebhookCertificate(ctx context.Context, e *env, _ *rand.Rand) (time.Duration, error) {
	before, host, err := e.webhookTrust(ctx)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := e.Component(localenv.ComponentWebhook).Signal(syscall.SIGHUP); err != nil {
		return 0, err
	}
	var current *x509.Certificate
	err = poll.Until(ctx, recoveryTimeout, "a new CA in the webhook configurations", func() (bool, string) {
		ca, _, err := e.webhookTrust(ctx)
		if err != nil {
			return false, err.Error()
		}
		current = ca
		return !ca.Equal(before), "the configurations still hold the old CA first"
	})
	if err != nil {
		return 0, err
	}
	err = poll.Until(ctx, recoveryTimeout, "the webhook serving the new CA's certificate", func() (bool, string) {
		conn, err := tls.Dial("tcp", host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the chain is checked below against the published CA
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		leaf := conn.ConnectionState().PeerCertificates[0]
		if err := leaf.CheckSignatureFrom(current); err != nil {
			return false, "served certificate not from the new CA: " + err.Error()
		}
		return true, ""
	})
	return time.Since(start), err
}

// webhookTrust returns the first CA of caldera-webhook's configurations
// (the one that signs new certificates) and the host:port they call.
func (e *env) webhookTrust(ctx context.Context) (*x509.Certificate, string, error) {
	var m admissionregistrationv1.MutatingWebhookConfiguration
	if err := e.client.Get(ctx, client.ObjectKey{Name: localenv.ComponentWebhook}, &m); err != nil {
		return nil, "", err
	}
	if len(m.Webhooks) == 0 || m.Webhooks[0].ClientConfig.URL == nil {
		return nil, "", fmt.Errorf("webhook configuration %s calls no URL", m.Name)
	}
	u, err := url.Parse(*m.Webhooks[0].ClientConfig.URL)
	if err != nil {
		return nil, "", err
	}
	block, _ := pem.Decode(m.Webhooks[0].ClientConfig.CABundle)
	if block == nil {
		return nil, "", fmt.Errorf("webhook configuration %s has no CA bundle", m.Name)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, "", err
	}
	return ca, u.Host, nil
}

// deleteGangNode deletes the node of a running gang's pod, as a cloud
// provider does with a machine that failed: the pods on it are
// garbage-collected (kube-controller-manager's pod GC), the Job controller
// replaces them, and the node comes back (a replacement machine) once it
// is empty. Ready is when it is Ready again.
func deleteGangNode(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
	var node string
	err := poll.Until(ctx, recoveryTimeout, "a running gang on a node without an agent", func() (bool, string) {
		var pgs schedulingv1beta1.PodGroupList
		if err := e.client.List(ctx, &pgs, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		gang := map[string]bool{}
		for _, pg := range pgs.Items {
			if pg.Spec.MinMember > 1 && pg.Status.Phase == schedulingv1beta1.PodGroupRunning {
				gang[pg.Name] = true
			}
		}
		var pods corev1.PodList
		if err := e.client.List(ctx, &pods, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		var candidates []string
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && gang[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]] && !e.colocation(p.Spec.NodeName) {
				candidates = append(candidates, p.Spec.NodeName)
			}
		}
		if len(candidates) == 0 {
			return false, "no gang running"
		}
		node = candidates[rng.IntN(len(candidates))]
		return true, ""
	})
	if err != nil {
		return 0, err
	}
	var spec controlplane.NodeSpec
	for _, s := range nodes() {
		if s.Name == node {
			spec = s
		}
	}
	start := time.Now()
	if err := e.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		return 0, err
	}
	err = poll.Until(ctx, recoveryTimeout, "the pods of deleted node "+node+" garbage-collected", func() (bool, string) {
		var pods corev1.PodList
		if err := e.client.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d pods left on it", len(pods.Items))
	})
	if err != nil {
		return 0, err
	}
	if err := controlplane.CreateNodes(ctx, e.client, []controlplane.NodeSpec{spec}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// flapNode makes a node NotReady and Ready again three times, each
// NotReady spell 2 to 5 s, as a node whose kubelet keeps losing the API
// server. Pods on it tolerate a short not-ready spell and must stay; new
// pods go elsewhere meanwhile.
func flapNode(ctx context.Context, e *env, rng *rand.Rand) (time.Duration, error) {
	all := nodes()
	node := all[rng.IntN(len(all))].Name
	start := time.Now()
	for range 3 {
		if err := e.setNodeReady(ctx, node, false); err != nil {
			return 0, err
		}
		if err := holdFor(ctx, time.Duration(2000+rng.IntN(3000))*time.Millisecond); err != nil {
			return 0, err
		}
		if err := e.setNodeReady(ctx, node, true); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// setNodeReady makes kwok hold the node NotReady (an annotation and the
// Ready condition False) or lets it make the node Ready again, and waits
// until the node shows it.
func (e *env) setNodeReady(ctx context.Context, name string, ready bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := e.client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		if ready {
			delete(n.Annotations, controlplane.HoldNotReadyAnnotation)
		} else {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[controlplane.HoldNotReadyAnnotation] = "true"
		}
		return e.client.Update(ctx, &n)
	})
	if err != nil {
		return err
	}
	want := corev1.ConditionTrue
	if !ready {
		want = corev1.ConditionFalse
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var n corev1.Node
			if err := e.client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
				return err
			}
			now := metav1.Now()
			for i, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					n.Status.Conditions[i] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
						Reason: "KubeletNotReady", Message: "chaos: the node stopped answering", LastHeartbeatTime: now, LastTransitionTime: now}
				}
			}
			return e.client.Status().Update(ctx, &n)
		})
		if err != nil {
			return err
		}
	}
	return poll.Until(ctx, recoveryTimeout, fmt.Sprintf("node %s Ready=%s", name, want), func() (bool, string) {
		var n corev1.Node
		if err := e.client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == want, "Ready=" + string(c.Status)
			}
		}
		return false, "no Ready condition"
	})
}

// pick returns the component of that name; for caldera-agent, one of the
// agents at random.
func (e *env) pick(name string, rng *rand.Rand) (*controlplane.Component, error) {
	if name == localenv.ComponentAgent {
		var agents []string
		for _, c := range e.ComponentNames() {
			if strings.HasPrefix(c, localenv.ComponentAgent+"-") {
				agents = append(agents, c)
			}
		}
		name = agents[rng.IntN(len(agents))]
	}
	c := e.Component(name)
	if c == nil {
		return nil, fmt.Errorf("no component %s", name)
	}
	return c, nil
}

// waitReady waits until the component answers ready, starting it again if
// it exited (a component that lost its leader lease while stopped exits);
// exited is then the end of its log before the restart.
func (e *env) waitReady(ctx context.Context, c *controlplane.Component) (exited string, err error) {
	hc := &http.Client{Timeout: 2 * time.Second}
	err = poll.Until(ctx, recoveryTimeout, c.Name()+" ready", func() (bool, string) {
		if c.Exited() {
			exited = controlplane.Tail(c.LogPath(), 20)
			if err := c.Restart(ctx); err != nil {
				return false, err.Error()
			}
		}
		if c.ReadyURL() == "" {
			return true, ""
		}
		resp, err := hc.Get(c.ReadyURL())
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return exited, err
}

// colocation reports whether the node runs an agent.
func (e *env) colocation(node string) bool {
	for _, s := range nodes() {
		if s.Name == node {
			return s.Labels[config.ColocationLabel] == "true"
		}
	}
	return false
}

// linesWith returns the last n lines of text that contain sub.
func linesWith(text, sub string, n int) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// readFrom returns what the file holds from offset on.
func readFrom(path string, offset int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "", err
	}
	b, err := io.ReadAll(f)
	return string(b), err
}
