/**
 * Node's system error codes that mean "the server could not be reached or the connection broke",
 * as opposed to a refused request: every adapter maps them to its retryable unavailable error.
 */
export const CONNECTION_FAILURE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
