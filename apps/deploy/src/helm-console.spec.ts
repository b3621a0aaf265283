/**
 * Offline checks of the web console in helm/baton-worker (console.*): off by default; with
 * ci/console-values.yaml (and with a plain token) `helm lint` passes and `helm template` renders a
 * console Deployment, Service and Ingress that validate strictly against the Kubernetes schemas, run
 * `baton console` from the worker image on the workers' bus and store, take the token from a
 * Secret and are counted by no selector of the worker fleet. Bad console values are refused in
 * helm-chart.spec.ts (BAD_VALUES) with the chart's other values.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { CHART_DIR, type ChartInput, helmLint, helmTemplate } from './helm.js';
import { type ModelClass, validateStrictly } from './strict-validate.js';

const RELEASE = 'prod';
const NAMESPACE = 'workers';
const CONSOLE = 'prod-baton-worker-console';
const CONSOLE_VALUES: ChartInput = { valuesFiles: [join(CHART_DIR, 'ci', 'console-values.yaml')] };
const PLAIN_TOKEN = 'a0b1c2d3e4f5a6b7c8d9e0f1';

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
} & Record<string, unknown>;

const MODELS: Record<string, ModelClass> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Secret': Secret,
  'v1/Pod': Pod,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
};

/** `helm template`, every object validated strictly (unknown fields fail). */
async function render(input: ChartInput): Promise<K8sObject[]> {
  const result = await helmTemplate(input, { name: RELEASE, namespace: NAMESPACE });
  expect(result.code, result.stderr).toBe(0);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(result.stdout)) {
    expect(doc.errors).toEqual([]);
    const obj = doc.toJS() as K8sObject | null;
    if (obj === null) continue;
    const model = MODELS[`${obj.apiVersion}/${obj.kind}`];
    if (!model) throw new Error(`rendered ${obj.apiVersion}/${obj.kind}, which this test cannot validate`);
    validateStrictly(model, obj, `${obj.kind} '${obj.metadata.name}'`);
    objects.push(obj);
  }
  return objects;
}

const isConsole = (o: K8sObject) => o.metadata.labels?.['app.kubernetes.io/component'] === 'console';

function one(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: IContainer[]; securityContext?: unknown; automountServiceAccountToken?: boolean };
}

function podTemplate(deployment: K8sObject): PodTemplate {
  return (deployment.spec as { template: PodTemplate }).template;
}

/** Whether `selector` (matchLabels) picks a pod labelled `labels`. */
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe.concurrent('helm/baton-worker console', () => {
  it('is off by default: nothing of the console is rendered', async () => {
    const objects = await render({});
    expect(objects.filter(isConsole).map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([]);
  });

  it('ci/console-values.yaml passes helm lint', async () => {
    const result = await helmLint(CONSOLE_VALUES);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('0 chart(s) failed');
    expect(result.stdout).not.toContain('[ERROR]');
  });

  it('runs `baton console` from the worker image on the workers’ bus and store, with its token from a Secret', async () => {
    const objects = await render(CONSOLE_VALUES);
    const workers = one(objects, 'Deployment', 'prod-baton-worker');
    const deployment = one(objects, 'Deployment', CONSOLE);
    const pod = podTemplate(deployment);
    const [container] = pod.spec.containers;
    const [worker] = podTemplate(workers).spec.containers;
    expect(pod.spec.containers).toHaveLength(1);
    expect(container!.image).toBe(worker!.image);
    expect(container!.command).toEqual(['baton', 'console', '--host', '0.0.0.0', '--port', '8636']);
    expect(container!.ports).toEqual([{ name: 'console', containerPort: 8636, protocol: 'TCP' }]);
    const env = new Map((container!.env ?? []).map((e) => [e.name, e]));
    const workerEnv = new Map((worker!.env ?? []).map((e) => [e.name, e]));
    for (const name of ['BATON_TRANSPORT_URL', 'BATON_STORE_URL', 'BATON_NATS_PREFIX']) {
      expect(env.get(name), name).toEqual(workerEnv.get(name));
    }
    expect(env.get('BATON_CONSOLE_TOKEN')?.valueFrom?.secretKeyRef).toEqual({
      name: 'baton-console',
      key: 'token',
    });
    expect(env.get('BATON_CONSOLE_READ_ONLY')?.value).toBe('true');
    expect(env.get('BATON_ENCRYPTION_KEYS')?.valueFrom?.secretKeyRef?.name).toBe('baton-payload-keys');
    // The workers' security: non-root, read-only root filesystem, no API token.
    expect(container!.securityContext).toEqual(worker!.securityContext);
    expect(pod.spec.securityContext).toEqual(podTemplate(workers).spec.securityContext);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(container!.readinessProbe?.tcpSocket).toEqual({ port: 'console' });
    // The existing Secret is used: the chart makes no console Secret.
    expect(objects.filter((o) => o.kind === 'Secret' && isConsole(o))).toEqual([]);
  });

  it('serves it through a Service and a TLS Ingress on the console port', async () => {
    const objects = await render(CONSOLE_VALUES);
    const deployment = one(objects, 'Deployment', CONSOLE);
    const service = one(objects, 'Service', CONSOLE);
    const spec = service.spec as { selector: Record<string, string>; ports: unknown[] };
    expect(selects(spec.selector, podTemplate(deployment).metadata.labels)).toBe(true);
    expect(spec.ports).toEqual([{ name: 'console', port: 8636, targetPort: 'console', protocol: 'TCP' }]);
    const ingress = one(objects, 'Ingress', CONSOLE);
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['baton.example.com'], secretName: 'baton-console-tls' }],
      rules: [
        {
          host: 'baton.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: CONSOLE, port: { name: 'console' } } },
              },
            ],
          },
        },
      ],
    });
  });

  it('is counted by no selector of the worker fleet, and selects no worker pod itself', async () => {
    const objects = await render({
      ...CONSOLE_VALUES,
      set: { 'networkPolicy.enabled': true, 'autoscaling.enabled': false },
    });
    const consolePod = podTemplate(one(objects, 'Deployment', CONSOLE)).metadata.labels;
    const workerPod = podTemplate(one(objects, 'Deployment', 'prod-baton-worker')).metadata.labels;
    const workerSelectors: [string, Record<string, string>][] = [
      [
        'Service',
        (one(objects, 'Service', 'prod-baton-worker').spec as { selector: Record<string, string> }).selector,
      ],
      ...objects
        .filter((o) => (o.kind === 'PodDisruptionBudget' || o.kind === 'Deployment') && !isConsole(o))
        .map((o): [string, Record<string, string>] => [
          o.kind,
          (o.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
        ]),
      ...objects
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o): [string, Record<string, string>] => [
          o.kind,
          (o.spec as { podSelector: { matchLabels: Record<string, string> } }).podSelector.matchLabels,
        ]),
    ];
    expect(workerSelectors.map(([kind]) => kind).sort()).toEqual(
      ['Deployment', 'NetworkPolicy', 'PodDisruptionBudget', 'Service'].sort(),
    );
    for (const [kind, selector] of workerSelectors) {
      expect(selects(selector, consolePod), `${kind} selects the console's pods`).toBe(false);
      expect(selects(selector, workerPod), `${kind} no longer selects the workers`).toBe(true);
    }
    const consoleSelector = (
      one(objects, 'Deployment', CONSOLE).spec as { selector: { matchLabels: Record<string, string> } }
    ).selector.matchLabels;
    expect(selects(consoleSelector, workerPod)).toBe(false);
    expect(objects.some((o) => o.kind === 'Ingress')).toBe(true);
  });

  it('keeps a token given as a value in a Secret of its own, never in the pod spec', async () => {
    const objects = await render({ set: { 'console.enabled': true, 'console.token': PLAIN_TOKEN } });
    const secret = one(objects, 'Secret', CONSOLE);
    expect(secret['stringData']).toEqual({ 'console-token': PLAIN_TOKEN });
    const deployment = one(objects, 'Deployment', CONSOLE);
    expect(JSON.stringify(deployment)).not.toContain(PLAIN_TOKEN);
    const env = podTemplate(deployment).spec.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'BATON_CONSOLE_TOKEN')?.valueFrom?.secretKeyRef).toEqual({
      name: CONSOLE,
      key: 'console-token',
    });
    expect(env.find((e) => e.name === 'BATON_CONSOLE_READ_ONLY')?.value).toBe('false');
    expect(objects.filter((o) => o.kind === 'Ingress')).toEqual([]);
  });

  it('with a trusted header only, sets it and no token', async () => {
    const objects = await render({
      set: { 'console.enabled': true, 'console.trustedHeader': 'X-Forwarded-User' },
    });
    const env = podTemplate(one(objects, 'Deployment', CONSOLE)).spec.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'BATON_CONSOLE_TRUSTED_HEADER')?.value).toBe('X-Forwarded-User');
    expect(env.some((e) => e.name === 'BATON_CONSOLE_TOKEN')).toBe(false);
    expect(objects.filter((o) => o.kind === 'Secret' && isConsole(o))).toEqual([]);
  });
});
