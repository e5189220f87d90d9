package rbacusage

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/localenv"
)

const manifest = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sched}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list]
- apiGroups: [""]
  resources: [pods/binding]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: sched, namespace: caldera-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [sched]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: sched}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sched}
subjects: [{kind: ServiceAccount, name: sched, namespace: caldera-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: sched, namespace: caldera-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: sched}
subjects: [{kind: ServiceAccount, name: sched, namespace: caldera-system}]
`

const sched = "system:serviceaccount:caldera-system:sched"

func TestCompare(t *testing.T) {
	grants, err := Grants([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 4 {
		t.Fatalf("expanded %d grants, want 4: %v", len(grants), grants)
	}
	for _, tc := range []struct {
		name       string
		usage      []localenv.Usage
		wantUnused []string
		wantDenied int
	}{
		{
			name: "all used (a watch counts for list)",
			usage: []localenv.Usage{
				{User: sched, Verb: "get", Resource: "pods", Namespace: "a", Allowed: 3},
				{User: sched, Verb: "watch", Resource: "pods", Allowed: 1},
				{User: sched, Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "a", Allowed: 9},
				{User: sched, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "caldera-system", Names: []string{"sched"}, Allowed: 2},
			},
		},
		{
			name: "nothing used",
			wantUnused: []string{"create pods/binding", "get pods", "list pods",
				"update leases.coordination.k8s.io in caldera-system named sched"},
		},
		{
			name: "another lease, another namespace, another user; refused requests use nothing, and only those never allowed are reported",
			usage: []localenv.Usage{
				{User: sched, Verb: "get", Resource: "pods", Denied: 1},
				{User: sched, Verb: "list", Resource: "pods", Namespace: "b", Denied: 4, Allowed: 1},
				{User: "system:serviceaccount:caldera-system:other", Verb: "list", Resource: "pods", Allowed: 1},
				{User: sched, Verb: "create", Resource: "pods", Subresource: "binding", Allowed: 1},
				{User: sched, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "caldera-system", Names: []string{"other"}, Allowed: 2},
				{User: sched, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "default", Names: []string{"sched"}, Allowed: 2},
			},
			wantUnused: []string{"get pods", "update leases.coordination.k8s.io in caldera-system named sched"},
			wantDenied: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(grants, tc.usage)
			var unused []string
			for _, g := range r.Unused {
				unused = append(unused, g.String())
			}
			if diff := cmp.Diff(tc.wantUnused, unused); diff != "" {
				t.Errorf("unused (-want +got):\n%s", diff)
			}
			if len(r.Denied) != tc.wantDenied {
				t.Errorf("denied %v, want %d", r.Denied, tc.wantDenied)
			}
		})
	}
}

func TestGrantsRefuseWildcards(t *testing.T) {
	_, err := Grants([]byte(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: x}
rules: [{apiGroups: [""], resources: [secrets], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: x}
subjects: [{kind: ServiceAccount, name: x, namespace: caldera-system}]
`))
	if err == nil {
		t.Fatal("a wildcard verb was accepted")
	}
}

func TestUnexercised(t *testing.T) {
	got, err := Unexercised("# comment\n\ncaldera-agent create pods/eviction | evicts under pressure\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"caldera-agent create pods/eviction": "evicts under pressure"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Unexercised("caldera-agent create pods/eviction\n"); err == nil {
		t.Error("a line without a reason was accepted")
	}
	grants, err := Grants([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if got := grants[len(grants)-1].Key(); got != "sched update leases.coordination.k8s.io in caldera-system named sched" {
		t.Errorf("Key = %q", got)
	}
}
