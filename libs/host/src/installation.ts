/**
 * What one installation keeps on its bus and its store, listed and removed (`baton admin drop`):
 * the streams or topics of its bus prefix, the keys of its Redis prefix, its Postgres schema. Each
 * adapter's registration lists and drops its own part (`installation`); this module picks the two
 * the configuration names, with their settings, as the worker would build them.
 *
 * Invariants:
 * 1. Listing connects to the servers with admin calls only: it builds no adapter, so it creates
 *    nothing (a transport's connect would create its streams, a store's its schema).
 * 2. `dropInstallation` removes nothing unless every part's listing is free of `shared`, and a
 *    Redis bus and a Redis store whose keys could meet are refused first (refuseSharedRedisKeys).
 */
import { ConfigError } from '@baton/core';
import type { AdapterKind, InstallationListing } from '@baton/core/adapter';
import { maskUrl, registrationOfConfig } from './adapters.js';
import type { WorkerAppConfig } from './config.js';
import { refuseSharedRedisKeys } from './namespaces.js';

/** One installation's part on one server: the bus's or the store's. */
export interface InstallationPart {
  readonly role: 'bus' | 'store';
  /** The adapter's name (`nats`, `redis`, `postgres`). */
  readonly adapter: string;
  /** The server's URL without its secret. */
  readonly server: string;
  /** The namespace, as the `worker ready` line shows it (`{ transportPrefix: 'baton' }`). */
  readonly namespace: Readonly<Record<string, string>>;
  readonly listing: InstallationListing;
}

const ROLES: readonly {
  role: InstallationPart['role'];
  kind: AdapterKind;
  url: (c: WorkerAppConfig) => string;
}[] = [
  { role: 'bus', kind: 'transport', url: (c) => c.transportUrl },
  { role: 'store', kind: 'store', url: (c) => c.storeUrl },
];

/** The registration and settings of each role, their code loaded. */
async function partsOf(config: WorkerAppConfig) {
  refuseSharedRedisKeys(config);
  return Promise.all(
    ROLES.map(async ({ role, kind, url }) => {
      const registration = registrationOfConfig(kind, url(config));
      await registration.load?.();
      const settings = (config as unknown as Record<string, object>)[registration.name] ?? {};
      return { role, registration, url: url(config), settings };
    }),
  );
}

/**
 * Everything the installation the configuration names keeps on its bus and its store, read from
 * the servers; changes nothing (and creates nothing). Also what is not removed with it: the NATS
 * object store bucket of large payloads, which other installations may share (`kept`).
 */
export async function listInstallation(
  config: WorkerAppConfig,
): Promise<{ parts: InstallationPart[]; kept: string[] }> {
  const parts = await Promise.all(
    (await partsOf(config)).map(async ({ role, registration, url, settings }) => ({
      role,
      adapter: registration.name,
      server: maskUrl(url),
      namespace: registration.describeNamespace(url, settings),
      listing: await registration.installation.list(url, settings),
    })),
  );
  const { location, bucket } = config.largePayloads;
  const kept =
    location === 'nats-object-store'
      ? [
          `the NATS object store bucket ${bucket ?? 'BATON_PAYLOADS'} (large payloads): its objects may be ` +
            "other installations' too; remove it yourself once none uses it (nats object rm)",
        ]
      : [];
  return { parts, kept };
}

/**
 * Removes everything the installation keeps on its bus and its store, after listing it again:
 * refused (ConfigError, nothing removed) when a part is shared with other data (its listing's
 * `shared`). Irreversible. Resolves with what was removed.
 */
export async function dropInstallation(config: WorkerAppConfig): Promise<InstallationPart[]> {
  const { parts } = await listInstallation(config);
  const shared = parts.filter((p) => p.listing.shared !== undefined);
  if (shared.length > 0)
    throw new ConfigError(
      `nothing was removed: ${shared.map((p) => `the ${p.role} (${p.server}): ${p.listing.shared}`).join('; ')}`,
    );
  for (const { registration, url, settings } of await partsOf(config))
    await registration.installation.drop(url, settings);
  return parts;
}
