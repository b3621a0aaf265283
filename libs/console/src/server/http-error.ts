/**
 * The error an API module throws to answer with a status of its choosing, with a message the page
 * shows as is. Its own module so that bulk-jobs.ts and http-kit.ts both use it without a cycle.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    /** More fields of the answer (`issues` of an input its schema refused). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
