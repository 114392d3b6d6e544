{{- /* crd-ref-docs v0.3.0's markdown template (Apache-2.0, Elasticsearch B.V.), with the doc comments and validation of type_members.tpl. */ -}}
{{- define "type" -}}
{{- $type := . -}}
{{- if markdownShouldRenderType $type -}}

#### {{ $type.Name }}

{{ if $type.IsAlias }}_Underlying type:_ _{{ markdownRenderTypeLink $type.UnderlyingType  }}_{{ end }}

{{ $type.Doc | replace "<" "&lt;" }}

{{ if $type.Validation -}}
_Validation:_

{{ range $type.Validation -}}
- {{ . }}
{{ end }}
{{- end }}

{{ if $type.References -}}
_Appears in:_

{{ range $type.SortedReferences -}}
- {{ markdownRenderTypeLink . }}
{{ end }}
{{- end }}

{{ if $type.Members -}}
| Field | Description | Default | Validation |
| --- | --- | --- | --- |
{{ if $type.GVK -}}
| `apiVersion` _string_ | `{{ $type.GVK.Group }}/{{ $type.GVK.Version }}` | | |
| `kind` _string_ | `{{ $type.GVK.Kind }}` | | |
{{ end -}}

{{ range $type.Members -}}
| `{{ .Name  }}` _{{ markdownRenderType .Type }}_ | {{ template "type_members" . }} | {{ markdownRenderDefault .Default }} | {{ template "validation" .Validation }} |
{{ end -}}

{{ end -}}

{{ if $type.EnumValues -}} 
| Field | Description |
| --- | --- |
{{ range $type.EnumValues -}}
| `{{ .Name }}` | {{ template "fieldDoc" .Doc }} |
{{ end -}}
{{ end -}}


{{- end -}}
{{- end -}}
