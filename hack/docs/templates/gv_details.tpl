{{- /* crd-ref-docs v0.3.0's markdown template (Apache-2.0, Elasticsearch B.V.): --templates-dir takes every template from one directory; blank lines around the list, as Markdown lint asks. */ -}}
{{- define "gvDetails" -}}
{{- $gv := . -}}

## {{ $gv.GroupVersionString }}

{{ $gv.Doc }}

{{- if $gv.Kinds  }}
### Resource Types

{{ range $gv.SortedKinds -}}
- {{ $gv.TypeForKind . | markdownRenderTypeLink }}
{{ end }}
{{ end }}

{{ range $gv.SortedTypes }}
{{ template "type" . }}
{{ end }}

{{- end -}}
