{{/* The release's name, cut to the 63 characters of a DNS label. */}}
{{- define "toxgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toxgate.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "toxgate.labels" -}}
{{ include "toxgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* An environment variable read from a key of a Secret. */}}
{{- define "toxgate.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end -}}

{{/* The public URL: publicURL, else the first ingress host. */}}
{{- define "toxgate.publicURL" -}}
{{- if .Values.publicURL -}}
{{- .Values.publicURL -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) (index .Values.ingress.hosts 0).host -}}
{{- end -}}
{{- end -}}

{{/*
The checks of a combination of values that cannot work; each stops the
rendering with what to change.
*/}}
{{- define "toxgate.validate" -}}
{{- $v := .Values -}}
{{- if not (has $v.store.type (list "sqlite" "postgresql" "mongodb")) -}}
{{- fail (printf "store.type %q: must be sqlite, postgresql or mongodb" $v.store.type) -}}
{{- end -}}
{{- if and (eq $v.store.type "sqlite") (gt (int $v.replicaCount) 1) -}}
{{- fail "store.type sqlite keeps the store on one pod's volume: replicaCount must be 1 (several gateways need store.type postgresql or mongodb)" -}}
{{- end -}}
{{- if and (eq $v.store.type "postgresql") (not $v.store.postgresql.existingSecret) -}}
{{- fail "store.type postgresql needs store.postgresql.existingSecret: a Secret whose key store.postgresql.key holds the PostgreSQL URL" -}}
{{- end -}}
{{- if and (eq $v.store.type "mongodb") (not $v.store.mongodb.existingSecret) -}}
{{- fail "store.type mongodb needs store.mongodb.existingSecret: a Secret whose key store.mongodb.key holds the MongoDB URI" -}}
{{- end -}}
{{- if not (has $v.files.backend (list "dir" "s3" "mongodb")) -}}
{{- fail (printf "files.backend %q: must be dir, s3 or mongodb" $v.files.backend) -}}
{{- end -}}
{{- if and (eq $v.files.backend "dir") (gt (int $v.replicaCount) 1) -}}
{{- fail "files.backend dir keeps files on one pod's volume: several gateways need files.backend s3 or mongodb" -}}
{{- end -}}
{{- if and (eq $v.files.backend "s3") (not $v.files.s3.bucket) -}}
{{- fail "files.backend s3 needs files.s3.bucket" -}}
{{- end -}}
{{- if and (gt (int $v.replicaCount) 1) (ne $v.store.type "postgresql") (not $v.datastore.existingSecret) -}}
{{- fail "several gateways need a shared DataStore: datastore.existingSecret (a PostgreSQL URL), or store.type postgresql, whose server then holds it" -}}
{{- end -}}
{{- end -}}
