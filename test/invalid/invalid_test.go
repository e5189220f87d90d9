// Package invalid holds a corpus of manifests that Caldera's admission
// webhooks must refuse, each for the one reason its header states
// (testdata/<kind>/<case>.yaml, described in README.md), and the test that
// submits every manifest to the webhooks of its kind as the API server
// would, in a cluster described by testdata/cluster.yaml.
package invalid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	webhookoptions "github.com/caldera-sh/caldera/cmd/caldera-webhook/app/options"
	"github.com/caldera-sh/caldera/deploy"
	datadepwebhook "github.com/caldera-sh/caldera/pkg/datadep/webhook"
	hyperjobwebhook "github.com/caldera-sh/caldera/pkg/hyperjob/webhook"
	"github.com/caldera-sh/caldera/pkg/webhooks"
	"github.com/caldera-sh/caldera/pkg/webhooks/command"
	"github.com/caldera-sh/caldera/pkg/webhooks/cronjob"
	"github.com/caldera-sh/caldera/pkg/webhooks/hypernode"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
	"github.com/caldera-sh/caldera/pkg/webhooks/jobflow"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/pod"
	"github.com/caldera-sh/caldera/pkg/webhooks/podgroup"
	"github.com/caldera-sh/caldera/pkg/webhooks/queue"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

const (
	// minManifests is the smallest corpus the test accepts.
	minManifests = 100
	// clusterFile holds the objects the webhooks find in the cluster.
	clusterFile = "testdata/cluster.yaml"
	// defaultNamespace is where a namespaced manifest without a namespace
	// is created, as kubectl creates it without a namespace in its context.
	defaultNamespace = "default"
)

// admitFunc submits a new object to the webhooks of its kind and returns
// their refusal, or nil.
type admitFunc func(ctx context.Context, obj runtime.Object) error

// admitWith admits as the API server does on create: the mutating webhook
// (d, nil for kinds without one) defaults, then the validating webhook
// checks the defaulted object.
func admitWith[T client.Object](d admission.Defaulter[T], v admission.Validator[T]) admitFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		o, ok := obj.(T)
		if !ok {
			return fmt.Errorf("%T is not admitted by this webhook", obj)
		}
		if d != nil {
			if err := d.Default(ctx, o); err != nil {
				return err
			}
		}
		_, err := v.ValidateCreate(ctx, o)
		return err
	}
}

// kindAdmission is how the webhooks admit one kind.
type kindAdmission struct {
	// kind is the object's kind; its manifests are in testdata/<kind in
	// lower case>.
	kind  string
	admit admitFunc
}

// admissions are the webhooks of every kind, by the resource their rules
// name, built as pkg/webhooks.New builds them.
func admissions(r lookup.Reader, schedulerNames []string) map[schema.GroupResource]kindAdmission {
	jobs := job.NewWebhook(r)
	podGroups := podgroup.NewWebhook(r)
	queues := queue.NewWebhook(r)
	hyperJobs := hyperjobwebhook.New()
	batch := batchv1alpha1.SchemeGroupVersion.Group
	flow := flowv1alpha1.SchemeGroupVersion.Group
	sched := schedulingv1beta1.SchemeGroupVersion.Group
	dd := ddv1alpha1.SchemeGroupVersion.Group
	return map[schema.GroupResource]kindAdmission{
		{Group: batch, Resource: "jobs"}:     {"Job", admitWith[*batchv1alpha1.Job](jobs, jobs)},
		{Group: batch, Resource: "cronjobs"}: {"CronJob", admitWith[*batchv1alpha1.CronJob](cronjob.Webhook, cronjob.Webhook)},
		{Group: flow, Resource: "jobflows"}:  {"JobFlow", admitWith[*flowv1alpha1.JobFlow](jobflow.Flows, jobflow.Flows)},
		{Group: flow, Resource: "jobtemplates"}: {"JobTemplate",
			admitWith[*flowv1alpha1.JobTemplate](jobflow.Templates, jobflow.Templates)},
		{Group: sched, Resource: "podgroups"}: {"PodGroup", admitWith[*schedulingv1beta1.PodGroup](podGroups, podGroups)},
		{Group: sched, Resource: "queues"}:    {"Queue", admitWith[*schedulingv1beta1.Queue](queues, queues)},
		{Group: trainingv1alpha1.SchemeGroupVersion.Group, Resource: "hyperjobs"}: {"HyperJob",
			admitWith[*trainingv1alpha1.HyperJob](hyperJobs, hyperJobs)},
		{Group: topologyv1alpha1.SchemeGroupVersion.Group, Resource: "hypernodes"}: {"HyperNode",
			admitWith[*topologyv1alpha1.HyperNode](nil, hypernode.NewWebhook(r))},
		{Group: dd, Resource: "datasources"}: {"DataSource",
			admitWith[*ddv1alpha1.DataSource](datadepwebhook.DataSource, datadepwebhook.DataSource)},
		{Group: dd, Resource: "datasourceclaims"}: {"DataSourceClaim",
			admitWith[*ddv1alpha1.DataSourceClaim](datadepwebhook.DataSourceClaim, datadepwebhook.DataSourceClaim)},
		{Group: busv1alpha1.SchemeGroupVersion.Group, Resource: "commands"}: {"Command",
			admitWith[*busv1alpha1.Command](nil, command.NewWebhook(r))},
		{Group: corev1.SchemeGroupVersion.Group, Resource: "pods"}: {"Pod",
			admitWith[*corev1.Pod](nil, pod.NewWebhook(r, schedulerNames))},
	}
}

// TestInvalidManifests submits every manifest of the corpus to the webhooks
// of its kind and checks that they refuse it with exactly one field error,
// at the field its header names and with the reason it gives.
func TestInvalidManifests(t *testing.T) {
	dec := newDecoder(t)
	reader := wt.Reader(t, cluster(t, dec)...)
	byKind := map[string]kindAdmission{}
	for _, a := range admissions(reader, webhookoptions.NewOptions().SchedulerNames) {
		byKind[strings.ToLower(a.kind)] = a
	}

	all, err := filepath.Glob(filepath.Join("testdata", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if filepath.Ext(f) != ".yaml" {
			t.Errorf("%s: the corpus reads only .yaml files", f)
			continue
		}
		files = append(files, f)
	}
	if len(files) < minManifests {
		t.Errorf("the corpus has %d manifests, want at least %d", len(files), minManifests)
	}
	perKind := map[string]int{}
	for _, f := range files {
		perKind[filepath.Base(filepath.Dir(f))]++
	}
	for dir, a := range byKind {
		if perKind[dir] == 0 {
			t.Errorf("the corpus has no %s: add manifests to testdata/%s", a.kind, dir)
		}
	}
	for dir, n := range perKind {
		if _, ok := byKind[dir]; !ok {
			t.Errorf("testdata/%s (%d manifests) is no kind the webhooks admit", dir, n)
		}
	}

	for _, file := range files {
		dir := filepath.Base(filepath.Dir(file))
		t.Run(filepath.ToSlash(strings.TrimPrefix(file, "testdata"+string(filepath.Separator))), func(t *testing.T) {
			want, obj := readManifest(t, dec, file)
			a, ok := byKind[dir]
			if !ok {
				t.Fatalf("no webhook admits the kinds of testdata/%s", dir)
			}
			if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind != a.kind {
				t.Fatalf("the manifest is a %s; testdata/%s holds %ss", kind, dir, a.kind)
			}
			err := a.admit(t.Context(), obj)
			if err == nil {
				t.Fatalf("admitted; want it refused at %s: %s", want.field, want.reason)
			}
			causes := wt.Causes(t, err)
			if len(causes) != 1 {
				t.Fatalf("refused for %d reasons, want one (%s: %s):\n%s", len(causes), want.field, want.reason, describe(causes))
			}
			got := causes[0]
			if got.Field != want.field || !strings.Contains(got.Message, want.reason) {
				t.Errorf("refused with\n  %s: %s\nwant\n  %s: ...%s...", got.Field, got.Message, want.field, want.reason)
			}
			if !strings.Contains(err.Error(), want.field+": ") {
				t.Errorf("the refusal %q does not name %s", err.Error(), want.field)
			}
		})
	}
}

// TestEveryWebhookKindInCorpus: the corpus test submits to the webhooks of
// every resource caldera-webhook registers webhooks for, and of no other;
// with TestInvalidManifests's count of manifests per kind, a kind that
// gains a webhook must gain manifests too.
func TestEveryWebhookKindInCorpus(t *testing.T) {
	reader := wt.Reader(t)
	schedulerNames := webhookoptions.NewOptions().SchedulerNames
	registered := map[schema.GroupResource]bool{}
	for _, w := range webhooks.New(webhooks.Config{Scheme: wt.Scheme(t), Reader: reader, SchedulerNames: schedulerNames}) {
		for _, rule := range w.Rules {
			for _, g := range rule.APIGroups {
				for _, r := range rule.Resources {
					registered[schema.GroupResource{Group: g, Resource: r}] = true
				}
			}
		}
	}
	tested := admissions(reader, schedulerNames)
	for gr := range registered {
		if _, ok := tested[gr]; !ok {
			t.Errorf("caldera-webhook admits %s, which the corpus test does not submit to", gr)
		}
	}
	for gr := range tested {
		if !registered[gr] {
			t.Errorf("the corpus test submits to a webhook for %s, which caldera-webhook does not register", gr)
		}
	}
}

// expectation is what a manifest's header says its refusal is.
type expectation struct {
	// field is the path of the one field error, as the API server
	// reports it.
	field string
	// reason is a part of that error's message.
	reason string
}

// readManifest reads a corpus file: its header and its one object, in
// defaultNamespace when namespaced and without a namespace.
func readManifest(t *testing.T, dec *decoder, file string) (expectation, client.Object) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseHeader(data)
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	docs, err := documents(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("%d objects, want one per file", len(docs))
	}
	obj, err := dec.decode(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetNamespace() == "" && dec.namespaced(obj.GetObjectKind().GroupVersionKind().GroupKind()) {
		obj.SetNamespace(defaultNamespace)
	}
	return want, obj
}

// parseHeader reads the leading comment lines: "# field: <path>" and
// "# reason: <text>", once each; other comment lines are prose.
func parseHeader(data []byte) (expectation, error) {
	var want expectation
	var fields, reasons int
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		comment, ok := strings.CutPrefix(line, "#")
		if !ok {
			break
		}
		key, value, _ := strings.Cut(strings.TrimSpace(comment), ":")
		switch key {
		case "field":
			want.field, fields = strings.TrimSpace(value), fields+1
		case "reason":
			want.reason, reasons = strings.TrimSpace(value), reasons+1
		}
	}
	if fields != 1 || reasons != 1 || want.field == "" || want.reason == "" {
		return want, errors.New(`want one "# field: <path>" and one "# reason: <text>" line, each not empty, before the manifest`)
	}
	return want, nil
}

// cluster returns the objects of testdata/cluster.yaml.
func cluster(t *testing.T, dec *decoder) []client.Object {
	t.Helper()
	data, err := os.ReadFile(clusterFile)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents(data)
	if err != nil {
		t.Fatalf("%s: %v", clusterFile, err)
	}
	var objs []client.Object
	for i, doc := range docs {
		obj, err := dec.decode(doc)
		if err != nil {
			t.Fatalf("%s, object %d: %v", clusterFile, i+1, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// documents splits YAML into its documents, leaving out empty ones (a
// document of comments only).
func documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var content any
		if err := yaml.Unmarshal(doc, &content); err != nil {
			return nil, err
		}
		if content != nil {
			docs = append(docs, doc)
		}
	}
}

// decoder turns a manifest into the object the webhooks receive: the CRD
// schema's defaults applied, as the API server applies them before it
// calls the webhooks, and decoded strictly with Caldera's scheme, so that a
// misspelled field fails the test instead of going unnoticed.
type decoder struct {
	codec runtime.Decoder
	// schemas are the CRDs' structural schemas, by kind and version.
	schemas map[schema.GroupVersionKind]*structuralschema.Structural
	// namespacedCRDs is each CRD's scope.
	namespacedCRDs map[schema.GroupKind]bool
}

func newDecoder(t *testing.T) *decoder {
	t.Helper()
	d := &decoder{
		codec:          serializer.NewCodecFactory(wt.Scheme(t), serializer.EnableStrict).UniversalDeserializer(),
		schemas:        map[schema.GroupVersionKind]*structuralschema.Structural{},
		namespacedCRDs: map[schema.GroupKind]bool{},
	}
	files, err := fs.Glob(deploy.CRDs, deploy.CRDDir+"/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("CRDs %v: %v", files, err)
	}
	for _, f := range files {
		data, err := fs.ReadFile(deploy.CRDs, f)
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := d.codec.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			t.Fatalf("%s holds a %T, want a CustomResourceDefinition", f, obj)
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		d.namespacedCRDs[gk] = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				t.Fatalf("%s, version %s: %v", f, v.Name, err)
			}
			s, err := structuralschema.NewStructural(&internal)
			if err != nil {
				t.Fatalf("%s, version %s: %v", f, v.Name, err)
			}
			d.schemas[gk.WithVersion(v.Name)] = s
		}
	}
	return d
}

// namespaced reports whether objects of a kind live in a namespace: the
// CRD's scope, or for Kubernetes' own kinds, whether it is one of the
// namespaced kinds the corpus and the cluster hold.
func (d *decoder) namespaced(gk schema.GroupKind) bool {
	if n, ok := d.namespacedCRDs[gk]; ok {
		return n
	}
	return gk == corev1.SchemeGroupVersion.WithKind("Pod").GroupKind()
}

// decode reads one YAML document into an object of Caldera's scheme.
func (d *decoder) decode(doc []byte) (client.Object, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	if s := d.schemas[u.GroupVersionKind()]; s != nil {
		structuraldefaulting.Default(u.Object, s)
		if data, err = json.Marshal(u.Object); err != nil {
			return nil, err
		}
	}
	obj, _, err := d.codec.Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cobj, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not an object", obj)
	}
	return cobj, nil
}

// describe lists the causes of a refusal, one a line.
func describe(causes []metav1.StatusCause) string {
	lines := make([]string, len(causes))
	for i, c := range causes {
		lines[i] = fmt.Sprintf("  %s: %s", c.Field, c.Message)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
