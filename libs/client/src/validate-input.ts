/**
 * Validation of a run's input against the workflow's input schema (`defineWorkflow({ input })`),
 * in `client.start`, before anything is stored or sent: a producer learns at once that its input
 * is wrong, instead of a run failing on a worker later.
 */
import { ConfigError, InvalidInputError } from '@baton/core';
import { formatIssuePath, isStandardSchema } from '@baton/core/runtime';

/**
 * The value to send: the schema's output (a validator may coerce, default or transform), or
 * `input` unchanged when the workflow has no schema. InvalidInputError lists every issue's path.
 */
export async function validatedInput(
  workflow: { name: string; version: number; input?: unknown },
  input: unknown,
): Promise<unknown> {
  const schema = workflow.input;
  if (schema === undefined) return input;
  const key = `${workflow.name}@${workflow.version}`;
  if (!isStandardSchema(schema)) {
    throw new ConfigError(
      `workflow ${key}: its input field is not a Standard Schema (no '~standard'.validate); ` +
        'define the workflow with defineWorkflow({ input: schema }) or leave input out',
    );
  }
  const result = await schema['~standard'].validate(input);
  if (result.issues !== undefined) {
    throw new InvalidInputError(
      key,
      result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`),
    );
  }
  return result.value;
}
