/**
 * The adapters and the Worker check their own options and name them as code does (`heartbeatMs`,
 * `prefix`); an operator of the worker process set a BATON_* variable instead. A ConfigError about
 * one option carries it as fields (`option`, `value`, `expected`: @baton/core's ConfigErrorFields),
 * and the adapter's registration (or, for the Worker, WORKER_OPTION_VARIABLES) says which variable
 * sets that option, so the error is reported as `BATON_X is '<value>': <expected>` without reading
 * its message.
 */
import { ConfigError } from '@baton/core';
import type { AdapterOption, AdapterVariable, AnyAdapterRegistration } from '@baton/core/adapter';
import { natsRegistration } from '@baton/transport-nats/registration';
import { maskUrl } from './adapters.js';
import { ENV, WORKER_OPTION_VARIABLES } from './config.js';
import { registrationFor } from './registry.js';

/** What is being built from the configuration: its options are named by one table each. */
export type ConfigBuilder = 'transport' | 'store' | 'payloads' | 'worker';

/** Variables whose value is a URL: shown masked. */
const URL_VARIABLES = new Set<string>([ENV.transportUrl, ENV.storeUrl]);

/** A variable holding a secret (BATON_REDIS_SENTINEL_PASSWORD): its value is never shown. */
const SECRET_VARIABLE = /_PASSWORD$/;

const namesOf = (option: AdapterOption): readonly string[] =>
  typeof option === 'string' ? [option] : option;

/** A registration's options, its URL's among them, each with the variable that sets it. */
export function registrationVariables(
  registration: AnyAdapterRegistration,
  urlVariable: string,
): Map<string, string> {
  const variables = new Map<string, string>(namesOf(registration.urlOption).map((o) => [o, urlVariable]));
  for (const { name, option } of Object.values(registration.variables) as AdapterVariable<unknown>[]) {
    if (option !== undefined) for (const o of namesOf(option)) variables.set(o, name);
  }
  return variables;
}

/**
 * Option name -> variable for a builder. The bus and the store are the registered adapter's that
 * the URL variable picks (none: that error already names the URL variable); the NATS object
 * payload store takes its connection from the NATS bus's variables, and its bucket from its own.
 */
export function optionVariables(
  builder: ConfigBuilder,
  env: Record<string, string | undefined>,
): ReadonlyMap<string, string> {
  switch (builder) {
    case 'transport':
    case 'store': {
      const urlVariable = builder === 'transport' ? ENV.transportUrl : ENV.storeUrl;
      const registration = registrationFor(builder, env[urlVariable]?.trim() ?? '');
      return registration === undefined ? new Map() : registrationVariables(registration, urlVariable);
    }
    case 'payloads':
      return new Map([
        ...registrationVariables(natsRegistration, ENV.transportUrl),
        ['bucket', ENV.payloadRefBucket],
      ]);
    case 'worker':
      return new Map(Object.entries(WORKER_OPTION_VARIABLES));
  }
}

/**
 * The error in the process's words: `BATON_X is '<value>': <expected>`, the value as the variable
 * holds it (a URL masked, a password never) or else as the error shows it, and other options the
 * expected words name by their variables too. Unchanged (the same object) when the error names no
 * option, says nothing of what is expected, or its option has no variable.
 */
export function namingVariable(
  err: ConfigError,
  variables: ReadonlyMap<string, string>,
  env: Record<string, string | undefined>,
): ConfigError {
  const { option, expected } = err;
  const variable = option === undefined ? undefined : variables.get(option);
  if (variable === undefined || expected === undefined) return err;
  const raw = env[variable]?.trim();
  const value = raw === undefined || raw === '' ? err.value : shown(variable, raw);
  let words = expected;
  for (const other of err.related ?? []) {
    const otherVariable = variables.get(other);
    if (otherVariable !== undefined) words = replaceWord(words, other, otherVariable);
  }
  const subject = value === undefined ? variable : `${variable} is '${value}'`;
  return new ConfigError(`${subject}: ${words}`, {
    cause: err,
    option: variable,
    ...(value !== undefined && { value }),
    expected: words,
  });
}

/**
 * Runs `build` (an adapter's or the Worker's construction from the process's configuration);
 * a ConfigError it throws about an option is rethrown naming the BATON_* variable that sets it.
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
    throw namingVariable(err, optionVariables(builder, env), env);
  }
}

function shown(variable: string, value: string): string {
  if (SECRET_VARIABLE.test(variable)) return '***';
  return URL_VARIABLES.has(variable) ? maskUrl(value) : value;
}

/** `text` with each whole-word `word` (an option's name) replaced; no pattern is built from it. */
function replaceWord(text: string, word: string, replacement: string): string {
  const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);
  let out = '';
  let from = 0;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + word.length)) {
    if (isWordChar(text[at - 1]) || isWordChar(text[at + word.length])) continue;
    out += text.slice(from, at) + replacement;
    from = at + word.length;
  }
  return out + text.slice(from);
}
