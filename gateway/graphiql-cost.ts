/**
 * The GraphiQL cost plugin: a sidebar panel ("Cost", the € button) served inline with the page (no CDN, no library: GraphiQL's own React, which its bundle puts on
 * `globalThis.React`). What it shows:
 *
 * - **Before Run**, as the person edits the query, its variables or its headers: under the € button
 *   (the panel may stay closed: opened, it would narrow the editors and cut the tab strip), the
 *   estimate's euro; in the panel, the estimate of the
 *   selected operation (the one the active tab will run), asked of the gateway with
 *   `x-openapi-estimate-only: true` (`cost.ts`: nothing executes, no upstream call), at most one
 *   request in flight and only after `ESTIMATE_DEBOUNCE_MS` without an edit: the worst-case euro,
 *   the endpoints it may call with their prices, and what the cache would save this caller now.
 * - **After Run**: the answer's `extensions.cost` (read from the page's own request, not asked
 *   again) beside the estimate it ran under: euro spent and at risk, upstream calls, cache and
 *   de-duplication hits, and the budget left for the operation and for the day.
 * - **Spending**: `Query.spending` (the account subgraph, read from the layer's ledger, free) as a
 *   small inline SVG chart: this month's days stacked by upstream area, the day budget as a line,
 *   today's areas as a legend. Read at load and after each run.
 *
 * The caller's headers (a `Authorization: Bearer` token in GraphiQL's headers pane) go with every
 * request the panel makes: estimates, cache hits and spending are the caller's.
 *
 * How it is wired (`graphiql.ts`): `COST_PLUGIN_SCRIPT` runs before GraphiQL's bundle and defines
 * `window.openapiCost`; the page's render call goes through `openapiCost.render`, which adds the
 * plugin and GraphiQL's `onEditQuery` / `onEditVariables` / `onEditHeaders` callbacks to the options.
 * Yoga's GraphiQL replaces its `plugins` option with its own list (the GraphiQL Explorer), so the
 * bundle is patched to append `extraPlugins` to it (`withExtraPlugins`); should the bundle change
 * shape, the cost plugin is passed as the only plugin instead (the explorer is lost, the panel is not).
 */

/** Milliseconds without an edit before the estimate is asked for. */
export const ESTIMATE_DEBOUNCE_MS = 350;

/** The plugin's title (its sidebar button is labelled "Show Cost" / "Hide Cost"). */
export const COST_PLUGIN_TITLE = 'Cost';

/** Where yoga's GraphiQL sets its plugin list; patched to take `extraPlugins` from the options too. */
const PLUGINS_IN_BUNDLE = 'plugins:[r],schemaDescription:!0';

/** The page's HTML with the bundle taking `extraPlugins` (see the module's comment); unchanged when the bundle has another shape. */
export function withExtraPlugins(html: string): { html: string; patched: boolean } {
  const at = html.indexOf(PLUGINS_IN_BUNDLE);
  if (at < 0 || html.indexOf(PLUGINS_IN_BUNDLE, at + 1) >= 0) return { html, patched: false };
  return { html: html.slice(0, at) + 'plugins:[r].concat(n.extraPlugins||[]),schemaDescription:!0' + html.slice(at + PLUGINS_IN_BUNDLE.length), patched: true };
}

/** The render call of the page, routed through the plugin (see the module's comment). */
export const RENDER_CALL = 'YogaGraphiQL.renderYogaGraphiQL(';
export const RENDER_THROUGH_PLUGIN = 'window.openapiCost.render(YogaGraphiQL.renderYogaGraphiQL, ';

/**
 * The plugin's browser code (ES2020, no template literals: it is served as it is written here).
 * `patched`: the bundle takes `extraPlugins` (else the plugin is passed as `plugins`).
 */
export function costPluginScript(opts: { endpoint: string; patched: boolean }): string {
  const config = JSON.stringify({ endpoint: opts.endpoint, debounceMs: ESTIMATE_DEBOUNCE_MS, title: COST_PLUGIN_TITLE, patched: opts.patched }).replace(/</g, '\\u003c');
  return `<script>
(function () {
var CONFIG = ${config};
${PLUGIN_BODY}
})();
</script>`;
}

const PLUGIN_BODY = String.raw`
var nativeFetch = window.fetch.bind(window);
var SPENDING_QUERY = 'query OpenapiCostPanelSpending { spending { tenant today { period total byArea { area euro } } month { period total byArea { area euro } } days { period total byArea { area euro } } budgets { operation day dayCommitted dayRemaining } } }';
var AREA_COLOURS = { company: '#4f7cff', risk: '#e0567a', pec: '#2bb39a', pecmassiva: '#17856f', invoice: '#f0a030', cap: '#8a6cf0', oauth: '#7b8794', other: '#b0b7c3' };

var state = {
  query: '', variables: '', headers: '', operationName: null,
  estimate: null, estimateError: null, estimating: false, estimatedFor: null,
  run: null, spending: null, spendingError: null
};
var listeners = [];
var version = 0;
function set(patch) {
  for (var k in patch) state[k] = patch[k];
  version++;
  listeners.forEach(function (l) { l(); });
}
function subscribe(l) { listeners.push(l); return function () { listeners = listeners.filter(function (x) { return x !== l; }); }; }

function readStorage(key) { try { return window.localStorage.getItem('graphiql:' + key) || ''; } catch (e) { return ''; } }

/** The operation names of a document, in order (comments and strings are rare enough in names). */
function operationNames(query) {
  var names = [];
  var re = /(^|[^\w$])(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/g;
  var text = query.replace(/#[^\n]*/g, '');
  var m;
  while ((m = re.exec(text))) { names.push(m[3]); operationTypes[m[3]] = m[2]; }
  return names;
}
var operationTypes = {};

/** The operation the active tab runs: the only one, else the tab's stored operation name, else the first. */
function selectedOperation(query) {
  var names = operationNames(query);
  if (names.length <= 1) return names[0] || null;
  try {
    var tabs = JSON.parse(readStorage('tabState') || 'null');
    var tab = tabs && tabs.tabs && tabs.tabs[tabs.activeTabIndex];
    if (tab && tab.operationName && names.indexOf(tab.operationName) >= 0) return tab.operationName;
  } catch (e) {}
  return names[0];
}

function parseJson(text) {
  if (!text || !text.trim()) return {};
  try { var v = JSON.parse(text); return v && typeof v === 'object' && !Array.isArray(v) ? v : null; } catch (e) { return null; }
}

/** The caller's headers from GraphiQL's headers pane (string values only). */
function callerHeaders() {
  var h = parseJson(state.headers) || {};
  var out = {};
  for (var k in h) if (typeof h[k] === 'string') out[k] = h[k];
  return out;
}

function post(body, extra) {
  var headers = Object.assign({}, callerHeaders(), { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' }, extra || {});
  return nativeFetch(CONFIG.endpoint, { method: 'POST', headers: headers, body: JSON.stringify(body), credentials: 'same-origin', signal: extra && extra.signal });
}

var timer = null;
var inFlight = null;
/** The document as Run sent it (GraphiQL prints it), by the editor's text and operation name. */
var runForms = {};
function scheduleEstimate() {
  if (timer) clearTimeout(timer);
  timer = setTimeout(estimateNow, CONFIG.debounceMs);
}

function estimateNow() {
  timer = null;
  var query = state.query;
  if (!query.trim()) { set({ estimate: null, estimateError: null, estimating: false }); return; }
  var variables = parseJson(state.variables);
  var operationName = selectedOperation(query);
  var key = JSON.stringify([query, state.variables, state.headers, operationName]);
  // Run sends the document as GraphiQL prints it: once run, estimates send that same text, so that
  // the response cache (keyed by the text) can say whether it holds this caller's answer.
  var sentAs = runForms[query + '\u0000' + operationName];
  if (state.headers !== spendingHeaders) loadSpending();
  if (operationName && operationTypes[operationName] === 'subscription') {
    // Over HTTP the gateway answers a subscription as a stream: its events are each priced as they come.
    set({ estimate: null, estimating: false, operationName: operationName, estimatedFor: key, estimateError: 'a subscription: each event is priced on its own, when it comes (see its extensions.cost)' });
    return;
  }
  if (key === state.estimatedFor && !state.estimateError) return;
  if (inFlight) inFlight.abort();
  var controller = new AbortController();
  inFlight = controller;
  set({ estimating: true, operationName: operationName });
  var headers = Object.assign({}, callerHeaders(), { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', 'x-openapi-estimate-only': 'true' });
  nativeFetch(CONFIG.endpoint, {
    method: 'POST', headers: headers, credentials: 'same-origin', signal: controller.signal,
    body: JSON.stringify({ query: sentAs || query, variables: variables || {}, operationName: operationName })
  })
    .then(function (res) { return res.json(); })
    .then(function (answer) {
      if (inFlight !== controller) return;
      inFlight = null;
      var cost = answer && answer.extensions && answer.extensions.cost;
      var errors = answer && answer.errors;
      if (errors && errors.length) {
        set({ estimating: false, estimate: cost && cost.estimate ? cost.estimate : null, estimateError: errors.map(function (e) { return e.message; }).join('; '), estimatedFor: key });
      } else {
        set({ estimating: false, estimate: cost ? cost.estimate : null, estimateError: variables === null ? 'the variables are not a JSON object: priced without them' : null, estimatedFor: key });
      }
    })
    .catch(function (err) {
      if (inFlight !== controller) return;
      inFlight = null;
      set({ estimating: false, estimateError: 'no estimate: ' + (err && err.message ? err.message : String(err)) });
    });
}

/** The headers the spending shown was read with (a new token reads its own, after the edit pauses). */
var spendingHeaders = null;
function loadSpending() {
  spendingHeaders = state.headers;
  post({ query: SPENDING_QUERY, operationName: 'OpenapiCostPanelSpending' })
    .then(function (res) { return res.json(); })
    .then(function (answer) {
      if (answer && answer.data && answer.data.spending) set({ spending: answer.data.spending, spendingError: null });
      else set({ spendingError: answer && answer.errors && answer.errors[0] ? answer.errors[0].message : 'no spending' });
    })
    .catch(function (err) { set({ spendingError: String(err && err.message ? err.message : err) }); });
}

/** The page's own operations (GraphiQL's Run): their extensions.cost, read from a copy of the answer. */
window.fetch = function (input, init) {
  var p = nativeFetch(input, init);
  try {
    var url = typeof input === 'string' ? input : input && input.url;
    var body = init && typeof init.body === 'string' ? init.body : null;
    if (!url || !body || new URL(url, location.href).pathname !== new URL(CONFIG.endpoint, location.href).pathname) return p;
    var sent = JSON.parse(body);
    if (!sent || typeof sent.query !== 'string' || /\b__schema\b/.test(sent.query)) return p;
    var estimateAtRun = state.estimate;
    var editorText = state.query;
    if (sent.operationName !== 'OpenapiCostPanelSpending') runForms[editorText + '\u0000' + (sent.operationName || selectedOperation(editorText))] = sent.query;
    p.then(function (res) {
      var type = res.headers.get('content-type') || '';
      // JSON, or the parts of an incremental answer (@defer over multipart/mixed: the last part
      // carrying extensions.cost is the whole operation's); an event stream (SSE) is left alone.
      var multipart = /multipart\/mixed/.test(type);
      if (!/json/.test(type) && !multipart) return;
      return res.clone().text().then(function (body) {
        var answer = null;
        if (!multipart) answer = JSON.parse(body);
        else body.split(/\r?\n--[^\r\n]*/).forEach(function (part) {
          var at = part.indexOf('{');
          if (at < 0) return;
          try { var json = JSON.parse(part.slice(at)); if (json && json.extensions && json.extensions.cost) answer = json; } catch (e) {}
        });
        var cost = answer && answer.extensions && answer.extensions.cost;
        if (!cost || cost.executed === false) return;
        set({ run: { cost: cost, estimate: cost.estimate || estimateAtRun, operationName: sent.operationName || null, at: new Date() }, estimatedFor: null });
        loadSpending();
        // What the cache holds for this caller has changed: the estimate is asked again.
        scheduleEstimate();
      });
    }).catch(function () {});
  } catch (e) {}
  return p;
};

// ---------------------------------------------------------------------------------------------
// The panel

var h = function () { return window.React.createElement.apply(window.React, arguments); };
var euro = function (n) { return typeof n === 'number' ? '\u20ac' + (Math.round(n * 10000) / 10000).toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2) : '\u2014'; };
var S = {
  section: { padding: '8px 0', borderBottom: '1px solid hsla(var(--color-neutral), var(--alpha-background-heavy))' },
  label: { fontSize: '12px', opacity: 0.7, textTransform: 'uppercase', letterSpacing: '0.04em' },
  figure: { fontSize: '28px', fontWeight: 600, margin: '2px 0' },
  row: { display: 'flex', justifyContent: 'space-between', gap: '8px', fontSize: '13px', padding: '1px 0' },
  small: { fontSize: '12px', opacity: 0.75 },
  mono: { fontFamily: 'var(--font-family-mono, monospace)', fontSize: '12px' }
};

function Row(label, value, id) { return h('div', { style: S.row, 'data-cost': id }, h('span', null, label), h('span', null, value)); }

function EstimateSection() {
  var e = state.estimate;
  var children = [h('div', { key: 'l', style: S.label }, 'Estimate before Run' + (state.operationName ? ' \u00b7 ' + state.operationName : ''))];
  if (!state.query.trim()) children.push(h('div', { key: 'n', style: S.small }, 'Write a query: its price shows here before it runs.'));
  else if (!e && state.estimating) children.push(h('div', { key: 'w', style: S.small }, 'pricing\u2026'));
  if (e) {
    children.push(h('div', { key: 'f', id: 'openapi-cost-estimate', style: S.figure, title: 'Worst case: nothing cached, lists at their longest' }, euro(e.euro)));
    children.push(h('div', { key: 's', style: S.small }, 'worst case' + (state.estimating ? ' \u00b7 updating\u2026' : '')));
    if (e.cache) {
      children.push(Row(e.cache.answered ? 'Cached for you: saves' : 'Cache saves (known now)', euro(e.cache.saves), 'saves'));
      children.push(Row('Expected after cache', euro(e.cache.afterCache), 'after-cache'));
    }
    if (e.endpoints && e.endpoints.length) {
      children.push(h('div', { key: 'el', style: Object.assign({}, S.label, { marginTop: '6px' }) }, 'May call'));
      children.push(h('ul', { key: 'eps', id: 'openapi-cost-endpoints', style: { margin: 0, paddingLeft: '16px' } }, e.endpoints.map(function (ep) {
        return h('li', { key: ep.endpoint, style: S.mono }, ep.endpoint + ' \u00b7 ' + euro(ep.euro) + (ep.cacheSeconds > 0 ? ' \u00b7 cached ' + humanSeconds(ep.cacheSeconds) : ''));
      })));
    }
  }
  if (state.estimateError) children.push(h('div', { key: 'x', style: Object.assign({}, S.small, { color: 'hsl(var(--color-error))' }) }, state.estimateError));
  return h('div', { style: S.section }, children);
}

function humanSeconds(s) { return s >= 86400 ? Math.round(s / 86400) + ' d' : s >= 3600 ? Math.round(s / 3600) + ' h' : s >= 60 ? Math.round(s / 60) + ' min' : s + ' s'; }

function budgetLine(b, fallbackLimit, spent) {
  if (b && b.limit !== null && b.limit !== undefined) return euro(b.remaining) + ' of ' + euro(b.limit);
  if (typeof fallbackLimit === 'number') return euro(Math.max(0, fallbackLimit - (spent || 0))) + ' of ' + euro(fallbackLimit);
  return 'no limit';
}

function RunSection() {
  var r = state.run;
  if (!r) return h('div', { style: S.section, id: 'openapi-cost-run' }, h('div', { style: S.label }, 'Last run'), h('div', { style: S.small }, 'Nothing run yet: editing calls nothing upstream.'));
  var c = r.cost;
  var b = c.budget || {};
  var sp = state.spending;
  return h('div', { style: S.section, id: 'openapi-cost-run' },
    h('div', { style: S.label }, 'Last run' + (r.operationName ? ' \u00b7 ' + r.operationName : '')),
    h('div', { style: { display: 'flex', gap: '16px', alignItems: 'baseline' } },
      h('div', null, h('div', { id: 'openapi-cost-actual', style: S.figure }, euro(c.euro)), h('div', { style: S.small }, 'actual')),
      h('div', null, h('div', { id: 'openapi-cost-run-estimate', style: Object.assign({}, S.figure, { opacity: 0.55 }) }, euro(r.estimate ? r.estimate.euro : null)), h('div', { style: S.small }, 'estimated'))),
    c.atRisk > 0 ? Row('At risk (outcome unknown)', euro(c.atRisk), 'at-risk') : null,
    Row('Upstream calls', String(c.upstreamCalls), 'calls'),
    Row('Cache / shared hits', String((c.cacheHits || 0) + (c.staleHits || 0)) + ' / ' + String(c.dedupHits || 0), 'hits'),
    c.saved ? Row('Saved by the cache', euro(c.saved.euro), 'saved') : null,
    h('div', { id: 'openapi-cost-budget' },
      Row('Left for an operation', budgetLine(b.operation, sp && sp.budgets ? sp.budgets.operation : null, c.euro), 'budget-operation'),
      Row('Left today', b.day ? budgetLine(b.day) : sp && sp.budgets && sp.budgets.day !== null ? euro(sp.budgets.dayRemaining) + ' of ' + euro(sp.budgets.day) : 'no limit', 'budget-day')));
}

function Chart() {
  var sp = state.spending;
  if (!sp) return h('div', { style: S.section }, h('div', { style: S.label }, 'Spending'), h('div', { style: S.small }, state.spendingError || 'loading\u2026'));
  var W = 260, H = 90, pad = 14;
  var [year, month] = sp.month.period.split('-').map(Number);
  var daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  var max = Math.max(0.01, sp.budgets.day || 0, Math.max.apply(null, sp.days.map(function (d) { return d.total; }).concat([0])));
  var bw = (W - pad) / daysInMonth;
  var bars = [];
  sp.days.forEach(function (d) {
    var day = Number(d.period.slice(8, 10));
    var y = H - pad;
    d.byArea.forEach(function (a) {
      var hgt = Math.max(1, (a.euro / max) * (H - pad - 4));
      y -= hgt;
      bars.push(h('rect', { key: d.period + a.area, x: pad + (day - 1) * bw + 0.5, y: y, width: Math.max(1, bw - 1), height: hgt, fill: AREA_COLOURS[a.area] || AREA_COLOURS.other },
        h('title', null, d.period + ' ' + a.area + ' ' + euro(a.euro))));
    });
  });
  var budgetY = sp.budgets.day ? H - pad - (sp.budgets.day / max) * (H - pad - 4) : null;
  var svg = h('svg', { id: 'openapi-cost-chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'Euro committed per day this month, by area' },
    h('line', { x1: pad, y1: H - pad, x2: W, y2: H - pad, stroke: 'currentColor', strokeOpacity: 0.3 }),
    budgetY !== null ? h('line', { x1: pad, y1: budgetY, x2: W, y2: budgetY, stroke: 'hsl(var(--color-error))', strokeDasharray: '3 3' }, h('title', null, 'day budget ' + euro(sp.budgets.day))) : null,
    h('text', { x: pad, y: H - 2, fontSize: 9, fill: 'currentColor', opacity: 0.6 }, '1'),
    h('text', { x: W - 12, y: H - 2, fontSize: 9, fill: 'currentColor', opacity: 0.6 }, String(daysInMonth)),
    bars);
  return h('div', { style: S.section, id: 'openapi-cost-spending' },
    h('div', { style: S.label }, 'Spending \u00b7 ' + sp.month.period),
    Row('Today', euro(sp.today.total) + (sp.budgets.day !== null ? ' of ' + euro(sp.budgets.day) : ''), 'today'),
    Row('This month', euro(sp.month.total), 'month'),
    svg,
    h('div', { style: { display: 'flex', flexWrap: 'wrap', gap: '8px', fontSize: '12px' } }, sp.month.byArea.map(function (a) {
      return h('span', { key: a.area, 'data-area': a.area }, h('span', { style: { display: 'inline-block', width: '8px', height: '8px', background: AREA_COLOURS[a.area] || AREA_COLOURS.other, marginRight: '4px' } }), a.area + ' ' + euro(a.euro));
    })));
}

function Panel() {
  window.React.useSyncExternalStore(subscribe, function () { return version; });
  window.React.useEffect(function () { if (!state.spending) loadSpending(); }, []);
  return h('div', { className: 'openapi-cost-panel', style: { display: 'flex', flexDirection: 'column', gap: '4px' } },
    h('div', { className: 'graphiql-doc-explorer-title' }, 'Cost'),
    h(EstimateSection), h(RunSection), h(Chart),
    h('div', { style: S.small }, 'Estimates never call the Openapi services; Run does.'));
}

/** The sidebar button's icon: the euro sign, and under it the estimate as the person edits (the panel may stay closed). */
function Icon(props) {
  window.React.useSyncExternalStore(subscribe, function () { return version; });
  var e = state.estimate;
  var figure = e && typeof e.euro === 'number' ? euro(e.euro) : state.estimating ? '…' : '';
  return h('span', { 'aria-hidden': props['aria-hidden'], style: { display: 'flex', flexDirection: 'column', alignItems: 'center', lineHeight: 1 } },
    h('svg', { viewBox: '0 0 24 24', height: '1em', fill: 'none', stroke: 'currentColor', strokeWidth: 1.6 },
      h('path', { d: 'M17 6.5A7 7 0 1 0 17 17.5M4 10.5h10M4 13.5h10', strokeLinecap: 'round' })),
    h('span', { id: 'openapi-cost-badge', style: { fontSize: '9px', marginTop: '2px', whiteSpace: 'nowrap', fontWeight: 600 } }, figure));
}

var plugin = { title: CONFIG.title, icon: Icon, content: Panel };

// The editors' text as GraphiQL stored it (its callbacks tell the edits from now on).
state.query = readStorage('query');
state.variables = readStorage('variables');

window.openapiCost = {
  render: function (render, root, options) {
    var extra = {
      onEditQuery: function (value) { state.query = value || ''; scheduleEstimate(); if (options.onEditQuery) options.onEditQuery.apply(null, arguments); },
      onEditVariables: function (value) { state.variables = value || ''; scheduleEstimate(); if (options.onEditVariables) options.onEditVariables.apply(null, arguments); },
      onEditHeaders: function (value) { state.headers = value || ''; scheduleEstimate(); if (options.onEditHeaders) options.onEditHeaders.apply(null, arguments); }
    };
    if (CONFIG.patched) extra.extraPlugins = [plugin]; else extra.plugins = [plugin];
    render(root, Object.assign({}, options, extra));
    scheduleEstimate();
  },
  state: function () { return state; }
};
`;
