/**
 * The checks of search-attribute arguments every store shares, made once by `checkedStore`
 * (checked-store.ts) and `checkRunQuery` (run-query-check.ts) before an adapter is asked: a run
 * filter's `attributes` read into {@link AttributeTest}s, the changes of `store.attributes.set`
 * and the value of `store.attributes.count`. Each refusal is a ConfigError naming the attribute.
 */
import {
  ATTRIBUTE_TYPES,
  checkAttributeName,
  checkRunAttribute,
  type AttributeChanges,
  type AttributeType,
} from '../shared/attributes.js';
import { ConfigError } from '../shared/errors.js';
import type { CountedAttribute } from './contracts/attributes.js';
import type { AttributeCondition, AttributeTest } from './contracts/run-queries.js';

/** The most attribute tests one run query may hold. */
export const MAX_ATTRIBUTE_TESTS = 8;

const BOUNDS = ['gt', 'gte', 'lt', 'lte'] as const;

function refuse(name: string, problem: string): never {
  throw new ConfigError(`run query: attributes.${name} ${problem}`, { option: `attributes.${name}` });
}

/** A refused value as a message shows it: a string quoted, an object named, a number as it is. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

/** The type a plain value stands for, or undefined when it is no attribute value. */
function typeOfValue(value: unknown): AttributeType | undefined {
  if (typeof value === 'string') return 'keyword';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (value instanceof Date) return 'time';
  return undefined;
}

/** A bound or an equality value in stored form, of `type`; refused when it is not one. */
function valueOf(
  name: string,
  field: string,
  type: AttributeType,
  value: unknown,
): string | number | boolean {
  const expected = {
    keyword: 'a non-empty string of at most 256 characters',
    number: 'a finite number',
    boolean: 'true or false',
    time: 'a Date or ms since the epoch',
  }[type];
  if (type === 'time' && value instanceof Date) value = value.getTime();
  const ok =
    (type === 'keyword' &&
      typeof value === 'string' &&
      value.length > 0 &&
      value.length <= 256 &&
      !value.includes('\0')) ||
    (type === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
    (type === 'boolean' && typeof value === 'boolean') ||
    (type === 'time' && Number.isSafeInteger(value));
  if (!ok) refuse(name, `${field} is ${shown(value)}; a ${type} takes ${expected}`);
  return value === 0 ? 0 : (value as string | number | boolean);
}

/** One condition read into a test. */
function testOf(name: string, condition: AttributeCondition): AttributeTest {
  const plain = typeOfValue(condition);
  if (plain !== undefined) return { name, type: plain, eq: valueOf(name, 'value', plain, condition) };
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition))
    refuse(name, 'is not a condition: give a value (equality) or { gte, gt, lte, lt } (a range)');
  const fields = condition as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((f) => !['type', 'eq', ...BOUNDS].includes(f));
  if (unknown.length > 0)
    refuse(
      name,
      `has unknown field(s) ${unknown.join(', ')}; a condition takes type, eq, gt, gte, lt and lte`,
    );
  const bounds = BOUNDS.filter((b) => fields[b] !== undefined);
  const eq = fields['eq'];
  if (eq !== undefined && bounds.length > 0) refuse(name, 'has eq and a range; give one or the other');
  if (eq === undefined && bounds.length === 0) refuse(name, 'names no value: give eq, or gte/gt/lte/lt');
  let type = fields['type'] as AttributeType | undefined;
  if (type !== undefined && !ATTRIBUTE_TYPES.includes(type))
    refuse(name, `has type ${shown(type)}; the types are ${ATTRIBUTE_TYPES.join(', ')}`);
  if (type === undefined) {
    const given = eq !== undefined ? [eq] : bounds.map((b) => fields[b]);
    type = given.some((v) => v instanceof Date) ? 'time' : typeOfValue(given[0]);
    if (type === undefined)
      refuse(name, `has a value of no attribute type; give a string, number, boolean or Date`);
  }
  if (eq !== undefined) return { name, type, eq: valueOf(name, 'eq', type, eq) };
  if (type !== 'number' && type !== 'time')
    refuse(name, `is a range over a ${type}; ranges are for number and time attributes`);
  if (fields['gt'] !== undefined && fields['gte'] !== undefined)
    refuse(name, 'has both gt and gte; give one');
  if (fields['lt'] !== undefined && fields['lte'] !== undefined)
    refuse(name, 'has both lt and lte; give one');
  const test: AttributeTest = { name, type };
  for (const bound of bounds) test[bound] = valueOf(name, bound, type, fields[bound]) as number;
  return test;
}

/**
 * A filter's attributes read into tests, sorted by name, and their normal form for the filter
 * (what a cursor's fingerprint is taken of: the same tests in the same order, whatever form they
 * were given in). Undefined when the filter names none.
 */
export function checkAttributeFilter(
  attributes: Readonly<Record<string, AttributeCondition>> | undefined,
): { tests: AttributeTest[]; normal: Record<string, Omit<AttributeTest, 'name'>> } | undefined {
  if (attributes === undefined) return undefined;
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
    throw new ConfigError(
      'run query: attributes must be an object of name -> condition, such as { customerId: "42" }',
      {
        option: 'attributes',
      },
    );
  const names = Object.keys(attributes)
    .filter((name) => attributes[name] !== undefined)
    .sort();
  if (names.length === 0) return undefined;
  if (names.length > MAX_ATTRIBUTE_TESTS)
    throw new ConfigError(
      `run query: attributes names ${names.length} attributes; a query tests at most ${MAX_ATTRIBUTE_TESTS}`,
      { option: 'attributes' },
    );
  const tests = names.map((name) => {
    try {
      checkAttributeName('run query', name);
    } catch {
      refuse(name, 'is not a valid attribute name (letters, digits, _ . -, starting with a letter or _)');
    }
    return testOf(name, attributes[name]!);
  });
  const normal: Record<string, Omit<AttributeTest, 'name'>> = {};
  for (const { name, ...test } of tests) normal[name] = test;
  return { tests, normal };
}

/** Checks the changes of `store.attributes.set`; returns them unchanged. */
export function checkAttributeChanges(runId: string, changes: AttributeChanges): AttributeChanges {
  const where = `store.attributes.set(${runId})`;
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes))
    throw new ConfigError(`${where}: give the changes as an object of name -> attribute or null`);
  for (const [name, attribute] of Object.entries(changes)) {
    checkAttributeName(where, name);
    if (attribute !== null) checkRunAttribute(where, name, attribute);
  }
  return changes;
}

/** Checks the attribute of `store.attributes.count`: a valid name, a keyword or a boolean. */
export function checkCountedAttribute(name: string, attribute: CountedAttribute): void {
  const where = 'store.attributes.count';
  checkAttributeName(where, name);
  const checked = checkRunAttribute(where, name, attribute);
  if (checked.type !== 'keyword' && checked.type !== 'boolean')
    throw new ConfigError(
      `${where}: attribute '${name}' is a ${checked.type}; runs are counted per keyword and boolean value ` +
        '(count a number or time filter with client.bulk.count, which walks the runs)',
      { option: `attributes.${name}` },
    );
}
