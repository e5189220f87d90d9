package localenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// UsageDirEnv names a directory: when it is set, every local environment
// audits what the components' service accounts ask of the API server and,
// when it stops, writes a summary there (a JSON array of Usage). The test
// tier that checks deploy/member/rbac.yaml grants nothing unused reads the
// summaries of the end-to-end and fault-injection suites (docs/testing.md).
const UsageDirEnv = "CALDERA_RBAC_USAGE_DIR"

// auditPolicy records, once each request is answered, who asked what of
// which resource: the users named and the members of the groups named
// only.
func auditPolicy(users, groups []string) string {
	p := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived, ResponseStarted]\nrules:\n"
	if len(users) > 0 {
		p += "- level: Metadata\n  users: [\"" + strings.Join(users, `", "`) + "\"]\n"
	}
	if len(groups) > 0 {
		p += "- level: Metadata\n  userGroups: [\"" + strings.Join(groups, `", "`) + "\"]\n"
	}
	return p + "- level: None\n"
}

// maxNames bounds how many object names a Usage keeps: enough for the
// rules that name objects (a leader election Lease, a ConfigMap).
const maxNames = 32

// Usage is what one identity asked of one kind of resource with one verb in
// one namespace, and how often the API server allowed and refused it.
type Usage struct {
	User        string `json:"user"`
	Verb        string `json:"verb"`
	APIGroup    string `json:"apiGroup"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	// Names are some of the objects asked for by name (at most maxNames).
	Names   []string `json:"names,omitempty"`
	Allowed int      `json:"allowed"`
	Denied  int      `json:"denied"`
}

// AuditArgs are the kube-apiserver flags that write, in dir, an audit log
// of what the users and the members of the groups ask of it; WriteUsage
// summarizes it.
func AuditArgs(dir string, users, groups []string) ([]string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy(users, groups)), 0o644); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + filepath.Join(dir, "audit.log"),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
	}, nil
}

// SummarizeAudit reads a JSON audit log and returns its resource requests
// as Usage, sorted. Requests without a resource (discovery, /healthz) are
// left out.
func SummarizeAudit(path string) ([]Usage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[string]*Usage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var ev controlplane.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
			continue
		}
		r := ev.ObjectRef
		key := strings.Join([]string{ev.User.Username, ev.Verb, r.APIGroup, r.Resource, r.Subresource, r.Namespace}, "\x00")
		u := byKey[key]
		if u == nil {
			u = &Usage{User: ev.User.Username, Verb: ev.Verb, APIGroup: r.APIGroup, Resource: r.Resource, Subresource: r.Subresource, Namespace: r.Namespace}
			byKey[key] = u
		}
		if r.Name != "" && len(u.Names) < maxNames && !slices.Contains(u.Names, r.Name) {
			u.Names = append(u.Names, r.Name)
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 {
			u.Denied++
		} else {
			u.Allowed++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Usage, 0, len(byKey))
	for _, u := range byKey {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b Usage) int {
		return strings.Compare(a.User+a.APIGroup+a.Resource+a.Subresource+a.Verb+a.Namespace, b.User+b.APIGroup+b.Resource+b.Subresource+b.Verb+b.Namespace)
	})
	return out, nil
}

// WriteUsage summarizes the audit log under dir into a new file of
// usageDir.
func WriteUsage(dir, usageDir string) error {
	usage, err := SummarizeAudit(filepath.Join(dir, "audit.log"))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(usage, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(usageDir, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("usage-%d-%d.json", os.Getpid(), time.Now().UnixNano())
	return os.WriteFile(filepath.Join(usageDir, name), b, 0o644)
}
