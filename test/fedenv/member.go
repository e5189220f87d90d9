package fedenv

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/localenv"
)

// Member is a member cluster of the federation.
type Member struct {
	Env    *localenv.Environment
	Client client.Client
	// Access is how Karmada reaches it (Push mode).
	Access MemberAccess
}

// StartMember starts a member cluster as o says until the test ends,
// creates the queues named in it (weight 1) unless they are nil, and the
// service account Karmada reaches it as.
func StartMember(t testing.TB, ctx context.Context, o localenv.Options, queues []string) *Member {
	t.Helper()
	env, err := localenv.Start(ctx, o)
	if err != nil {
		t.Fatalf("starting the member in %s: %v", o.Dir, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := ClientFor(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queues {
		if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: q}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	access, err := GrantAccess(ctx, env.Kubeconfig)
	if err != nil {
		t.Fatalf("access to the member in %s: %v", o.Dir, err)
	}
	return &Member{Env: env, Client: c, Access: access}
}
