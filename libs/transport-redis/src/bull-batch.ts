/**
 * Batch take and batch finish over BullMQ's own Lua: one script call moves up to `max` jobs from
 * wait (or prioritized) to active, another completes many jobs, where BullMQ spends one call per
 * job (getNextJob, moveToCompleted).
 *
 * Invariants:
 * 1. The per-job work is BullMQ's own code, not a copy of it: each batch script is the installed
 *    BullMQ's `moveToActive` or `moveToFinished` script, as BullMQ ships it, wrapped in a Lua
 *    function that takes KEYS and ARGV as parameters, and called once per job. So each job gets
 *    exactly what BullMQ's call would do (its lock, `attemptsStarted`, the events, the marker,
 *    the priority counter, the delayed promotion, the dedup key), and workers of the old code, of
 *    this one and other BullMQ consumers can share a queue. The scripts come with the BullMQ the
 *    transport runs, and their key counts are checked when the transport connects, so a BullMQ
 *    whose scripts changed shape fails loudly instead of being driven wrongly.
 * 2. The arguments are BullMQ's too: a finish passes, per job, the keys and arguments that BullMQ's
 *    `moveToCompletedArgs` builds; a take passes the `moveToActive` keys and the options BullMQ
 *    would pack (token, lock duration, worker name).
 * 3. A take stops at the first job it cannot get (empty, paused, rate limited), as one
 *    `moveToActive` call would answer, and gives every job in it one lock token, new per call:
 *    the lock key is per job, and a job taken again (after a stall or a nak) is taken by another
 *    call, with another token, so a stale holder can never settle the new delivery.
 * 4. A finish answers one code per job (BullMQ's: 0, or negative for a lost lock, a missing job,
 *    a job not active, …); one job's failure does not stop the others.
 * 5. A script error part-way (Redis refused a command) leaves what it did before: jobs taken and
 *    never delivered wait out their lock and come back by the stalled check, as after a fetch
 *    whose reply was lost; nothing is lost.
 */
import { createRequire } from 'node:module';
import { BatonError } from '@baton/core';
import { defineLuaScripts, type LuaCommandHost, type LuaScriptRunner } from '@baton/redis-kit';

/** One BullMQ script as its package ships it (`bullmq/dist/cjs/scripts`). */
interface BullScript {
  name: string;
  content: string;
  keys: number;
}

/** `moveToActive`'s key count, which the take passes (wait … marker). */
export const TAKE_KEYS = 11;
/** `moveToFinished`'s key count: each finished job's part of the finish call's KEYS. */
export const FINISH_KEYS = 14;
/** `moveToFinished`'s argument count: each finished job's part of the finish call's ARGV. */
export const FINISH_ARGS = 9;

function bullScript(name: string, keys: number): BullScript {
  const scripts = createRequire(import.meta.url)('bullmq/dist/cjs/scripts/index.js') as Record<
    string,
    BullScript | undefined
  >;
  const script = scripts[name];
  if (script === undefined || typeof script.content !== 'string' || script.keys !== keys) {
    throw new BatonError(
      'BATON_REDIS_TRANSPORT_SCRIPTS',
      `the installed BullMQ's ${name} script is not the one the Redis transport drives (${keys} keys); ` +
        'install the BullMQ version @baton/transport-redis depends on',
    );
  }
  return script;
}

/** BullMQ's script as a local Lua function `name(KEYS, ARGV)`, returning what the script returns. */
function asFunction(functionName: string, script: BullScript): string {
  return `local function ${functionName}(KEYS, ARGV)\n${script.content}\nend\n`;
}

/**
 * The take: KEYS are moveToActive's; ARGV[1] key prefix, ARGV[2] timestamp, ARGV[3] lock token,
 * ARGV[4] lock duration (ms), ARGV[5] worker name ('' for none), ARGV[6] most jobs to take.
 * Returns one `{fields, jobId}` pair per job taken, in order.
 */
function takeSource(): string {
  return `${asFunction('moveToActive', bullScript('moveToActive', TAKE_KEYS))}
local options = { token = ARGV[3], lockDuration = tonumber(ARGV[4]) }
if ARGV[5] ~= '' then options.name = ARGV[5] end
local argv = { ARGV[1], ARGV[2], cmsgpack.pack(options) }
local taken = {}
for i = 1, tonumber(ARGV[6]) do
  local result = moveToActive(KEYS, argv)
  if type(result) ~= 'table' or type(result[1]) ~= 'table' then break end
  taken[#taken + 1] = { result[1], result[2] }
end
return taken
`;
}

/**
 * The finish: per job, ${FINISH_KEYS} KEYS and ${FINISH_ARGS} ARGV in the order BullMQ's
 * moveToCompletedArgs builds them (an absent last argument is ''). Returns one code per job.
 */
function finishSource(): string {
  return `${asFunction('moveToFinished', bullScript('moveToFinished', FINISH_KEYS))}
local codes = {}
for job = 0, #KEYS / ${FINISH_KEYS} - 1 do
  local keys, argv = {}, {}
  for k = 1, ${FINISH_KEYS} do keys[k] = KEYS[job * ${FINISH_KEYS} + k] end
  for a = 1, ${FINISH_ARGS} do argv[a] = ARGV[job * ${FINISH_ARGS} + a] end
  codes[job + 1] = moveToFinished(keys, argv)
end
return codes
`;
}

/** The batch scripts' names. */
export type BullBatchScript = 'bull-take' | 'bull-finish';
/** Runs a batch script by name; `keys` and `args` become KEYS and ARGV. */
export type BullBatchRunner = LuaScriptRunner<BullBatchScript, string | Buffer | number>;

let sources: ReadonlyArray<readonly [BullBatchScript, string]> | undefined;

/**
 * Registers the batch scripts on a lane's BullMQ connection (`batonBus:bull-take`, …), beside
 * BullMQ's own commands: a long batch never queues the journal's appends behind it on the
 * transport's command connection.
 */
export function defineBullBatchScripts(redis: LuaCommandHost): BullBatchRunner {
  return defineLuaScripts(redis, bullBatchSources(), 'batonBus');
}

/** The batch scripts' sources; throws when the installed BullMQ's scripts are not the expected ones. */
export function bullBatchSources(): ReadonlyArray<readonly [BullBatchScript, string]> {
  sources ??= [
    ['bull-take', takeSource()],
    ['bull-finish', finishSource()],
  ];
  return sources;
}
