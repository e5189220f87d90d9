// Package webhooks lists Caldera's admission webhooks: for each, the handler,
// the path it is served at, the requests it receives and what the API server
// does when it cannot reach it. The handlers live in one package per kind
// (pkg/webhooks/job, .../queue, ...); cmd/caldera-webhook serves them and
// pkg/webhooks/registration turns this list into webhook configurations.
package webhooks

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	datadepwebhook "github.com/caldera-sh/caldera/pkg/datadep/webhook"
	hyperjobwebhook "github.com/caldera-sh/caldera/pkg/hyperjob/webhook"
	"github.com/caldera-sh/caldera/pkg/webhooks/command"
	"github.com/caldera-sh/caldera/pkg/webhooks/cronjob"
	"github.com/caldera-sh/caldera/pkg/webhooks/hypernode"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
	"github.com/caldera-sh/caldera/pkg/webhooks/jobflow"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/pod"
	"github.com/caldera-sh/caldera/pkg/webhooks/podgroup"
	"github.com/caldera-sh/caldera/pkg/webhooks/queue"
)

// Timeouts the API server waits for an answer. Pod creation is on the path
// of every workload, so its webhook gets less time than the others.
const (
	timeoutSeconds    int32 = 10
	podTimeoutSeconds int32 = 5
)

// Webhook is one admission webhook.
type Webhook struct {
	// Name is the webhook's name in its configuration.
	Name string
	// Path is where Handler is served.
	Path    string
	Handler http.Handler
	// Mutating webhooks default; the others validate.
	Mutating bool
	// Rules select the requests the API server sends.
	Rules []admissionregistrationv1.RuleWithOperations
	// MatchConditions narrow Rules with CEL; the API server does not call
	// the webhook for requests they reject.
	MatchConditions []admissionregistrationv1.MatchCondition
	// FailurePolicy is what the API server does when the webhook cannot be
	// reached or errs.
	FailurePolicy  admissionregistrationv1.FailurePolicyType
	TimeoutSeconds int32
	// ExcludeSystemNamespaces leaves out kube-system and the webhook's own
	// namespace, so that the webhook never stands in the way of the pods
	// that run the cluster or itself.
	ExcludeSystemNamespaces bool
}

// Config is what the handlers need.
type Config struct {
	Scheme *runtime.Scheme
	// Reader reads queues, PodGroups, Jobs, HyperNodes, PriorityClasses and
	// Namespaces.
	Reader lookup.Reader
	// SchedulerNames are the schedulers whose pods are checked.
	SchedulerNames []string
}

// New returns every webhook, mutating ones first.
//
// Failure policies: every webhook of Caldera's own kinds fails closed
// (Fail). Their checks keep the queue tree and the jobs consistent, the CRD
// schema cannot make them, and refusing to create a Job or Queue while the
// webhook is down harms nothing but the request, which the client retries.
// The pod webhook fails open (Ignore) and is scoped, by match conditions, to
// pods of Caldera's schedulers and, by namespace, away from kube-system and
// the webhook's namespace: it only gives early feedback (the scheduler does
// not admit work of a closed or missing queue either), and pod creation must
// never stop cluster-wide because the webhook is down.
func New(cfg Config) []Webhook {
	s := cfg.Scheme
	r := cfg.Reader
	jobs := job.NewWebhook(r)
	podGroups := podgroup.NewWebhook(r)
	queues := queue.NewWebhook(r)
	hyperJobs := hyperjobwebhook.New()
	hyperNodes := hypernode.NewWebhook(r)

	createUpdate := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	batch := batchv1alpha1.SchemeGroupVersion
	flow := flowv1alpha1.SchemeGroupVersion
	sched := schedulingv1beta1.SchemeGroupVersion
	dd := ddv1alpha1.SchemeGroupVersion
	namespaced, cluster := admissionregistrationv1.NamespacedScope, admissionregistrationv1.ClusterScope

	hj := HyperJobs(s, hyperJobs)
	return []Webhook{
		mutating("jobs", admission.WithDefaulter(s, jobs), rule(batch.Group, batch.Version, "jobs", namespaced, createUpdate...)),
		mutating("cronjobs", admission.WithDefaulter[*batchv1alpha1.CronJob](s, cronjob.Webhook), rule(batch.Group, batch.Version, "cronjobs", namespaced, createUpdate...)),
		mutating("jobflows", admission.WithDefaulter[*flowv1alpha1.JobFlow](s, jobflow.Flows), rule(flow.Group, flow.Version, "jobflows", namespaced, createUpdate...)),
		mutating("jobtemplates", admission.WithDefaulter[*flowv1alpha1.JobTemplate](s, jobflow.Templates), rule(flow.Group, flow.Version, "jobtemplates", namespaced, createUpdate...)),
		mutating("podgroups", admission.WithDefaulter(s, podGroups), rule(sched.Group, sched.Version, "podgroups", namespaced, createUpdate...)),
		mutating("queues", admission.WithDefaulter(s, queues), rule(sched.Group, sched.Version, "queues", cluster, createUpdate...)),
		hj[0],
		mutating("datasources", admission.WithDefaulter[*ddv1alpha1.DataSource](s, datadepwebhook.DataSource), rule(dd.Group, dd.Version, "datasources", cluster, createUpdate...)),
		mutating("datasourceclaims", admission.WithDefaulter[*ddv1alpha1.DataSourceClaim](s, datadepwebhook.DataSourceClaim), rule(dd.Group, dd.Version, "datasourceclaims", namespaced, createUpdate...)),

		validating("jobs", admission.WithValidator(s, jobs), rule(batch.Group, batch.Version, "jobs", namespaced, createUpdate...)),
		validating("cronjobs", admission.WithValidator[*batchv1alpha1.CronJob](s, cronjob.Webhook), rule(batch.Group, batch.Version, "cronjobs", namespaced, createUpdate...)),
		validating("jobflows", admission.WithValidator[*flowv1alpha1.JobFlow](s, jobflow.Flows), rule(flow.Group, flow.Version, "jobflows", namespaced, createUpdate...)),
		validating("jobtemplates", admission.WithValidator[*flowv1alpha1.JobTemplate](s, jobflow.Templates), rule(flow.Group, flow.Version, "jobtemplates", namespaced, createUpdate...)),
		validating("podgroups", admission.WithValidator(s, podGroups), rule(sched.Group, sched.Version, "podgroups", namespaced, createUpdate...)),
		validating("queues", admission.WithValidator(s, queues), rule(sched.Group, sched.Version, "queues", cluster,
			admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete)),
		validating("hypernodes", admission.WithValidator(s, hyperNodes),
			rule(topologyv1alpha1.SchemeGroupVersion.Group, topologyv1alpha1.SchemeGroupVersion.Version, "hypernodes", cluster, createUpdate...)),
		hj[1],
		validating("datasources", admission.WithValidator[*ddv1alpha1.DataSource](s, datadepwebhook.DataSource), rule(dd.Group, dd.Version, "datasources", cluster, createUpdate...)),
		validating("datasourceclaims", admission.WithValidator[*ddv1alpha1.DataSourceClaim](s, datadepwebhook.DataSourceClaim), rule(dd.Group, dd.Version, "datasourceclaims", namespaced, createUpdate...)),
		validating("commands", admission.WithValidator(s, command.NewWebhook(r)),
			rule(busv1alpha1.SchemeGroupVersion.Group, busv1alpha1.SchemeGroupVersion.Version, "commands", namespaced, admissionregistrationv1.Create)),
		podWebhook(admission.WithValidator(s, pod.NewWebhook(r, cfg.SchedulerNames)), cfg.SchedulerNames),
	}
}

// HyperJobs are the HyperJob webhooks, mutating then validating: for a
// member cluster's caldera-webhook, and for caldera-global on the Karmada
// API server (where w knows the members).
func HyperJobs(s *runtime.Scheme, w *hyperjobwebhook.Webhook) []Webhook {
	training := trainingv1alpha1.SchemeGroupVersion
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	r := rule(training.Group, training.Version, "hyperjobs", admissionregistrationv1.NamespacedScope, ops...)
	return []Webhook{mutating("hyperjobs", admission.WithDefaulter(s, w), r), validating("hyperjobs", admission.WithValidator(s, w), r)}
}

func mutating(resource string, h *admission.Webhook, r admissionregistrationv1.RuleWithOperations) Webhook {
	w := ofCRD("mutate", resource, h, r)
	w.Mutating = true
	return w
}

func validating(resource string, h *admission.Webhook, r admissionregistrationv1.RuleWithOperations) Webhook {
	return ofCRD("validate", resource, h, r)
}

func ofCRD(verb, resource string, h *admission.Webhook, r admissionregistrationv1.RuleWithOperations) Webhook {
	return Webhook{
		Name:           verb + "." + resource + ".caldera.sh",
		Path:           "/" + resource + "/" + verb,
		Handler:        recovering(h),
		Rules:          []admissionregistrationv1.RuleWithOperations{r},
		FailurePolicy:  admissionregistrationv1.Fail,
		TimeoutSeconds: timeoutSeconds,
	}
}

func podWebhook(h *admission.Webhook, schedulers []string) Webhook {
	quoted := make([]string, len(schedulers))
	for i, s := range schedulers {
		quoted[i] = strconv.Quote(s)
	}
	return Webhook{
		Name:    "validate.pods.caldera.sh",
		Path:    "/pods/validate",
		Handler: recovering(h),
		Rules: []admissionregistrationv1.RuleWithOperations{rule(corev1.SchemeGroupVersion.Group, corev1.SchemeGroupVersion.Version, "pods",
			admissionregistrationv1.NamespacedScope, admissionregistrationv1.Create)},
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name:       "caldera-scheduler",
			Expression: fmt.Sprintf("has(object.spec.schedulerName) && object.spec.schedulerName in [%s]", strings.Join(quoted, ", ")),
		}},
		FailurePolicy:           admissionregistrationv1.Ignore,
		TimeoutSeconds:          podTimeoutSeconds,
		ExcludeSystemNamespaces: true,
	}
}

// recovering turns a panic in a handler into an error response, so that a
// bug refuses (or, for pods, skips) one request instead of killing the
// webhook.
func recovering(h *admission.Webhook) *admission.Webhook {
	h.RecoverPanic = ptr.To(true)
	return h
}

func rule(group, version, resource string, scope admissionregistrationv1.ScopeType, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{group},
			APIVersions: []string{version},
			Resources:   []string{resource},
			Scope:       ptr.To(scope),
		},
	}
}
