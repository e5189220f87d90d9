package hypernode

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
)

// Labels on the HyperNodes discovery manages. HyperNodes without them are
// the user's and are never changed or deleted by discovery.
const (
	// DiscoveredByLabel names the source a HyperNode was discovered from.
	DiscoveredByLabel = "topology.caldera.sh/discovered-by"
	// TopologyTypeLabel names the topology type it belongs to.
	TopologyTypeLabel = "topology.caldera.sh/topology-type"
)

// Discover computes the HyperNodes the label source wants from the nodes:
// for each topology type, one HyperNode per label value at each level,
// tier 1 for the level just above the nodes. A tier-1 HyperNode lists its
// nodes by name; a higher one its child HyperNodes. A node is in a
// topology when it matches the type's selector and has every level's
// label. The result is sorted by name; it is empty when the label source
// is off.
func Discover(cfg *Config, nodes []*corev1.Node) []*topologyv1alpha1.HyperNode {
	src := cfg.labelSource()
	if src == nil {
		return nil
	}
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	var out []*topologyv1alpha1.HyperNode
	typeNames := make([]string, 0, len(src.Config.Types))
	for name := range src.Config.Types {
		typeNames = append(typeNames, name)
	}
	slices.Sort(typeNames)
	for _, typeName := range typeNames {
		out = append(out, discoverType(typeName, src.Config.Types[typeName], sorted)...)
	}
	slices.SortFunc(out, func(a, b *topologyv1alpha1.HyperNode) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func discoverType(typeName string, t TopologyType, nodes []*corev1.Node) []*topologyv1alpha1.HyperNode {
	levels := t.tiers()
	var selector labels.Selector
	if t.NodeSelector != nil {
		selector, _ = metav1.LabelSelectorAsSelector(t.NodeSelector)
	}
	// byName holds the HyperNodes made so far; members are added in node
	// order, so each list comes out sorted and without repeats.
	byName := map[string]*topologyv1alpha1.HyperNode{}
	var order []string
	get := func(tier int32, level Level, value string) *topologyv1alpha1.HyperNode {
		name := hyperNodeName(typeName, tier, value)
		if hn := byName[name]; hn != nil {
			return hn
		}
		tierName := level.TierName
		if tierName == "" {
			tierName = level.NodeLabel
		}
		hn := &topologyv1alpha1.HyperNode{
			TypeMeta: metav1.TypeMeta{APIVersion: topologyv1alpha1.SchemeGroupVersion.String(), Kind: "HyperNode"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				DiscoveredByLabel: LabelSource,
				TopologyTypeLabel: typeName,
			}},
			Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier, TierName: tierName},
		}
		byName[name] = hn
		order = append(order, name)
		return hn
	}
	added := map[string]map[string]bool{}
	addMember := func(hn *topologyv1alpha1.HyperNode, typ topologyv1alpha1.MemberType, name string) {
		if added[hn.Name] == nil {
			added[hn.Name] = map[string]bool{}
		}
		if added[hn.Name][name] {
			return
		}
		added[hn.Name][name] = true
		hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{
			Type:     typ,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}},
		})
	}
	for _, n := range nodes {
		if selector != nil && !selector.Matches(labels.Set(n.Labels)) {
			continue
		}
		values := make([]string, len(levels))
		complete := true
		for i, l := range levels {
			v, ok := n.Labels[l.NodeLabel]
			if !ok || v == "" {
				complete = false
				break
			}
			values[i] = v
		}
		if !complete {
			continue
		}
		// Bottom up: the node in its tier-1 HyperNode, each HyperNode in
		// the one above.
		child := ""
		for i := len(levels) - 1; i >= 0; i-- {
			tier := int32(len(levels) - i)
			hn := get(tier, levels[i], values[i])
			if child == "" {
				addMember(hn, topologyv1alpha1.MemberTypeNode, n.Name)
			} else {
				addMember(hn, topologyv1alpha1.MemberTypeHyperNode, child)
			}
			child = hn.Name
		}
	}
	out := make([]*topologyv1alpha1.HyperNode, 0, len(order))
	for _, name := range order {
		hn := byName[name]
		slices.SortFunc(hn.Spec.Members, func(a, b topologyv1alpha1.MemberSpec) int {
			return strings.Compare(a.Selector.ExactMatch.Name, b.Selector.ExactMatch.Name)
		})
		out = append(out, hn)
	}
	return out
}

// hyperNodeName is "<type>-t<tier>-<value>", the value lowercased with
// characters a name may not have replaced; when that changed the value, or
// the name would be too long, a hash of the value keeps names of different
// values apart.
func hyperNodeName(typeName string, tier int32, value string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(value) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	clean := strings.Trim(b.String(), "-")
	prefix := fmt.Sprintf("%s-t%d-", typeName, tier)
	if clean == value && len(prefix)+len(clean) <= 63 {
		return prefix + clean
	}
	sum := sha256.Sum256([]byte(value))
	hash := hex.EncodeToString(sum[:])[:8]
	if room := 63 - len(prefix) - len(hash) - 1; len(clean) > room {
		clean = strings.Trim(clean[:max(room, 0)], "-")
	}
	if clean == "" {
		return prefix + hash
	}
	return prefix + clean + "-" + hash
}
