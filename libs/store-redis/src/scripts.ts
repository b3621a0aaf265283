/**
 * Loads the Lua scripts in `./lua` (next to this module in `src` and, copied by the build, in
 * `dist`) and registers them on a connection with ioredis `defineCommand`, which runs each with
 * EVALSHA once the connection has sent it, and with EVAL when the server does not know it (a
 * restart or SCRIPT FLUSH emptied its script cache). The ACL user therefore needs only EVAL and
 * EVALSHA. The registering is the Redis transport's too (`@baton/core/adapter`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { BatonError } from '@baton/core';
import { defineLuaScripts, type LuaScriptRunner } from '@baton/redis-kit';

/** The scripts, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'acquire-slot',
  'batch',
  'acquire-lease',
  'check-data-marker',
  'claim-due-timers',
  'clock',
  'complete-promise',
  'continue-run',
  'create-promise',
  'create-run',
  'delete-expired-runs',
  'delete-pointers',
  'delete-run',
  'delete-schedule',
  'depart-worker',
  'deliver-signal',
  'due-schedules',
  'expire-promise',
  'expired-runs',
  'forget-group-log',
  'forget-worker',
  'group-log-use',
  'index-runs',
  'list-runs',
  'list-schedules',
  'list-workers',
  'mark-own-journal',
  'pause-held-run',
  'publish-membership',
  'put-schedule',
  'query-answer',
  'query-ask',
  'query-claim',
  'reap-dead-workers',
  'reap-expired-leases',
  'read-membership',
  'read-pointers',
  'record-claim-failure',
  'record-worker',
  'release-lease',
  'release-slot',
  'renew-leases',
  'reopen-run',
  'report-worker',
  'request-cancel',
  'request-pause',
  'resume-run',
  'set-attributes',
  'suspend-run',
  'take-rate-token',
  'take-scan-turn',
  'write-checkpoint',
  'request-update',
  'settle-update',
  'pending-updates',
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
 * Runs a script by name; `keys` and `args` become KEYS and ARGV. The key count goes with each call
 * (the scripts that renew or reap many leases take a varying number of keys).
 */
export type ScriptRunner = LuaScriptRunner<ScriptName, string | number>;

/**
 * Registers every script on this connection as `baton:<name>` (prefixed, so no script can shadow
 * a Redis command) and returns the typed runner over them.
 */
export function defineScripts(redis: Redis): ScriptRunner {
  const sources = [...loadScripts()].map(([name, { source }]) => [name, source] as const);
  return defineLuaScripts(redis, sources, 'baton');
}

/**
 * Proves at connect that this user may run EVALSHA as well as EVAL. The first call of each script
 * goes as EVAL, so without this a user lacking EVALSHA would pass connect and fail on a script's
 * second call, mid-run. NOSCRIPT (the server does not have the script cached yet) means the
 * command was allowed.
 */
export async function checkEvalsha(redis: Redis): Promise<void> {
  const clock = loadScripts().get('clock');
  if (clock === undefined) throw new Error('no Lua script named clock');
  try {
    await redis.evalsha(clock.sha, 0);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
  }
}
