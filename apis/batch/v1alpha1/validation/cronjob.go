package validation

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// MaxCronJobNameLength leaves room for the "-<minutes since 1970>" suffix
// of the Jobs a CronJob creates within the 63 characters of a Job's name.
const MaxCronJobNameLength = 52 // like Kubernetes' CronJobs

// longestRunSuffix is the longest suffix a CronJob adds to its Jobs' names
// until the year 2160 (minutes since 1970).
const longestRunSuffix = "-99999999"

// ParseSchedule reads a cron schedule (five fields, or a descriptor such as
// @hourly) in a time zone ("" is UTC).
func ParseSchedule(schedule, timeZone string) (cron.Schedule, error) {
	if strings.Contains(schedule, "TZ=") {
		return nil, fmt.Errorf("a time zone in the schedule is not supported: set spec.timeZone")
	}
	if timeZone != "" {
		if _, err := time.LoadLocation(timeZone); err != nil {
			return nil, fmt.Errorf("unknown time zone %q", timeZone)
		}
		schedule = "CRON_TZ=" + timeZone + " " + schedule
	}
	return cron.ParseStandard(schedule)
}

// ValidateCronJob checks a CronJob: its name leaves room for its Jobs',
// its schedule and time zone parse, its numbers are not negative, and its
// Job template is a valid Job spec.
func ValidateCronJob(cj *batchv1alpha1.CronJob) field.ErrorList {
	var errs field.ErrorList
	if n := cj.Name; n != "" {
		namePath := field.NewPath("metadata", "name")
		if len(n) > MaxCronJobNameLength {
			errs = append(errs, field.TooLong(namePath, n, MaxCronJobNameLength))
		}
		for _, msg := range utilvalidation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(namePath, n, msg))
		}
	}
	specPath := field.NewPath("spec")
	spec := &cj.Spec
	tz := ""
	if spec.TimeZone != nil {
		tz = *spec.TimeZone
		if _, err := time.LoadLocation(tz); err != nil || tz == "" {
			errs = append(errs, field.Invalid(specPath.Child("timeZone"), tz, "not a time zone of the IANA database (e.g. Europe/Berlin, UTC)"))
			tz = ""
		}
	}
	if strings.TrimSpace(spec.Schedule) == "" {
		errs = append(errs, field.Required(specPath.Child("schedule"), "a cron schedule, e.g. \"*/5 * * * *\" or @hourly"))
	} else if _, err := ParseSchedule(spec.Schedule, tz); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("schedule"), spec.Schedule, err.Error()))
	}
	switch spec.ConcurrencyPolicy {
	case "", batchv1alpha1.AllowConcurrent, batchv1alpha1.ForbidConcurrent, batchv1alpha1.ReplaceConcurrent:
	default:
		errs = append(errs, field.NotSupported(specPath.Child("concurrencyPolicy"), spec.ConcurrencyPolicy,
			[]batchv1alpha1.ConcurrencyPolicy{batchv1alpha1.AllowConcurrent, batchv1alpha1.ForbidConcurrent, batchv1alpha1.ReplaceConcurrent}))
	}
	if d := spec.StartingDeadlineSeconds; d != nil && *d < 0 {
		errs = append(errs, field.Invalid(specPath.Child("startingDeadlineSeconds"), *d, "must be greater than or equal to 0"))
	}
	for _, l := range []struct {
		name  string
		limit *int32
	}{{"successfulJobsHistoryLimit", spec.SuccessfulJobsHistoryLimit}, {"failedJobsHistoryLimit", spec.FailedJobsHistoryLimit}} {
		if l.limit != nil && *l.limit < 0 {
			errs = append(errs, field.Invalid(specPath.Child(l.name), *l.limit, "must be greater than or equal to 0"))
		}
	}
	errs = append(errs, validateJobSpec(&spec.JobTemplate.Spec, cj.Name+longestRunSuffix, specPath.Child("jobTemplate", "spec"))...)
	return errs
}
