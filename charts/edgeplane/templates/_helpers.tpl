{{- define "edgeplane.labels" -}}
app.kubernetes.io/name: edgeplane
app.kubernetes.io/part-of: edgeplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "edgeplane.selector" -}}
app.kubernetes.io/name: edgeplane
app.kubernetes.io/component: manager
{{- end -}}

{{- define "edgeplane.hubSelector" -}}
app.kubernetes.io/name: edgeplane
app.kubernetes.io/component: hub
{{- end -}}

{{- define "edgeplane.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Whether the facade is also served through kube-apiserver: it needs TLS and auth kubernetes. */}}
{{- define "edgeplane.aggregated" -}}
{{- if and .Values.facade.enabled .Values.aggregation.enabled .Values.facade.tlsSecretName (eq .Values.facade.auth "kubernetes") }}true{{ end }}
{{- end }}
