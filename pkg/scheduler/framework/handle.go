package framework

// Handle carries the scheduler's long-lived services to plugin factories.
// Plugins keep what they need from it; per-cycle state lives in the plugin
// between OnSessionOpen and OnSessionClose, never here.
type Handle struct {
}
