/**
 * The adapters and the Worker check their own options and name them as code does (`heartbeatMs`,
 * `natsTransport: prefix`); an operator of the worker process set a BATON_* variable instead.
 * This rewrites such a ConfigError to name the variable behind the option, with the value it was
 * given (a URL with its secret masked, a password as ***, never a key), keeping what the adapter
 * says is expected.
 */
import { ConfigError } from '@baton/core';
import { maskUrl } from './adapters.js';
import { ENV } from './config.js';
import { registrationFor } from './registry.js';

/**
 * An option name as an adapter's message spells it, and the variable that sets it; with `name`
 * the words stay (they read as prose, e.g. "sasl needs a username") and the variable is named
 * in front of the message.
 */
type OptionVariable = readonly [RegExp, string, ('name' | undefined)?];

/**
 * Per builder: the prefix its messages carry, and its options in the order they are matched. The
 * bus and the store are the registered adapter's (registry.ts) that the URL variable picks.
 */
const OPTION_VARIABLES: Record<
  'payloads' | 'worker',
  { prefix?: RegExp; options: readonly OptionVariable[] }
> = {
  payloads: {
    prefix: /^natsObjectPayloadStore: /,
    options: [
      [/\bbucket\b/, ENV.payloadRefBucket],
      [/\bservers?( URL)?\b/, ENV.transportUrl],
    ],
  },
  worker: {
    options: [
      [/\bconcurrency\b/, ENV.concurrency],
      [/\bleaseMs\b/, ENV.leaseMs],
      [/\bheartbeatMs\b/, ENV.heartbeatMs],
      [/\breapIntervalMs\b/, ENV.reapIntervalMs],
      [/\bdeadWorkerScanMs\b/, ENV.deadWorkerScanMs],
      [/\bscheduleScanMs\b/, ENV.scheduleScanMs],
      [/\bmissingVersionGraceMs\b/, ENV.missingVersionGraceMs],
      [/\bretentionMs\b/, ENV.retentionMs],
      [/\bcheckpointEvery\b/, ENV.checkpointEvery],
      [/\bmaxMessageBytes\b/, ENV.maxMessageBytes],
      [/\bmaxDeliveries\b/, ENV.maxDeliveries],
      [/\bdrainTimeoutMs\b/, ENV.drainTimeoutMs],
      [/\binProcessWaitMs\b/, ENV.inProcessWaitMs],
      [/\bfetchWaitMs\b/, ENV.fetchWaitMs],
      [/\bworkerId\b/, ENV.workerId],
      [/\bthresholdBytes\b/, ENV.payloadRefThresholdBytes],
    ],
  },
};

/** Variables whose value is a URL: shown masked. */
const URL_VARIABLES = new Set<string>([ENV.transportUrl, ENV.storeUrl]);

export type ConfigBuilder = 'transport' | 'store' | keyof typeof OPTION_VARIABLES;

/**
 * The bus's or the store's options from its registration: words naming the URL, words about the
 * URL (kept), then each variable's option words. Nothing when the URL names no registered adapter
 * (that error already names the URL variable).
 */
function adapterOptions(
  kind: 'transport' | 'store',
  env: Record<string, string | undefined>,
): { prefix?: RegExp; options: readonly OptionVariable[] } {
  const urlVariable = kind === 'transport' ? ENV.transportUrl : ENV.storeUrl;
  const registration = registrationFor(kind, env[urlVariable]?.trim() ?? '');
  if (registration === undefined) return { options: [] };
  const { prefix, url, aboutUrl } = registration.messages;
  const variables = Object.values(registration.variables) as { name: string; option?: RegExp }[];
  return {
    prefix,
    options: [
      [url, urlVariable],
      ...(aboutUrl === undefined ? [] : [[aboutUrl, urlVariable, 'name'] as const]),
      ...variables.flatMap((v) => (v.option === undefined ? [] : [[v.option, v.name] as const])),
    ],
  };
}

/**
 * Runs `build` (an adapter's or the Worker's construction from the process's configuration);
 * a ConfigError it throws is rethrown naming the BATON_* variables instead of the code options.
 */
export function namingVariables<T>(
  builder: ConfigBuilder,
  env: Record<string, string | undefined>,
  build: () => T,
): T {
  try {
    return build();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(renameOptions(builder, env, err.message), { cause: err });
  }
}

/** The message with each option replaced by its variable, and the variables' values when not shown. */
export function renameOptions(
  builder: ConfigBuilder,
  env: Record<string, string | undefined>,
  message: string,
): string {
  // Errors raised from the configuration itself (a file a variable names) already say which.
  const words = new Set(message.match(/\bBATON_[A-Z_]+\b/g) ?? []);
  if (Object.values(ENV).some((variable) => words.has(variable))) return message;
  const { prefix, options } =
    builder === 'transport' || builder === 'store' ? adapterOptions(builder, env) : OPTION_VARIABLES[builder];
  let text = prefix === undefined ? message : message.replace(prefix, '');
  const named: string[] = [];
  for (const [pattern, resolved, mode] of options) {
    if (!pattern.test(text)) continue;
    // The first mention only: it is the subject; later words (a schema "name", a bucket's value) stay.
    if (mode !== 'name') text = text.replace(pattern, resolved);
    if (!named.includes(resolved)) named.push(resolved);
    // The URL's own words (its parameters, e.g. "known: prefix, partitions") are not options.
    if (mode === 'name') break;
  }
  if (named.length === 0) return message;
  // Each variable is named; its value is added unless the message already shows it.
  const lead = named
    .map((name) => {
      const raw = env[name]?.trim();
      const value = raw === undefined || raw === '' ? undefined : shown(name, raw);
      if (value !== undefined && !text.includes(value)) return `${name} is '${value}'`;
      return text.includes(name) ? undefined : name;
    })
    .filter((part): part is string => part !== undefined);
  return lead.length === 0 ? text : `${lead.join(', ')}: ${text}`;
}

/** A variable holding a secret (BATON_REDIS_SENTINEL_PASSWORD): its value is never shown. */
const SECRET_VARIABLE = /_PASSWORD$/;

function shown(variable: string, value: string): string {
  if (SECRET_VARIABLE.test(variable)) return '***';
  return URL_VARIABLES.has(variable) ? maskUrl(value) : value;
}
