import { BatonError } from '@baton/core';

/** Rejects with BATON_CONNECT_TIMEOUT naming `what` when `promise` has not settled within `ms`. */
export function withTimeout<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new BatonError('BATON_CONNECT_TIMEOUT', `${what} did not answer within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
