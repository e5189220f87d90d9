package jobflow

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
)

// finished counts JobFlows that ended, by phase (Succeed or Failed), in
// the controller manager's metrics registry.
var finished = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "caldera_jobflows_finished_total",
	Help: "JobFlows that ended, by phase: Succeed (every step's Job completed) or Failed (a Job failed or was terminated).",
}, []string{"phase"})

func init() {
	ctrlmetrics.Registry.MustRegister(finished)
	for _, p := range []flowv1alpha1.Phase{flowv1alpha1.Succeed, flowv1alpha1.Failed} {
		finished.WithLabelValues(string(p))
	}
}
