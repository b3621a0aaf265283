{{/*
Names, labels and the values derived from others. values.schema.json has already checked each
value on its own; the checks here are the ones that involve two values at once.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "baton-worker.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The base name of every object: fullnameOverride, else `<release>-<name>`, or just the release name
when it already contains the chart name. 63 characters at most (a DNS label).
*/}}
{{- define "baton-worker.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "baton-worker.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* `<chart>-<version>` for the helm.sh/chart label. */}}
{{- define "baton-worker.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that pick this release's pods; they never change across upgrades. */}}
{{- define "baton-worker.selectorLabels" -}}
app.kubernetes.io/name: {{ include "baton-worker.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "baton-worker.labels" -}}
helm.sh/chart: {{ include "baton-worker.chart" . }}
{{ include "baton-worker.selectorLabels" . }}
app.kubernetes.io/version: {{ include "baton-worker.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: worker
app.kubernetes.io/part-of: baton
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The image tag: image.tag, else the chart's appVersion. */}}
{{- define "baton-worker.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "baton-worker.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "baton-worker.imageTag" .) -}}
{{- end -}}

{{/* The ServiceAccount the pods run as. */}}
{{- define "baton-worker.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "baton-worker.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret the chart creates for URLs given as plain values. */}}
{{- define "baton-worker.urlSecretName" -}}
{{- printf "%s-urls" (include "baton-worker.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* True (non-empty) when the chart has to create that Secret. */}}
{{- define "baton-worker.needsUrlSecret" -}}
{{- if or (not .Values.transport.existingSecret) (not .Values.store.existingSecret) -}}true{{- end -}}
{{- end -}}

{{/*
An env entry whose value comes from a Secret: the user's existingSecret, or the chart's own one.
Arguments: list of root context, env var name, the transport/store values, key in the chart's Secret.
*/}}
{{- define "baton-worker.urlEnv" -}}
{{- $root := index . 0 -}}
{{- $var := index . 1 -}}
{{- $conf := index . 2 -}}
{{- $ownKey := index . 3 -}}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      {{- if $conf.existingSecret }}
      name: {{ $conf.existingSecret }}
      key: {{ $conf.secretKey }}
      {{- else }}
      name: {{ include "baton-worker.urlSecretName" $root }}
      key: {{ $ownKey }}
      {{- end }}
{{- end -}}

{{/* Whether an autoscaler (the chart's HPA or KEDA's) owns the replica count. */}}
{{- define "baton-worker.autoscaled" -}}
{{- if or .Values.keda.enabled .Values.autoscaling.enabled -}}true{{- end -}}
{{- end -}}

{{/* The KEDA scaler: keda.trigger, else the one of transport.kind. */}}
{{- define "baton-worker.kedaTrigger" -}}
{{- if .Values.keda.trigger -}}
{{- .Values.keda.trigger -}}
{{- else -}}
{{- include "baton-worker.busTrigger" . -}}
{{- end -}}
{{- end -}}

{{/* The KEDA scaler that watches the bus of transport.kind. */}}
{{- define "baton-worker.busTrigger" -}}
{{- if eq .Values.transport.kind "kafka" -}}
kafka
{{- else if and (eq .Values.transport.kind "redis") .Values.keda.redis.sentinelAddresses -}}
redis-sentinel
{{- else if eq .Values.transport.kind "redis" -}}
redis
{{- else -}}
nats-jetstream
{{- end -}}
{{- end -}}

{{/*
The variable transport.prefix goes to, by transport.kind. On Redis the bus's keys are
`<prefix>-bus:*`, so that a Redis store on the same server keeps its default `baton:` keys apart
(the worker refuses a pair whose keys would meet: docs/redis-only.md).
*/}}
{{- define "baton-worker.prefixEnv" -}}
{{- if eq .Values.transport.kind "kafka" -}}
- name: BATON_KAFKA_PREFIX
  value: {{ .Values.transport.prefix | quote }}
{{- else if eq .Values.transport.kind "redis" -}}
- name: BATON_REDIS_BUS_PREFIX
  value: {{ printf "%s-bus" .Values.transport.prefix | quote }}
{{- else -}}
- name: BATON_NATS_PREFIX
  value: {{ .Values.transport.prefix | quote }}
{{- end -}}
{{- end -}}

{{/* Whole seconds of the worker's shutdown timeout, rounded up. */}}
{{- define "baton-worker.shutdownSeconds" -}}
{{- div (add (int64 .Values.worker.shutdownTimeoutMs) 999) 1000 -}}
{{- end -}}

{{/*
The pod's terminationGracePeriodSeconds. The kubelet's countdown starts before the preStop hook,
so the grace period has to cover the preStop sleep plus the worker's own shutdown limit; a value
given by hand is checked against that in "baton-worker.problems".
*/}}
{{- define "baton-worker.terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add (include "baton-worker.shutdownSeconds" . | int64) (int64 .Values.preStopSleepSeconds) (int64 .Values.terminationGraceMarginSeconds) -}}
{{- else -}}
{{- int64 .Values.terminationGracePeriodSeconds -}}
{{- end -}}
{{- end -}}

{{/*
Checks that involve more than one value (values.schema.json checks each value on its own). Renders
one line per problem, nothing when all is well; templates/validate.yaml turns them into a failure.
*/}}
{{- define "baton-worker.problems" -}}
{{- $p := list -}}
{{- $w := .Values.worker -}}
{{- if le (int64 $w.shutdownTimeoutMs) (int64 $w.drainTimeoutMs) -}}
{{- $p = append $p (printf "worker.shutdownTimeoutMs (%d) must be above worker.drainTimeoutMs (%d): the worker needs time after the drain to hand its runs off" (int64 $w.shutdownTimeoutMs) (int64 $w.drainTimeoutMs)) -}}
{{- end -}}
{{- if not (kindIs "invalid" .Values.terminationGracePeriodSeconds) -}}
{{- $needed := add (include "baton-worker.shutdownSeconds" . | int64) (int64 .Values.preStopSleepSeconds) -}}
{{- if le (int64 .Values.terminationGracePeriodSeconds) $needed -}}
{{- $p = append $p (printf "terminationGracePeriodSeconds (%d) must be above ceil(worker.shutdownTimeoutMs / 1000) + preStopSleepSeconds = %d, or the kubelet kills workers still handing off their runs; raise it or leave it null to have it computed" (int64 .Values.terminationGracePeriodSeconds) $needed) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.transport.existingSecret) (not .Values.transport.url) -}}
{{- $p = append $p "transport.url or transport.existingSecret is required: the bus URL (BATON_TRANSPORT_URL), e.g. nats://nats:4222" -}}
{{- end -}}
{{- if and (not .Values.store.existingSecret) (not .Values.store.url) -}}
{{- $p = append $p "store.url or store.existingSecret is required: the store URL (BATON_STORE_URL), e.g. redis://redis-master:6379" -}}
{{- end -}}
{{- if and .Values.transport.url (not .Values.transport.existingSecret) -}}
{{- $scheme := regexFind "^[a-z]+" .Values.transport.url -}}
{{- $kind := "nats" -}}
{{- if or (eq $scheme "kafka") (eq $scheme "kafkas") -}}{{- $kind = "kafka" -}}{{- end -}}
{{- if or (eq $scheme "redis") (eq $scheme "rediss") -}}{{- $kind = "redis" -}}{{- end -}}
{{- if ne $kind .Values.transport.kind -}}
{{- $p = append $p (printf "transport.url is a %s:// URL but transport.kind is %s; set transport.kind to %s" $scheme .Values.transport.kind $kind) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (not .Values.keda.enabled) -}}
{{- if gt (int64 .Values.autoscaling.minReplicas) (int64 .Values.autoscaling.maxReplicas) -}}
{{- $p = append $p (printf "autoscaling.minReplicas (%d) must not be above autoscaling.maxReplicas (%d)" (int64 .Values.autoscaling.minReplicas) (int64 .Values.autoscaling.maxReplicas)) -}}
{{- end -}}
{{- if and (kindIs "invalid" .Values.autoscaling.targetCPUUtilizationPercentage) (kindIs "invalid" .Values.autoscaling.targetMemoryUtilizationPercentage) -}}
{{- $p = append $p "autoscaling.enabled needs autoscaling.targetCPUUtilizationPercentage or autoscaling.targetMemoryUtilizationPercentage" -}}
{{- end -}}
{{- end -}}
{{- if .Values.keda.enabled -}}
{{- if gt (int64 .Values.keda.minReplicaCount) (int64 .Values.keda.maxReplicaCount) -}}
{{- $p = append $p (printf "keda.minReplicaCount (%d) must not be above keda.maxReplicaCount (%d)" (int64 .Values.keda.minReplicaCount) (int64 .Values.keda.maxReplicaCount)) -}}
{{- end -}}
{{- $trigger := include "baton-worker.kedaTrigger" . -}}
{{- $expected := include "baton-worker.busTrigger" . -}}
{{- if ne $trigger $expected -}}
{{- $p = append $p (printf "keda.trigger is %s but transport.kind is %s: the scaler must watch the bus the workers use; set keda.trigger to %s or leave it empty" $trigger .Values.transport.kind $expected) -}}
{{- else if and (eq $trigger "nats-jetstream") (not .Values.keda.nats.monitoringEndpoint) -}}
{{- $p = append $p "keda.nats.monitoringEndpoint is required for the nats-jetstream trigger: the NATS monitoring host:port, e.g. nats.nats.svc.cluster.local:8222" -}}
{{- else if and (eq $trigger "kafka") (not .Values.keda.kafka.bootstrapServers) -}}
{{- $p = append $p "keda.kafka.bootstrapServers is required for the kafka trigger: comma-separated brokers host:port, e.g. kafka.kafka.svc.cluster.local:9092" -}}
{{- else if and (eq $trigger "redis") (not .Values.keda.redis.address) -}}
{{- $p = append $p "keda.redis.address is required for the redis trigger: the Redis host:port of the bus, e.g. redis-master.redis.svc.cluster.local:6379 (behind Sentinel, set keda.redis.sentinelAddresses and keda.redis.sentinelMaster instead)" -}}
{{- else if and (eq $trigger "redis-sentinel") (not .Values.keda.redis.sentinelMaster) -}}
{{- $p = append $p "keda.redis.sentinelMaster is required with keda.redis.sentinelAddresses: the master name of the bus's redis+sentinel:// URL (its path), e.g. baton" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.otel.enabled (eq .Values.otel.tracesExporter "otlp") (not .Values.otel.endpoint) -}}
{{- $p = append $p "otel.endpoint is required when otel.enabled is true and otel.tracesExporter is otlp: the collector's OTLP URL (OTEL_EXPORTER_OTLP_ENDPOINT), e.g. http://otel-collector:4318" -}}
{{- end -}}
{{- if .Values.console.enabled -}}
{{- if not (or .Values.console.token .Values.console.existingSecret .Values.console.trustedHeader) -}}
{{- $p = append $p "console.enabled needs console.token, console.existingSecret or console.trustedHeader: the console listens beyond loopback in its pod and refuses to start without an access token or a trusted header (docs/console.md)" -}}
{{- end -}}
{{- if eq (int64 .Values.console.port) (int64 .Values.worker.httpPort) -}}
{{- $p = append $p (printf "console.port (%d) must differ from worker.httpPort" (int64 .Values.console.port)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled (not .Values.service.enabled) -}}
{{- $p = append $p "serviceMonitor.enabled needs service.enabled: the ServiceMonitor scrapes through the Service" -}}
{{- end -}}
{{- join "\n" $p -}}
{{- end -}}

{{/*
The standard OpenTelemetry SDK variables, only rendered when otel.enabled. The pod's identity comes
from the downward API and is referenced from OTEL_RESOURCE_ATTRIBUTES with $(VAR), which the kubelet
expands because those variables are defined first.
*/}}
{{- define "baton-worker.otelEnv" -}}
- name: K8S_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: K8S_NAMESPACE_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: K8S_NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: OTEL_SERVICE_NAME
  value: {{ default (include "baton-worker.fullname" .) .Values.otel.serviceName | quote }}
{{- $attrs := list "k8s.pod.name=$(K8S_POD_NAME)" "k8s.namespace.name=$(K8S_NAMESPACE_NAME)" "k8s.node.name=$(K8S_NODE_NAME)" }}
{{- range $key, $value := .Values.otel.resourceAttributes }}
{{- $attrs = append $attrs (printf "%s=%s" $key $value) }}
{{- end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attrs | quote }}
{{- with .Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.protocol }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.tracesExporter }}
- name: OTEL_TRACES_EXPORTER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.metricsExporter }}
- name: OTEL_METRICS_EXPORTER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.logsExporter }}
- name: OTEL_LOGS_EXPORTER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.tracesSampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.otel.tracesSamplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* True (non-empty) when the helm test Pod is rendered: it reaches the workers through the Service. */}}
{{- define "baton-worker.helmTestEnabled" -}}
{{- if and .Values.helmTest.enabled .Values.service.enabled -}}true{{- end -}}
{{- end -}}

{{/*
Labels of the helm test Pod. Its app.kubernetes.io/name differs from the workers' on purpose: with
the workers' selector labels the Pod would be counted by the PodDisruptionBudget and the
autoscaler as one of the fleet.
*/}}
{{- define "baton-worker.testSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-test" (include "baton-worker.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The console's objects: their own app.kubernetes.io/name (`<name>-console`), so no selector of the
worker fleet (Service, PodDisruptionBudget, autoscaler, NetworkPolicy) ever counts a console pod.
*/}}
{{- define "baton-worker.consoleName" -}}
{{- printf "%s-console" (include "baton-worker.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "baton-worker.consoleSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-console" (include "baton-worker.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "baton-worker.consoleLabels" -}}
helm.sh/chart: {{ include "baton-worker.chart" . }}
{{ include "baton-worker.consoleSelectorLabels" . }}
app.kubernetes.io/version: {{ include "baton-worker.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: console
app.kubernetes.io/part-of: baton
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret the chart creates for console.token. */}}
{{- define "baton-worker.consoleSecretName" -}}
{{- printf "%s-console" (include "baton-worker.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
