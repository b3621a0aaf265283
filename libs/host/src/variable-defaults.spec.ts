/**
 * The defaults the table of variables shows operators (variables.ts, and from it docs/configuration.md) are
 * the ones the code applies: each worker option left unset is resolved by the Worker as a process
 * would resolve it, and compared with its row. A default written as a literal (`` `5000` ``) must
 * equal the resolved value; one written as a rule (`lease / 3`) is checked against that rule here.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { resolveWorkerOptions } from '@baton/worker';
import { HTTP_DEFAULTS, readConfig, WORKER_OPTION_VARIABLES, type WorkerTuning } from './config.js';
import { ENV, VARIABLES } from './variables.js';

const row = (name: string) => {
  const found = VARIABLES.find((v) => v.name === name);
  if (found === undefined) throw new Error(`${name} is not in the table`);
  return found;
};

/** A default written as one literal, as the value it stands for; undefined for a rule or prose. */
function literal(shown: string): number | boolean | string | undefined {
  const match = /^`([^`]+)`$/.exec(shown);
  if (match === null) return undefined;
  const text = match[1]!;
  if (/^-?\d+$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return /^[a-z][a-z0-9.-]*$/.test(text) ? text : undefined;
}

/** The worker options whose resolved values live in `historyLimits`, by their names there. */
const HISTORY_LIMITS: Partial<Record<string, 'softEntries' | 'softBytes' | 'maxEntries' | 'maxBytes'>> = {
  historySoftEntries: 'softEntries',
  historySoftBytes: 'softBytes',
  historyMaxEntries: 'maxEntries',
  historyMaxBytes: 'maxBytes',
};

const noop = defineWorkflow({ name: 'noop', version: 1, run: async () => null });

describe('the defaults the table of variables shows', () => {
  const resolved = resolveWorkerOptions({
    transport: memoryTransport(),
    store: memoryStore(),
    workflows: [noop],
  });
  const options = Object.entries(WORKER_OPTION_VARIABLES).filter(
    (entry): entry is [keyof WorkerTuning, string] => !entry[0].includes('.'),
  );

  it('are what the worker applies to every option left unset, where the table gives a literal', () => {
    const compared: string[] = [];
    for (const [option, variable] of options) {
      const expected = literal(row(variable).default);
      if (expected === undefined) continue;
      // The history limits resolve into one object (history-bounds.ts), under shorter names.
      const history = HISTORY_LIMITS[option];
      const value =
        history !== undefined
          ? resolved.historyLimits[history]
          : (resolved as unknown as Record<string, unknown>)[option];
      expect({ variable, value }).toEqual({ variable, value: expected });
      compared.push(variable);
    }
    // Most rows are literals; a table that lost them would compare nothing and pass.
    expect(compared.length).toBeGreaterThanOrEqual(15);
  });

  it('follow the rules the table states for the rest', () => {
    expect(row(ENV.heartbeatMs).default).toBe('lease / 3');
    expect(resolved.heartbeatMs).toBe(Math.floor(resolved.leaseMs / 3));
    expect(row(ENV.reapIntervalMs).default).toBe('min(1000, lease / 2)');
    expect(resolved.reapIntervalMs).toBe(Math.min(1_000, resolved.leaseMs / 2));
    expect(row(ENV.retentionTombstoneMs).default).toBe(`\`${ENV.retentionMs}\``);
    expect(row(ENV.shutdownTimeoutMs).default).toBe('drain + 15000');
    const config = readConfig({
      [ENV.transportUrl]: 'nats://127.0.0.1:4222',
      [ENV.storeUrl]: 'redis://127.0.0.1:6379',
      [ENV.workflows]: './workflows.js',
    });
    expect(config.shutdownTimeoutMs).toBe(resolved.drainTimeoutMs + 15_000);
    // The process's own settings, which the Worker never sees.
    expect(literal(row(ENV.httpPort).default)).toBe(HTTP_DEFAULTS.port);
    expect(literal(row(ENV.httpHost).default)).toBe(undefined); // `0.0.0.0` is not a name: compared as text
    expect(row(ENV.httpHost).default).toBe(`\`${HTTP_DEFAULTS.host}\``);
    expect(literal(row(ENV.livenessStallMs).default)).toBe(HTTP_DEFAULTS.livenessStallMs);
    expect(literal(row(ENV.logLevel).default)).toBe(config.logLevel);
    expect(literal(row(ENV.payloadRefLocation).default)).toBe(config.largePayloads.location);
  });
});
