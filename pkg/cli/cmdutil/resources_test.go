package cmdutil

import (
	"strings"
	"testing"
)

func TestParseResources(t *testing.T) {
	got, err := ParseResources("requests", "cpu=4, memory=16Gi,nvidia.com/gpu=8")
	if err != nil {
		t.Fatal(err)
	}
	if s := Resources(got); s != "cpu=4,memory=16Gi,nvidia.com/gpu=8" {
		t.Errorf("parsed %s", s)
	}
	for in, want := range map[string]string{
		"cpu":                 `--requests "cpu": "cpu" is not name=quantity`,
		"cpu=four":            `--requests "cpu=four": cpu: quantities must match`,
		"cpu=6E1000000000000": `--requests "cpu=6E1000000000000": cpu: quantity "6E1000000000000": the exponent is beyond 100`,
	} {
		if _, err := ParseResources("requests", in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", in, err, want)
		}
	}
}
