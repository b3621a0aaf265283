import { describe, expect, it } from 'vitest';
import { counterValue, histogram, histogramPercentiles, requireHistogram } from './prometheus.js';

const PAGE = [
  '# TYPE baton_journal_append_duration_seconds histogram',
  'baton_journal_append_duration_seconds_bucket{le="0.001",otel_scope_name="@baton/worker"} 3',
  'baton_journal_append_duration_seconds_bucket{le="0.01",otel_scope_name="@baton/worker"} 4',
  'baton_journal_append_duration_seconds_bucket{le="+Inf",otel_scope_name="@baton/worker"} 4',
  'baton_journal_append_duration_seconds_sum{otel_scope_name="@baton/worker"} 0.006',
  'baton_journal_append_duration_seconds_count{otel_scope_name="@baton/worker"} 4',
].join('\n');

describe("the bench's reading of the workers' histograms", () => {
  it('reads a histogram by its Prometheus name', () => {
    const h = requireHistogram(PAGE, 'baton_journal_append_duration_seconds');
    expect(h).toMatchObject({ count: 4, sum: 0.006 });
    expect(histogramPercentiles(h)).toMatchObject({ count: 4, p50: 1, p99: 10 });
  });

  it('fails on a name the page lacks (a renamed metric), where a plain read finds nothing', () => {
    // The name before the unit was added: a plain read silently finds an empty histogram.
    expect(histogram(PAGE, 'baton_journal_append_duration').count).toBe(0);
    expect(() => requireHistogram(PAGE, 'baton_journal_append_duration')).toThrow(
      /no histogram baton_journal_append_duration; was it renamed/,
    );
  });

  it('sums a counter over its label sets, and fails on a name the page lacks', () => {
    const page = [
      '# TYPE baton_runs_resumed_total counter',
      'baton_runs_resumed_total{baton_reason="failover",otel_scope_name="@baton/worker"} 3',
      'baton_runs_resumed_total{baton_reason="wake",otel_scope_name="@baton/worker"} 2',
      '# TYPE baton_journal_read_bytes_total counter',
    ].join('\n');
    expect(counterValue(page, 'baton_runs_resumed_total')).toBe(5);
    expect(counterValue(page, 'baton_journal_read_bytes_total')).toBe(0);
    expect(() => counterValue(page, 'baton_journal_read_bytes')).toThrow(
      /no counter baton_journal_read_bytes;/,
    );
  });
});
