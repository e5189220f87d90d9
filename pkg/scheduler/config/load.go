// Package config loads caldera-scheduler's configuration file. The file is
// either Caldera's own format (scheduler.config.caldera.sh/v1alpha1, see
// package v1alpha1) or a Volcano volcano-scheduler.conf, which is translated
// (see package volcano). Either way the result is the same defaulted,
// validated v1alpha1.SchedulerConfiguration.
package config

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/config/volcano"
)

// Format is the format a configuration file was written in.
type Format string

// Formats.
const (
	// CalderaFormat is scheduler.config.caldera.sh/v1alpha1, recognised by
	// its apiVersion and kind.
	CalderaFormat Format = "Caldera"
	// VolcanoFormat is Volcano's volcano-scheduler.conf: no apiVersion or
	// kind, actions as one comma-separated string.
	VolcanoFormat Format = "Volcano"
)

// InvalidError lists every problem found in a configuration file. Field
// paths are those of the file as written: for a Volcano file, Volcano's keys.
type InvalidError struct {
	Format Format
	Errs   field.ErrorList
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid %s scheduler configuration:", e.Format)
	for _, err := range e.Errs {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// LoadFile reads and loads the configuration file at path.
func LoadFile(path string, reg v1alpha1.Registry) (*v1alpha1.SchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scheduler configuration: %w", err)
	}
	cfg, err := Load(data, reg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Load decodes a configuration in YAML or JSON, in either format, strictly;
// applies defaults; and validates the result against the plugins and actions
// reg implements. Problems are reported together in an *InvalidError.
func Load(data []byte, reg v1alpha1.Registry) (*v1alpha1.SchedulerConfiguration, error) {
	// YAMLToJSONStrict rejects duplicate keys; JSON is YAML, so this reads both.
	doc, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration is not valid YAML or JSON: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(doc, &probe); err != nil || probe == nil {
		return nil, fmt.Errorf("scheduler configuration must be a YAML or JSON mapping")
	}

	format := VolcanoFormat
	_, hasAPIVersion := probe["apiVersion"]
	_, hasKind := probe["kind"]
	if hasAPIVersion || hasKind {
		format = CalderaFormat
	}

	var (
		cfg     *v1alpha1.SchedulerConfiguration
		origins volcano.Origins
		errs    field.ErrorList
	)
	switch format {
	case CalderaFormat:
		cfg, errs = v1alpha1.Decode(doc)
	case VolcanoFormat:
		cfg, origins, errs = volcano.Translate(doc)
	}
	if cfg == nil {
		return nil, &InvalidError{Format: format, Errs: errs}
	}
	// Validate what did decode too, so that one run reports every problem.
	v1alpha1.SetDefaults_SchedulerConfiguration(cfg)
	errs = append(errs, origins.Remap(v1alpha1.ValidateSchedulerConfiguration(cfg, reg))...)
	if len(errs) > 0 {
		return nil, &InvalidError{Format: format, Errs: errs}
	}
	return cfg, nil
}
