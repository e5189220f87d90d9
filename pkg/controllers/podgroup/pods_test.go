package podgroup

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// makePod starts a pending pod with UID "uid-<name>", so that the
// PodGroup the controller names after its UID reads podgroup-uid-<name>.
func makePod(namespace, name string) *st.PodWrapper {
	p := st.MakePod(namespace, name)
	p.ObjectMeta.UID = types.UID("uid-" + name)
	return p
}

// second is the given second of a fixed minute, a creation time.
func second(s int) metav1.Time { return metav1.Date(2030, 1, 1, 0, 0, s, 0, time.UTC) }
