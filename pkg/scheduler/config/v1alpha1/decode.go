package v1alpha1

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// Decode decodes a configuration document given as JSON, strictly: unknown
// and duplicate fields are errors that name the field, field names are
// case-sensitive, and apiVersion and kind must be this package's. It neither
// defaults nor validates. When the only errors are unknown or duplicate
// fields, the rest of the document is still decoded and returned, so that
// callers can report further problems at once.
func Decode(data []byte) (*SchedulerConfiguration, field.ErrorList) {
	cfg := &SchedulerConfiguration{}
	errs, ok := decodeStrictPartial(data, cfg, nil)
	if !ok {
		return nil, errs
	}
	if want := SchemeGroupVersion.String(); cfg.APIVersion != want {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), cfg.APIVersion, []string{want}))
	}
	if cfg.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), cfg.Kind, []string{Kind}))
	}
	return cfg, errs
}

// decodeStrict unmarshals JSON data into the struct into. Field paths in
// the errors are relative to path.
func decodeStrict(data []byte, into any, path *field.Path) field.ErrorList {
	errs, _ := decodeStrictPartial(data, into, path)
	return errs
}

// decodeStrictPartial is decodeStrict that also tells whether into was
// decoded apart from unknown and duplicate fields.
func decodeStrictPartial(data []byte, into any, path *field.Path) (field.ErrorList, bool) {
	strictErrs, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		return field.ErrorList{&field.Error{
			Type:     field.ErrorTypeInvalid,
			Field:    path.String(),
			BadValue: field.OmitValueType{},
			Detail:   describeDecodeError(err),
		}}, false
	}
	var errs field.ErrorList
	for _, se := range strictErrs {
		var fe kjson.FieldError
		if !errors.As(se, &fe) {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, se.Error()))
			continue
		}
		at := joinPath(path, fe.FieldPath())
		if strings.HasPrefix(se.Error(), "duplicate field") {
			errs = append(errs, &field.Error{Type: field.ErrorTypeDuplicate, Field: at, BadValue: field.OmitValueType{}, Detail: "field given more than once"})
			continue
		}
		detail := "unknown field"
		if s, ok := Suggest(lastSegment(fe.FieldPath()), jsonNames(reflect.TypeOf(into))); ok {
			detail += fmt.Sprintf("; did you mean %q?", s)
		}
		errs = append(errs, &field.Error{Type: field.ErrorTypeForbidden, Field: at, BadValue: "", Detail: detail})
	}
	return errs, true
}

// describeDecodeError turns a syntax or type error into a sentence.
func describeDecodeError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

func joinPath(root *field.Path, rel string) string {
	if root == nil {
		return rel
	}
	if rel == "" {
		return root.String()
	}
	return root.String() + "." + rel
}

// lastSegment returns the last field name of a dotted path such as
// "tiers[0].plugins[1].enabledJobOrder".
func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}

// jsonNames lists the JSON field names found anywhere in the type t, for
// suggesting the intended field when an unknown one is given.
func jsonNames(t reflect.Type) []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				names = append(names, name)
			}
			walk(f.Type)
		}
	}
	walk(t)
	return names
}
