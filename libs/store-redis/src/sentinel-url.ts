/**
 * `redis+sentinel://` URLs as the store reads them: the parser is shared with the Redis transport
 * (`@baton/redis-kit`), its messages name `redisStore`.
 */
import { parseSentinelUrl as parseWithOwner, type ParsedSentinelUrl } from '@baton/redis-kit';

export {
  isSentinelUrl,
  SENTINEL_SCHEMES,
  type ParsedSentinelUrl,
  type SentinelTarget,
} from '@baton/redis-kit';

/** Parses a Sentinel URL; ConfigError naming the URL (password masked), the fault and the form. */
export function parseSentinelUrl(url: string): ParsedSentinelUrl {
  return parseWithOwner(url, 'redisStore');
}
