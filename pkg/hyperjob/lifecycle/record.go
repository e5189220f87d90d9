package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// Finalizer keeps a deleted HyperJob until its children are gone.
const Finalizer = "hyperjob.caldera.sh/children"

// PlanRecordAnnotation holds the HyperJob's current plan.
const PlanRecordAnnotation = "hyperjob.caldera.sh/plan"

// PolicyPriority is the explicit priority of the children's policies, so
// that they win over broader policies when Karmada matches the child.
const PolicyPriority = 1000

// Record is a plan as written on the HyperJob, before any child of it is
// made, so that a restarted controller makes the same children.
type Record struct {
	// ID names the plan; its children carry it.
	ID string `json:"id"`
	// Generation is the HyperJob spec the plan was made for.
	Generation int64 `json:"generation"`
	// Attempt counts the plans made, rolled-back ones included.
	Attempt int `json:"attempt"`
	// Children are empty after a roll back, until the next plan.
	Children []PlannedChild `json:"children,omitempty"`
	// MinAvailable is how many children must be released together.
	MinAvailable int `json:"minAvailable,omitempty"`
	// Failed, when set, is why the failure policy failed the HyperJob.
	Failed string `json:"failed,omitempty"`
}

// PlannedChild is a child job of a plan.
type PlannedChild struct {
	Name          string `json:"name"`
	ReplicatedJob string `json:"replicatedJob"`
	Index         int32  `json:"index"`
	Cluster       string `json:"cluster"`
	Pods          int32  `json:"pods,omitempty"`
}

// ReadRecord reads the HyperJob's plan; nil when it has none.
func ReadRecord(hj *trainingv1alpha1.HyperJob) (*Record, error) {
	raw, ok := hj.Annotations[PlanRecordAnnotation]
	if !ok {
		return nil, nil
	}
	rec := &Record{}
	if err := json.Unmarshal([]byte(raw), rec); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", PlanRecordAnnotation, err)
	}
	return rec, nil
}

// Waiting reports whether the HyperJob has no plan to run: none yet, or
// one rolled back or restarted. A change in the clusters may let it be
// planned.
func Waiting(hj *trainingv1alpha1.HyperJob) bool {
	rec, _ := ReadRecord(hj)
	return rec == nil || len(rec.Children) == 0
}

// Uses reports whether the HyperJob's plan puts a child in the cluster.
func Uses(hj *trainingv1alpha1.HyperJob, cluster string) bool {
	for _, c := range plannedClusters(hj) {
		if c == cluster {
			return true
		}
	}
	return false
}

// planID names a plan by what it is and when.
func planID(hj *trainingv1alpha1.HyperJob, rec *Record) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%d/%d/%d", hj.UID, hj.Generation, rec.Attempt, len(rec.Children))
	for _, c := range rec.Children {
		fmt.Fprintf(h, "/%s@%s:%d", c.Name, c.Cluster, c.Pods)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
