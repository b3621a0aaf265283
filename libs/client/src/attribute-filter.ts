/**
 * The text form of a search attribute filter (docs/search-attributes.md), one syntax for every
 * place a person types one: `baton runs list --attr …`, the HTTP API's `attr.<name>` parameters
 * and the console's filter field. An expression is `<name>[:<type>]<op><value>`:
 *
 * - `customerId=42`: equality; without a type the value is a keyword (the string `42`);
 * - `total:number=42`, `vip:boolean=true`, `placedAt:time=2026-11-25T10:00:00Z`: equality of
 *   another type (a time as ISO 8601 or ms since the epoch);
 * - `total>=100`, `total<500`, `placedAt>2026-11-01`: a range with `>=`, `>`, `<=`, `<`; its type
 *   is a number when the value is one, else a time, unless given (`:number`, `:time`);
 * - two ranges on one name make one: `total>=100 total<500`.
 *
 * What it gives is a `RunFilter['attributes']`, which the store checks again (names, values).
 */
import { ConfigError } from '@baton/core';
import type { AttributeCondition, RunAttributeStore } from '@baton/core/adapter';

type CountedAttribute = Parameters<RunAttributeStore['count']>[1];

const EXPRESSION = /^([A-Za-z_][A-Za-z0-9_.-]*)(?::([a-z]+))?(>=|<=|>|<|=)(.*)$/s;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const TYPES = ['keyword', 'number', 'boolean', 'time'] as const;
type Type = (typeof TYPES)[number];
type Bound = 'gt' | 'gte' | 'lt' | 'lte';
const BOUND_OF: Record<string, Bound> = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' };

function refuse(expression: string, problem: string): never {
  throw new ConfigError(
    `attribute filter '${expression}' ${problem}; write name=value, name:type=value (keyword, number, ` +
      'boolean, time) or name>=value (also >, <=, <) for a number or time range',
    { option: 'attributes', value: expression },
  );
}

/** A time from ms or an ISO 8601 text, or undefined. */
function timeOf(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** The value of `text` as `type`, or a refusal naming the expression. */
function valueOf(expression: string, type: Type, text: string): string | number | boolean {
  switch (type) {
    case 'keyword':
      if (text === '') return refuse(expression, 'has no value');
      return text;
    case 'number':
      if (!NUMBER.test(text)) return refuse(expression, `has '${text}', which is not a number`);
      return Number(text);
    case 'boolean':
      if (text !== 'true' && text !== 'false')
        return refuse(expression, `has '${text}'; a boolean is true or false`);
      return text === 'true';
    case 'time': {
      const ms = timeOf(text);
      if (ms === undefined)
        return refuse(expression, `has '${text}', which is not a time (ISO 8601, or ms since the epoch)`);
      return ms;
    }
  }
}

/**
 * The attributes filter the expressions describe, by name. ConfigError naming the expression for
 * one that does not read, a range over a keyword or boolean, and two conditions on a name that do
 * not make one (two equalities, an equality and a range, two lower or two upper bounds).
 *
 * @example
 * parseAttributeFilter(['customerId=42', 'total>=100', 'total<500']);
 * // { customerId: '42', total: { type: 'number', gte: 100, lt: 500 } }
 */
export function parseAttributeFilter(expressions: readonly string[]): Record<string, AttributeCondition> {
  const conditions: Record<
    string,
    { type: Type; eq?: string | number | boolean } & Partial<Record<Bound, number>>
  > = {};
  for (const raw of expressions) {
    const expression = raw.trim();
    const match = EXPRESSION.exec(expression);
    if (match === null) refuse(expression, 'does not read');
    const [, name, given, op, rawValue] = match as unknown as [
      string,
      string,
      string | undefined,
      string,
      string,
    ];
    const text = rawValue.trim();
    if (given !== undefined && !TYPES.includes(given as Type))
      refuse(expression, `names type '${given}', which is none of keyword, number, boolean, time`);
    let type = given as Type | undefined;
    if (op === '=') {
      type ??= 'keyword';
    } else {
      type ??= NUMBER.test(text) ? 'number' : 'time';
      if (type !== 'number' && type !== 'time') refuse(expression, `is a range over a ${type}`);
    }
    const value = valueOf(expression, type, text);
    const held = conditions[name];
    if (held !== undefined && held.type !== type)
      refuse(expression, `tests ${name} as a ${type}, and another expression tests it as a ${held.type}`);
    const condition = held ?? (conditions[name] = { type });
    if (op === '=') {
      if (held !== undefined)
        refuse(expression, `is a second condition on ${name}; an equality stands alone`);
      condition.eq = value;
      continue;
    }
    const bound = BOUND_OF[op]!;
    const lower = bound === 'gt' || bound === 'gte';
    if (condition.eq !== undefined) refuse(expression, `adds a range to an equality on ${name}`);
    if (
      (lower && (condition.gt ?? condition.gte) !== undefined) ||
      (!lower && (condition.lt ?? condition.lte) !== undefined)
    )
      refuse(expression, `is a second ${lower ? 'lower' : 'upper'} bound on ${name}`);
    condition[bound] = value as number;
  }
  const filter: Record<string, AttributeCondition> = {};
  for (const [name, { type, eq, ...bounds }] of Object.entries(conditions)) {
    // Equality in the plainest form that keeps its type; a time and a range spell theirs out.
    if (eq !== undefined) filter[name] = type === 'time' ? { type, eq } : eq;
    else filter[name] = { type, ...bounds };
  }
  return filter;
}

/**
 * The one keyword or boolean value a filter's attributes test, when that is all they test: the
 * filter whose runs the store counts as they change (`store.attributes.count`). Undefined for
 * any other attributes filter (several attributes, a number, a time, a range) or none.
 */
export function countedAttribute(
  filter: { attributes?: Readonly<Record<string, AttributeCondition>> } | undefined,
): { name: string; attribute: CountedAttribute } | undefined {
  const entries = Object.entries(filter?.attributes ?? {}).filter(([, condition]) => condition !== undefined);
  if (entries.length !== 1) return undefined;
  const [name, condition] = entries[0]!;
  if (typeof condition === 'string') return { name, attribute: { type: 'keyword', value: condition } };
  if (typeof condition === 'boolean') return { name, attribute: { type: 'boolean', value: condition } };
  if (typeof condition !== 'object' || condition === null || condition instanceof Date) return undefined;
  const { type, eq, ...bounds } = condition;
  if (Object.values(bounds).some((b) => b !== undefined)) return undefined;
  if ((type === undefined || type === 'keyword') && typeof eq === 'string')
    return { name, attribute: { type: 'keyword', value: eq } };
  if ((type === undefined || type === 'boolean') && typeof eq === 'boolean')
    return { name, attribute: { type: 'boolean', value: eq } };
  return undefined;
}
