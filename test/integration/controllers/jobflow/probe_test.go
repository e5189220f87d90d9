//go:build integration

package jobflow

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestProbesStartTheFlow: "load" waits until the server task of "serve"
// answers an HTTP GET with a 2xx and accepts a TCP connection. The test
// plays the server: a pod of the serve Job whose IP is loopback, and a
// server and a listener there.
func TestProbesStartTheFlow(t *testing.T) {
	ctx := t.Context()
	ns := fmt.Sprintf("probe-%d", time.Now().UnixNano()%1e9)
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	var healthy atomic.Bool
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/healthz" || r.Header.Get("X-Probe") != "flow" || !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := func(addr string) int {
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return n
	}

	defer startController(t)()

	for _, name := range []string{"serve", "load"} {
		if err := fw.Client.Create(ctx, &flowv1alpha1.JobTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: bt.MakeJob("", "").Task(bt.MakeTask("server", 1)).Obj().Spec}); err != nil {
			t.Fatal(err)
		}
	}
	jf := &flowv1alpha1.JobFlow{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: flowv1alpha1.JobFlowSpec{Flows: []flowv1alpha1.Flow{
		{Name: "serve"},
		{Name: "load", DependsOn: &flowv1alpha1.DependsOn{Targets: []string{"serve"}, Probe: &flowv1alpha1.Probe{
			HTTPGetList: []flowv1alpha1.HTTPGet{{TaskName: "server", Port: port(srv.Listener.Addr().String()), Path: "/healthz",
				HTTPHeader: &flowv1alpha1.HTTPHeader{Name: "X-Probe", Value: "flow"}}},
			TCPSocketList: []flowv1alpha1.TCPSocket{{TaskName: "server", Port: port(lis.Addr().String())}},
		}}},
	}}}
	if err := fw.Client.Create(ctx, jf); err != nil {
		t.Fatal(err)
	}
	exists := func(name string) bool {
		err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &batchv1alpha1.Job{})
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return err == nil
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the serve job", func() (bool, string) { return exists("p-serve"), "" })

	// The serve Job's server pod, running at a loopback address (nothing
	// schedules it; the test writes its status as a kubelet would).
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p-serve-server-0",
		Labels: map[string]string{batchv1alpha1.JobNameKey: "p-serve", batchv1alpha1.TaskSpecKey: "server"}},
		Spec: corev1.PodSpec{SchedulerName: "nobody", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if err := fw.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}}}
	if err := fw.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	// Two refused GETs: the decision after the first has been made (the
	// second comes from its requeue), and it did not start load.
	poll.Eventually(t, t.Context(), 30*time.Second, "the server asked twice", func() (bool, string) {
		return asked.Load() >= 2, fmt.Sprint(asked.Load())
	})
	if exists("p-load") {
		t.Fatal("load started while the server answered 503")
	}
	healthy.Store(true)
	poll.Eventually(t, t.Context(), 30*time.Second, "load started once the server is healthy", func() (bool, string) {
		return exists("p-load"), fmt.Sprint(asked.Load(), " GETs")
	})
}
