//go:build integration

// Package cli runs calderactl's commands against a real API server with
// Caldera's controller manager, and compares their tables with golden
// files (go test -tags integration ./test/integration/cli -update writes
// them).
package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/calderactl/app"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var (
	fw     *framework.Framework
	update = flag.Bool("update", false, "write the golden files")
	// started is when the package's objects began to be made: ages are
	// printed as of 30.5 hours later, "30h" for all.
	started = time.Now()
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Karmada: true, Setup: func(ctx context.Context, f *framework.Framework) (func(), error) {
		for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
			q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
			schedulingv1beta1.SetDefaults_Queue(q)
			if err := f.Client.Create(ctx, q); err != nil {
				return nil, err
			}
		}
		stop := f.StartControllerManager(nil)
		return func() {
			if err := stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}, nil
	}}, &fw))
}

// run runs calderactl with args against the test's API server and returns
// what it printed, or its error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	f := cmdutil.NewFactory(&out)
	f.Now = func() time.Time { return started.Add(30*time.Hour + 30*time.Minute) }
	cmd := app.NewCommand(t.Context(), "calderactl", f)
	cmd.SetArgs(append([]string{"--kubeconfig", fw.Kubeconfig()}, args...))
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

// must is run that fails the test on error.
func must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("calderactl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// golden compares got with testdata/name.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want,+got):\n%s", name, diff)
	}
}
