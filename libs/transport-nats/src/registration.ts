/**
 * The NATS transport as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `nats://` and `tls://` URLs, the BATON_NATS_* variables, and the
 * stream prefix shown in the `worker ready` line. This module (the package's `/registration`
 * export) imports none of the transport's code: `load()` does (AdapterCode).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '@baton/core';
import {
  AdapterCode,
  switchSetting,
  textSetting,
  wholeNumberSetting,
  type AdapterRegistration,
} from '@baton/core/adapter';
import type { NatsCode } from './code.js';

export type { NatsCode } from './code.js';

/** The package's code, loaded when a process picks this transport. */
export const natsCode = new AdapterCode<NatsCode>(
  'the NATS transport',
  async () => (await import('./code.js')).natsAdapterCode,
);

/** The settings the BATON_NATS_* variables give. */
export interface NatsSettings {
  prefix?: string;
  ackWaitMs?: number;
  replicas?: number;
  priorityLanes?: boolean;
  /** A path: the file is read when the transport is built. */
  credsFile?: string;
  /** A path: the file is read when the transport is built. */
  tlsCaFile?: string;
}

const VARIABLES = {
  prefix: {
    ...textSetting(
      'BATON_NATS_PREFIX',
      'stream and subject prefix (`BATON_RUNS`, `baton.journal.<runId>`, …); one per installation',
      'prefix',
    ),
    default: '`baton`',
  },
  ackWaitMs: {
    ...wholeNumberSetting(
      'BATON_NATS_ACK_WAIT_MS',
      'an unacked run message is redelivered after this',
      1,
      'ackWaitMs',
    ),
    default: "the transport's default",
  },
  replicas: {
    ...wholeNumberSetting(
      'BATON_NATS_REPLICAS',
      'copies of each stream the worker creates or is told to change (and of the object store bucket it creates with `BATON_PAYLOAD_REF_LOCATION=nats-object-store`): `1` for a single server, `3` for a 3-node JetStream cluster (1-5); a count the servers cannot place stops the worker naming it ([docs/production.md](docs/production.md))',
      1,
      'replicas',
    ),
    default: '`1`',
  },
  priorityLanes: {
    ...switchSetting(
      'BATON_NATS_PRIORITY_LANES',
      "`true`: the worker sets up and reads the run queue's priority lanes (streams `<PREFIX>_RUNS_HIGH`, `_LOW`), and a producer may start runs at `high` or `low`; off, such a start is refused with a `ConfigError`. Turn it on for the workers, then the producers, once their NATS users may use the lanes ([docs/priorities.md](docs/priorities.md))",
      'priorityLanes',
    ),
    default: '`false`',
  },
  credsFile: textSetting(
    'BATON_NATS_CREDS_FILE',
    'a NATS `.creds` file (JWT + NKey)',
    // The variable names a file; the transport is given its content.
    ['credsFile', 'creds'],
  ),
  tlsCaFile: textSetting('BATON_NATS_TLS_CA_FILE', 'CA certificate to verify the NATS server', 'tls.ca'),
} as const;

/**
 * The connection part of the transport's options (servers, creds, CA) from the settings, the
 * files read now; also what the worker gives the NATS object payload store.
 */
export function natsConnectionFromSettings(url: string, settings: NatsSettings) {
  const { credsFile, tlsCaFile } = settings;
  return {
    servers: url,
    ...(credsFile !== undefined && { creds: readVariableFile('creds', VARIABLES.credsFile.name, credsFile) }),
    ...(tlsCaFile !== undefined && {
      tls: { ca: readVariableFile('tls.ca', VARIABLES.tlsCaFile.name, tlsCaFile) },
    }),
  };
}

/** The file a variable names; a ConfigError naming the variable, and carrying `option`, when it cannot be read. */
function readVariableFile(option: string, variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const problem = `cannot be read: ${(err as Error).message}`;
    throw new ConfigError(`${variable} names ${path}, which ${problem}`, {
      cause: err,
      option,
      value: path,
      expected: `it ${problem}`,
    });
  }
}

export const natsRegistration: AdapterRegistration<'nats', 'transport', NatsSettings> = {
  name: 'nats',
  kind: 'transport',
  schemes: ['nats', 'tls'],
  urlUserIsSecret: true,
  variables: VARIABLES,
  urlOption: 'servers',
  load: () => natsCode.load(),
  create: (url, settings) =>
    natsCode.get().natsTransport({
      ...natsConnectionFromSettings(url, settings),
      ...(settings.prefix !== undefined && { prefix: settings.prefix }),
      ...(settings.ackWaitMs !== undefined && { ackWaitMs: settings.ackWaitMs }),
      ...(settings.replicas !== undefined && { replicas: settings.replicas }),
      ...(settings.priorityLanes !== undefined && { priorityLanes: settings.priorityLanes }),
    }),
  // The prefix as the transport resolves it: unset is the default installation's (`baton`).
  installation: {
    list: async (url, settings) =>
      (await natsCode.load()).listNatsStreams({
        ...natsConnectionFromSettings(url, settings),
        ...(settings.prefix !== undefined && { prefix: settings.prefix }),
      }),
    drop: async (url, settings) =>
      (await natsCode.load()).deleteNatsStreams({
        ...natsConnectionFromSettings(url, settings),
        ...(settings.prefix !== undefined && { prefix: settings.prefix }),
      }),
  },
  isolation: { settings: (id) => ({ prefix: id }) },
  describeNamespace: (url, { prefix }) => ({
    transportPrefix: natsCode
      .get()
      .resolveNatsTransportOptions({ servers: url, ...(prefix !== undefined && { prefix }) }).prefix,
  }),
};
