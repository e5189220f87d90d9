package validation_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	testingdd "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
	"github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
)

func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return out
}

func example(f *testing.F, name string) []byte {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "datadependency", name))
	if err != nil {
		f.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		f.Fatal(err)
	}
	return j
}

func marshal(f *testing.F, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzValidateDataSource decodes a DataSource, defaults it and validates it.
func FuzzValidateDataSource(f *testing.F) {
	f.Add(example(f, "datasource.yaml"))
	f.Add(marshal(f, testingdd.MakeDataSource("ds", "s", "t", "n").Clusters("East_1", "").Obj()))
	f.Add(marshal(f, testingdd.MakeDataSource("ds", "s", "t", "n").NoLocality().Obj()))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ds ddv1alpha1.DataSource
		if err := json.Unmarshal(data, &ds); err != nil {
			return
		}
		ddv1alpha1.SetDefaults_DataSource(&ds)
		again := ds.DeepCopy()
		ddv1alpha1.SetDefaults_DataSource(again)
		if !reflect.DeepEqual(&ds, again) {
			t.Fatal("SetDefaults_DataSource is not idempotent")
		}
		if a, b := summary(validation.ValidateDataSource(&ds)), summary(validation.ValidateDataSource(ds.DeepCopy())); !reflect.DeepEqual(a, b) {
			t.Fatalf("ValidateDataSource is not deterministic:\n%q\n%q", a, b)
		}
	})
}

// FuzzValidateDataSourceClaim decodes a DataSourceClaim, defaults it and
// validates it.
func FuzzValidateDataSourceClaim(f *testing.F) {
	f.Add(example(f, "datasourceclaim.yaml"))
	f.Add(marshal(f, testingdd.MakeDataSourceClaim("c", "ns", "s", "t", "n").Workload("apps/", "", "other", "Bad_Name").Obj()))
	f.Fuzz(func(t *testing.T, data []byte) {
		var dsc ddv1alpha1.DataSourceClaim
		if err := json.Unmarshal(data, &dsc); err != nil {
			return
		}
		ddv1alpha1.SetDefaults_DataSourceClaim(&dsc)
		again := dsc.DeepCopy()
		ddv1alpha1.SetDefaults_DataSourceClaim(again)
		if !reflect.DeepEqual(&dsc, again) {
			t.Fatal("SetDefaults_DataSourceClaim is not idempotent")
		}
		if a, b := summary(validation.ValidateDataSourceClaim(&dsc)), summary(validation.ValidateDataSourceClaim(dsc.DeepCopy())); !reflect.DeepEqual(a, b) {
			t.Fatalf("ValidateDataSourceClaim is not deterministic:\n%q\n%q", a, b)
		}
	})
}
