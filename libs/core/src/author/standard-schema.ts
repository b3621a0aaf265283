/**
 * The part of the Standard Schema interface (https://standardschema.dev, version 1) that Baton
 * uses to validate workflow input. Zod (3.24+), Valibot, ArkType and others put this object under
 * the `~standard` key of their schemas, so any of them can be passed to `defineWorkflow({ input })`
 * without Baton depending on one. Declared here rather than imported: the interface is a small,
 * stable contract and core takes no dependency for types.
 */

/** A schema that validates a value of type `Input` into a value of type `Output`. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1Props<Input, Output>;
}

/** What a Standard Schema exposes under `~standard`. */
export interface StandardSchemaV1Props<Input = unknown, Output = Input> {
  /** The version of the interface: 1. */
  readonly version: 1;
  /** The library that made the schema, e.g. `zod`. */
  readonly vendor: string;
  /** Checks `value`; some libraries answer asynchronously. */
  readonly validate: (
    value: unknown,
  ) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
  /** Type-level only: the accepted and produced types. */
  readonly types?: StandardSchemaV1Types<Input, Output> | undefined;
}

/** A passed check carries the value (possibly transformed); a failed one its issues. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaV1Issue> };

/** One problem found in a value. */
export interface StandardSchemaV1Issue {
  readonly message: string;
  /** Where in the value: keys and indexes from the root, bare or wrapped as `{ key }`. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export interface StandardSchemaV1Types<Input, Output> {
  readonly input: Input;
  readonly output: Output;
}

/** The type a schema accepts. */
export type StandardSchemaInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input'];

/** The type a schema produces. */
export type StandardSchemaOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** Whether `value` looks like a Standard Schema (has `~standard.validate`). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const props = (value as { '~standard'?: { validate?: unknown } } | null | undefined)?.['~standard'];
  return typeof props === 'object' && props !== null && typeof props.validate === 'function';
}

/**
 * Renders an issue's path as `$.items[2].sku` (the form UnencodableValueError uses), or `$` for
 * the value itself.
 */
export function formatIssuePath(path: StandardSchemaV1Issue['path']): string {
  let out = '$';
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'symbol') out += `[${key.toString()}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
