/**
 * Loads the Lua scripts in `./lua` (next to this module in `src` and, copied by the build, in
 * `dist`) and registers them on a connection with ioredis `defineCommand`, which runs each with
 * EVALSHA once the connection has sent it, and with EVAL when the server does not know it (a
 * restart or SCRIPT FLUSH emptied its script cache). The ACL user therefore needs only EVAL and
 * EVALSHA.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { BatonError } from '@baton/core';

/** The scripts, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'acquire-slot',
  'acquire-lease',
  'append-pointers',
  'check-data-marker',
  'claim-due-timers',
  'claim-new-run',
  'clock',
  'create-run',
  'delete-expired-runs',
  'delete-pointers',
  'delete-run',
  'delete-schedule',
  'deliver-signal',
  'due-schedules',
  'expired-runs',
  'finish-run',
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
  'suspend-run',
  'take-rate-token',
  'take-scan-turn',
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

/** Runs a script by name; `keys` and `args` become KEYS and ARGV. */
export type ScriptRunner = (
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>;

/** The method a script becomes on a connection: prefixed, so no script can shadow a Redis command. */
const commandName = (name: ScriptName) => `baton:${name}` as const;

/**
 * What `defineCommand` adds to a connection for each script: with no fixed `numberOfKeys` in the
 * definition, the key count is the first argument (the scripts that renew or reap many leases
 * take a varying number of keys).
 */
type ScriptCommands = Record<
  ReturnType<typeof commandName>,
  (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<unknown>
>;

/**
 * Registers every script on this connection with ioredis `defineCommand` and returns the typed
 * runner over them. ioredis sends a script's first call on a connection (a new one after every
 * reconnect) as EVAL and the later ones as EVALSHA, and resends one refused with NOSCRIPT (a
 * server whose script cache was emptied) as EVAL, which caches it again.
 */
export function defineScripts(redis: Redis): ScriptRunner {
  const scripts = loadScripts();
  for (const [name, { source }] of scripts) redis.defineCommand(commandName(name), { lua: source });
  const commands = redis as unknown as ScriptCommands;
  return (name, keys, args) => commands[commandName(name)](keys.length, ...keys, ...args);
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
