/**
 * Protected data in the console: a run whose journal a worker encrypted reads as "protected"
 * (with the reason naming the key) through a console whose client has no key, and never as
 * bytes; through a console given the keyring it reads decoded, step results included.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { resolvePayloadProtection } from '@baton/core/runtime';
import { Worker } from '@baton/worker';
import { freeConsolePort } from '../console-port.spec-helper.js';
import { startConsole } from '../index.js';
import type { ConsoleServer } from './console-server.js';

const SECRET = `secret-${randomBytes(6).toString('hex')}`;
const reveal = defineActivity({ name: 'reveal', run: async (n: number) => ({ n, secret: SECRET }) });
const twoSteps = defineWorkflow({
  name: 'protected_steps',
  version: 1,
  run: async (ctx, _input: { note: string }) => {
    await ctx.run(reveal, 1);
    return (await ctx.run(reveal, 2)).n;
  },
});

const servers: ConsoleServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('protected data', () => {
  it('shows an encrypted journal as protected without the key, and decoded with it', async () => {
    const protection = resolvePayloadProtection(
      { encryptionKeys: `k1:${randomBytes(32).toString('base64')}` },
      {},
    );
    const transport = memoryTransport();
    const store = memoryStore();
    const worker = new Worker({ transport, store, workflows: [twoSteps], payloadProtection: protection });
    await worker.start();
    const keyed = new Client({ transport, store, payloadProtection: protection });
    const run = await keyed.start(twoSteps, { note: 'hello' });
    expect(await run.result({ timeoutMs: 10_000 })).toBe(2);
    await worker.stop();

    const withoutKey = await startConsole({
      client: new Client({ transport, store }),
      options: { port: await freeConsolePort() },
      env: {},
      log: () => {},
    });
    servers.push(withoutKey);
    const blind = await fetch(`${withoutKey.url}api/runs/${run.runId}/timeline`);
    const blindText = await blind.text();
    expect(blind.status, blindText).toBe(200);
    expect(JSON.parse(blindText)).toEqual({ protected: expect.stringMatching(/k1/) });
    expect(blindText).not.toContain(SECRET);

    const withKey = await startConsole({
      client: keyed,
      options: { port: await freeConsolePort() },
      env: {},
      log: () => {},
    });
    servers.push(withKey);
    const seen = (await (await fetch(`${withKey.url}api/runs/${run.runId}/timeline`)).json()) as {
      outcomes: Record<string, { result?: { secret: string } }>;
    };
    expect(seen.outcomes['0']?.result?.secret).toBe(SECRET);
  });
});
