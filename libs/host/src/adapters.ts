/**
 * Builds the transport and the store from their URLs: the scheme picks the adapter's registration
 * (registry.ts), whose BATON_* variables add what a URL cannot carry well (prefixes, files).
 * `loadAdapterCode` first: the registrations come without their adapters' code.
 */
import { ConfigError } from '@baton/core';
import {
  maskUrlSecret,
  type AdapterKind,
  type AdapterLogHook,
  type PayloadStore,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import type { LargePayloadOptions } from '@baton/core/runtime';
import type { NatsObjectPayloadStore } from '@baton/transport-nats';
import { natsCode, natsConnectionFromSettings, natsRegistration } from '@baton/transport-nats/registration';
import { ENV, type WorkerAppConfig } from './config.js';
import { refuseSharedRedisKeys } from './namespaces.js';
import { ADAPTERS, registrationFor, registrationsOf, schemeOf } from './registry.js';

/**
 * The URL without its secret, for messages and logs; a lone user part is a secret for the
 * adapters that say so (a NATS token). A value without a scheme is not shown at all (it may be a
 * bare secret pasted into the wrong place).
 */
export function maskUrl(url: string): string {
  if (!url.includes('://')) return '<not a URL>';
  const scheme = schemeOf(url) ?? '';
  const userIsSecret = ADAPTERS.some((r) => r.urlUserIsSecret === true && r.schemes.includes(scheme));
  return maskUrlSecret(url, { userIsSecret });
}

/** What each kind is called in messages, and the variable holding its URL. */
const KINDS = {
  transport: { variable: ENV.transportUrl, noun: 'bus' },
  store: { variable: ENV.storeUrl, noun: 'store' },
} as const;

/** The schemes of one kind for advice: `nats://, tls://, kafka:// or kafkas://`. */
function schemesOf(kind: AdapterKind, which: 'all' | 'first'): string {
  const schemes = registrationsOf(kind).flatMap((r) => (which === 'all' ? r.schemes : [r.schemes[0]]));
  const urls = schemes.map((s) => `${s}://`);
  return urls.length < 2 ? urls.join('') : `${urls.slice(0, -1).join(', ')} or ${urls.at(-1)}`;
}

/** The registration of this kind for the URL; a ConfigError naming the variable when there is none. */
export function registrationOfConfig(kind: AdapterKind, url: string) {
  const { variable, noun } = KINDS[kind];
  const scheme = schemeOf(url);
  if (scheme === undefined) {
    throw new ConfigError(
      `${variable} '${maskUrl(url)}' has no scheme; it must start with e.g. nats:// or redis://`,
    );
  }
  // The embedded adapters live inside one process: a fleet of processes cannot share them.
  if (scheme === 'memory') {
    throw new ConfigError(
      `${variable} is memory:, which lives inside one process and cannot be shared by a fleet; ` +
        `use ${schemesOf(kind, 'first').replaceAll('://', '://…')} here, or \`npm start\` for the in-process demo`,
    );
  }
  const registration = registrationFor(kind, url);
  if (registration === undefined) {
    throw new ConfigError(
      `${variable} '${maskUrl(url)}' names an unsupported ${noun}; use ${schemesOf(kind, 'all')}`,
    );
  }
  return registration;
}

/**
 * Loads the code of the bus and the store the configuration names (and of the NATS transport when
 * large payloads go to its object store), and nothing else: a worker that runs on NATS and Redis
 * never imports kafkajs, pg or BullMQ. Call it before the builders below; a URL no adapter serves
 * is left for them to report.
 */
export async function loadAdapterCode(config: WorkerAppConfig): Promise<void> {
  const registrations = [
    registrationFor('transport', config.transportUrl),
    registrationFor('store', config.storeUrl),
    config.largePayloads.location === 'nats-object-store' ? natsRegistration : undefined,
  ];
  await Promise.all(registrations.map((r) => r?.load?.()));
}

/** The registered adapter of this kind for the URL, built from its settings. */
function fromConfig<Kind extends AdapterKind>(
  kind: Kind,
  url: string,
  config: WorkerAppConfig,
  log: AdapterLogHook | undefined,
) {
  const registration = registrationOfConfig(kind, url);
  const settings = (config as unknown as Record<string, object>)[registration.name];
  const hooks = registration.logComponent !== undefined && log !== undefined ? { log } : {};
  return registration.create(url, settings, hooks);
}

/** The bus; `log` receives its client library's log lines when it writes any (kafkajs). */
export function transportFromConfig(config: WorkerAppConfig, log?: AdapterLogHook): Transport {
  return fromConfig('transport', config.transportUrl, config, log) as Transport;
}

/** The store; refuses a Redis store whose keys would meet the Redis bus's on one server. */
export function storeFromConfig(config: WorkerAppConfig): Store {
  refuseSharedRedisKeys(config);
  return fromConfig('store', config.storeUrl, config, undefined) as Store;
}

/**
 * The claim check's options for a Worker or Client, and the payload store to connect and close
 * when it is not the store itself (the NATS object store, on the NATS bus's connection settings).
 */
export function largePayloadsFromConfig(
  config: WorkerAppConfig,
  store: Store,
): { options: LargePayloadOptions; separate: NatsObjectPayloadStore | undefined } {
  const { thresholdBytes, location, bucket } = config.largePayloads;
  const separate =
    location === 'nats-object-store'
      ? natsCode.get().natsObjectPayloadStore({
          ...natsConnectionFromSettings(config.transportUrl, config.nats),
          // Large payloads need the copies the journal that refers to them has.
          ...(config.nats.replicas !== undefined && { replicas: config.nats.replicas }),
          ...(bucket !== undefined && { bucket }),
        })
      : undefined;
  const payloads: PayloadStore = separate ?? store.payloads;
  return { options: { ...(thresholdBytes !== undefined && { thresholdBytes }), payloads }, separate };
}
