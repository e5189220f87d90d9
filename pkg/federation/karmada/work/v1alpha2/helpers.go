package v1alpha2

// SchedulingSuspended reports whether Karmada's scheduler leaves the
// binding alone, as Karmada's helper of the same name does.
func (s *ResourceBindingSpec) SchedulingSuspended() bool {
	return s.Suspension != nil && s.Suspension.Scheduling != nil && *s.Suspension.Scheduling
}
