/**
 * The error an API module throws to answer with a status of its choosing, with a message the page
 * shows as is. Its own module so that bulk-jobs.ts and http-kit.ts both use it without a cycle.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
