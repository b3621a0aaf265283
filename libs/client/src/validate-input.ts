/**
 * Validation in `client.start` and `client.signal`, before anything is stored or sent: a run's
 * start fields with the worker's own checks (startFieldProblem, which its run-message decoder
 * applies too), its input against the workflow's input schema (`defineWorkflow({ input })`), a
 * signal's payload against the signal's schema (`defineSignal(name, { schema })`). A producer
 * learns at once that what it sent is wrong, instead of a run failing, or a message being
 * dead-lettered, on a worker later.
 */
import { ConfigError, InvalidInputError } from '@baton/core';
import { formatIssuePath, isStandardSchema, startFieldProblem } from '@baton/core/runtime';

/**
 * A workflow named without its code, for producers that do not import it: input and result are
 * `unknown` unless given as type arguments (`client.start<Input, Output>(ref, input)`).
 */
export interface WorkflowRef {
  name: string;
  version: number;
}

/**
 * A {@link WorkflowRef} that is not a definition: a definition passed here would skip the check
 * of its input type, so definitions only match the typed overload of `start` and `schedules.create`.
 */
export type UntypedWorkflowRef = WorkflowRef & { readonly run?: never; readonly kind?: never };

/**
 * Refuses, with InvalidInputError naming the field, a start a worker would refuse: a workflow
 * name defineWorkflow would not accept (no worker can register it), a version below 1, an empty
 * or non-string idempotency key, a run id that cannot be one.
 */
export function checkStartFields(
  workflow: { name: unknown; version: unknown },
  options: { idempotencyKey?: unknown; runId?: unknown },
  call = 'client.start',
): void {
  const refused = startFieldProblem({
    workflow: workflow.name,
    version: workflow.version,
    idempotencyKey: options.idempotencyKey,
    runId: options.runId,
  });
  if (refused === undefined) return;
  const key = `${String(workflow.name)}@${String(workflow.version)}`;
  const subject = refused.field === 'workflow' ? 'the workflow name' : refused.field;
  throw new InvalidInputError(key, [`${refused.field} ${refused.problem}`], {
    field: refused.field,
    message:
      `${call}(${key}): ${subject} ${refused.problem}. ` +
      `A worker would refuse ${call === 'client.start' ? 'this start' : 'its starts'}, so nothing was sent`,
  });
}

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

/**
 * The payload to send for a signal: the schema's output when the signal was defined with
 * `defineSignal(name, { schema })`, else `payload` unchanged (a plain name, or no schema).
 * InvalidInputError (`field: 'payload'`) lists every issue's path.
 */
export async function validatedSignalPayload(
  signal: string | { name: string; schema?: unknown },
  runId: string,
  payload: unknown,
): Promise<unknown> {
  if (typeof signal === 'string' || signal.schema === undefined) return payload;
  const { name, schema } = signal;
  if (!isStandardSchema(schema)) {
    throw new ConfigError(
      `signal '${name}': its schema field is not a Standard Schema (no '~standard'.validate); ` +
        'define the signal with defineSignal(name, { schema }) or leave schema out',
    );
  }
  const result = await schema['~standard'].validate(payload);
  if (result.issues === undefined) return result.value;
  const issues = result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
  throw new InvalidInputError('', issues, {
    field: 'payload',
    signal: name,
    message:
      `payload of signal '${name}' to run ${runId} does not match its schema: ${issues.join('; ')}. ` +
      'Fix the payload (nothing was sent), or change the schema in defineSignal(name, { schema })',
  });
}
