package job_test

import (
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

// FuzzJobWebhook defaults and admits a decoded Job against fixed queues:
// nothing panics, defaulting refuses only what validation refuses and is
// otherwise idempotent, and the verdict is deterministic.
func FuzzJobWebhook(f *testing.F) {
	for _, j := range []*batchv1alpha1.Job{
		newJob("j").Obj(),
		testingbatch.MakeJob("j", "ns").Queue("eng").PriorityClassName("urgent").Plugin("horovod").Plugin("mpi").
			Task(testingbatch.MakeTask("", 2).HostNetwork()).Task(testingbatch.MakeTask("b", 1).NoContainers()).Obj(),
	} {
		b, err := json.Marshal(j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w := job.NewWebhook(wt.Reader(f, queues()...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in batchv1alpha1.Job
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		once := in.DeepCopy()
		if err := w.Default(t.Context(), once); err != nil {
			if _, verr := w.ValidateCreate(t.Context(), in.DeepCopy()); verr == nil || !apierrors.IsInvalid(err) {
				t.Fatalf("Default refused what ValidateCreate admits (%v): %v", verr, err)
			}
			return
		}
		twice := once.DeepCopy()
		if err := w.Default(t.Context(), twice); err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, once), mustJSON(t, twice); a != b {
			t.Fatalf("Default is not idempotent:\n%s\n%s", a, b)
		}
		_, err1 := w.ValidateCreate(t.Context(), in.DeepCopy())
		_, err2 := w.ValidateCreate(t.Context(), in.DeepCopy())
		if a, b := errString(err1), errString(err2); a != b {
			t.Fatalf("ValidateCreate is not deterministic:\n%s\n%s", a, b)
		}
		_, err1 = w.ValidateUpdate(t.Context(), once, in.DeepCopy())
		_, err2 = w.ValidateUpdate(t.Context(), once, in.DeepCopy())
		if a, b := errString(err1), errString(err2); a != b {
			t.Fatalf("ValidateUpdate is not deterministic:\n%s\n%s", a, b)
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
