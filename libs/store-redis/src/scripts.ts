/**
 * Loads the Lua scripts in `./lua` (next to this module in `src` and, copied by the build, in
 * `dist`) and runs them with EVALSHA, falling back to EVAL when the server does not know the
 * script (a restart flushed its script cache, or SCRIPT LOAD was not allowed at connect). EVAL
 * caches the script, so the next call is one EVALSHA round trip again. The ACL user therefore
 * needs only EVAL and EVALSHA; SCRIPT LOAD is used when allowed.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { BatonError } from '@baton/core';

/** The scripts, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'acquire-lease',
  'check-data-marker',
  'claim-due-timers',
  'claim-new-run',
  'clock',
  'create-run',
  'delete-expired-runs',
  'delete-run',
  'deliver-signal',
  'expired-runs',
  'finish-run',
  'reap-dead-workers',
  'reap-expired-leases',
  'record-claim-failure',
  'record-worker',
  'release-lease',
  'renew-leases',
  'reopen-run',
  'request-cancel',
  'suspend-run',
  'write-checkpoint',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

interface LoadedScript {
  source: string;
  sha: string;
}

let loaded: ReadonlyMap<ScriptName, LoadedScript> | undefined;

/** Reads every script once per process; the prelude's helpers are prepended to each. */
export function loadScripts(): ReadonlyMap<ScriptName, LoadedScript> {
  if (loaded !== undefined) return loaded;
  const dir = new URL('./lua/', import.meta.url);
  const prelude = readScript(dir, 'prelude');
  const scripts = new Map<ScriptName, LoadedScript>();
  for (const name of SCRIPT_NAMES) {
    const source = `${prelude}\n${readScript(dir, name)}`;
    scripts.set(name, { source, sha: createHash('sha1').update(source).digest('hex') });
  }
  loaded = scripts;
  return scripts;
}

function readScript(dir: URL, name: string): string {
  const file = new URL(`${name}.lua`, dir);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new BatonError(
      'BATON_REDIS_SCRIPTS',
      `cannot read the Redis store's Lua script ${fileURLToPath(file)}: ${(err as Error).message}; ` +
        'the package must ship its lua folder next to the code (the build copies src/lua to dist/lua)',
      { cause: err },
    );
  }
}

/**
 * Sends every script to the server's cache in one round trip, so the hot path never pays for
 * the EVAL fallback after connect. Returns false when the user may not run SCRIPT LOAD (then each
 * script is sent on first use instead).
 */
export async function preloadScripts(redis: Redis): Promise<boolean> {
  const pipeline = redis.pipeline();
  for (const { source } of loadScripts().values()) pipeline.script('LOAD', source);
  const results = (await pipeline.exec()) ?? [];
  for (const [err] of results) {
    if (err === null) continue;
    if (err.message.includes('NOPERM')) return false;
    throw err;
  }
  return true;
}

/** Runs a script by name; `keys` and `args` become KEYS and ARGV. */
export type ScriptRunner = (
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>;

export function scriptRunner(redis: Redis): ScriptRunner {
  const scripts = loadScripts();
  return async (name, keys, args) => {
    const script = scripts.get(name);
    if (script === undefined) throw new Error(`no Lua script named ${name}`);
    try {
      return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(script.source, keys.length, ...keys, ...args);
    }
  };
}
