/**
 * The shipped Grafana dashboard (ops/grafana/openapi-supergraph.json) reads only what the layer
 * exports: it loads as JSON, and every query's metric names (and the labels it groups and filters
 * by) are on the `/metrics` page of a running stack, scraped after a paid operation and a cached one.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const DASHBOARD = new URL('../../../ops/grafana/openapi-supergraph.json', import.meta.url);

interface Target {
  expr?: string;
}
interface Panel {
  title?: string;
  type: string;
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  title: string;
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; query?: unknown; definition?: string }> };
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'and', 'or', 'unless', 'inf', 'nan']);

/** The metric names a PromQL expression reads, with the labels it filters or groups them by. */
function metricsOf(expr: string): { metrics: Set<string>; labels: Set<string> } {
  const labels = new Set<string>();
  let e = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  e = e.replace(/\{([^}]*)\}/g, (_m, inner: string) => {
    for (const l of inner.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) labels.add(l[1]);
    return ' ';
  });
  e = e.replace(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g, (_m, inner: string) => {
    for (const l of inner.split(',')) if (l.trim()) labels.add(l.trim());
    return ' ';
  });
  // label_values(metric, label): the label is the second argument.
  e = e.replace(/\blabel_values\s*\(\s*([a-zA-Z_:][\w:]*)\s*,\s*([a-zA-Z_]\w*)\s*\)/g, (_m, metric: string, label: string) => {
    labels.add(label);
    return ` ${metric} `;
  });
  e = e.replace(/\[[^\]]*\]/g, ' ').replace(/\$\{?\w+\}?/g, ' ');
  const metrics = new Set<string>();
  for (const m of e.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)) if (!KEYWORDS.has(m[1].toLowerCase())) metrics.add(m[1]);
  return { metrics, labels };
}

function expressions(d: Dashboard): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  const walk = (panels: Panel[]): void => {
    for (const p of panels) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ where: p.title ?? p.type, expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(d.panels);
  for (const v of d.templating.list) {
    const q = typeof v.query === 'string' ? v.query : (v.query as { query?: string } | undefined)?.query;
    if (q && /[a-z]_/.test(q)) out.push({ where: `$${v.name}`, expr: q });
  }
  return out;
}

let t: TestStack;
/** Metric family → its type, and the sample names and labels the page holds. */
const families = new Map<string, string>();
const samples = new Map<string, Set<string>>();

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '20' });
  const q = '{ company(vatCode: "04123450159") { companyName } }';
  expect((await t.gql(q)).errors).toBeUndefined();
  expect((await t.gql(q)).errors).toBeUndefined();
  const text = await (await fetch(`${t.url}/metrics`)).text();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1], type[2]);
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (sample) {
      const set = samples.get(sample[1]) ?? new Set<string>();
      for (const l of (sample[2] ?? '').matchAll(/(\w+)="/g)) set.add(l[1]);
      samples.set(sample[1], set);
    }
  }
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** The names a family exports: a histogram's `_bucket`, `_sum`, `_count`, a summary's `_sum`, `_count`. */
function exported(): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of families) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

  it('loads as a dashboard with panels and queries', () => {
    expect(dashboard).toMatchObject({ title: 'openapi-supergraph', uid: 'openapi-supergraph' });
    expect(expressions(dashboard).length).toBeGreaterThan(15);
    expect(metricsOf('sum by (area) (rate(openapi_upstream_euro_total{area=~"$area"}[$__rate_interval])) * 3600')).toEqual({
      metrics: new Set(['openapi_upstream_euro_total']),
      labels: new Set(['area']),
    });
  });

  it('names, in every query, only metrics the layer exports, and labels they carry', () => {
    const names = exported();
    expect(names.has('openapi_upstream_euro_total')).toBe(true);
    const unknown: string[] = [];
    const badLabels: string[] = [];
    const read = new Set<string>();
    for (const { where, expr } of expressions(dashboard)) {
      const { metrics, labels } = metricsOf(expr);
      expect(metrics.size, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const m of metrics) {
        read.add(m);
        if (!names.has(m)) unknown.push(`${where}: ${m}`);
        // Labels are checked on the metrics with samples on the page (a family seen empty has none yet).
        const carried = samples.get(m);
        if (carried) for (const l of labels) if (l !== 'le' && ![...metrics].some((x) => samples.get(x)?.has(l))) badLabels.push(`${where}: ${m} has no label ${l}`);
      }
    }
    expect(unknown).toEqual([]);
    expect(badLabels).toEqual([]);
    // Every metric the layer adds is on the dashboard.
    const layer = [...families.keys()].filter((n) => n.startsWith('openapi_'));
    expect(layer.filter((n) => ![...read].some((r) => r === n || r.startsWith(`${n}_`)))).toEqual([]);
  });
});
