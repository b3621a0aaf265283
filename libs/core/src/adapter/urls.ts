/** Server URLs in messages and logs, without their secrets. */

export interface MaskUrlOptions {
  /**
   * Treat a user part without a password as a secret too (a NATS token: `nats://<token>@host`).
   * @defaultValue false
   */
  userIsSecret?: boolean;
}

/**
 * The URL with its secret replaced by `***`: the password of `user:password@`, or with
 * `userIsSecret` a lone user part. Works on URLs no parser accepts (a `#` or `@` in a password):
 * whatever stands between `://` and the last `@` is user information.
 */
export function maskUrlSecret(url: string, options: MaskUrlOptions = {}): string {
  const start = url.indexOf('://');
  const at = url.lastIndexOf('@');
  if (start < 0 || at < start) return url;
  const from = start + 3;
  const userinfo = url.slice(from, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0 && !options.userIsSecret) return url;
  const masked = colon < 0 ? '***' : `${userinfo.slice(0, colon)}:***`;
  return `${url.slice(0, from)}${masked}${url.slice(at)}`;
}
