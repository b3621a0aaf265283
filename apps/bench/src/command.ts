/**
 * The frame of the bench commands: their arguments through `node:util` `parseArgs`, and for the
 * small ones (`bench:executor`, `bench:group-commit`, `bench:retention`) the usage for --help or
 * the argument's error (exit code 2), else the run.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad command line; its message names the argument and the fix. */
export class UsageError extends Error {}

type CommandOptions = NonNullable<ParseArgsConfig['options']>;
type StrictArgs<O extends CommandOptions> = {
  args: string[];
  options: O;
  strict: true;
  allowPositionals: false;
};

/**
 * `parseArgs` in strict mode (no positionals, no unknown options, a value for each string option),
 * with its errors turned into a {@link UsageError} that ends with the usage text.
 */
export function parseCommandArgs<O extends CommandOptions>(
  argv: readonly string[],
  usage: string,
  options: O,
): ReturnType<typeof parseArgs<StrictArgs<O>>> {
  try {
    return parseArgs<StrictArgs<O>>({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError(`${(err as Error).message}\n\n${usage}`);
    }
    throw err;
  }
}

/** Parses `argv`; undefined means --help. Throws an Error naming a bad argument. */
export type ParseArgs<C> = (argv: string[]) => C | undefined;

export async function runCommand<C>(
  usage: string,
  parse: ParseArgs<C>,
  run: (config: C) => Promise<void>,
): Promise<void> {
  let config: C | undefined;
  try {
    config = parse(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 2;
    return;
  }
  if (config === undefined) {
    console.log(usage);
    return;
  }
  await run(config);
}

/** `value` of `flag` as a whole number of at least 1. */
export function wholeNumber(flag: string, value: string | undefined): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${flag} is '${value ?? ''}'; give a whole number of at least 1`);
  return Number(value);
}

/** The bus and store flags every bench command reads (`--transport nats|kafka|redis`, `--store redis|postgres`). */
export function busAndStore(values: { transport?: unknown; store?: unknown }): {
  transport: 'nats' | 'kafka' | 'redis';
  store: 'redis' | 'postgres';
} {
  if (values.transport !== 'nats' && values.transport !== 'kafka' && values.transport !== 'redis')
    throw new UsageError(`--transport is '${String(values.transport)}'; use nats, kafka or redis`);
  if (values.store !== 'redis' && values.store !== 'postgres')
    throw new UsageError(`--store is '${String(values.store)}'; use redis or postgres`);
  return { transport: values.transport, store: values.store };
}

/** A repeat of the signal sooner than this is the same Ctrl-C (tsx relays it to its child too). */
const REPEAT_SIGNAL_MS = 1_000;

/**
 * On SIGINT or SIGTERM: `stop` (the command's processes and servers), then exit 130. The same
 * signal again within a second is the first one relayed (a terminal's Ctrl-C reaches the whole
 * process group, and tsx passes it on to the script once more) and is ignored; later, it exits at
 * once.
 */
export function stopOnSignal(what: string, stop: () => Promise<unknown>): void {
  let first: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (first !== undefined) {
      if (Date.now() - first > REPEAT_SIGNAL_MS) process.exit(130);
      return;
    }
    first = Date.now();
    process.stderr.write(`\n${signal}: stopping ${what} (again to quit at once)\n`);
    void stop().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
