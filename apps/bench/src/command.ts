/**
 * The frame of the small bench commands (`bench:executor`, `bench:group-commit`): parse the
 * arguments, print the usage for --help or the argument's error (exit code 2), else run.
 */

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
    throw new Error(`${flag} is '${value ?? ''}'; give a whole number of at least 1`);
  return Number(value);
}
