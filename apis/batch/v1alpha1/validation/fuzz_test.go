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

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	"github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// seeds returns, as JSON, the example jobs and a few built ones.
func seeds(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "batch", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
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
	for _, job := range []*batchv1alpha1.Job{
		testingbatch.MakeJob("j", "ns").Task(testingbatch.MakeTask("", 2)).Obj(),
		testingbatch.MakeJob("j", "ns").Plugin("mpi").
			Policy(testingbatch.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.AnyEvent)).
			Task(testingbatch.MakeTask("a", 2).DependsOn(batchv1alpha1.IterationAll, "b").Partition(2, 1, 1)).
			Task(testingbatch.MakeTask("b", 1).TopologyPolicy(batchv1alpha1.NumaPolicyRestricted).CPURequest("1500m")).Obj(),
	} {
		j, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// summary is what validation reports, without the bad values (which may
// hold pointers that differ between equal objects).
func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return out
}

func decode(data []byte) (*batchv1alpha1.Job, bool) {
	var job batchv1alpha1.Job
	if err := json.Unmarshal(data, &job); err != nil {
		return nil, false
	}
	return &job, true
}

// defaulted applies SetDefaults_Job and checks that a second application
// changes nothing.
func defaulted(t *testing.T, job *batchv1alpha1.Job) *batchv1alpha1.Job {
	t.Helper()
	job = job.DeepCopy()
	batchv1alpha1.SetDefaults_Job(job)
	again := job.DeepCopy()
	batchv1alpha1.SetDefaults_Job(again)
	if !apiequality.Semantic.DeepEqual(job, again) {
		t.Fatalf("SetDefaults_Job is not idempotent:\nonce:  %+v\ntwice: %+v", job.Spec, again.Spec)
	}
	return job
}

// FuzzValidateJob decodes a Job, defaults it and validates it: nothing
// panics, defaulting is idempotent, validation is deterministic and does
// not change the job.
func FuzzValidateJob(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		job, ok := decode(data)
		if !ok {
			return
		}
		job = defaulted(t, job)
		before := job.DeepCopy()
		first := summary(validation.ValidateJob(job))
		if !apiequality.Semantic.DeepEqual(before, job) {
			t.Fatal("ValidateJob changed the job")
		}
		if second := summary(validation.ValidateJob(job.DeepCopy())); !equal(first, second) {
			t.Fatalf("ValidateJob is not deterministic:\n%q\n%q", first, second)
		}
	})
}

// FuzzValidateJobUpdate decodes two Jobs and validates the update from the
// first to the second, as FuzzValidateJob does for a create. An update to
// the same job is always a valid change if the job itself is valid.
func FuzzValidateJobUpdate(f *testing.F) {
	s := seeds(f)
	for i := range s {
		f.Add(s[i], s[(i+1)%len(s)])
		f.Add(s[i], s[i])
	}
	f.Fuzz(func(t *testing.T, oldData, newData []byte) {
		oldJob, ok1 := decode(oldData)
		newJob, ok2 := decode(newData)
		if !ok1 || !ok2 {
			return
		}
		oldJob, newJob = defaulted(t, oldJob), defaulted(t, newJob)
		first := summary(validation.ValidateJobUpdate(oldJob, newJob))
		if second := summary(validation.ValidateJobUpdate(oldJob.DeepCopy(), newJob.DeepCopy())); !equal(first, second) {
			t.Fatalf("ValidateJobUpdate is not deterministic:\n%q\n%q", first, second)
		}
		if len(validation.ValidateJob(newJob)) == 0 {
			if errs := validation.ValidateJobUpdate(newJob, newJob.DeepCopy()); len(errs) > 0 {
				t.Fatalf("an unchanged valid job fails update validation: %v", errs)
			}
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
