package scheduler

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestExplanationsServed: a gang short of room is explained, blocker by
// blocker, at /debug/jobs/<namespace>/<podgroup> and in the list; once it
// is placed its explanation is gone.
func TestExplanationsServed(t *testing.T) {
	c := cache.New(cache.Options{})
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(c, Options{
		Actions: []framework.Action{enqueue.New(), allocate.New()},
		Tiers:   []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}}}},
	})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	c.UpdateNode(st.MakeNode("n1").Alloc("cpu", "4").Obj())
	c.UpdatePodGroup(schedtesting.MakePodGroup("g", "ns").MinMember(3).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
	for i := range 3 {
		c.UpdatePod(st.MakePod("ns", fmt.Sprintf("g-%d", i)).Group("g").Req("cpu", "2").Obj())
	}
	s.RunCycle(t.Context())

	srv := httptest.NewServer(s.ExplainHandler())
	defer srv.Close()
	get := func(path string, into any) int {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if into != nil && resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	var x Explanation
	if code := get(ExplainPath+"ns/g", &x); code != http.StatusOK {
		t.Fatalf("GET ns/g: %d", code)
	}
	want := []Blocker{{
		Type: "NotEnoughResources",
		Kind: "Placement",
		Message: "2 of 3 tasks placeable, 3 needed together (minAvailable); " +
			"task g-2: 0/1 nodes are available: 1 node Insufficient cpu",
	}}
	if diff := cmp.Diff(want, x.Blockers); diff != "" {
		t.Errorf("blockers (-want,+got):\n%s", diff)
	}
	if x.Queue != "default" || x.Phase != string(schedulingv1beta1.PodGroupInqueue) {
		t.Errorf("queue %q, phase %q; want default, Inqueue", x.Queue, x.Phase)
	}
	var all []Explanation
	if code := get(ExplainPath, &all); code != http.StatusOK || len(all) != 1 || all[0].Name != "g" {
		t.Errorf("GET list: %d, %v; want the one job", code, all)
	}
	if code := get(ExplainPath+"ns/nothing", nil); code != http.StatusNotFound {
		t.Errorf("GET an unknown job: %d, want 404", code)
	}
	if code := get(ExplainPath+"too/many/parts", nil); code != http.StatusBadRequest {
		t.Errorf("GET a malformed path: %d, want 400", code)
	}

	c.UpdateNode(st.MakeNode("n2").Alloc("cpu", "4").Obj())
	s.RunCycle(t.Context())
	if code := get(ExplainPath+"ns/g", nil); code != http.StatusNotFound {
		t.Errorf("GET ns/g after it was placed: %d, want 404", code)
	}
}
