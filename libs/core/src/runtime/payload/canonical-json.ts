/**
 * A deterministic JSON serialisation for hashing and signing: the same value always gives the
 * same string, whatever order its keys were inserted in and whether it was built in memory or
 * parsed back from a store. It follows `JSON.stringify` for every value (toJSON, undefined
 * members dropped, non-finite numbers as null, undefined array items as null) and sorts object
 * keys by UTF-16 code units, which is the key order of RFC 8785 (JCS).
 *
 * Why not `JSON.stringify` with a sorting replacer: a JavaScript object lists integer-like keys
 * first whatever their insertion order, so "sorted" would not mean sorted, and a verifier in
 * another language could not reproduce it.
 */

/** The canonical JSON text of `value`; throws a TypeError on cycles and BigInt, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  const out = write(value, new Set());
  // A bare undefined (or function) has no JSON form; JSON.stringify returns undefined for it.
  if (out === undefined) throw new TypeError('canonicalJson: the value has no JSON form');
  return out;
}

function write(value: unknown, ancestors: Set<object>): string | undefined {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw new TypeError('canonicalJson: BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (ancestors.has(obj)) throw new TypeError('canonicalJson: the value is cyclic');
  ancestors.add(obj);
  let out: string;
  if (Array.isArray(obj)) {
    // An index loop, not map(): map skips the holes of a sparse array, which JSON writes as null.
    const items: string[] = [];
    for (let i = 0; i < obj.length; i++) items.push(write((obj as unknown[])[i], ancestors) ?? 'null');
    out = `[${items.join(',')}]`;
  } else {
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort(compareCodeUnits)) {
      const member = write(record[key], ancestors);
      if (member !== undefined) parts.push(`${JSON.stringify(key)}:${member}`);
    }
    out = `{${parts.join(',')}}`;
  }
  ancestors.delete(obj);
  return out;
}

/** Code-unit order (what `<` does on strings), spelled out so no locale ever applies. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
