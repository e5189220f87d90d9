{{/*
calderaGlobal.subjects: caldera-global's identity as a binding's subjects.
*/}}
{{- define "calderaGlobal.subjects" }}
subjects:
  {{- if eq .Values.identity.kind "ServiceAccount" }}
  - kind: ServiceAccount
    name: {{ .Values.identity.name }}
    namespace: {{ required "identity.namespace is needed for a ServiceAccount" .Values.identity.namespace }}
  {{- else }}
  - apiGroup: rbac.authorization.k8s.io
    kind: {{ .Values.identity.kind }}
    name: {{ .Values.identity.name }}
  {{- end }}
{{- end }}
