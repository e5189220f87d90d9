package agent

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/agent/numatopo"
)

// NUMAReporter publishes the node's Numatopology, the report the
// scheduler's numa-aware plugin places pods by, made from what the node
// says (numatopo.Spec). It writes only when the report changed: it
// remembers what it last wrote and, after a start or a failed write, reads
// the object back first, so a restart rewrites nothing.
type NUMAReporter struct {
	// Node names the node and its Numatopology.
	Node   string
	Client client.Client
	// Sources reads the node's sysfs, kubelet configuration and CPU
	// manager state afresh.
	Sources func() (numatopo.Sources, error)

	// written is the object as last written or read; nil: read it first.
	written *nodeinfov1alpha1.Numatopology
}

// Report publishes the report once.
func (r *NUMAReporter) Report(ctx context.Context) error {
	src, err := r.Sources()
	if err != nil {
		return err
	}
	spec, err := numatopo.Spec(src)
	if err != nil {
		return err
	}
	if r.written == nil {
		var cur nodeinfov1alpha1.Numatopology
		switch err := r.Client.Get(ctx, client.ObjectKey{Name: r.Node}, &cur); {
		case apierrors.IsNotFound(err):
			nt := &nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: r.Node}, Spec: spec}
			if err := r.Client.Create(ctx, nt); err != nil {
				return fmt.Errorf("creating Numatopology %s: %w", r.Node, err)
			}
			r.written = nt
			return nil
		case err != nil:
			return fmt.Errorf("reading Numatopology %s: %w", r.Node, err)
		}
		r.written = &cur
	}
	if apiequality.Semantic.DeepEqual(r.written.Spec, spec) {
		return nil
	}
	nt := r.written.DeepCopy()
	nt.Spec = spec
	if err := r.Client.Update(ctx, nt); err != nil {
		r.written = nil
		return fmt.Errorf("updating Numatopology %s: %w", r.Node, err)
	}
	r.written = nt
	return nil
}

// Run reports every interval until ctx ends; a failed report is logged
// and tried again at the next one.
func (r *NUMAReporter) Run(ctx context.Context, interval time.Duration) {
	logger := klog.FromContext(ctx).WithValues("node", r.Node)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.Report(ctx); err != nil {
			logger.Error(err, "Publishing the node's NUMA topology failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
