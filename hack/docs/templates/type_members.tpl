{{- /* crd-ref-docs v0.3.0's markdown template (Apache-2.0, Elasticsearch B.V.), with "fieldDoc" in place of markdownRenderFieldDoc: GitHub would drop <words> as HTML tags, and shows the braces it escapes inside code. */ -}}
{{- define "type_members" -}}
{{- $field := . -}}
{{- if eq $field.Name "metadata" -}}
Refer to Kubernetes API documentation for fields of `metadata`.
{{- else -}}
{{ template "fieldDoc" $field.Doc }}
{{- end -}}
{{- end -}}

{{- /* fieldDoc is a doc comment in a table cell: < as &lt;, | escaped, a line break as <br />. */ -}}
{{- define "fieldDoc" -}}
{{ . | replace "<" "&lt;" | replace "|" "\\|" | replace "\n" "<br />" | replace "<br /><br />" "<br />" }}
{{- end -}}

{{- /* validation is a field's validation markers in a table cell, a marker without a value (Optional: {}) as its name. */ -}}
{{- define "validation" -}}
{{ range . -}}
{{ . | trimSuffix ": {}" | replace "|" "\\|" }} <br />
{{- end }}
{{- end -}}
