// Package app assembles caldera-agent: a client, an event recorder, the
// metrics server and the agent's loop on its node.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/cmd/caldera-agent/app/options"
	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/metrics"
	"github.com/caldera-sh/caldera/pkg/agent/numatopo"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
)

// NewAgentCommand returns the caldera-agent command.
func NewAgentCommand(ctx context.Context) *cobra.Command {
	return component.NewCommand("caldera-agent", "Caldera's node agent: colocation of online and offline work",
		options.NewOptions(), func(c *options.Config) error { return Run(ctx, c) })
}

// Run runs the agent until ctx ends.
func Run(ctx context.Context, c *options.Config) error {
	cfg, err := restConfig(c.Kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the client: %w", err)
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "caldera-agent", Host: c.Agent.NodeName})

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)
	if !metricsserving.Off(c.MetricsBindAddress) {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv, err := metricsserving.Serve(ctx, c.MetricsBindAddress, c.Metrics, cfg, mux)
		if err != nil {
			return fmt.Errorf("--metrics-bind-address: %w", err)
		}
		defer srv.Stop()
	}
	if !metricsserving.Off(c.HealthProbeBindAddress) {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		srv, err := metricsserving.Serve(ctx, c.HealthProbeBindAddress, metricsserving.Options{}, cfg, mux)
		if err != nil {
			return fmt.Errorf("--health-probe-bind-address: %w", err)
		}
		defer srv.Stop()
	}

	var crdClient client.Client
	if c.NUMA != nil || c.Usage != nil {
		if crdClient, err = newCRDClient(cfg); err != nil {
			return err
		}
	}
	if c.NUMA != nil {
		r := numaReporter(crdClient, c.Agent.NodeName, *c.NUMA)
		go r.Run(ctx, c.Agent.Interval)
	}
	a := agent.New(cs, recorder, m, clock.RealClock{}, c.Agent)
	if c.Usage != nil {
		a.ReportUsage(crdClient, c.Usage.Window, c.Usage.Interval)
	}
	return a.Run(ctx)
}

// numaReporter publishes the node's Numatopology from the files, read
// afresh for each report; a missing kubelet configuration or CPU manager
// checkpoint reads as the kubelet's defaults and no pinned CPU.
func numaReporter(cl client.Client, node string, src options.NUMASources) *agent.NUMAReporter {
	read := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	sys := os.DirFS(src.SysFS)
	return &agent.NUMAReporter{Node: node, Client: cl, Sources: func() (numatopo.Sources, error) {
		kc, err := read(src.KubeletConfig)
		if err != nil {
			return numatopo.Sources{}, fmt.Errorf("--kubelet-config: %w", err)
		}
		st, err := read(src.CPUManagerState)
		if err != nil {
			return numatopo.Sources{}, fmt.Errorf("--cpu-manager-state: %w", err)
		}
		return numatopo.Sources{Sys: sys, KubeletConfig: kc, CPUManagerState: st}, nil
	}}
}

// newCRDClient is a client of Caldera's API groups (Numatopology,
// NodeUsage).
func newCRDClient(cfg *rest.Config) (client.Client, error) {
	sch, err := apischeme.New()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return nil, fmt.Errorf("building the client: %w", err)
	}
	return cl, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration (or pass --kubeconfig): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}
