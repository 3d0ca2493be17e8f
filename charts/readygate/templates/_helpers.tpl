{{/* The chart's name, shortened to 63 characters (a DNS label). */}}
{{- define "readygate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource names: the release, and the chart's name unless the release already contains it. */}}
{{- define "readygate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* What selects the release's pods; never changes once installed. */}}
{{- define "readygate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "readygate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels of every resource. */}}
{{- define "readygate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "readygate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: readygate
readygate.dev/mode: {{ .Values.mode }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "readygate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "readygate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "readygate.image" -}}
{{- printf "%s:%s" .Values.readygate.image.repository (default .Chart.AppVersion .Values.readygate.image.tag) }}
{{- end }}

{{/* Where the engine and readygate meet: paths inside both containers. */}}
{{- define "readygate.paths.logs" -}}/var/log/vllm{{- end }}
{{- define "readygate.paths.sockets" -}}/var/run/vllm-weight-cache{{- end }}
{{- define "readygate.paths.snapshot" -}}/var/lib/vllm/snapshot{{- end }}
{{- define "readygate.paths.snapshotView" -}}/var/lib/vllm/snapshot-view{{- end }}
{{- define "readygate.paths.state" -}}/var/lib/readygate{{- end }}
{{- define "readygate.paths.config" -}}/etc/readygate{{- end }}
{{- define "readygate.paths.apiKey" -}}/var/run/secrets/readygate/engine-api-key{{- end }}

{{/* readygate's application.yaml: what the chart knows, with .Values.readygate.config merged over it. */}}
{{- define "readygate.config" -}}
{{- $engine := dict "base-url" (printf "http://127.0.0.1:%d" (int .Values.engine.port)) }}
{{- if .Values.engine.apiKey.secretName }}
{{- $_ := set $engine "api-key-file" (printf "%s/%s" (include "readygate.paths.apiKey" .) .Values.engine.apiKey.secretKey) }}
{{- end }}
{{- $evidence := dict "engine-log" (printf "%s/engine.log" (include "readygate.paths.logs" .)) }}
{{- $_ := set $evidence "engine-container-file" (printf "%s/engine-container.json" (include "readygate.paths.logs" .)) }}
{{- if eq .Values.mode "preload" }}
{{- $_ := set $evidence "daemon-log" (printf "%s/daemon.log" (include "readygate.paths.logs" .)) }}
{{- $_ := set $evidence "daemon-health-url" (printf "http://127.0.0.1:%d/health" (int .Values.preload.healthPort)) }}
{{- $_ := set $evidence "daemon-socket-dir" (include "readygate.paths.sockets" .) }}
{{- end }}
{{- if eq .Values.mode "snapshot" }}
{{- $_ := set $evidence "snapshot-dir" (include "readygate.paths.snapshotView" .) }}
{{- end }}
{{- $restart := dict "readiness-objectives" .Values.readygate.readinessObjectives }}
{{- $readygate := dict "engine" $engine "state-dir" (include "readygate.paths.state" .) "evidence" $evidence "restart" $restart }}
{{- if .Values.readygate.gpu.enabled }}
{{- $_ := set $readygate "gpu" (dict "nvidia-smi" .Values.readygate.gpu.nvidiaSmi) }}
{{- end }}
{{- if .Values.gateway.enabled }}
{{- $_ := set $readygate "gateway" (dict "enabled" true "port" (int .Values.gateway.port) "drain-timeout" (printf "%ds" (int .Values.gateway.drainSeconds)) "hold" .Values.gateway.hold "retry-before-first-byte" .Values.gateway.retryBeforeFirstByte) }}
{{- end }}
{{- $merged := mergeOverwrite $readygate (deepCopy .Values.readygate.config) }}
{{- $server := dict "port" (int .Values.readygate.port) }}
{{- with .Values.readygate.listenAddress }}
{{- $_ := set $server "address" . }}
{{- end }}
{{- toYaml (dict "readygate" $merged "server" $server) }}
{{- end }}

{{/* vllm serve's arguments in this mode (the model first). */}}
{{- define "readygate.serveArgs" -}}
{{- $args := list .Values.engine.model "--host" "0.0.0.0" "--port" (toString .Values.engine.port) }}
{{- if eq .Values.mode "preload" }}
{{- $loader := dict "socket_dir" (include "readygate.paths.sockets" .) "mode" .Values.preload.loadMode "fallback" .Values.preload.fallback }}
{{- $args = concat $args (list "--load-format" "ipc_cache" "--model-loader-extra-config" (toJson $loader)) }}
{{- end }}
{{- toJson (concat $args .Values.engine.args) }}
{{- end }}

{{/*
A canary analysis query of files/rollout-queries.yaml with one flavour's selectors (argo or flagger), as the analysis
controller runs it. Called with (dict "root" $ "file" <the file, parsed> "query" <a query> "flavour" "argo").
*/}}
{{- define "readygate.rolloutQuery" -}}
{{- $selectors := get .file.selectors .flavour }}
{{- .query.expr
  | replace "$verified" .file.verified
  | replace "$canary" $selectors.canary
  | replace "$stable" $selectors.stable
  | replace "$namespace" .root.Release.Namespace
  | replace "$maxLatencyRatio" (toString .root.Values.rollout.maxLatencyRatio) }}
{{- end }}

{{/*
What the ServiceMonitor and the PodMonitor add to every scraped series: Argo Rollouts' pod-template hash, which the
canary analysis (files/rollout-queries.yaml) tells the canary's pods from the stable ones by. Pods without the label
get none.
*/}}
{{- define "readygate.monitorRelabelings" -}}
- action: replace
  sourceLabels: [__meta_kubernetes_pod_label_rollouts_pod_template_hash]
  regex: (.+)
  targetLabel: rollouts_pod_template_hash
{{- end }}
