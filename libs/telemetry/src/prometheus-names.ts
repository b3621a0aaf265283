/**
 * How an OpenTelemetry metric's name and unit become its Prometheus name, the way the
 * OpenTelemetry Collector's Prometheus exporters do it by default (underscore escaping, type and
 * unit suffixes; the OpenTelemetry "Prometheus and OpenMetrics compatibility" rules):
 *
 * 1. every run of characters outside `[a-zA-Z0-9:]` becomes one `_`;
 * 2. the unit's word is appended (`s` -> `seconds`, `By` -> `bytes`, `By/s` -> `bytes_per_second`)
 *    unless the name already holds it as a token; annotations in braces (`{run}`) add nothing;
 * 3. monotonic counters end in `_total`; gauges whose unit is `1` end in `_ratio`.
 *
 * The JavaScript Prometheus exporter only does steps 1 and the `_total` of step 3, so a histogram in
 * seconds would show as `…_duration` on a worker's own `/metrics` and as `…_duration_seconds`
 * behind a Collector. The worker's `/metrics` applies step 2 (and `_ratio`) itself, through
 * {@link withUnitSuffix}, so that both paths show one name and one set of queries works on both.
 */

/** Unit words for the UCUM units OpenTelemetry instruments use. */
const UNIT_WORDS: Readonly<Record<string, string>> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  GiBy: 'gibibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  GBy: 'gigabytes',
  '%': 'percent',
  '1': '',
};

/** Words for the unit after a `/` (singular: `By/s` is bytes per second). */
const PER_UNIT_WORDS: Readonly<Record<string, string>> = {
  s: 'second',
  min: 'minute',
  h: 'hour',
  d: 'day',
};

/** Which Prometheus type an instrument's points take; decides the `_total` and `_ratio` suffixes. */
export type PrometheusKind = 'counter' | 'gauge' | 'histogram';

function tokens(text: string): string[] {
  return text.split(/[^a-zA-Z0-9:]+/).filter((t) => t.length > 0);
}

/** The unit's words, as name tokens (none for an annotation such as `{run}` or for `1`). */
function unitTokens(unit: string | undefined): string[] {
  if (!unit || /[{}]/.test(unit)) return [];
  const [main = '', per] = unit.split('/', 2);
  const mainWord = UNIT_WORDS[main] ?? main;
  const perWord = per === undefined ? '' : (PER_UNIT_WORDS[per] ?? per);
  const words = tokens(mainWord);
  if (perWord !== '') words.push('per', ...tokens(perWord));
  return words;
}

/**
 * The OpenTelemetry name with its unit's word added as a last dotted token, when the name does not
 * hold that word already: `baton.activity.duration` in `s` -> `baton.activity.duration.seconds`,
 * `v8js.memory.heap.used` in `By` -> `v8js.memory.heap.used.bytes`. A gauge in `1` gains `ratio`.
 * What a Prometheus serializer makes of the result (dots to underscores, `_total` on counters) is
 * then the Collector's name.
 */
export function withUnitSuffix(name: string, unit: string | undefined, kind: PrometheusKind): string {
  const present = new Set(tokens(name));
  const words = unitTokens(unit);
  const perAt = words.indexOf('per');
  // The main word and the "per …" part are each added only when missing, as the Collector does.
  const main = perAt < 0 ? words : words.slice(0, perAt);
  const perPart = perAt < 0 ? [] : words.slice(perAt);
  const added: string[] = [];
  if (main.length > 0 && !main.every((w) => present.has(w))) added.push(...main);
  if (perPart.length > 0 && !perPart.slice(1).every((w) => present.has(w))) added.push(...perPart);
  if (kind === 'gauge' && unit === '1' && !present.has('ratio')) added.push('ratio');
  return added.length === 0 ? name : `${name}.${added.join('.')}`;
}

/** The full Prometheus name of an instrument (with `_total` on counters), as a Collector shows it. */
export function prometheusName(name: string, unit: string | undefined, kind: PrometheusKind): string {
  const base = tokens(withUnitSuffix(name, unit, kind));
  if (kind === 'counter') return [...base.filter((t) => t !== 'total'), 'total'].join('_');
  return base.join('_');
}
