/**
 * The pieces the OpenAPI document's files share (openapi.ts, openapi-streams.ts): references, a JSON
 * content, an error answer, the answers every operation may give, the run id parameter.
 */

export const ref = (name: string): { $ref: string } => ({ $ref: `#/components/schemas/${name}` });
export const response = (name: string): { $ref: string } => ({ $ref: `#/components/responses/${name}` });
export const json = (schema: object): { content: { 'application/json': { schema: object } } } => ({
  content: { 'application/json': { schema } },
});
export const error = (description: string): object => ({ description, ...json(ref('Error')) });

/** The answers every operation may give besides its own. */
export const COMMON = {
  '401': response('Unauthorized'),
  '403': response('Forbidden'),
  '429': response('TooManyWrongTokens'),
  '500': response('InternalError'),
  '503': response('Unavailable'),
};

export const runId = {
  name: 'runId',
  in: 'path',
  required: true,
  description: 'The run id (letters, digits, `_` and `-`).',
  schema: { type: 'string' },
};
