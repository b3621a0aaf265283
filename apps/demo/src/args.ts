/**
 * The demo's command line (`npm start -- [options]`), parsed with `node:util` `parseArgs`.
 */
import { parseArgs } from 'node:util';
import { DEMO_BUSES, DEMO_REDIS_URL_ENV, type DemoBus } from './bus.js';
import { DEFAULT_SEED, type DemoOptions } from './demo.js';

export const USAGE = `Usage: npm start -- [options]

  --runs N     loan applications to start (default 50)
  --seed N     seed of the scenario (default ${DEFAULT_SEED}): the applicants, the reviewers' answers
               and when they come, which worker crashes and at which point; the same seed plans
               the same crash (its timing in seconds still varies with the machine)
  --bus B      memory (default: no servers) or redis: the Redis transport (a BullMQ queue and
               Redis Streams) on the Redis at ${DEMO_REDIS_URL_ENV} (default redis://127.0.0.1:6379),
               under a prefix of its own that is deleted at the end; the store stays in memory
  --plain      print progress lines instead of redrawing in place
  --quiet      print only the summary
  --console    then keep the fleet running and serve the web console on http://127.0.0.1:8636/
               (BATON_CONSOLE_PORT) until Ctrl-C, to see the runs and the crash in a browser
  --help, -h   this text

Runs three workers on the in-memory bus (or --bus redis) and store, crashes one of them mid-run, and
exits 0 only if every invariant held.`;

/** A bad command line; its message names the argument and ends with the usage. */
export class UsageError extends Error {}

/** What the command line asks for: the demo's options, and whether to serve the console after. */
export type DemoArgs = DemoOptions & { console?: true };

/** The options for {@link runDemo}, or 'help'. Throws a {@link UsageError} for a bad argument. */
export function parseDemoArgs(argv: readonly string[]): DemoArgs | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        runs: { type: 'string' },
        seed: { type: 'string' },
        bus: { type: 'string' },
        plain: { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        console: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help) return 'help';
  return {
    ...(values.runs !== undefined && { runs: positiveInteger('runs', values.runs) }),
    ...(values.seed !== undefined && { seed: wholeNumber('seed', values.seed) }),
    ...(values.bus !== undefined && { bus: busOf(values.bus) }),
    output: values.quiet ? 'silent' : values.plain ? 'plain' : 'auto',
    ...(values.console && { console: true as const }),
  };
}

function busOf(value: string): DemoBus {
  if (!(DEMO_BUSES as readonly string[]).includes(value))
    throw new UsageError(`--bus must be one of ${DEMO_BUSES.join(', ')}, got '${value}'`);
  return value as DemoBus;
}

function positiveInteger(name: string, value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1)
    throw new UsageError(`--${name} must be a positive integer, got '${value}'`);
  return parsed;
}

/** A seed may be 0; the generator takes 32 bits. */
function wholeNumber(name: string, value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed > 0xffffffff)
    throw new UsageError(`--${name} must be a whole number from 0 to 4294967295, got '${value}'`);
  return parsed;
}
