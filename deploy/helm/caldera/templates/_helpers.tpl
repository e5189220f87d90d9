{{/*
caldera.image: the image of a component, from its basic.<key>_image_name,
with caldera.image_digests.<key> when set and the tag is the chart's own
(basic.image_tag_version empty: a digest names that version's image).
  include "caldera.image" (list . "scheduler")
*/}}
{{- define "caldera.image" -}}
{{- $root := index . 0 -}}
{{- $name := index $root.Values.basic (printf "%s_image_name" (index . 1)) -}}
{{- $tag := $root.Values.basic.image_tag_version | default $root.Chart.AppVersion -}}
{{- /* A digest names the chart's own version: another tag drops it. */ -}}
{{- $digest := "" -}}
{{- if not $root.Values.basic.image_tag_version -}}
{{- $digest = index ($root.Values.caldera.image_digests | default dict) (index . 1) | default "" -}}
{{- end -}}
{{- if $root.Values.basic.image_registry -}}
{{ $root.Values.basic.image_registry }}/{{ $name }}:{{ $tag }}
{{- else -}}
{{ $name }}:{{ $tag }}
{{- end -}}
{{- with $digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
caldera.labels: the labels of a component's objects.
  include "caldera.labels" (list . "caldera-scheduler")
*/}}
{{- define "caldera.labels" -}}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/part-of: caldera
{{- with (index . 0).Values.custom.common_labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
caldera.commonLabels: common_labels alone, for objects of no one component.
*/}}
{{- define "caldera.commonLabels" -}}
{{- with .Values.custom.common_labels -}}
labels:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
caldera.pick: custom.<component>_<what>, else custom.default_<what> (or
custom.default_<default>, given as a fourth argument).
  include "caldera.pick" (list . "scheduler" "affinity")
  include "caldera.pick" (list . "scheduler" "main_csc" "csc")
*/}}
{{- define "caldera.pick" -}}
{{- $c := (index . 0).Values.custom -}}
{{- $d := index . (sub (len .) 1) -}}
{{- $v := index $c (printf "%s_%s" (index . 1) (index . 2)) | default (index $c (printf "default_%s" $d)) -}}
{{- with $v }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/*
caldera.placement: a pod's affinity, tolerations and nodeSelector.
  include "caldera.placement" (list . "scheduler")
*/}}
{{- define "caldera.placement" -}}
{{- $root := index . 0 -}}
{{- $c := index . 1 -}}
{{- with include "caldera.pick" (list $root $c "affinity") }}
affinity:
  {{- . | nindent 2 }}
{{- end }}
{{- with include "caldera.pick" (list $root $c "tolerations") }}
tolerations:
  {{- . | nindent 2 }}
{{- end }}
{{- with include "caldera.pick" (list $root $c "ns") }}
nodeSelector:
  {{- . | nindent 2 }}
{{- end }}
{{- with $root.Values.basic.image_pull_secret }}
imagePullSecrets:
  - name: {{ . }}
{{- end }}
{{- end -}}

{{/*
caldera.logLevel: the --v flag of a component, when its *_log_level is set.
*/}}
{{- define "caldera.logLevel" -}}
{{- $l := index (index . 0).Values.custom (printf "%s_log_level" (index . 1)) -}}
{{- if not (kindIs "invalid" $l) -}}
- --v={{ $l }}
{{- end -}}
{{- end -}}

{{/*
caldera.schedulerNames: a --scheduler-name flag per custom.scheduler_name
(a name, or a list of them).
*/}}
{{- define "caldera.schedulerNames" -}}
{{- with .Values.custom.scheduler_name -}}
{{- range $i, $n := (kindIs "slice" . | ternary . (list .)) -}}
{{ if $i }}{{ "\n" }}{{ end }}- --scheduler-name={{ $n }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
caldera.replicas: "2 replicas", "1 replica".
*/}}
{{- define "caldera.replicas" -}}
{{ . }} {{ if eq (int .) 1 }}replica{{ else }}replicas{{ end }}
{{- end -}}
