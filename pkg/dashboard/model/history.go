package model

import "time"

// History keeps each queue's share of each resource over time, a sample
// at a time, the oldest dropped once it holds its capacity.
type History struct {
	capacity int
	times    []time.Time
	// shares maps queue → resource → one share per sample; -1 where the
	// queue had no share of the resource at that sample.
	shares map[string]map[string][]float64
}

// NewHistory returns a history of at most capacity samples.
func NewHistory(capacity int) *History {
	return &History{capacity: max(capacity, 1), shares: map[string]map[string][]float64{}}
}

// Add records the queues' shares at t.
func (h *History) Add(t time.Time, queues []Queue) {
	drop := 0
	if len(h.times) == h.capacity {
		drop = 1
	}
	h.times = append(h.times[drop:], t)
	n := len(h.times)
	seen := map[string]map[string]bool{}
	for _, q := range queues {
		byRes := h.shares[q.Name]
		if byRes == nil {
			byRes = map[string][]float64{}
			h.shares[q.Name] = byRes
		}
		seen[q.Name] = map[string]bool{}
		for _, r := range q.Resources {
			if r.ShareOf == "" {
				continue
			}
			seen[q.Name][r.Resource] = true
			byRes[r.Resource] = append(trim(byRes[r.Resource], drop, n-1), r.Share)
		}
	}
	// Series not sampled this time get a gap; a queue with none left is
	// forgotten.
	for q, byRes := range h.shares {
		for r, s := range byRes {
			if seen[q][r] {
				continue
			}
			s = append(trim(s, drop, n-1), -1)
			if gapOnly(s) {
				delete(byRes, r)
				continue
			}
			byRes[r] = s
		}
		if len(byRes) == 0 {
			delete(h.shares, q)
		}
	}
}

// trim drops the oldest sample when the history is full, and pads a
// series that started late with gaps so that it has want samples.
func trim(s []float64, drop, want int) []float64 {
	if drop > 0 && len(s) > 0 {
		s = s[1:]
	}
	for len(s) < want {
		s = append([]float64{-1}, s...)
	}
	return s
}

func gapOnly(s []float64) bool {
	for _, v := range s {
		if v >= 0 {
			return false
		}
	}
	return true
}

// Series is one queue's shares over time.
type Series struct {
	Queue string      `json:"queue"`
	Times []time.Time `json:"times"`
	// Shares maps a resource to one share per time; -1 is a gap.
	Shares map[string][]float64 `json:"shares"`
}

// Series returns a queue's shares over the samples held.
func (h *History) Series(queue string) Series {
	out := Series{Queue: queue, Times: append([]time.Time(nil), h.times...), Shares: map[string][]float64{}}
	for r, s := range h.shares[queue] {
		out.Shares[r] = append([]float64(nil), s...)
	}
	return out
}
