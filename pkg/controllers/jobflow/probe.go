package jobflow

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/jobflow/core"
)

// probeTimeout bounds one HTTP GET or TCP connection.
const probeTimeout = time.Second

// runProbes runs the probes the decision needs, at once, and returns which
// held. A probe holds when one running pod of its task answers.
func (r *Reconciler) runProbes(ctx context.Context, namespace string, reqs []core.ProbeRequest) (map[core.ProbeRef]bool, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out := make(map[core.ProbeRef]bool, len(reqs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, req := range reqs {
		addrs, err := r.podAddresses(ctx, namespace, req)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok := false
			for _, addr := range addrs {
				if probe(ctx, req, addr) {
					ok = true
					break
				}
			}
			mu.Lock()
			out[req.Ref] = ok
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, nil
}

// podAddresses are host:port of the running pods the probe may ask.
func (r *Reconciler) podAddresses(ctx context.Context, namespace string, req core.ProbeRequest) ([]string, error) {
	var out []string
	for _, job := range req.Jobs {
		sel := client.MatchingLabels{batchv1alpha1.JobNameKey: job}
		if req.TaskName != "" {
			sel[batchv1alpha1.TaskSpecKey] = req.TaskName
		}
		var pods corev1.PodList
		if err := r.client.List(ctx, &pods, client.InNamespace(namespace), sel); err != nil {
			return nil, fmt.Errorf("listing the pods of job %s for probe %s: %w", job, req.Ref, err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
				out = append(out, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(req.Port)))
			}
		}
	}
	return out, nil
}

// probe asks one address: an HTTP GET answered 2xx or 3xx (redirects are
// not followed), or an accepted TCP connection.
func probe(ctx context.Context, req core.ProbeRequest, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if req.Ref.Kind == core.TCPSocketProbe {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+req.Path, nil)
	if err != nil {
		return false
	}
	if h := req.Header; h != nil {
		hreq.Header.Set(h.Name, h.Value)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(hreq)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
