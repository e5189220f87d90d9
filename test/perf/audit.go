package perf

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// WriteCounts are the write requests one client made, from the audit log.
type WriteCounts struct {
	// Total is every create, update, patch and delete.
	Total int `json:"total"`
	// ByKind splits Total by "verb resource[/subresource]", e.g.
	// "create pods/binding".
	ByKind map[string]int `json:"byKind"`
	// Failed is the number of writes answered with a status of 400 or more;
	// FailedByKind splits it by "verb resource[/subresource] code".
	Failed       int            `json:"failed"`
	FailedByKind map[string]int `json:"failedByKind,omitempty"`
	// bindings counts successful pods/binding creates per namespace/name.
	bindings map[string]int
	// boundAt is, per namespace/name, when the API server completed the
	// pod's successful binding.
	boundAt map[string]time.Time
}

// auditOffset is the current size of the audit log: writes from here on are
// a run's.
func auditOffset(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// countWrites reads the audit log from offset and counts the writes of the
// clients whose user agent starts with userAgentPrefix.
func countWrites(path string, offset int64, userAgentPrefix string) (WriteCounts, error) {
	wc := WriteCounts{ByKind: map[string]int{}, FailedByKind: map[string]int{}, bindings: map[string]int{}, boundAt: map[string]time.Time{}}
	f, err := os.Open(path)
	if err != nil {
		return wc, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return wc, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A line without its newline is being written by a request
			// still in flight; it is not the stopped scheduler's.
			return wc, nil
		}
		if err != nil {
			return wc, err
		}
		var ev controlplane.AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return wc, fmt.Errorf("audit log %s: %w", path, err)
		}
		if !strings.HasPrefix(ev.UserAgent, userAgentPrefix) || ev.ObjectRef == nil {
			continue
		}
		kind := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			kind += "/" + ev.ObjectRef.Subresource
		}
		wc.Total++
		wc.ByKind[ev.Verb+" "+kind]++
		failed := ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400
		if failed {
			wc.Failed++
			wc.FailedByKind[fmt.Sprintf("%s %s %d", ev.Verb, kind, ev.ResponseStatus.Code)]++
		}
		if !failed && ev.Verb == "create" && kind == "pods/binding" {
			wc.bindings[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name]++
			wc.boundAt[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] = ev.StageTimestamp.Time
		}
	}
}
