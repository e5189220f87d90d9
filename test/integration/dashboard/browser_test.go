//go:build integration

package dashboard

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/dashboard/model"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the README's screenshots into docs/images")

// chromium finds the browser: $CALDERA_CHROMIUM, else Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CALDERA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: install Debian's chromium package (make test does, through hack/install-chromium.sh) or set CALDERA_CHROMIUM")
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1440, 900),
		chromedp.DisableGPU,
		// The test may run as root, where Chromium's sandbox cannot start.
		chromedp.NoSandbox,
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// shownQueues reads the queue table from the page: one row per queue and
// resource, as the page shows them.
const shownQueues = `[...document.querySelectorAll("#queues tbody tr")].map(tr => ({
  name: tr.dataset.queue, resource: tr.dataset.resource,
  allocated: tr.querySelector(".allocated").textContent, deserved: tr.querySelector(".deserved").textContent,
  guarantee: tr.querySelector(".guarantee").textContent, capability: tr.querySelector(".capability").textContent}))`

type shownRow struct {
	Name, Resource, Allocated, Deserved, Guarantee, Capability string
}

func toRows(shown []shownRow) []model.Queue {
	var out []model.Queue
	for _, r := range shown {
		dash := func(s string) string {
			if s == "-" {
				return ""
			}
			return s
		}
		if len(out) == 0 || out[len(out)-1].Name != r.Name {
			out = append(out, model.Queue{Name: r.Name})
		}
		q := &out[len(out)-1]
		q.Resources = append(q.Resources, model.QueueResource{Resource: r.Resource, Allocated: dash(r.Allocated),
			Deserved: dash(r.Deserved), Guarantee: dash(r.Guarantee), Capability: dash(r.Capability)})
	}
	return out
}

// The page, in a real browser, shows the API's queue numbers, follows a
// change without a reload, and explains a waiting job.
func TestPageInABrowser(t *testing.T) {
	ns := workload(t, "web")
	base := dashboard(t, fw.Kubeconfig())
	ctx := browser(t)
	readQueues := func() string {
		shown := read(t, ctx, "reading the queue table", chromedp.Evaluate[[]shownRow](shownQueues))
		return queueDiff(t, toRows(shown), "web-research", "web-team")
	}

	do(t, ctx, "loading the page", chromedp.Navigate(base+"/#queues"), chromedp.WaitVisible(chromedp.CSS(`#queues tr[data-queue="web-team"]`)))
	eventually(t, time.Minute, "the page shows the API's queue numbers", readQueues)

	// A change reaches the open page through the event stream. The queue
	// controller writes the queue too (its state), so the spec change is
	// retried on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q := &schedulingv1beta1.Queue{}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: "web-team"}, q); err != nil {
			return err
		}
		q.Spec.Deserved[corev1.ResourceCPU] = resource.MustParse("6")
		return fw.Client.Update(t.Context(), q)
	}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "waiting for the change", chromedp.WaitVisible(`//tr[@data-queue="web-team" and @data-resource="cpu"]/td[contains(@class,"deserved") and text()="6"]`))
	// The job that fits runs: the open page shows its queue's allocation
	// grow, and still the API's numbers.
	eventually(t, time.Minute, "the page shows web-team's allocation", func() string {
		if diff := readQueues(); diff != "" {
			return diff
		}
		alloc := read(t, ctx, "reading web-team's allocation", chromedp.Text(chromedp.CSS(`tr[data-queue="web-team"][data-resource="cpu"] .allocated`)))
		if alloc == "-" {
			return "web-team has nothing allocated yet"
		}
		return ""
	})
	shot(t, ctx, "dashboard-queues.png", base+"/#queues?queue=web-team")

	// The waiting job's page says why, once the scheduler has said it; the
	// open page follows.
	do(t, ctx, "opening too-big", chromedp.Navigate(fmt.Sprintf("%s/#job/Job/%s/too-big", base, ns)), chromedp.WaitVisible(chromedp.CSS(`#explanation p`)))
	eventually(t, time.Minute, "the page explains why too-big waits", func() string {
		why := read(t, ctx, "reading the explanation", chromedp.Text(chromedp.CSS(`#explanation`)))
		if !strings.Contains(why, "Job web/too-big is Pending") || !strings.Contains(why, "The scheduler cannot place it") || !strings.Contains(why, "cpu") {
			return why
		}
		return ""
	})
	shot(t, ctx, "dashboard-job.png", "")

	do(t, ctx, "opening the nodes", chromedp.Navigate(base+"/#nodes"), chromedp.WaitVisible(chromedp.CSS(`#nodes tr[data-node="gpu-0"] .card`)))
	shot(t, ctx, "dashboard-nodes.png", "")
}

// do runs browser steps, each run given a minute.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	read(t, ctx, what, chromedp.Steps(steps...))
}

// read runs a browser action that reads a value, given a minute.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(stepCtx, a)
	if err != nil {
		// Say what the page showed instead.
		lookCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		shown, lookErr := chromedp.Run(lookCtx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("%s: %v; the page shows (%v):\n%s", what, err, lookErr, shown)
	}
	return v
}

// shot saves a screenshot of the page (after navigating to url, if given)
// into the test's artifacts, and into docs/images with -update-screenshots.
func shot(t *testing.T, ctx context.Context, name, url string) {
	t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	if url != "" {
		steps = append(steps, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#view h2`)))
	}
	// The view is drawn once it carries the version it shows.
	steps = append(steps, chromedp.WaitVisible(chromedp.CSS(`#view[data-version]`)))
	do(t, ctx, "drawing "+name, steps...)
	png := read(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	if *updateScreenshots {
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "images", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
