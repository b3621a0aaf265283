/**
 * The Grafana dashboard's shape, offline (its queries against a real worker are in
 * dashboard.int.spec.ts): every panel reads the selected data source, every metric selector of
 * every query is narrowed to the selected namespaces and jobs, panels have ids of their own and fit
 * the 24-column grid without overlapping.
 */
import { describe, expect, it } from 'vitest';
import { dashboardQueries, readDashboard } from './dashboard.spec-helper.js';
import { metricNamesIn } from './operations-doc.spec-helper.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid?: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; datasource?: { uid?: string } }[];
}

const dashboard = readDashboard() as unknown as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
};

describe('the Grafana dashboard', () => {
  it('has a data source, namespace and job variable', () => {
    expect(dashboard.uid).toBe('baton-workers');
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['namespace', 'query'],
      ['job', 'query'],
    ]);
  });

  it('reads every panel from the selected data source, narrowed to the selected namespaces and jobs', () => {
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThanOrEqual(20);
    const wrong: string[] = [];
    for (const panel of graphs) {
      if (panel.datasource?.uid !== '${datasource}') wrong.push(`${panel.title}: panel data source`);
      for (const target of panel.targets ?? []) {
        if (target.datasource?.uid !== '${datasource}') wrong.push(`${panel.title}: target data source`);
        // Every metric the query reads appears only inside a selector with both variables.
        for (const name of metricNamesIn(target.expr)) {
          const uses = [...target.expr.matchAll(new RegExp(`\\b${name}\\b(\\{[^}]*\\})?`, 'g'))];
          for (const [, selector = ''] of uses) {
            if (!selector.includes('namespace=~"$namespace"') || !selector.includes('job=~"$job"'))
              wrong.push(`${panel.title}: ${name} is not narrowed to $namespace and $job`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(dashboardQueries(dashboard).length).toBeGreaterThanOrEqual(30);
  });

  it('gives each panel an id of its own and a place on the grid no other panel takes', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const taken = new Map<string, string>();
    const clashes: string[] = [];
    for (const { title, gridPos } of dashboard.panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          const cell = `${x},${y}`;
          const other = taken.get(cell);
          if (other !== undefined) clashes.push(`${title} overlaps ${other} at ${cell}`);
          taken.set(cell, title);
        }
      }
    }
    expect(clashes).toEqual([]);
  });
});
