package framework

// StateKey names one kind of per-cycle state of type T. A plugin keeps its
// keys unexported and offers accessors, so other plugins share its state
// only as it allows.
type StateKey[T any] struct{ name string }

// NewStateKey returns a key; name is for debugging only (keys compare by
// identity).
func NewStateKey[T any](name string) *StateKey[T] { return &StateKey[T]{name: name} }

// ReadState returns the cycle's value for key.
func ReadState[T any](ssn *Session, key *StateKey[T]) (T, bool) {
	v, ok := ssn.state[key]
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

// WriteState sets the cycle's value for key.
func WriteState[T any](ssn *Session, key *StateKey[T], v T) {
	ssn.state[key] = v
}
