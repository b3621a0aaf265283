/**
 * The shape of a sealed value (sealed-values.ts), apart from the codec, so the message codec can
 * recognise one without importing the payload codec.
 */

/** The marker field of a sealed value; a user value with this field is not supported. */
export const SEALED_VALUE_FIELD = '$baton.sealed';

/** A value in its sealed form. */
export interface SealedValue {
  readonly [SEALED_VALUE_FIELD]: 1;
  /** The id of the encryption key that sealed it (ids are not secret). */
  readonly key: string;
  /** The payload codec's frame of the value's JSON, base64. */
  readonly frame: string;
}

/** True for a value in the sealed form. */
export function isSealedValue(value: unknown): value is SealedValue {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = value as Record<string, unknown>;
  return (
    fields[SEALED_VALUE_FIELD] === 1 && typeof fields.frame === 'string' && typeof fields.key === 'string'
  );
}
