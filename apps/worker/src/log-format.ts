/**
 * The logger of a Baton process (pino) in the format BATON_LOG_FORMAT names: `json`, pino's own
 * JSON lines, for log collectors; or `pretty`, one line an event for a person at a terminal:
 *
 *   10:00:00.123 WARN  run failed runId=k_9fQ2 workflow=orders@2 step=3 err="Error: card declined"
 *
 * the time (UTC, as the CLI's times), the level, the message, then the run's id, its workflow and
 * step when the line has them, then the line's other fields as `key=value` (strings quoted when
 * they hold a space, the rest as JSON). The process's `pid`, `hostname` and `name`, and the trace
 * ids, are left out: a terminal shows one process, and the JSON format keeps them for the
 * collectors. Colour (the level) only when the output is a terminal and NO_COLOR is not set.
 *
 * Unset, the format is `pretty` when stdout (where pino writes) is a terminal and `json` otherwise,
 * so a container's log stays JSON. A bad value gives JSON until the configuration check, which
 * stops the process naming the variable.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { ENV, logFormatOf } from '@baton/host';

/** `json` or `pretty` (BATON_LOG_FORMAT). */
type LogFormat = ReturnType<typeof logFormatOf>;

/** pino's level numbers, as the pretty line names them. */
const LEVELS: Readonly<Record<number, { name: string; colour: string }>> = {
  10: { name: 'TRACE', colour: '\u001b[90m' },
  20: { name: 'DEBUG', colour: '\u001b[90m' },
  30: { name: 'INFO', colour: '\u001b[32m' },
  40: { name: 'WARN', colour: '\u001b[33m' },
  50: { name: 'ERROR', colour: '\u001b[31m' },
  60: { name: 'FATAL', colour: '\u001b[35m' },
};
const RESET = '\u001b[0m';

/** Fields a pretty line shows first, in this order, when the line has them. */
const LEADING = ['runId', 'workflow', 'seq'] as const;
/** How a leading field is named in the line. */
const LEADING_NAMES: Readonly<Record<string, string>> = { seq: 'step' };
/** Fields a pretty line leaves out (pino's own, the trace ids, and those shown already). */
const LEFT_OUT = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v', 'trace_id', 'span_id']);

/** One field as `key=value`: a string as it is (quoted when it holds a space or is empty), the rest as JSON. */
function fieldText(key: string, value: unknown): string {
  if (typeof value === 'string') return `${key}=${/^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`;
  return `${key}=${JSON.stringify(value)}`;
}

/** An error as pino serialises it (`{ type, message, stack }`) as `Type: message`; anything else as it is. */
function errorText(err: unknown): unknown {
  if (typeof err !== 'object' || err === null || !('message' in err)) return err;
  const { type, message } = err as { type?: unknown; message?: unknown };
  return typeof type === 'string' ? `${type}: ${String(message)}` : String(message);
}

/**
 * One pino JSON line as the pretty line the module comment describes (with its newline). A line
 * that is not a JSON object (never written by pino) is passed on as it is.
 */
export function prettyLine(json: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return json;
    record = parsed as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = LEVELS[record.level as number] ?? { name: String(record.level), colour: '' };
  const time =
    typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '--:--:--.---';
  const label = level.name.padEnd(5);
  const parts = [time, colour && level.colour !== '' ? `${level.colour}${label}${RESET}` : label];
  if (typeof record.msg === 'string' && record.msg !== '') parts.push(record.msg);
  for (const key of LEADING)
    if (record[key] !== undefined) parts.push(fieldText(LEADING_NAMES[key] ?? key, record[key]));
  for (const [key, value] of Object.entries(record)) {
    if (LEFT_OUT.has(key) || (LEADING as readonly string[]).includes(key) || value === undefined) continue;
    parts.push(fieldText(key, key === 'err' ? errorText(value) : value));
  }
  return `${parts.join(' ')}\n`;
}

/** Whether colour may be used on `out`: a terminal, and NO_COLOR unset or empty (no-color.org). */
export function colourAllowed(env: Record<string, string | undefined>, terminal: boolean): boolean {
  return terminal && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** The format a process logging to `out` uses (see the module comment); a bad value is JSON here. */
export function chosenLogFormat(env: Record<string, string | undefined>, terminal: boolean): LogFormat {
  try {
    return logFormatOf(env[ENV.logFormat], terminal);
  } catch {
    return 'json';
  }
}

/** A destination that writes each of pino's lines to `out` as a pretty line. */
export function prettyDestination(out: { write(text: string): unknown }, colour: boolean): DestinationStream {
  return { write: (line: string) => void out.write(prettyLine(line, colour)) };
}

/**
 * The logger of a process named `name` writing to stdout, at level `info` until the process sets
 * the configured one, in the format BATON_LOG_FORMAT names (by default: pretty on a terminal).
 * Either way a line is written before the call returns (pino's synchronous destination), so the
 * fatal line of a process that exits next is not lost.
 */
export function processLogger(name: string, env: Record<string, string | undefined>): Logger {
  const terminal = process.stdout.isTTY === true;
  if (chosenLogFormat(env, terminal) === 'json') return pino({ name, level: 'info' });
  const stdout = pino.destination({ dest: 1, sync: true });
  return pino({ name, level: 'info' }, prettyDestination(stdout, colourAllowed(env, terminal)));
}
