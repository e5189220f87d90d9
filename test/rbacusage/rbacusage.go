// Package rbacusage compares the permissions an RBAC manifest grants each
// component's identity (deploy/member/rbac.yaml: the member components'
// service accounts; deploy/global/karmada/karmada-rbac.yaml: the user
// caldera-global on the Karmada API server) with what the components were
// seen to ask of the API server (the audit summaries pkg/localenv and the
// federation tests write when CALDERA_RBAC_USAGE_DIR is set): a grant never
// used, or a request the API server refused, is reported.
package rbacusage

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/caldera-sh/caldera/pkg/localenv"
)

// Grant is one permission: a verb on a resource (with its subresource, as
// "pods/status") of an API group, in a namespace ("" for a ClusterRole's,
// which hold in every namespace), limited to Names when the rule names
// objects.
type Grant struct {
	User      string
	Verb      string
	APIGroup  string
	Resource  string
	Namespace string
	Names     []string
	// Rule says where the grant comes from: "ClusterRole caldera-scheduler".
	Rule string
}

func (g Grant) String() string {
	s := fmt.Sprintf("%s %s", g.Verb, g.Resource)
	if g.APIGroup != "" {
		s = fmt.Sprintf("%s %s.%s", g.Verb, g.Resource, g.APIGroup)
	}
	if g.Namespace != "" {
		s += " in " + g.Namespace
	}
	if len(g.Names) > 0 {
		s += " named " + strings.Join(g.Names, ",")
	}
	return s
}

// Grants expands the roles and bindings of an RBAC manifest into one Grant
// per user, verb, group and resource. Wildcards are refused: a component's
// rules name what they allow.
func Grants(manifest []byte) ([]Grant, error) {
	objs, err := localenv.DecodeManifests(manifest)
	if err != nil {
		return nil, err
	}
	type roleKey struct{ kind, namespace, name string }
	rules := map[roleKey][]rbacv1.PolicyRule{}
	var bindings []struct {
		namespace string
		ref       rbacv1.RoleRef
		subjects  []rbacv1.Subject
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.Role // a ClusterRole's rules decode the same
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			rules[roleKey{o.GetKind(), o.GetNamespace(), o.GetName()}] = r.Rules
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			bindings = append(bindings, struct {
				namespace string
				ref       rbacv1.RoleRef
				subjects  []rbacv1.Subject
			}{o.GetNamespace(), b.RoleRef, b.Subjects})
		}
	}
	var out []Grant
	for _, b := range bindings {
		// A ClusterRoleBinding's grants hold everywhere; a RoleBinding's
		// (of a Role or a ClusterRole) in its namespace.
		ns := b.namespace
		rs, ok := rules[roleKey{b.ref.Kind, roleNamespace(b.ref.Kind, b.namespace), b.ref.Name}]
		if !ok {
			return nil, fmt.Errorf("binding to %s %s, which the manifest does not define", b.ref.Kind, b.ref.Name)
		}
		for _, s := range b.subjects {
			var user string
			switch s.Kind {
			case "ServiceAccount":
				user = "system:serviceaccount:" + s.Namespace + ":" + s.Name
			case "User":
				user = s.Name
			default:
				return nil, fmt.Errorf("binding to %s %s has a %s subject; components are service accounts or users", b.ref.Kind, b.ref.Name, s.Kind)
			}
			for _, r := range rs {
				if len(r.NonResourceURLs) > 0 {
					continue
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						for _, v := range r.Verbs {
							if g == "*" || res == "*" || v == "*" {
								return nil, fmt.Errorf("%s %s grants a wildcard (%s %s.%s)", b.ref.Kind, b.ref.Name, v, res, g)
							}
							out = append(out, Grant{User: user, Verb: v, APIGroup: g, Resource: res, Namespace: ns,
								Names: r.ResourceNames, Rule: b.ref.Kind + " " + b.ref.Name})
						}
					}
				}
			}
		}
	}
	return out, nil
}

func roleNamespace(kind, bindingNamespace string) string {
	if kind == "ClusterRole" {
		return ""
	}
	return bindingNamespace
}

// Report is what a comparison found.
type Report struct {
	// Unused are grants no request used.
	Unused []Grant
	// Denied are requests the API server refused a component every time.
	Denied []localenv.Usage
	// Uses counts, per grant, the requests it allowed.
	Uses map[string]int
}

// Compare matches every allowed request of a component with the grants
// that allow it. Only the identities the grants name are compared.
func Compare(grants []Grant, usage []localenv.Usage) Report {
	r := Report{Uses: map[string]int{}}
	used := make([]int, len(grants))
	granted := map[string]bool{}
	for _, g := range grants {
		granted[g.User] = true
	}
	for _, u := range usage {
		if !granted[u.User] {
			continue
		}
		// An API server that has just started refuses everything until its
		// RBAC caches fill: a request also allowed at other times was
		// refused only then. One never allowed lacks its permission.
		if u.Denied > 0 && u.Allowed == 0 {
			r.Denied = append(r.Denied, u)
		}
		if u.Allowed == 0 {
			continue
		}
		resource := u.Resource
		if u.Subresource != "" {
			resource += "/" + u.Subresource
		}
		for i, g := range grants {
			// An informer lists, then watches; a server that streams the
			// initial list in the watch is asked only watch. A used watch
			// counts for list too: the same informer lists against a
			// server that does not stream.
			verb := g.Verb == u.Verb || (g.Verb == "list" && u.Verb == "watch")
			if g.User != u.User || !verb || g.APIGroup != u.APIGroup || g.Resource != resource {
				continue
			}
			if g.Namespace != "" && g.Namespace != u.Namespace {
				continue
			}
			if len(g.Names) > 0 && !slices.ContainsFunc(u.Names, func(n string) bool { return slices.Contains(g.Names, n) }) {
				continue
			}
			used[i] += u.Allowed
		}
	}
	for i, g := range grants {
		r.Uses[g.User+" "+g.String()] += used[i]
		if used[i] == 0 {
			r.Unused = append(r.Unused, g)
		}
	}
	sort.Slice(r.Unused, func(i, j int) bool {
		return r.Unused[i].User+r.Unused[i].String() < r.Unused[j].User+r.Unused[j].String()
	})
	return r
}

// Unexercised parses the list of grants the suites are not required to use
// ("<service account> <grant> | <why>" per line, # comments): service
// account and grant (as Grant.String writes it) to the reason.
func Unexercised(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, ok := strings.Cut(line, "|")
		key, why = strings.TrimSpace(key), strings.TrimSpace(why)
		if !ok || why == "" || !strings.Contains(key, " ") {
			return nil, fmt.Errorf("line %d: want \"<service account> <grant> | <why>\", got %q", i+1, line)
		}
		out[key] = why
	}
	return out, nil
}

// Key names a grant as Unexercised does: "<service account> <grant>".
func (g Grant) Key() string {
	return strings.TrimPrefix(g.User, "system:serviceaccount:"+localenv.SystemNamespace+":") + " " + g.String()
}
