/**
 * Parsers for adapter variables (contracts/registration.ts), so every adapter words a bad value
 * the way the worker process words its own variables: the variable, what was found, what to use.
 */
import type { AdapterOption, AdapterVariable } from './contracts/registration.js';
import { ConfigError } from '../shared/errors.js';

/** A variable taken as it is (a prefix, a file path, a name the adapter checks itself). */
export function textSetting(
  name: string,
  description: string,
  option?: AdapterOption,
): AdapterVariable<string> {
  return { name, description, parse: (value) => value, ...(option !== undefined && { option }) };
}

/** A switch: `true` or `1` on, `false` or `0` off (any case); anything else is refused naming the variable. */
export function switchSetting(
  name: string,
  description: string,
  option?: AdapterOption,
): AdapterVariable<boolean> {
  return {
    name,
    description,
    parse: (value, variable) => {
      const lower = value.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      throw new ConfigError(`${variable} is '${value}'; use true or false`);
    },
    ...(option !== undefined && { option }),
  };
}

/** A whole number of at least `min`; anything else is refused naming the variable. */
export function wholeNumberSetting(
  name: string,
  description: string,
  min: number,
  option?: AdapterOption,
): AdapterVariable<number> {
  return {
    name,
    description,
    parse: (value, variable) => parseWholeNumber(variable, value, min),
    ...(option !== undefined && { option }),
  };
}

/** `value` as a whole number of at least `min`, or ConfigError naming `variable`. */
export function parseWholeNumber(variable: string, value: string, min: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
    throw new ConfigError(`${variable} is '${value}'; it must be a whole number of at least ${min}`);
  }
  return number;
}
