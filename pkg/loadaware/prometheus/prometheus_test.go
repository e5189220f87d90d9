package prometheus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/loadaware"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Percentages
		err        string
	}{
		{name: "a vector", body: `{"status":"success","data":{"resultType":"vector","result":[
			{"metric":{"instance":"node-a"},"value":[1764928800.5,"42.5"]},
			{"metric":{"instance":"node-b:9100"},"value":[1764928800.5,"7"]},
			{"metric":{},"value":[1764928800.5,"1"]}]}}`,
			want: Percentages{"node-a": 42.5, "node-b:9100": 7}},
		{name: "an error", body: `{"status":"error","errorType":"bad_data","error":"parse error at char 3"}`, err: "query failed: bad_data: parse error at char 3"},
		{name: "a matrix", body: `{"status":"success","data":{"resultType":"matrix","result":[]}}`, err: "the answer is a matrix, want a vector"},
		{name: "not a number", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"a"},"value":[1,"x"]}]}}`,
			err: `instance a: value "x": strconv.ParseFloat: parsing "x": invalid syntax`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsages(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	nodes := map[string]Capacity{"node-a": {CPU: 8000, Memory: 32 << 30}, "node-b": {CPU: 4000, Memory: 16 << 30}, "node-c": {CPU: 4000, Memory: 16 << 30}}
	cpu := Percentages{"node-a": 50, "node-b:9100": 150, "node-c": 10, "gone": 99}
	mem := Percentages{"node-a": 25, "node-b:9100": -3}
	got := Usages(cpu, mem, nodes, at)
	want := map[string]*loadaware.Usage{
		"node-a": {At: at, Window: Window, CPU: 4000, Memory: 8 << 30},
		// Out of range: clamped. node-c has no memory value: unknown.
		"node-b": {At: at, Window: Window, CPU: 4000, Memory: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
