package main

import (
	"strings"
	"testing"
)

const d1 = "sha256:0a4796e4a32190f4f9575e9068633c0258bfb1746e6721e60bc6bd7081fb4d6a"

func TestParse(t *testing.T) {
	got, err := Parse("ghcr.io/caldera-sh/caldera-scheduler:v0.1.0@" + d1 + "\n\n")
	if err != nil || got["caldera-scheduler"] != d1 || len(got) != 1 {
		t.Fatalf("Parse: %v %v", got, err)
	}
	for _, bad := range []string{"ghcr.io/x:v1", "ghcr.io/x:v1@sha256:abc", "x@md5:" + strings.Repeat("0", 64)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSet(t *testing.T) {
	values := `caldera:
  # the digests
  image_digests:
    scheduler: ""
    # a comment
    agent: ""
  other:
    scheduler: "keep"
`
	got, err := Set(values, []Setting{{"image_digests", "agent", d1}, {"image_digests", "scheduler", d1}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`    scheduler: ""`, `    scheduler: "`+d1+`"`, `    agent: ""`, `    agent: "`+d1+`"`).Replace(values)
	if got != want {
		t.Errorf("Set:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Set(values, []Setting{{"image_digests", "webhook", d1}}); err == nil || !strings.Contains(err.Error(), "no webhook under image_digests") {
		t.Errorf("a key not there: %v", err)
	}
	// A key of the same name outside the block is not taken for it.
	if _, err := Set("image_digests:\n  a: x\nother:\n  webhook: y\n", []Setting{{"image_digests", "webhook", d1}}); err == nil {
		t.Error("a key outside the block was set")
	}
}
