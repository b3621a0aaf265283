/**
 * Offline checks of helm/baton-worker: `helm lint` and `helm template` with the default values and
 * each file in helm/baton-worker/ci/, every rendered object validated against its Kubernetes (or
 * KEDA) schema, the settings the worker's shutdown and health depend on asserted one by one, and
 * bad values shown to fail with a message naming them. No cluster and no network are needed.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import { ENV } from '@baton/host';
import { OTEL_ENV } from '../../worker/src/telemetry.js';
import { alertRulesBlock, readOperationsDoc } from '../../worker/src/operations-doc.spec-helper.js';
import { CHART_DIR, type ChartInput, helmLint, helmTemplate } from './helm.js';
import { type ModelClass, validateStrictly } from './strict-validate.js';

const RELEASE = 'prod';
const NAMESPACE = 'workers';
const FULLNAME = 'prod-baton-worker'; // `<release>-<chart name>`

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
} & Record<string, unknown>;

/** A model class's schema check, strict: unknown fields fail too (strict-validate.ts). */
const strict =
  (model: ModelClass) =>
  (obj: K8sObject): void =>
    validateStrictly(model, obj, `${obj.kind} '${obj.metadata?.name}'`);

/** Schema validation per `apiVersion/kind`; anything the chart renders must be listed here. */
const VALIDATORS: Record<string, (obj: K8sObject) => void> = {
  'apps/v1/Deployment': strict(Deployment),
  'v1/Service': strict(Service),
  'v1/ServiceAccount': strict(ServiceAccount),
  'v1/Secret': strict(Secret),
  'v1/ConfigMap': strict(ConfigMap),
  'policy/v1/PodDisruptionBudget': strict(PodDisruptionBudget),
  'autoscaling/v2/HorizontalPodAutoscaler': strict(HorizontalPodAutoscaler),
  'keda.sh/v1alpha1/ScaledObject': strict(ScaledObject),
  'v1/Pod': strict(Pod),
  'networking.k8s.io/v1/NetworkPolicy': strict(NetworkPolicy),
  'networking.k8s.io/v1/Ingress': strict(Ingress),
  'monitoring.coreos.com/v1/ServiceMonitor': validateServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': validatePrometheusRule,
};

/** No model package for the Prometheus Operator CRDs is installed: check the fields that matter. */
function validateServiceMonitor(obj: K8sObject): void {
  const spec = obj['spec'] as {
    selector?: { matchLabels?: Record<string, string> };
    endpoints?: { port?: unknown; path?: unknown; interval?: unknown; scrapeTimeout?: unknown }[];
  };
  if (!spec || typeof spec !== 'object') throw new Error('ServiceMonitor has no spec');
  if (!spec.selector?.matchLabels || Object.keys(spec.selector.matchLabels).length === 0) {
    throw new Error('ServiceMonitor spec.selector.matchLabels is empty');
  }
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0)
    throw new Error('ServiceMonitor has no endpoints');
  for (const endpoint of spec.endpoints) {
    if (typeof endpoint.port !== 'string' || endpoint.port === '')
      throw new Error('ServiceMonitor endpoint needs a port name');
    if (typeof endpoint.path !== 'string' || !endpoint.path.startsWith('/'))
      throw new Error('ServiceMonitor endpoint path');
    for (const field of ['interval', 'scrapeTimeout'] as const) {
      const value = endpoint[field];
      if (value !== undefined && (typeof value !== 'string' || !/^\d+(ms|s|m|h)$/.test(value))) {
        throw new Error(`ServiceMonitor endpoint ${field} '${String(value)}' is not a duration`);
      }
    }
  }
}

/** The Prometheus Operator's PrometheusRule, checked field by field like the ServiceMonitor. */
function validatePrometheusRule(obj: K8sObject): void {
  const spec = obj['spec'] as
    { groups?: { name?: unknown; rules?: Record<string, unknown>[] }[] } | undefined;
  if (!Array.isArray(spec?.groups) || spec.groups.length === 0)
    throw new Error('PrometheusRule has no groups');
  for (const group of spec.groups) {
    if (typeof group.name !== 'string' || group.name === '')
      throw new Error('PrometheusRule group needs a name');
    if (!Array.isArray(group.rules) || group.rules.length === 0)
      throw new Error(`group ${group.name} has no rules`);
    for (const rule of group.rules) {
      const known = new Set(['alert', 'record', 'expr', 'for', 'labels', 'annotations', 'keep_firing_for']);
      const unknown = Object.keys(rule).filter((key) => !known.has(key));
      if (unknown.length > 0) throw new Error(`PrometheusRule rule has unknown fields ${unknown.join(', ')}`);
      if (typeof rule['alert'] !== 'string' || typeof rule['expr'] !== 'string' || rule['expr'] === '') {
        throw new Error(`PrometheusRule rule ${JSON.stringify(rule)} needs an alert name and an expr`);
      }
      const duration = rule['for'];
      if (duration !== undefined && (typeof duration !== 'string' || !/^\d+(ms|s|m|h|d)$/.test(duration))) {
        throw new Error(
          `PrometheusRule rule ${String(rule['alert'])}: for '${String(duration)}' is not a duration`,
        );
      }
    }
  }
}

/** Validates one rendered object; throws for a kind this test does not know, so nothing slips by. */
function validateObject(obj: K8sObject): void {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const validate = VALIDATORS[key];
  if (validate === undefined) {
    throw new Error(
      `the chart rendered ${key} '${obj.metadata?.name}', which this test cannot validate; add it to VALIDATORS`,
    );
  }
  validate(obj);
}

const renders = new Map<string, Promise<K8sObject[]>>();

/**
 * Renders the chart and returns its objects, each already validated. One `helm template` per
 * distinct input: the tests only read the result (each gets its own deep copy).
 */
async function render(input: ChartInput = {}): Promise<K8sObject[]> {
  const key = JSON.stringify(input);
  let rendered = renders.get(key);
  if (rendered === undefined) {
    rendered = renderUncached(input);
    renders.set(key, rendered);
  }
  return structuredClone(await rendered);
}

async function renderUncached(input: ChartInput, name = RELEASE): Promise<K8sObject[]> {
  const result = await helmTemplate(input, { name, namespace: NAMESPACE });
  expect(result.stderr.replace(/^.*\[INFO\].*$/gm, '').trim(), 'helm template stderr').toBe('');
  expect(result.code, result.stderr).toBe(0);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(result.stdout)) {
    expect(doc.errors, 'YAML errors in the rendered chart').toEqual([]);
    const obj = doc.toJS() as K8sObject | null;
    if (obj === null) continue; // an empty document, e.g. a template that rendered nothing
    validateObject(obj);
    objects.push(obj);
  }
  return objects;
}

/** A `helm test` hook: run by `helm test`, not part of the release's workload. */
function isTestHook(obj: K8sObject): boolean {
  const annotations = (obj.metadata as { annotations?: Record<string, string> }).annotations;
  return annotations?.['helm.sh/hook'] === 'test';
}

function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

function only(objects: K8sObject[], kind: string): K8sObject {
  const found = ofKind(objects, kind);
  expect(
    found.map((o) => o.metadata.name),
    `one ${kind}`,
  ).toHaveLength(1);
  return found[0]!;
}

interface PodSpecView {
  replicas?: number;
  template: {
    metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
    spec: {
      containers: IContainer[];
      terminationGracePeriodSeconds?: number;
      automountServiceAccountToken?: boolean;
      serviceAccountName?: string;
      securityContext?: Record<string, unknown>;
      volumes?: { name: string; emptyDir?: unknown }[];
      topologySpreadConstraints?: { topologyKey: string; whenUnsatisfiable: string }[];
    };
  };
  selector: { matchLabels: Record<string, string> };
}

function deploymentSpec(objects: K8sObject[]): PodSpecView {
  return only(objects, 'Deployment')['spec'] as PodSpecView;
}

function workerContainer(objects: K8sObject[]): IContainer {
  const containers = deploymentSpec(objects).template.spec.containers;
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

function envOf(container: IContainer): Map<string, IEnvVar> {
  return new Map((container.env ?? []).map((e) => [e.name, e]));
}

function envValue(container: IContainer, name: string): string | undefined {
  return envOf(container).get(name)?.value;
}

const ci = (file: string) => join(CHART_DIR, 'ci', file);

/** Every values setup the chart is linted and rendered with. */
const CASES: { name: string; input: ChartInput }[] = [
  { name: 'default values', input: {} },
  { name: 'ci/keda-nats-values.yaml', input: { valuesFiles: [ci('keda-nats-values.yaml')] } },
  { name: 'ci/keda-kafka-values.yaml', input: { valuesFiles: [ci('keda-kafka-values.yaml')] } },
  { name: 'ci/keda-redis-values.yaml', input: { valuesFiles: [ci('keda-redis-values.yaml')] } },
  {
    name: 'ci/keda-redis-sentinel-values.yaml',
    input: { valuesFiles: [ci('keda-redis-sentinel-values.yaml')] },
  },
  { name: 'ci/hpa-off-values.yaml', input: { valuesFiles: [ci('hpa-off-values.yaml')] } },
  { name: 'ci/secrets-values.yaml', input: { valuesFiles: [ci('secrets-values.yaml')] } },
  { name: 'ci/networkpolicy-values.yaml', input: { valuesFiles: [ci('networkpolicy-values.yaml')] } },
  { name: 'ci/keep-old-values.yaml', input: { valuesFiles: [ci('keep-old-values.yaml')] } },
  { name: 'ci/keep-new-values.yaml', input: { valuesFiles: [ci('keep-new-values.yaml')] } },
];

/** Variables the chart may set: the worker's own, the OpenTelemetry SDK's, and the pod identity. */
const WORKER_VARS = new Set<string>(Object.values(ENV));
const OTEL_VARS = new Set<string>(OTEL_ENV);
const POD_IDENTITY_VARS = new Set(['K8S_POD_NAME', 'K8S_NAMESPACE_NAME', 'K8S_NODE_NAME']);

describe.concurrent('helm/baton-worker renders valid objects', () => {
  for (const { name, input } of CASES) {
    describe(name, () => {
      it('passes helm lint', async () => {
        const result = await helmLint(input);
        expect(result.code, result.stdout + result.stderr).toBe(0);
        expect(result.stdout).toContain('0 chart(s) failed');
        expect(result.stdout).not.toContain('[ERROR]');
      });

      it('renders only objects that validate, with standard labels', async () => {
        const objects = await render(input);
        expect(ofKind(objects, 'Deployment')).toHaveLength(1);
        for (const obj of objects) {
          const labels = obj.metadata.labels ?? {};
          // The helm test Pod has a name of its own, so no selector of the fleet counts it.
          const name = isTestHook(obj) ? 'baton-worker-test' : 'baton-worker';
          expect(labels, `${obj.kind} labels`).toMatchObject({
            'app.kubernetes.io/name': name,
            'app.kubernetes.io/instance': RELEASE,
            'app.kubernetes.io/version': '0.1.0',
            'app.kubernetes.io/managed-by': 'Helm',
            'helm.sh/chart': 'baton-worker-0.1.0',
          });
          expect((obj.metadata as { namespace?: string }).namespace).toBe(NAMESPACE);
        }
        const spec = deploymentSpec(objects);
        expect(spec.selector.matchLabels).toEqual({
          'app.kubernetes.io/name': 'baton-worker',
          'app.kubernetes.io/instance': RELEASE,
        });
        expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
      });

      it('probes /healthz and /readyz on the named http port', async () => {
        const objects = await render(input);
        const container = workerContainer(objects);
        const port = container.ports?.find((p) => p.name === 'http');
        expect(port?.containerPort).toBe(Number(envValue(container, 'BATON_HTTP_PORT')));
        expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
        for (const service of ofKind(objects, 'Service')) {
          const ports = (service['spec'] as { ports: { name: string; targetPort: unknown }[] }).ports;
          expect(ports).toEqual([expect.objectContaining({ name: 'http', targetPort: 'http' })]);
        }
      });

      it('gives the worker longer than its shutdown timeout before SIGKILL', async () => {
        const objects = await render(input);
        const container = workerContainer(objects);
        const drainMs = Number(envValue(container, 'BATON_DRAIN_TIMEOUT_MS'));
        const shutdownMs = Number(envValue(container, 'BATON_SHUTDOWN_TIMEOUT_MS'));
        expect(shutdownMs).toBeGreaterThan(drainMs);
        const sleep = container.lifecycle?.preStop?.exec?.command;
        const preStopSeconds = sleep === undefined ? 0 : Number(sleep[1]);
        if (sleep !== undefined) expect(sleep[0]).toBe('/bin/sleep');
        const grace = deploymentSpec(objects).template.spec.terminationGracePeriodSeconds;
        expect(grace).toBeGreaterThan(Math.ceil(shutdownMs / 1000) + preStopSeconds);
      });

      it('runs as non-root on a read-only root filesystem without privileges', async () => {
        const objects = await render(input);
        const pod = deploymentSpec(objects).template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(workerContainer(objects).securityContext).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 10001,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
        const tmp = pod.volumes?.find((v) => v.name === 'tmp');
        expect(tmp?.emptyDir).toBeDefined();
        expect(workerContainer(objects).volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        expect(workerContainer(objects).resources?.requests).toBeDefined();
        expect(workerContainer(objects).resources?.limits).toBeDefined();
      });

      it('sets only variables the worker or the OpenTelemetry SDK reads, and never a URL in clear', async () => {
        const objects = await render(input);
        const container = workerContainer(objects);
        const env = envOf(container);
        for (const name of env.keys()) {
          const known = WORKER_VARS.has(name) || OTEL_VARS.has(name) || POD_IDENTITY_VARS.has(name);
          expect(known, `unknown variable ${name}`).toBe(true);
        }
        for (const name of ['BATON_TRANSPORT_URL', 'BATON_STORE_URL']) {
          expect(env.get(name)?.value, `${name} must not be a plain value`).toBeUndefined();
          expect(env.get(name)?.valueFrom?.secretKeyRef?.name, name).toBeTruthy();
        }
        expect(envValue(container, 'BATON_WORKFLOWS')).toBeTruthy();
        // A Secret the chart makes holds a URL the container refers to, under the key it refers to.
        for (const secret of ofKind(objects, 'Secret')) {
          const refs = [...env.values()]
            .map((e) => e.valueFrom?.secretKeyRef)
            .filter((ref) => ref?.name === secret.metadata.name);
          expect(refs.length, `references to Secret ${secret.metadata.name}`).toBeGreaterThan(0);
          const data = secret['stringData'] as Record<string, string>;
          for (const ref of refs) expect(data[ref!.key], `key ${ref!.key}`).toBeTruthy();
        }
      });

      it('lets exactly one autoscaler own the replica count, or none', async () => {
        const objects = await render(input);
        const hpas = ofKind(objects, 'HorizontalPodAutoscaler');
        const scaledObjects = ofKind(objects, 'ScaledObject');
        expect(hpas.length + scaledObjects.length).toBeLessThanOrEqual(1);
        const replicas = deploymentSpec(objects).replicas;
        if (hpas.length + scaledObjects.length === 1) expect(replicas).toBeUndefined();
        else expect(replicas).toBeGreaterThan(0);
        for (const scaler of [...hpas, ...scaledObjects]) {
          expect((scaler['spec'] as { scaleTargetRef: unknown }).scaleTargetRef).toMatchObject({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: FULLNAME,
          });
        }
      });
    });
  }
});

describe.concurrent('helm/baton-worker settings', () => {
  it('defaults: CPU HPA 2..10, PDB maxUnavailable 1, URLs in a chart-owned Secret, no OpenTelemetry', async () => {
    const objects = await render();
    const hpa = only(objects, 'HorizontalPodAutoscaler')['spec'] as {
      minReplicas: number;
      maxReplicas: number;
      metrics: { resource: { name: string; target: { averageUtilization: number } } }[];
    };
    expect(hpa.minReplicas).toBe(2);
    expect(hpa.maxReplicas).toBe(10);
    expect(hpa.metrics.map((m) => m.resource.name)).toEqual(['cpu']);
    expect(ofKind(objects, 'ScaledObject')).toEqual([]);
    expect(ofKind(objects, 'ServiceMonitor')).toEqual([]);
    expect(only(objects, 'PodDisruptionBudget')['spec']).toMatchObject({ maxUnavailable: 1 });
    expect(only(objects, 'ServiceAccount').metadata.name).toBe(FULLNAME);
    expect(only(objects, 'Service')['spec']).toMatchObject({ type: 'ClusterIP', ports: [{ port: 8080 }] });

    const secret = only(objects, 'Secret');
    expect(secret['stringData']).toEqual({
      'transport-url': 'nats://nats:4222',
      'store-url': 'redis://redis-master:6379',
    });
    const container = workerContainer(objects);
    const env = envOf(container);
    expect(env.get('BATON_TRANSPORT_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: secret.metadata.name,
      key: 'transport-url',
    });
    expect(env.get('BATON_STORE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: secret.metadata.name,
      key: 'store-url',
    });
    expect([...env.keys()].filter((n) => n.startsWith('OTEL_') || n.startsWith('K8S_'))).toEqual([]);
    expect(envValue(container, 'BATON_NATS_PREFIX')).toBe('baton');
    expect(env.has('BATON_KAFKA_PREFIX')).toBe(false);
    expect(container.image).toBe('ghcr.io/baton-dev/baton-worker:0.1.0');

    const pod = deploymentSpec(objects).template;
    expect(pod.spec.terminationGracePeriodSeconds).toBe(25 + 2 + 5); // ceil(25000 ms) + preStop + margin
    expect(container.lifecycle?.preStop?.exec?.command).toEqual(['/bin/sleep', '2']);
    expect(pod.metadata.annotations?.['checksum/urls']).toMatch(/^[0-9a-f]{64}$/);
    expect(pod.spec.topologySpreadConstraints?.map((c) => [c.topologyKey, c.whenUnsatisfiable])).toEqual([
      ['topology.kubernetes.io/zone', 'ScheduleAnyway'],
      ['kubernetes.io/hostname', 'ScheduleAnyway'],
    ]);
  });

  it('KEDA on NATS: a nats-jetstream trigger on BATON_RUNS / baton-workers, and no HPA', async () => {
    const objects = await render({ valuesFiles: [ci('keda-nats-values.yaml')] });
    expect(ofKind(objects, 'HorizontalPodAutoscaler')).toEqual([]);
    const spec = only(objects, 'ScaledObject')['spec'] as {
      minReplicaCount: number;
      maxReplicaCount: number;
      advanced?: { horizontalPodAutoscalerConfig?: { behavior?: { scaleDown?: unknown } } };
      triggers: { type: string; metadata: Record<string, string> }[];
    };
    expect(spec.minReplicaCount).toBe(2);
    expect(spec.maxReplicaCount).toBe(20);
    expect(spec.advanced?.horizontalPodAutoscalerConfig?.behavior?.scaleDown).toMatchObject({
      stabilizationWindowSeconds: 300,
    });
    expect(spec.triggers).toEqual([
      {
        type: 'nats-jetstream',
        metadata: {
          natsServerMonitoringEndpoint: 'nats.nats.svc.cluster.local:8222',
          account: '$G',
          stream: 'BATON_RUNS',
          consumer: 'baton-workers',
          lagThreshold: '100',
          activationLagThreshold: '5',
          useHttps: 'false',
        },
      },
    ]);
    expect(deploymentSpec(objects).replicas).toBeUndefined();
  });

  it('KEDA on Kafka: a kafka trigger on baton.runs / baton-workers with its TriggerAuthentication', async () => {
    const objects = await render({ valuesFiles: [ci('keda-kafka-values.yaml')] });
    expect(ofKind(objects, 'HorizontalPodAutoscaler')).toEqual([]);
    const spec = only(objects, 'ScaledObject')['spec'] as {
      triggers: { type: string; metadata: Record<string, string>; authenticationRef?: unknown }[];
    };
    expect(spec.triggers).toHaveLength(1);
    expect(spec.triggers[0]).toEqual({
      type: 'kafka',
      metadata: {
        bootstrapServers:
          'kafka-0.kafka.kafka.svc.cluster.local:9092,kafka-1.kafka.kafka.svc.cluster.local:9092',
        consumerGroup: 'baton-workers',
        topic: 'baton.runs',
        lagThreshold: '200',
        activationLagThreshold: '0',
        offsetResetPolicy: 'latest',
        allowIdleConsumers: 'false',
      },
      authenticationRef: { name: 'baton-kafka-scaler-auth', kind: 'TriggerAuthentication' },
    });
    const container = workerContainer(objects);
    expect(envValue(container, 'BATON_KAFKA_PREFIX')).toBe('baton');
    expect(envOf(container).has('BATON_NATS_PREFIX')).toBe(false);
  });

  it('KEDA on Redis: a redis trigger on the BullMQ wait list, and the bus keys apart from the store', async () => {
    const objects = await render({ valuesFiles: [ci('keda-redis-values.yaml')] });
    expect(ofKind(objects, 'HorizontalPodAutoscaler')).toEqual([]);
    const spec = only(objects, 'ScaledObject')['spec'] as {
      triggers: { type: string; metadata: Record<string, string>; authenticationRef?: unknown }[];
    };
    expect(spec.triggers).toEqual([
      {
        type: 'redis',
        metadata: {
          address: 'redis-master.redis.svc.cluster.local:6379',
          listName: 'baton-bus:runs:wait',
          listLength: '100',
          activationListLength: '0',
          databaseIndex: '0',
          enableTLS: 'false',
        },
        authenticationRef: { name: 'baton-redis-scaler-auth', kind: 'TriggerAuthentication' },
      },
    ]);
    const container = workerContainer(objects);
    // `<prefix>-bus`: never meets the store's default `baton:` keys on the same server.
    expect(envValue(container, 'BATON_REDIS_BUS_PREFIX')).toBe('baton-bus');
    expect(envOf(container).has('BATON_NATS_PREFIX')).toBe(false);
    const renamed = await render({
      valuesFiles: [ci('keda-redis-values.yaml')],
      set: { 'transport.prefix': 'orders' },
    });
    const meta = (
      only(renamed, 'ScaledObject')['spec'] as { triggers: { metadata: Record<string, string> }[] }
    ).triggers[0]!.metadata;
    expect(meta['listName']).toBe('orders-bus:runs:wait');
    expect(envValue(workerContainer(renamed), 'BATON_REDIS_BUS_PREFIX')).toBe('orders-bus');
  });

  it('KEDA on Redis behind Sentinel: the redis-sentinel trigger asks the sentinels for the primary', async () => {
    const objects = await render({ valuesFiles: [ci('keda-redis-sentinel-values.yaml')] });
    const spec = only(objects, 'ScaledObject')['spec'] as {
      triggers: { type: string; metadata: Record<string, string>; authenticationRef?: unknown }[];
    };
    expect(spec.triggers).toEqual([
      {
        type: 'redis-sentinel',
        metadata: {
          addresses: 'sentinel-a:26379,sentinel-b:26379,sentinel-c:26379',
          sentinelMaster: 'baton',
          listName: 'baton-bus:runs:wait',
          listLength: '50',
          activationListLength: '0',
          databaseIndex: '0',
          enableTLS: 'false',
        },
        authenticationRef: { name: 'baton-redis-scaler-auth', kind: 'TriggerAuthentication' },
      },
    ]);
    expect(envValue(workerContainer(objects), 'BATON_REDIS_BUS_PREFIX')).toBe('baton-bus');
  });

  it('KEDA names follow transport.prefix', async () => {
    const nats = await render({
      valuesFiles: [ci('keda-nats-values.yaml')],
      set: { 'transport.prefix': 'orders' },
    });
    const natsMeta = (
      only(nats, 'ScaledObject')['spec'] as { triggers: { metadata: Record<string, string> }[] }
    ).triggers[0]!.metadata;
    expect([natsMeta['stream'], natsMeta['consumer']]).toEqual(['ORDERS_RUNS', 'orders-workers']);
    expect(envValue(workerContainer(nats), 'BATON_NATS_PREFIX')).toBe('orders');

    const kafka = await render({
      valuesFiles: [ci('keda-kafka-values.yaml')],
      set: { 'transport.prefix': 'orders' },
    });
    const kafkaMeta = (
      only(kafka, 'ScaledObject')['spec'] as { triggers: { metadata: Record<string, string> }[] }
    ).triggers[0]!.metadata;
    expect([kafkaMeta['topic'], kafkaMeta['consumerGroup']]).toEqual(['orders.runs', 'orders-workers']);
  });

  it('no autoscaler: fixed replicas, the hand-set grace period, no preStop hook', async () => {
    const objects = await render({ valuesFiles: [ci('hpa-off-values.yaml')] });
    expect(ofKind(objects, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(ofKind(objects, 'ScaledObject')).toEqual([]);
    const spec = deploymentSpec(objects);
    expect(spec.replicas).toBe(3);
    expect(spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    expect(workerContainer(objects).lifecycle).toBeUndefined();
    expect(only(objects, 'PodDisruptionBudget')['spec']).toMatchObject({ maxUnavailable: '34%' });
  });

  it('existing Secrets: secretKeyRef to them, no chart Secret; OpenTelemetry and ServiceMonitor on', async () => {
    const objects = await render({ valuesFiles: [ci('secrets-values.yaml')] });
    expect(ofKind(objects, 'Secret')).toEqual([]);
    expect(ofKind(objects, 'ServiceAccount')).toEqual([]);
    const pod = deploymentSpec(objects).template;
    expect(pod.spec.serviceAccountName).toBe('baton-workers');
    expect(pod.metadata.annotations?.['checksum/urls']).toBeUndefined();
    const container = workerContainer(objects);
    const env = envOf(container);
    expect(env.get('BATON_TRANSPORT_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'baton-bus',
      key: 'url',
    });
    expect(env.get('BATON_STORE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'baton-store', key: 'url' });
    expect(container.envFrom).toEqual([{ secretRef: { name: 'billing-workflow-env' } }]);
    expect(envValue(container, 'BATON_LIVENESS_STALL_MS')).toBe('30000');
    expect(envValue(container, 'OTEL_SERVICE_NAME')).toBe(FULLNAME);
    expect(envValue(container, 'OTEL_EXPORTER_OTLP_ENDPOINT')).toBe(
      'http://otel-collector.observability.svc.cluster.local:4318',
    );
    expect(envValue(container, 'OTEL_TRACES_EXPORTER')).toBe('otlp');
    expect(envValue(container, 'OTEL_TRACES_SAMPLER_ARG')).toBe('0.25');
    expect(envValue(container, 'OTEL_RESOURCE_ATTRIBUTES')).toContain('k8s.pod.name=$(K8S_POD_NAME)');
    expect(envValue(container, 'OTEL_RESOURCE_ATTRIBUTES')).toContain('deployment.environment=production');
    // $(VAR) references only expand when the variable is defined earlier in the list.
    const names = [...env.keys()];
    expect(names.indexOf('K8S_POD_NAME')).toBeLessThan(names.indexOf('OTEL_RESOURCE_ATTRIBUTES'));
    expect(container.volumeMounts).toContainEqual({
      name: 'nats-creds',
      mountPath: '/etc/baton/nats',
      readOnly: true,
    });

    const monitor = only(objects, 'ServiceMonitor');
    expect(monitor.metadata.labels?.['release']).toBe('prometheus');
    expect(monitor['spec']).toMatchObject({
      selector: { matchLabels: deploymentSpec(objects).selector.matchLabels },
      endpoints: [{ port: 'http', path: '/metrics', interval: '30s' }],
    });
  });

  it('README documents every value of values.yaml', async () => {
    const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const readme = await readFile(join(CHART_DIR, 'README.md'), 'utf8');
    // Kubernetes objects passed through as they are: documented as a whole, not key by key.
    const wholeObjects = new Set([
      'strategy',
      'resources',
      'podSecurityContext',
      'securityContext',
      'console.resources',
    ]);
    const paths: string[] = [];
    const walk = (node: Record<string, unknown>, prefix: string): void => {
      for (const [key, value] of Object.entries(node)) {
        const path = prefix + key;
        const isMap = value !== null && typeof value === 'object' && !Array.isArray(value);
        if (isMap && Object.keys(value).length > 0 && !wholeObjects.has(path)) {
          walk(value as Record<string, unknown>, `${path}.`);
        } else {
          paths.push(path);
        }
      }
    };
    walk(values, '');
    expect(paths.length).toBeGreaterThan(50);
    const documented = (path: string) =>
      new RegExp(`^\\| \`${path.replace(/\./g, '\\.')}\` +\\|`, 'm').test(readme);
    expect(paths.filter((path) => !documented(path))).toEqual([]);
  });

  it('refuses to validate a kind it does not know', () => {
    expect(() =>
      validateObject({
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'x' },
      } as K8sObject),
    ).toThrow(/v1\/ReplicationController 'x'.*cannot validate/);
  });
});

interface TestPodView {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    restartPolicy: string;
    automountServiceAccountToken?: boolean;
    securityContext?: Record<string, unknown>;
    containers: IContainer[];
  };
}

interface NetworkPolicyView {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: { ports?: { port: unknown; protocol: string }[]; from?: Record<string, unknown>[] }[];
  egress: { ports?: { port: unknown; protocol: string }[]; to?: Record<string, unknown>[] }[];
}

/** Runs the test Pod's `node -e` script against `url` with this machine's node. */
function runReadyzScript(
  pod: TestPodView,
  url: string,
  attempts: number,
): Promise<{ code: number | null; output: string }> {
  const container = pod.spec.containers[0]!;
  expect(container.command).toEqual(['node', '-e']);
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      ['-e', container.args![0]!],
      { env: { ...process.env, READYZ_URL: url, READYZ_ATTEMPTS: String(attempts) }, timeout: 20_000 },
      (error, stdout, stderr) =>
        resolvePromise({ code: error ? (error.code as number | null) : 0, output: stdout + stderr }),
    );
  });
}

/** A local HTTP server answering /readyz with the statuses given, one per request (the last repeats). */
async function readyzServer(
  statuses: number[],
): Promise<{ url: string; requests: () => number; close(): void }> {
  let count = 0;
  const server = createServer((request, response) => {
    const status = statuses[Math.min(count++, statuses.length - 1)]!;
    response
      .writeHead(request.url === '/readyz' ? status : 404)
      .end(status === 200 ? 'ready\n' : 'not ready\n');
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/readyz`, requests: () => count, close: () => server.close() };
}

describe.concurrent('helm test hook', () => {
  it('asks the worker Service for /readyz from the worker image, as a test hook no fleet selector counts', async () => {
    const objects = await render();
    const pod = only(objects, 'Pod') as unknown as TestPodView;
    expect(pod.metadata.name).toBe(`${FULLNAME}-test-readyz`);
    expect(pod.metadata.annotations).toEqual({
      'helm.sh/hook': 'test',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    const container = pod.spec.containers[0]!;
    expect(container.image).toBe(workerContainer(objects).image);
    const service = only(objects, 'Service');
    const servicePort = (service['spec'] as { ports: { port: number }[] }).ports[0]!.port;
    expect(envValue(container, 'READYZ_URL')).toBe(`http://${service.metadata.name}:${servicePort}/readyz`);
    expect(envValue(container, 'READYZ_ATTEMPTS')).toBe('20');
    expect(container.securityContext).toEqual(workerContainer(objects).securityContext);
    expect(pod.spec.securityContext).toEqual(deploymentSpec(objects).template.spec.securityContext);
    // Selectors that pick the workers must not pick the test Pod.
    const selectors = [
      deploymentSpec(objects).selector.matchLabels,
      (service['spec'] as { selector: Record<string, string> }).selector,
      (only(objects, 'PodDisruptionBudget')['spec'] as { selector: { matchLabels: Record<string, string> } })
        .selector.matchLabels,
    ];
    for (const selector of selectors) {
      const matches = Object.entries(selector).every(([key, value]) => pod.metadata.labels[key] === value);
      expect(matches, `selector ${JSON.stringify(selector)} picks the test Pod`).toBe(false);
    }
  });

  it('is left out without the Service it tests, or when helmTest.enabled is false', async () => {
    expect(ofKind(await render({ set: { 'service.enabled': false } }), 'Pod')).toEqual([]);
    expect(ofKind(await render({ set: { 'helmTest.enabled': false } }), 'Pod')).toEqual([]);
  });

  it('its script passes on a 200 from /readyz, after waiting out a 503', async () => {
    const pod = only(await render(), 'Pod') as unknown as TestPodView;
    const server = await readyzServer([503, 200]);
    try {
      const { code, output } = await runReadyzScript(pod, server.url, 3);
      expect(output).toContain('attempt 1: ');
      expect(output).toContain('answered 503 not ready');
      expect(output).toContain('attempt 2: ');
      expect(output).toContain('answered 200 ready');
      expect(code).toBe(0);
      expect(server.requests()).toBe(2);
    } finally {
      server.close();
    }
  });

  it('its script fails, saying so, when no worker gets ready in its attempts', async () => {
    const pod = only(await render(), 'Pod') as unknown as TestPodView;
    const server = await readyzServer([503]);
    try {
      const { code, output } = await runReadyzScript(pod, server.url, 1);
      expect(code).toBe(1);
      expect(output).toContain(`no worker behind ${server.url} was ready after 1 attempts`);
    } finally {
      server.close();
    }
  });
});

describe.concurrent('NetworkPolicy', () => {
  it('is off by default', async () => {
    expect(ofKind(await render(), 'NetworkPolicy')).toEqual([]);
  });

  it('admits the HTTP port only from the named peers and the test Pod; lets out DNS, bus, store and extras', async () => {
    const objects = await render({ valuesFiles: [ci('networkpolicy-values.yaml')] });
    const policy = only(objects, 'NetworkPolicy')['spec'] as NetworkPolicyView;
    expect(policy.podSelector.matchLabels).toEqual(deploymentSpec(objects).selector.matchLabels);
    expect(policy.policyTypes).toEqual(['Ingress', 'Egress']);
    const testPod = only(objects, 'Pod') as unknown as TestPodView;
    expect(policy.ingress).toEqual([
      {
        ports: [{ port: 'http', protocol: 'TCP' }],
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
          },
          {
            podSelector: {
              matchLabels: {
                'app.kubernetes.io/name': testPod.metadata.labels['app.kubernetes.io/name'],
                'app.kubernetes.io/instance': testPod.metadata.labels['app.kubernetes.io/instance'],
              },
            },
          },
        ],
      },
    ]);
    // The named port is the worker's HTTP port.
    expect(workerContainer(objects).ports?.map((p) => p.name)).toEqual(['http']);
    const namespace = (name: string) => [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } },
    ];
    expect(policy.egress).toEqual([
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
            podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
          },
        ],
      },
      { ports: [{ port: 9092, protocol: 'TCP' }], to: namespace('kafka') },
      { ports: [{ port: 5432, protocol: 'TCP' }], to: namespace('db') },
      { ports: [{ port: 4318, protocol: 'TCP' }], to: namespace('observability') },
    ]);
  });

  it('defaults to NATS and Redis ports to any address, and refuses all ingress with no peer and no test Pod', async () => {
    const objects = await render({ set: { 'networkPolicy.enabled': true, 'helmTest.enabled': false } });
    const policy = only(objects, 'NetworkPolicy')['spec'] as NetworkPolicyView;
    expect(policy.ingress).toEqual([]);
    expect(policy.egress.slice(1)).toEqual([
      { ports: [{ port: 4222, protocol: 'TCP' }] },
      { ports: [{ port: 6379, protocol: 'TCP' }] },
    ]);
  });
});

describe('the manifest check is strict', () => {
  it('fails a rendered Deployment whose template misspells terminationGracePeriodSeconds', async () => {
    // A copy of the chart with the one field misspelt, as a template typo would render it.
    const chartDir = await mkdtemp(join(tmpdir(), 'baton-chart-typo-'));
    try {
      await cp(CHART_DIR, chartDir, { recursive: true });
      const template = join(chartDir, 'templates', 'deployment.yaml');
      const text = await readFile(template, 'utf8');
      expect(text).toContain('terminationGracePeriodSeconds:');
      await writeFile(
        template,
        text.replace('terminationGracePeriodSeconds:', 'terminationGracePeriodSecond:'),
      );
      const result = await helmTemplate({}, { chartDir, name: RELEASE, namespace: NAMESPACE });
      expect(result.code, result.stderr).toBe(0);
      const deployment = parseAllDocuments(result.stdout)
        .map((doc) => doc.toJS() as K8sObject | null)
        .find((obj) => obj?.kind === 'Deployment')!;
      expect(deployment['spec']).toHaveProperty('template.spec.terminationGracePeriodSecond');
      // The schema check alone lets it through; the strict check names it.
      expect(() => new Deployment(deployment as never).validate()).not.toThrow();
      expect(() => validateObject(deployment)).toThrow(
        /Deployment 'prod-baton-worker' has fields its Kubernetes schema does not define: spec\.template\.spec\.terminationGracePeriodSecond;/,
      );
    } finally {
      await rm(chartDir, { recursive: true, force: true });
    }
  });

  it('names every unknown field by its path, at any depth, and still accepts free-form maps', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', labels: { 'any.example/key': 'a map takes any key' }, nmespace: 'x' },
      spec: { ports: [{ port: 80, targetPort: 'http', protocl: 'TCP' }], selector: { app: 'a' } },
    } as K8sObject;
    expect(() => validateObject(service)).toThrow(/metadata\.nmespace, spec\.ports\[0\]\.protocl;/);
    delete (service.metadata as Record<string, unknown>)['nmespace'];
    delete (service['spec'] as { ports: Record<string, unknown>[] }).ports[0]!['protocl'];
    expect(() => validateObject(service)).not.toThrow();
  });

  it('still fails what the schema itself refuses', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 'eighty' }] },
    } as K8sObject;
    expect(() => validateObject(service)).toThrow(/port/);
  });
});

/**
 * Values that must be refused, and a piece of the message each one must produce. `crossCheck`
 * marks the checks made in the templates (templates/validate.yaml) rather than by
 * values.schema.json; `helm template` is run for those too, since lint handles template failures
 * differently (the schema is applied the same way by both).
 */
const BAD_VALUES: { name: string; set: Record<string, unknown>; message: RegExp; crossCheck?: true }[] = [
  {
    name: 'negative concurrency',
    set: { 'worker.concurrency': -1 },
    message: /worker\.concurrency: Must be greater than or equal to 1/,
  },
  {
    name: 'concurrency of the wrong type',
    set: { 'worker.concurrency': 'many' },
    message: /worker\.concurrency: Invalid type\. Expected: integer, given: string/,
  },
  {
    name: 'an unknown top-level key',
    set: { replicas: 3 },
    message: /Additional property replicas is not allowed/,
  },
  {
    name: 'a misspelt worker key',
    set: { 'worker.concurency': 3 },
    message: /worker: Additional property concurency is not allowed/,
  },
  {
    name: 'an unsupported KEDA trigger',
    set: { 'keda.trigger': 'rabbitmq' },
    message: /keda\.trigger: keda\.trigger must be one of the following/,
  },
  {
    name: 'an unknown bus',
    set: { 'transport.kind': 'rabbitmq' },
    message: /transport\.kind: transport\.kind must be one of the following/,
  },
  {
    name: 'an unknown log level',
    set: { 'worker.logLevel': 'verbose' },
    message: /worker\.logLevel: worker\.logLevel must be one of the following/,
  },
  {
    name: 'empty workflows',
    set: { 'worker.workflows': '' },
    message: /worker\.workflows: String length must be greater than or equal to 1/,
  },
  {
    name: 'KEDA scaling to zero',
    set: { 'keda.minReplicaCount': 0 },
    message: /keda\.minReplicaCount: Must be greater than or equal to 1/,
  },
  {
    name: 'a liveness stall limit below the worker minimum',
    set: { 'worker.livenessStallMs': 500 },
    message: /worker\.livenessStallMs: Must be greater than or equal to 1000/,
  },
  {
    name: 'an upper-case NATS prefix',
    set: { 'transport.prefix': 'Baton' },
    message: /transport\.prefix: Does not match pattern/,
  },
  {
    name: 'a URL that is no bus URL',
    set: { 'transport.url': 'http://nats:4222' },
    message: /transport\.url: Does not match pattern/,
  },
  {
    name: 'a NetworkPolicy without bus ports',
    set: { 'networkPolicy.bus.ports': [] },
    message: /networkPolicy\.bus\.ports: Array must have at least 1 items/,
  },
  {
    name: 'a store port out of range',
    set: { 'networkPolicy.store.ports': [65536] },
    message: /networkPolicy\.store\.ports\.0: Must be less than or equal to 65535/,
  },
  {
    name: 'a misspelt NetworkPolicy key',
    set: { 'networkPolicy.ingresFrom': [] },
    message: /networkPolicy: Additional property ingresFrom is not allowed/,
  },
  // Checks across values, made in the templates.
  {
    name: 'a drain longer than the shutdown timeout',
    set: { 'worker.drainTimeoutMs': 30000 },
    message: /worker\.shutdownTimeoutMs \(25000\) must be above worker\.drainTimeoutMs \(30000\)/,
    crossCheck: true,
  },
  {
    name: 'a grace period shorter than the shutdown',
    set: { terminationGracePeriodSeconds: 20 },
    message: /terminationGracePeriodSeconds \(20\) must be above .* = 27/,
    crossCheck: true,
  },
  {
    name: 'KEDA watching the other bus',
    set: { 'keda.enabled': true, 'keda.trigger': 'kafka', 'keda.kafka.bootstrapServers': 'k:9092' },
    message: /keda\.trigger is kafka but transport\.kind is nats/,
    crossCheck: true,
  },
  {
    name: 'KEDA on NATS without a monitoring endpoint',
    set: { 'keda.enabled': true },
    message: /keda\.nats\.monitoringEndpoint is required/,
    crossCheck: true,
  },
  {
    name: 'a Kafka URL with transport.kind nats',
    set: { 'transport.url': 'kafka://kafka:9092' },
    message: /transport\.url is a kafka:\/\/ URL but transport\.kind is nats/,
    crossCheck: true,
  },
  {
    name: 'a Redis URL with transport.kind nats',
    set: { 'transport.url': 'redis://redis:6379' },
    message: /transport\.url is a redis:\/\/ URL but transport\.kind is nats; set transport\.kind to redis/,
    crossCheck: true,
  },
  {
    name: 'KEDA on Redis without an address',
    set: { 'transport.kind': 'redis', 'transport.url': 'redis://redis:6379', 'keda.enabled': true },
    message: /keda\.redis\.address is required for the redis trigger/,
    crossCheck: true,
  },
  {
    name: 'KEDA on Redis behind Sentinel without the master name',
    set: {
      'transport.kind': 'redis',
      'transport.url': 'redis+sentinel://s1:26379,s2:26379/baton',
      'keda.enabled': true,
      'keda.redis.sentinelAddresses': 's1:26379,s2:26379',
    },
    message: /keda\.redis\.sentinelMaster is required with keda\.redis\.sentinelAddresses/,
    crossCheck: true,
  },
  {
    name: 'no transport URL at all',
    set: { 'transport.url': '' },
    message: /transport\.url or transport\.existingSecret is required/,
    crossCheck: true,
  },
  {
    name: 'the console without a token or a trusted header',
    set: { 'console.enabled': true },
    message: /console\.enabled needs console\.token, console\.existingSecret or console\.trustedHeader/,
    crossCheck: true,
  },
  {
    name: 'a console token shorter than 16 characters',
    set: { 'console.enabled': true, 'console.token': 'short' },
    message: /console\.token/,
  },
  {
    name: 'a misspelt console key',
    set: { 'console.readonly': true },
    message: /console: Additional property readonly is not allowed/,
  },
  {
    name: 'HPA min above max',
    set: { 'autoscaling.minReplicas': 5, 'autoscaling.maxReplicas': 3 },
    message: /autoscaling\.minReplicas \(5\) must not be above autoscaling\.maxReplicas \(3\)/,
    crossCheck: true,
  },
];

describe.concurrent('helm/baton-worker refuses bad values', () => {
  for (const { name, set, message, crossCheck } of BAD_VALUES) {
    it(`${name}: helm lint fails naming the value${crossCheck ? ', and so does helm template' : ''}`, async () => {
      const lint = await helmLint({ set });
      expect(lint.code, 'helm lint exit code').not.toBe(0);
      expect(lint.stdout).toMatch(/\[ERROR\]/);
      expect(lint.stdout + lint.stderr).toMatch(message);
      if (crossCheck) {
        const template = await helmTemplate({ set });
        expect(template.code, 'helm template exit code').not.toBe(0);
        expect(template.stderr).toMatch(message);
      }
    });
  }
});

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

describe('helm/baton-worker PrometheusRule', () => {
  const documented = (): AlertRule[] =>
    (parse(alertRulesBlock(readOperationsDoc())) as { groups: { rules: AlertRule[] }[] }).groups.flatMap(
      (g) => g.rules,
    );

  it('is not rendered by default', async () => {
    expect(ofKind(await render(), 'PrometheusRule')).toEqual([]);
  });

  it('holds exactly the alerts docs/operations.md lists, as written there, with the labels it is given', async () => {
    const input: ChartInput = {
      set: { 'prometheusRule.enabled': true, 'prometheusRule.labels.release': 'prometheus' },
    };
    const lint = await helmLint(input);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const rule = only(await render(input), 'PrometheusRule');
    expect(rule.metadata.name).toBe(FULLNAME);
    expect(rule.metadata.labels).toMatchObject({
      release: 'prometheus',
      'app.kubernetes.io/name': 'baton-worker',
    });
    const rendered = (rule['spec'] as { groups: { rules: AlertRule[] }[] }).groups.flatMap((g) => g.rules);
    const docs = documented();
    expect(docs.length).toBeGreaterThanOrEqual(5);
    expect(rendered.map((r) => r.alert)).toEqual(docs.map((r) => r.alert));
    // The same expressions, durations, labels and annotations ({{ $labels.… }} kept for Prometheus).
    expect(rendered).toEqual(docs);
  });

  it('refuses a misspelt key under prometheusRule', async () => {
    const lint = await helmLint({ set: { 'prometheusRule.enable': true } });
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/prometheusRule: Additional property enable is not allowed/);
  });
});

describe('helm/baton-worker Grafana dashboard ConfigMap', () => {
  const dashboardFile = join(CHART_DIR, 'dashboards', 'baton-workers.json');

  it('is not rendered by default', async () => {
    expect(ofKind(await render(), 'ConfigMap')).toEqual([]);
  });

  it("holds the repository's dashboard as it is, labelled for Grafana's sidecar", async () => {
    const input: ChartInput = {
      set: {
        'dashboards.enabled': true,
        'dashboards.labels.team': 'payments',
        'dashboards.annotations.grafana_folder': 'Baton',
      },
    };
    const lint = await helmLint(input);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const map = only(await render(input), 'ConfigMap');
    expect(map.metadata.name).toBe(`${FULLNAME}-dashboards`);
    expect(map.metadata.labels).toMatchObject({
      grafana_dashboard: '1',
      team: 'payments',
      'app.kubernetes.io/name': 'baton-worker',
    });
    expect((map.metadata as { annotations?: Record<string, string> }).annotations).toEqual({
      grafana_folder: 'Baton',
    });
    const data = map['data'] as Record<string, string>;
    expect(Object.keys(data)).toEqual(['baton-workers.json']);
    const file = await readFile(dashboardFile, 'utf8');
    expect(data['baton-workers.json']).toBe(file.trim());
    expect((JSON.parse(data['baton-workers.json']!) as { uid: string }).uid).toBe('baton-workers');
  });

  it("goes to the sidecar's namespace when given one, and takes the sidecar's own label value", async () => {
    const map = only(
      await render({
        set: {
          'dashboards.enabled': true,
          'dashboards.namespace': 'monitoring',
          'dashboards.labels.grafana_dashboard': 'baton',
        },
      }),
      'ConfigMap',
    );
    expect((map.metadata as { namespace?: string }).namespace).toBe('monitoring');
    expect(map.metadata.labels?.['grafana_dashboard']).toBe('baton');
  });

  it('refuses a misspelt key under dashboards', async () => {
    const lint = await helmLint({ set: { 'dashboards.enable': true } });
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/dashboards: Additional property enable is not allowed/);
  });
});

describe('keep the old Deployment until drained (ci/keep-old-values.yaml beside ci/keep-new-values.yaml)', () => {
  it('renders two releases as two fleets of pods on one bus prefix and store, with one autoscaler', async () => {
    const [old, next] = await Promise.all([
      renderUncached(
        { valuesFiles: [ci('keep-old-values.yaml')], set: { 'image.tag': '1.4.2' } },
        'orders-v1',
      ),
      renderUncached(
        { valuesFiles: [ci('keep-new-values.yaml')], set: { 'image.tag': '2.0.0' } },
        'orders-v2',
      ),
    ]);
    const [oldDeployment, newDeployment] = [only(old, 'Deployment'), only(next, 'Deployment')];
    expect(oldDeployment.metadata.name).toBe('orders-v1-baton-worker');
    expect(newDeployment.metadata.name).toBe('orders-v2-baton-worker');
    // Neither Deployment (nor PodDisruptionBudget) selects the other's pods.
    const [oldSelector, newSelector] = [deploymentSpec(old).selector, deploymentSpec(next).selector];
    expect(oldSelector.matchLabels['app.kubernetes.io/instance']).toBe('orders-v1');
    expect(newSelector.matchLabels['app.kubernetes.io/instance']).toBe('orders-v2');
    expect(deploymentSpec(next).template.metadata.labels).not.toMatchObject(oldSelector.matchLabels);
    // One fleet: the same bus prefix (so one shared consumer / group), different images.
    expect(envValue(workerContainer(old), 'BATON_NATS_PREFIX')).toBe('orders');
    expect(envValue(workerContainer(next), 'BATON_NATS_PREFIX')).toBe('orders');
    expect(workerContainer(old).image).toMatch(/:1\.4\.2$/);
    expect(workerContainer(next).image).toMatch(/:2\.0\.0$/);
    // Only the new release scales on the shared backlog; the old one keeps its fixed size.
    expect(ofKind(old, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(deploymentSpec(old).replicas).toBe(2);
    expect(ofKind(next, 'HorizontalPodAutoscaler')).toHaveLength(1);
  });
});
