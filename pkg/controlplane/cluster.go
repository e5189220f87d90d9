package controlplane

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterOptions configure one simulated cluster: an API server on a shared
// etcd, optionally with kwok and CRDs.
type ClusterOptions struct {
	Name   string
	BinDir string
	// Dir holds this cluster's files; the API server and kwok logs are there.
	Dir string
	// Kwok starts kwok for the cluster's fake nodes.
	Kwok bool
	// KwokPodStageParallelism is KwokOptions.PodStageParallelism.
	KwokPodStageParallelism uint
	// CRDs are installed once the API server is ready.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Scheme is used for the cluster's client; nil means client-go's scheme.
	Scheme *runtime.Scheme
	// APIServerArgs are extra kube-apiserver flags.
	APIServerArgs []string
	// Users are further identities of the API server
	// (APIServerOptions.Users).
	Users []string
}

// Cluster is a running simulated cluster.
type Cluster struct {
	Name      string
	APIServer *APIServer
	Kwok      *Kwok
	// Client is an administrator's client.
	Client client.Client
}

// StartCluster starts an API server on etcd, installs the CRDs and starts
// kwok. On error, whatever was started is stopped.
func StartCluster(ctx context.Context, etcd *Etcd, o ClusterOptions) (_ *Cluster, err error) {
	c := &Cluster{Name: o.Name}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	c.APIServer, err = StartAPIServer(ctx, etcd, APIServerOptions{
		Name: o.Name, BinDir: o.BinDir, Dir: o.Dir, ExtraArgs: o.APIServerArgs, Users: o.Users,
	})
	if err != nil {
		return nil, err
	}
	c.Client, err = client.New(c.APIServer.RESTConfig(), client.Options{Scheme: o.Scheme})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", o.Name, err)
	}
	if len(o.CRDs) > 0 {
		if err := InstallCRDs(ctx, c.Client, o.CRDs); err != nil {
			return nil, err
		}
	}
	if o.Kwok {
		c.Kwok, err = StartKwok(ctx, c.APIServer, KwokOptions{BinDir: o.BinDir, Dir: filepath.Join(o.Dir, "kwok"), PodStageParallelism: o.KwokPodStageParallelism})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// RESTConfig returns an administrator's client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return c.APIServer.RESTConfig() }

// Stop stops kwok, then the API server.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	return errors.Join(c.Kwok.Stop(), c.APIServer.Stop())
}
