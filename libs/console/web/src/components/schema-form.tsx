/**
 * A form generated from a workflow input's JSON Schema: one labelled field per property of an
 * object schema whose properties are strings (a select for an `enum`), numbers, integers or
 * booleans; the schema's `description` as the field's hint, `required` marked. Any other schema
 * (nested objects, arrays, unions) has no form: the start page takes JSON for it. The schema's
 * refusals (`$.field: message`) are shown beside their fields.
 */

/** One field of the generated form. */
export interface SchemaField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  required: boolean;
  description?: string;
  options?: string[];
}

const SIMPLE = ['string', 'number', 'integer', 'boolean'];

/** The form's fields, or undefined when the schema is not an object of simple properties. */
export function schemaFields(schema: Record<string, unknown> | undefined): SchemaField[] | undefined {
  if (schema === undefined || schema['type'] !== 'object') return undefined;
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null) return undefined;
  const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
  const fields: SchemaField[] = [];
  for (const [name, raw] of Object.entries(properties as Record<string, unknown>)) {
    const property = (raw ?? {}) as Record<string, unknown>;
    const enumValues = property['enum'];
    const options =
      Array.isArray(enumValues) && enumValues.every((v) => typeof v === 'string')
        ? (enumValues as string[])
        : undefined;
    const type = property['type'] ?? (options !== undefined ? 'string' : undefined);
    if (typeof type !== 'string' || !SIMPLE.includes(type)) return undefined;
    fields.push({
      name,
      type: type as SchemaField['type'],
      required: required.includes(name),
      ...(typeof property['description'] === 'string' && { description: property['description'] }),
      ...(options !== undefined && { options }),
    });
  }
  return fields;
}

/**
 * The input the fields' texts make: a field left empty is left out (the schema says whether it
 * may be); a number that does not read is a problem named here, before anything is sent.
 */
export function inputOfFields(
  fields: SchemaField[],
  values: Record<string, string>,
): { input: Record<string, unknown>; problems: Record<string, string> } {
  const input: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const text = values[field.name] ?? '';
    if (field.type === 'boolean') {
      if (text === 'true') input[field.name] = true;
      else if (field.required) input[field.name] = false;
      continue;
    }
    if (text.trim() === '') continue;
    if (field.type === 'string') input[field.name] = text;
    else {
      const n = Number(text);
      if (!Number.isFinite(n) || (field.type === 'integer' && !Number.isInteger(n)))
        problems[field.name] = field.type === 'integer' ? 'not a whole number' : 'not a number';
      else input[field.name] = n;
    }
  }
  return { input, problems };
}

/** `$.amount: must be ≥ 1` → `{ amount: 'must be ≥ 1' }`; issues of no one field under `''`. */
export function issuesByField(issues: readonly string[]): Record<string, string[]> {
  const byField: Record<string, string[]> = {};
  for (const issue of issues) {
    const match = /^\$\.([A-Za-z_$][\w$]*)(?:[.[][^:]*)?: (.*)$/s.exec(issue);
    const key = match ? match[1]! : '';
    (byField[key] ??= []).push(match ? match[2]! : issue);
  }
  return byField;
}

export function SchemaForm(props: {
  fields: SchemaField[];
  values: Record<string, string>;
  problems: Record<string, string[]>;
  onChange: (values: Record<string, string>) => void;
}) {
  const { fields, values, problems } = props;
  return (
    <fieldset class="schema-form">
      <legend>Input</legend>
      {fields.map((field) => {
        const id = `input-${field.name}`;
        const errors = problems[field.name] ?? [];
        const described = [
          field.description !== undefined ? `${id}-hint` : '',
          errors.length > 0 ? `${id}-error` : '',
        ]
          .filter((s) => s !== '')
          .join(' ');
        const set = (text: string): void => props.onChange({ ...values, [field.name]: text });
        const common = {
          id,
          'aria-invalid': errors.length > 0,
          ...(described !== '' && { 'aria-describedby': described }),
        };
        return (
          <div class="schema-field" key={field.name}>
            {field.type === 'boolean' ? (
              <label class="check">
                <input
                  {...common}
                  type="checkbox"
                  checked={values[field.name] === 'true'}
                  onChange={(e) => set(e.currentTarget.checked ? 'true' : 'false')}
                />
                {field.name}
              </label>
            ) : (
              <label>
                <span>
                  {field.name}
                  {field.required && <span class="hint"> (required)</span>}
                </span>
                {field.options !== undefined ? (
                  <select
                    {...common}
                    value={values[field.name] ?? ''}
                    onChange={(e) => set(e.currentTarget.value)}
                  >
                    <option value="">-</option>
                    {field.options.map((o) => (
                      <option key={o} value={o}>
                        {o}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...common}
                    inputMode={field.type === 'string' ? undefined : 'decimal'}
                    aria-required={field.required}
                    value={values[field.name] ?? ''}
                    onInput={(e) => set(e.currentTarget.value)}
                  />
                )}
              </label>
            )}
            {field.description !== undefined && (
              <span id={`${id}-hint`} class="hint">
                {field.description}
              </span>
            )}
            {errors.length > 0 && (
              <span id={`${id}-error`} class="error field-error">
                {errors.join('; ')}
              </span>
            )}
          </div>
        );
      })}
    </fieldset>
  );
}
