/**
 * Search attributes (docs/search-attributes.md): typed, indexed fields a workflow sets on its own
 * run (`ctx.setAttributes({ customerId: '42' })`) and that operators list and count runs by.
 * What every door shares: the four types, the stored form, the limits, and the one check of a
 * name and a value, so the workflow context, the store's checks and the filters refuse alike.
 *
 * The types, and how a value is kept:
 * - `keyword`: a string compared whole (1-256 characters, no NUL), e.g. a customer id;
 * - `number`: a finite number (a double), compared by equality and range;
 * - `boolean`: true or false;
 * - `time`: an instant, kept as milliseconds since the epoch (given as a Date, or, for an
 *   attribute declared `time`, an ISO 8601 string or milliseconds), compared by equality and range.
 *
 * Invariants:
 * 1. A stored attribute always carries its type ({@link RunAttribute}): a keyword '42' and a
 *    number 42 are different values, and a filter names which one it means.
 * 2. A run holds at most {@link MAX_RUN_ATTRIBUTES} attributes; names follow
 *    {@link ATTRIBUTE_NAME_PATTERN}, so they fit in a store key and in the CLI's `name=value`.
 * 3. Every check throws ConfigError naming the attribute, what was given and what is accepted.
 */
import { ConfigError } from './errors.js';

/** The types an attribute may have. */
export const ATTRIBUTE_TYPES = ['keyword', 'number', 'boolean', 'time'] as const;

/** One of {@link ATTRIBUTE_TYPES}. */
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** An attribute as a run record keeps it: its type and its value (a time in ms since the epoch). */
export type RunAttribute =
  | { type: 'keyword'; value: string }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'time'; value: number };

/** A run's attributes by name. */
export type RunAttributes = Record<string, RunAttribute>;

/** What one `setAttributes` changes: a new value by name, or null to remove the attribute. */
export type AttributeChanges = Record<string, RunAttribute | null>;

/** The most attributes one run may hold. */
export const MAX_RUN_ATTRIBUTES = 20;
/** The longest attribute name. */
export const MAX_ATTRIBUTE_NAME_LENGTH = 64;
/** The longest keyword value, in characters. */
export const MAX_KEYWORD_LENGTH = 256;
/**
 * Letters, digits, `_`, `.` and `-`, starting with a letter or `_`: no `:`, `=`, `<`, `>` or
 * space, so a name reads unambiguously in a store key and in `--attr name:type>=value`.
 */
export const ATTRIBUTE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** What `setAttributes` takes for one attribute: its value, or null to remove it. */
export type AttributeInput = string | number | boolean | Date | null;

/** A workflow's declared attributes: name -> type (`defineWorkflow({ attributes })`). */
export type AttributeDeclaration = Readonly<Record<string, AttributeType>>;

/** The value type `setAttributes` accepts for an attribute declared as `T`. */
export type AttributeValueOf<T extends AttributeType> = T extends 'keyword'
  ? string
  : T extends 'number'
    ? number
    : T extends 'boolean'
      ? boolean
      : Date | string | number;

/**
 * What `ctx.setAttributes` accepts: for a workflow that declares its attributes, only those names,
 * each with its type's values; otherwise any valid name with a string, number, boolean or Date.
 */
export type AttributeUpdate<D extends AttributeDeclaration> = string extends keyof D
  ? Readonly<Record<string, AttributeInput>>
  : { readonly [K in keyof D]?: AttributeValueOf<D[K]> | null };

function refuse(where: string, name: string, problem: string): never {
  throw new ConfigError(`${where}: attribute '${name}' ${problem}`, {
    option: `attributes.${name}`,
  });
}

/** Why `name` is not a valid attribute name, or undefined when it is. */
export function attributeNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'is empty; give a name';
  if (name.length > MAX_ATTRIBUTE_NAME_LENGTH)
    return `is ${name.length} characters long; the limit is ${MAX_ATTRIBUTE_NAME_LENGTH}`;
  if (!ATTRIBUTE_NAME_PATTERN.test(name))
    return "is not a valid name: use letters, digits, '_', '.' and '-', starting with a letter or '_'";
  return undefined;
}

/** Throws ConfigError naming `name` when it is not a valid attribute name. */
export function checkAttributeName(where: string, name: unknown): asserts name is string {
  const problem = attributeNameProblem(name);
  if (problem !== undefined) refuse(where, String(name), problem);
}

/** Why `value` is not a valid keyword, or undefined. */
function keywordProblem(value: string): string | undefined {
  if (value.length === 0) return 'is an empty string; give a non-empty keyword, or null to remove it';
  if (value.length > MAX_KEYWORD_LENGTH)
    return `is a keyword of ${value.length} characters; the limit is ${MAX_KEYWORD_LENGTH}`;
  if (value.includes('\0')) return 'holds a NUL character, which no store can index';
  return undefined;
}

/** A time from a Date, ms, or (when `text` is allowed) an ISO 8601 string; undefined when it is none. */
function timeOf(value: unknown, text: boolean): number | undefined {
  let ms: number | undefined;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (text && typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) ms = Date.parse(value);
  return ms !== undefined && Number.isSafeInteger(ms) ? ms : undefined;
}

/** How a refused value reads in a message: short, never the whole of a long string. */
function shown(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/**
 * The stored form of `value` for attribute `name`: of the `declared` type when the workflow
 * declares one, else of the type its JavaScript value has (a string is a keyword, a Date a time).
 * ConfigError naming the attribute, the value and what is accepted otherwise.
 */
export function toRunAttribute(
  where: string,
  name: string,
  value: unknown,
  declared?: AttributeType,
): RunAttribute {
  const type: AttributeType | undefined =
    declared ??
    (typeof value === 'string'
      ? 'keyword'
      : typeof value === 'number'
        ? 'number'
        : typeof value === 'boolean'
          ? 'boolean'
          : value instanceof Date
            ? 'time'
            : undefined);
  const expected =
    declared === undefined
      ? 'give a string (keyword), a number, a boolean or a Date (time), or null to remove it'
      : `it is declared ${declared}: give ${
          {
            keyword: 'a string',
            number: 'a finite number',
            boolean: 'true or false',
            time: 'a Date, an ISO 8601 time or ms since the epoch',
          }[declared]
        }, or null to remove it`;
  switch (type) {
    case 'keyword': {
      if (typeof value !== 'string') break;
      const problem = keywordProblem(value);
      if (problem !== undefined) refuse(where, name, problem);
      return { type, value };
    }
    case 'number':
      if (typeof value !== 'number') break;
      if (!Number.isFinite(value)) refuse(where, name, `is ${value}; give a finite number`);
      return { type, value: value === 0 ? 0 : value };
    case 'boolean':
      if (typeof value !== 'boolean') break;
      return { type, value };
    case 'time': {
      const ms = timeOf(value, declared === 'time');
      if (ms === undefined) break;
      return { type, value: ms };
    }
  }
  return refuse(where, name, `is ${shown(value)}; ${expected}`);
}

/**
 * Checks a stored attribute as a store receives it (`store.attributes.set`, a count): the type is
 * one of the four and the value of that type and within its limits. Returns it unchanged.
 */
export function checkRunAttribute(where: string, name: string, attribute: unknown): RunAttribute {
  const { type, value } = (attribute ?? {}) as { type?: unknown; value?: unknown };
  if (!ATTRIBUTE_TYPES.includes(type as AttributeType))
    refuse(where, name, `has type ${shown(type)}; the types are ${ATTRIBUTE_TYPES.join(', ')}`);
  const checked = toRunAttribute(where, name, value, type as AttributeType);
  if (checked.value !== value) refuse(where, name, `is ${shown(value)}; give ms since the epoch`);
  return checked;
}

/**
 * The changes one `setAttributes(values)` makes, checked and in stored form. `declaration`, when
 * the workflow has one, limits the names and gives each its type; `current` is the set of names
 * the run holds before this call, for the limit of {@link MAX_RUN_ATTRIBUTES}.
 */
export function attributeChanges(
  where: string,
  values: unknown,
  declaration: AttributeDeclaration | undefined,
  current: ReadonlySet<string>,
): AttributeChanges {
  if (typeof values !== 'object' || values === null || Array.isArray(values) || values instanceof Date)
    throw new ConfigError(`${where}: give an object of attributes, such as { customerId: '42' }`);
  const changes: AttributeChanges = {};
  const names = new Set(current);
  for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
    if (value === undefined) continue;
    checkAttributeName(where, name);
    const declared = declaration?.[name];
    if (declaration !== undefined && declared === undefined)
      refuse(
        where,
        name,
        `is not declared by the workflow; its attributes are ${Object.keys(declaration).join(', ') || 'none'}`,
      );
    if (value === null) {
      changes[name] = null;
      names.delete(name);
      continue;
    }
    changes[name] = toRunAttribute(where, name, value, declared);
    names.add(name);
  }
  if (names.size > MAX_RUN_ATTRIBUTES)
    throw new ConfigError(
      `${where}: the run would hold ${names.size} attributes; the limit is ${MAX_RUN_ATTRIBUTES} a run ` +
        '(remove some with null, or keep fewer)',
    );
  return changes;
}

/** Checks a declaration (`defineWorkflow({ attributes })`): valid names, known types, within the limit. */
export function checkAttributeDeclaration(where: string, declaration: unknown): AttributeDeclaration {
  if (typeof declaration !== 'object' || declaration === null || Array.isArray(declaration))
    throw new ConfigError(
      `${where}: attributes must be an object of name -> type, such as { customerId: 'keyword' }`,
    );
  const entries = Object.entries(declaration as Record<string, unknown>);
  if (entries.length > MAX_RUN_ATTRIBUTES)
    throw new ConfigError(
      `${where}: declares ${entries.length} attributes; a run holds at most ${MAX_RUN_ATTRIBUTES}`,
    );
  for (const [name, type] of entries) {
    checkAttributeName(where, name);
    if (!ATTRIBUTE_TYPES.includes(type as AttributeType))
      refuse(where, name, `is declared ${shown(type)}; the types are ${ATTRIBUTE_TYPES.join(', ')}`);
  }
  return declaration as AttributeDeclaration;
}

/** `current` with `changes` applied (null removes). */
export function mergeAttributes(
  current: RunAttributes | undefined,
  changes: AttributeChanges,
): RunAttributes {
  const merged: RunAttributes = { ...current };
  for (const [name, attribute] of Object.entries(changes)) {
    if (attribute === null) delete merged[name];
    else merged[name] = attribute;
  }
  return merged;
}

/** The value of a stored attribute as its text form: a keyword as it is, a time as ISO 8601. */
export function attributeText(attribute: RunAttribute): string {
  return attribute.type === 'time' ? new Date(attribute.value).toISOString() : String(attribute.value);
}
