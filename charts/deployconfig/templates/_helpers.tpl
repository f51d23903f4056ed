{{/* The name of the controller's objects: dc-controller, as config/default has it. */}}
{{- define "deployconfig.fullname" -}}
{{- default "dc-controller" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: the same as config/default's, so that a Deployment installed from it can be taken over. */}}
{{- define "deployconfig.selectorLabels" -}}
app.kubernetes.io/name: {{ include "deployconfig.fullname" . }}
{{- end -}}

{{/* Labels of every object: the selector labels and Helm's. */}}
{{- define "deployconfig.labels" -}}
{{ include "deployconfig.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: deployconfig
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* image REPOSITORY TAG: the reference, with the chart's appVersion when TAG is empty. */}}
{{- define "deployconfig.image" -}}
{{- $root := index . 0 -}}
{{- $image := index . 1 -}}
{{- printf "%s:%s" $image.repository (default $root.Chart.AppVersion $image.tag) -}}
{{- end -}}
