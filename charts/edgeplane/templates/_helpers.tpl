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

{{- define "edgeplane.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
