//go:build rbacusage

package rbacusage

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/caldera-sh/caldera/deploy"
	"github.com/caldera-sh/caldera/deploy/global"
	"github.com/caldera-sh/caldera/pkg/localenv"
)

// TestMemberRBACIsAllUsed reads what the end-to-end and fault-injection
// suites' environments audited (make test runs them first, with
// CALDERA_RBAC_USAGE_DIR set) and fails on every permission of
// deploy/member/rbac.yaml that no component used, and on every request the
// API server refused a component.
func TestMemberRBACIsAllUsed(t *testing.T) {
	checkAllUsed(t, "deploy/member/rbac.yaml", deploy.MemberRBAC, "unexercised.txt")
}

// TestGlobalRBACIsAllUsed does the same for caldera-global's permissions
// on the Karmada API server, audited by the end-to-end federation tests,
// which run it as the user caldera-global with exactly these.
func TestGlobalRBACIsAllUsed(t *testing.T) {
	manifest, err := fs.ReadFile(global.Manifests, "karmada/karmada-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkAllUsed(t, "deploy/global/karmada/karmada-rbac.yaml", manifest, "unexercised-global.txt")
}

// checkAllUsed compares the grants of the manifest named name with the
// audited usage; unexercised names the file of grants the suites need
// not use.
func checkAllUsed(t *testing.T, name string, manifest []byte, unexercised string) {
	dir := os.Getenv(localenv.UsageDirEnv)
	if dir == "" {
		t.Fatalf("%s is not set: run the e2e and chaos suites with it first (make test does)", localenv.UsageDirEnv)
	}
	files, err := filepath.Glob(filepath.Join(dir, "usage-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no usage summaries in %s: run the e2e and chaos suites with %s=%s first (make test does)", dir, localenv.UsageDirEnv, dir)
	}
	var usage []localenv.Usage
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var u []localenv.Usage
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		usage = append(usage, u...)
	}
	grants, err := Grants(manifest)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := Compare(grants, usage)

	var table []string
	for k, n := range r.Uses {
		table = append(table, fmt.Sprintf("%8d  %s", n, k))
	}
	sort.Strings(table)
	t.Logf("requests allowed per grant, over %d environments:\n%s", len(files), strings.Join(table, "\n"))
	text, err := os.ReadFile(unexercised)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := Unexercised(string(text))
	if err != nil {
		t.Fatalf("%s: %v", unexercised, err)
	}
	known := map[string]bool{}
	for _, g := range grants {
		known[g.Key()] = true
	}
	for k := range allowed {
		if !known[k] {
			t.Errorf("%s lists %q, which %s does not grant", unexercised, k, name)
		}
	}
	for _, g := range r.Unused {
		if why, ok := allowed[g.Key()]; ok {
			t.Logf("not used in this run, as %s allows: %s (%s)", unexercised, g.Key(), why)
			continue
		}
		t.Errorf("%s: %s grants %s, which no component request used; remove it, exercise the path that needs it, or say in %s why the suites cannot", strings.TrimPrefix(g.User, "system:serviceaccount:"), g.Rule, g, unexercised)
	}
	for _, u := range r.Denied {
		res := u.Resource
		if u.Subresource != "" {
			res += "/" + u.Subresource
		}
		t.Errorf("%s was refused %s %s.%s in %q %d times: a permission is missing", strings.TrimPrefix(u.User, "system:serviceaccount:"), u.Verb, res, u.APIGroup, u.Namespace, u.Denied)
	}
}
