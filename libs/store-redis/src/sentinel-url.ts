/**
 * `redis+sentinel://` URLs as the store reads them: the parser is shared with the Redis transport
 * (`@baton/core/adapter`), its messages name `redisStore`.
 */
import { parseSentinelUrl as parseWithOwner, type ParsedSentinelUrl } from '@baton/core/adapter';

export {
  isSentinelUrl,
  SENTINEL_SCHEMES,
  type ParsedSentinelUrl,
  type SentinelTarget,
} from '@baton/core/adapter';

/** Parses a Sentinel URL; ConfigError naming the URL (password masked), the fault and the form. */
export function parseSentinelUrl(url: string): ParsedSentinelUrl {
  return parseWithOwner(url, 'redisStore');
}
