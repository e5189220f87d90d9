package validation_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
)

// examples returns the documents of the example files as JSON.
func examples(t testing.TB, pattern string) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "scheduling", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples %s: %v", pattern, err)
	}
	var out [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			if j, err := yaml.YAMLToJSON(doc); err == nil && len(j) > 4 {
				out = append(out, j)
			}
		}
	}
	return out
}

func marshal(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// summary is what validation reports, without the bad values.
func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return out
}

func sameSummary(t *testing.T, what string, a, b field.ErrorList) {
	t.Helper()
	sa, sb := summary(a), summary(b)
	if len(sa) != len(sb) {
		t.Fatalf("%s is not deterministic:\n%q\n%q", what, sa, sb)
	}
	for i := range sa {
		if sa[i] != sb[i] {
			t.Fatalf("%s is not deterministic:\n%q\n%q", what, sa, sb)
		}
	}
}

func queueSeeds(t testing.TB) [][]byte {
	out := examples(t, "00-queues.yaml")
	for _, q := range []*schedulingv1beta1.Queue{
		testingsched.MakeQueue("root").Obj(),
		testingsched.MakeQueue("q").Capability(testingsched.Resources("cpu", "4", "example.com/fpga", "1")).
			Deserved(testingsched.Resources("cpu", "8")).Guarantee(testingsched.Resources("cpu", "-1")).
			Hierarchy("eng/q", "1/0").DequeueStrategy("lifo").Obj(),
	} {
		out = append(out, marshal(t, q))
	}
	return out
}

func decodeQueue(t *testing.T, data []byte) (*schedulingv1beta1.Queue, bool) {
	var q schedulingv1beta1.Queue
	if err := json.Unmarshal(data, &q); err != nil {
		return nil, false
	}
	schedulingv1beta1.SetDefaults_Queue(&q)
	again := q.DeepCopy()
	schedulingv1beta1.SetDefaults_Queue(again)
	if !apiequality.Semantic.DeepEqual(&q, again) {
		t.Fatalf("SetDefaults_Queue is not idempotent:\nonce:  %+v\ntwice: %+v", q, again)
	}
	return &q, true
}

// FuzzValidateQueue decodes a Queue, defaults it, and validates its
// creation and deletion: nothing panics, defaulting is idempotent and
// validation is deterministic.
func FuzzValidateQueue(f *testing.F) {
	for _, s := range queueSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, ok := decodeQueue(t, data)
		if !ok {
			return
		}
		sameSummary(t, "ValidateQueue", validation.ValidateQueue(q), validation.ValidateQueue(q.DeepCopy()))
		sameSummary(t, "ValidateQueueDeletion", validation.ValidateQueueDeletion(q), validation.ValidateQueueDeletion(q.DeepCopy()))
	})
}

// FuzzValidateQueueUpdate validates the update from one decoded Queue to
// another; an unchanged valid queue is a valid update.
func FuzzValidateQueueUpdate(f *testing.F) {
	s := queueSeeds(f)
	for i := range s {
		f.Add(s[i], s[(i+1)%len(s)])
	}
	f.Fuzz(func(t *testing.T, oldData, newData []byte) {
		oldQ, ok1 := decodeQueue(t, oldData)
		newQ, ok2 := decodeQueue(t, newData)
		if !ok1 || !ok2 {
			return
		}
		sameSummary(t, "ValidateQueueUpdate", validation.ValidateQueueUpdate(newQ, oldQ), validation.ValidateQueueUpdate(newQ.DeepCopy(), oldQ.DeepCopy()))
		if len(validation.ValidateQueue(newQ)) == 0 {
			if errs := validation.ValidateQueueUpdate(newQ, newQ.DeepCopy()); len(errs) > 0 {
				t.Fatalf("an unchanged valid queue fails update validation: %v", errs)
			}
		}
	})
}

// FuzzValidatePodGroup decodes a PodGroup, defaults it for a namespace whose
// default queue is fuzzed too, and validates it.
func FuzzValidatePodGroup(f *testing.F) {
	seeds := examples(f, "podgroup.yaml")
	seeds = append(seeds, marshal(f, testingsched.MakePodGroup("pg", "ns").MinMember(-1).MinTaskMember("", -2).
		MinResources(testingsched.Resources("cpu", "-1")).NetworkTopology("diagonal", -1).
		SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a", MatchLabelKeys: []string{"bad key"}}).
		SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a", NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{}}).Obj()))
	for _, s := range seeds {
		f.Add(s, "team-a")
	}
	f.Fuzz(func(t *testing.T, data []byte, namespaceQueue string) {
		var pg schedulingv1beta1.PodGroup
		if err := json.Unmarshal(data, &pg); err != nil {
			return
		}
		annotations := map[string]string{schedulingv1beta1.QueueNameAnnotation: namespaceQueue}
		schedulingv1beta1.SetPodGroupDefaultsInNamespace(&pg, annotations)
		again := pg.DeepCopy()
		schedulingv1beta1.SetPodGroupDefaultsInNamespace(again, annotations)
		if !apiequality.Semantic.DeepEqual(&pg, again) {
			t.Fatalf("SetPodGroupDefaultsInNamespace is not idempotent:\nonce:  %+v\ntwice: %+v", pg, again)
		}
		sameSummary(t, "ValidatePodGroup", validation.ValidatePodGroup(&pg), validation.ValidatePodGroup(pg.DeepCopy()))
	})
}
