/**
 * The `baton` CLI as a module: `runCli(argv, { env, io })` runs one command line and resolves its
 * exit code (0 done, 1 refused or failed, 2 usage). The command groups are in commands/.
 */
export { runCli, buildProgram, type CliEnvironment } from './program.js';
export type { CommandContext, CommandGroup } from './command.js';
export { EXIT, RefusedError, UsageError, type ExitCode } from './errors.js';
export { filterFromFlags, parseTime, queryFromFlags, type FilterFlags } from './filters.js';
export { envWithFlags, FLAG_VARIABLES, type GlobalFlags } from './context.js';
