package controlplane

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuditEvent holds the fields of an audit.k8s.io/v1 Event (one line of a
// JSON audit log) that the test tiers read: who asked what of which object,
// how the API server answered, and when.
type AuditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// StageTimestamp is when the API server completed the request.
	StageTimestamp metav1.MicroTime `json:"stageTimestamp"`
}
