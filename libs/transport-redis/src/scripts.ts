/**
 * Loads the Lua scripts in `./lua` (next to this module in `src` and, copied by the build, in
 * `dist`) and registers them on the command connection with ioredis `defineCommand`: EVALSHA once
 * the connection has sent a script, EVAL when the server does not know it (after a restart). The
 * registering is the Redis store's too (`@baton/core/adapter`).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { BatonError } from '@baton/core';
import { defineLuaScripts, type LuaScriptRunner } from '@baton/redis-kit';

/** The scripts, by file name without `.lua`. */
export const SCRIPT_NAMES = ['journal-append', 'group-append'] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Runs a script by name; `keys` and `args` become KEYS and ARGV. */
export type ScriptRunner = LuaScriptRunner<ScriptName, string | Buffer | number>;

let sources: ReadonlyMap<ScriptName, string> | undefined;

function loadSources(): ReadonlyMap<ScriptName, string> {
  if (sources !== undefined) return sources;
  const dir = new URL('./lua/', import.meta.url);
  sources = new Map(SCRIPT_NAMES.map((name) => [name, readScript(dir, name)]));
  return sources;
}

function readScript(dir: URL, name: string): string {
  const file = new URL(`${name}.lua`, dir);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new BatonError(
      'BATON_REDIS_TRANSPORT_SCRIPTS',
      `cannot read the Redis transport's Lua script ${fileURLToPath(file)}: ${(err as Error).message}; ` +
        'the package must ship its lua folder next to the code (the build copies src/lua to dist/lua)',
      { cause: err },
    );
  }
}

/**
 * Registers every script on `redis` as `batonBus:<name>` (prefixed, so no script shadows a Redis
 * command) and returns the runner over them.
 */
export function defineScripts(redis: Redis): ScriptRunner {
  return defineLuaScripts(redis, loadSources(), 'batonBus');
}
