package volcano

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Volcano files write argument values as YAML scalars of whatever type came
// to hand: 10, "10", 1.0 and "1.0" all occur for the same key. The helpers
// below accept a number or a string holding one, and reject anything else
// with an error naming the key.

// display renders a value for an error message.
func display(v any) any {
	switch v := v.(type) {
	case json.Number:
		return v.String()
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		return v.String(), true
	case string:
		return strings.TrimSpace(v), true
	}
	return "", false
}

func toInt32(v any, path *field.Path) (int32, *field.Error) {
	s, ok := scalarText(v)
	if ok {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil {
			return int32(n), nil
		}
		// 2.0 is an integer too.
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
			return int32(f), nil
		}
	}
	return 0, field.Invalid(path, display(v), "must be an integer")
}

func toFloat(v any, path *field.Path) (float64, *field.Error) {
	if s, ok := scalarText(v); ok {
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, nil
		}
	}
	return 0, field.Invalid(path, display(v), "must be a number")
}

func toBool(v any, path *field.Path) (bool, *field.Error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b, nil
		}
	}
	return false, field.Invalid(path, display(v), "must be true or false")
}

func toString(v any, path *field.Path) (string, *field.Error) {
	if s, ok := scalarText(v); ok {
		return s, nil
	}
	return "", field.Invalid(path, display(v), "must be a string")
}

// toSeconds reads a whole number of seconds.
func toSeconds(v any, path *field.Path) (time.Duration, *field.Error) {
	s, ok := scalarText(v)
	if ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n <= math.MaxInt64/int64(time.Second) {
			return time.Duration(n) * time.Second, nil
		}
	}
	return 0, field.Invalid(path, display(v), "must be a whole number of seconds")
}

// toDuration reads a Go duration such as "30s"; a bare number is seconds.
func toDuration(v any, path *field.Path) (time.Duration, *field.Error) {
	s, ok := scalarText(v)
	if ok {
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n <= math.MaxInt64/int64(time.Second) {
			return time.Duration(n) * time.Second, nil
		}
	}
	return 0, field.Invalid(path, display(v), `must be a duration such as "30s"`)
}

// toNames reads a list of names: a comma-separated string, as Volcano
// writes it, or a YAML list. Empty entries are skipped, as Volcano does.
func toNames(v any, path *field.Path) ([]string, *field.Error) {
	var parts []string
	switch v := v.(type) {
	case string:
		parts = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, field.Invalid(path, display(v), "must be a comma-separated list of names")
			}
			parts = append(parts, s)
		}
	default:
		return nil, field.Invalid(path, display(v), "must be a comma-separated list of names")
	}
	var names []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			names = append(names, p)
		}
	}
	return names, nil
}

func toMap(v any, path *field.Path) (map[string]any, *field.Error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, field.Invalid(path, display(v), "must be a mapping")
	}
	return m, nil
}

func toList(v any, path *field.Path) ([]any, *field.Error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, field.Invalid(path, display(v), "must be a list")
	}
	return l, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func errorf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
