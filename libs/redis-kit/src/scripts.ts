/**
 * How the Redis adapters (the store and the transport) run their Lua scripts: each registers its
 * scripts on a connection with ioredis `defineCommand`, which sends a script's first call on a
 * connection (a new one after every reconnect) as EVAL and the later ones as EVALSHA, and resends
 * one refused with NOSCRIPT (a server whose script cache was emptied) as EVAL, which caches it
 * again; the ACL user therefore needs only EVAL and EVALSHA. Shared here with no ioredis import (a
 * connection is anything with `defineCommand`); reading the script files is I/O, so each adapter
 * does that itself.
 */

/** What {@link defineLuaScripts} needs of a connection: ioredis `defineCommand`. */
export interface LuaCommandHost {
  defineCommand(name: string, definition: { lua: string }): void;
}

/** Runs a script by name; `keys` and `args` become KEYS and ARGV. */
export type LuaScriptRunner<Name extends string, Arg> = (
  name: Name,
  keys: readonly string[],
  args: readonly Arg[],
) => Promise<unknown>;

/**
 * Registers every script (name and source) on `redis` as the command `<prefix>:<name>` (prefixed,
 * so no script shadows a Redis command) and returns the runner over them. With no fixed
 * `numberOfKeys` in the definition, the key count is each call's first argument.
 */
export function defineLuaScripts<Name extends string, Arg>(
  redis: LuaCommandHost,
  scripts: Iterable<readonly [Name, string]>,
  prefix: string,
): LuaScriptRunner<Name, Arg> {
  for (const [name, lua] of scripts) redis.defineCommand(`${prefix}:${name}`, { lua });
  const commands = redis as unknown as Record<
    string,
    (numberOfKeys: number, ...keysAndArgs: (string | Arg)[]) => Promise<unknown>
  >;
  return (name, keys, args) => commands[`${prefix}:${name}`]!(keys.length, ...keys, ...args);
}
