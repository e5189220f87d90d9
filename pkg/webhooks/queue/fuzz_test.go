package queue_test

import (
	"encoding/json"
	"testing"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/webhooks/queue"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

// FuzzQueueWebhook admits a decoded Queue against a fixed tree: as a new
// queue, as an update of eng, and as a deletion. Nothing panics, the
// verdicts are deterministic, and defaulting is idempotent.
func FuzzQueueWebhook(f *testing.F) {
	for _, q := range []*schedulingv1beta1.Queue{
		q("eng-b").Parent("eng").Deserved(res("cpu", "6")).Obj(),
		q("eng").Parent("eng-a").Capability(res("cpu", "1")).Obj(),
		q("sci").Hierarchy("sci", "1").Obj(),
		q("root").Capability(res("cpu", "1")).Obj(),
	} {
		b, err := json.Marshal(q)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w := queue.NewWebhook(wt.Reader(f, tree()...))
	eng := tree()[2].(*schedulingv1beta1.Queue)
	f.Fuzz(func(t *testing.T, data []byte) {
		var in schedulingv1beta1.Queue
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		once := in.DeepCopy()
		if err := w.Default(t.Context(), once); err != nil {
			t.Fatal(err)
		}
		twice := once.DeepCopy()
		if err := w.Default(t.Context(), twice); err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, once), mustJSON(t, twice); a != b {
			t.Fatalf("Default is not idempotent:\n%s\n%s", a, b)
		}
		for _, admit := range []func() error{
			func() error { _, err := w.ValidateCreate(t.Context(), in.DeepCopy()); return err },
			func() error { _, err := w.ValidateUpdate(t.Context(), eng, in.DeepCopy()); return err },
			func() error { _, err := w.ValidateDelete(t.Context(), in.DeepCopy()); return err },
		} {
			if a, b := errString(admit()), errString(admit()); a != b {
				t.Fatalf("not deterministic:\n%s\n%s", a, b)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
