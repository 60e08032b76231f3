/**
 * `IT-creditscore-top-monitor`: the contract lists GET, POST, DELETE and shows nothing else; the
 * vendor spec does not have it. Designed after the vendor's other monitors (`WW-kyc-full-monitor`
 * for states and envelopes, company `/monitor` for the body and the dataset fields):
 *
 * - POST `{code*: VAT | tax code | company id, name?, callback?, autorenew?}` → `PENDING`, then
 *   `ACTIVATED` after `completeAfterMs` / `advance` with `latestDataset` = the top credit score
 *   (callback fired);
 * - GET list `[{type, creationTimestamp, lastUpdateTimestamp, state, id}]`, GET `/{id}`,
 *   DELETE `/{id}` (only ACTIVATED) → `DELETED`;
 * - a control `monitorEvent {id}` simulates a change: `previousDataset` ← `latestDataset`,
 *   `updatedFields` set, callback fired.
 *
 * Error numbers are the emulator's own (430–438), since none are published.
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import type { PendingWork, RiskContext } from './jobs.ts';
import type { StoredCallback } from './util.ts';
import { bodyOf, bump, readRiskCallback, str } from './util.ts';
import type { CompanyIdentity } from './creditscore.ts';
import { identify, topData } from './creditscore.ts';

const FAMILY = 'creditscore-top-monitor';

interface ScoreMonitor {
  id: string;
  owner: string;
  name: string | null;
  code: string;
  company: CompanyIdentity;
  callback: StoredCallback | null;
  autorenew: boolean;
  state: 'PENDING' | 'ACTIVATED' | 'DELETED';
  latest: Record<string, unknown> | null;
  previous: Record<string, unknown> | null;
  updatedFields: string[];
  created: number;
  updated: number;
  checked: number | null;
  expiry: number;
}

const view = (m: ScoreMonitor): Record<string, unknown> => ({
  name: m.name,
  code: m.code,
  callback: m.callback,
  type: 'top',
  autorenew: m.autorenew,
  companyId: m.company.companyId,
  vatCode: m.company.vat,
  taxCode: m.company.tax,
  companyName: m.company.name,
  updatedFields: m.updatedFields,
  latestDataset: m.latest,
  previousDataset: m.previous,
  creationTimestamp: m.created,
  lastUpdateTimestamp: m.updated,
  checkedTimestamp: m.checked,
  expiryTimestamp: m.expiry,
  state: m.state,
  id: m.id,
});

const listItem = (m: ScoreMonitor): Record<string, unknown> => ({
  type: 'top',
  creationTimestamp: m.created,
  lastUpdateTimestamp: m.updated,
  state: m.state,
  id: m.id,
});

export function creditScoreMonitorRoutes(ctx: RiskContext): Route[] {
  const records = new Map<string, ScoreMonitor>();
  ctx.onReset(() => records.clear());

  const work = (m: ScoreMonitor): PendingWork => ({
    id: m.id,
    complete: () => {
      m.state = 'ACTIVATED';
      m.latest = topData(m.company, ctx.now());
      m.checked = ctx.nowSeconds();
      m.updated = bump(m.updated, ctx.nowSeconds());
    },
    view: () => view(m),
    callback: () => m.callback,
  });

  ctx.onMonitorEvent(async (id) => {
    const m = records.get(id);
    if (!m || m.state !== 'ACTIVATED') return false;
    m.previous = m.latest;
    m.latest = topData(m.company, ctx.now());
    m.updatedFields = ['data.credit_check', 'data.history'];
    m.checked = ctx.nowSeconds();
    m.updated = bump(m.updated, ctx.nowSeconds());
    await ctx.jobs.notify(work(m));
    return true;
  });

  const find = (req: EmuRequest, id: string, errors: [number, number]): ScoreMonitor | EmuResponse => {
    const seen = ctx.jobs.lookup(id, req.token.owner, FAMILY);
    if (seen === 'malformed') return fail(406, errors[0], 'id not valid');
    const m = records.get(id.toLowerCase());
    if (seen !== 'ok' || !m) return fail(404, errors[1], `no monitoring matches this id: ${id}`);
    return m;
  };
  const isMonitor = (v: ScoreMonitor | EmuResponse): v is ScoreMonitor => 'company' in v;

  return [
    {
      method: 'POST',
      pattern: '/IT-creditscore-top-monitor',
      handler: (req) => {
        const body = bodyOf(req);
        const code = str(body.code) ?? str(body.vatCode) ?? str(body.taxCode) ?? str(body.id);
        if (code === undefined) return fail(428, 430, 'code required');
        const company = identify(code);
        if (company === 'missing') return fail(428, 430, 'code required');
        if (company === 'invalid') return fail(406, 431, 'code not valid');
        const cb = readRiskCallback(body, 'standard');
        if ('error' in cb) return cb.error;
        const callback = cb.callback;
        const now = ctx.nowSeconds();
        const m: ScoreMonitor = {
          id: hexId(),
          owner: req.token.owner,
          name: str(body.name) ?? null,
          code: code.trim(),
          company,
          callback,
          autorenew: typeof body.autorenew === 'boolean' ? body.autorenew : true,
          state: 'PENDING',
          latest: null,
          previous: null,
          updatedFields: [],
          created: now,
          updated: now,
          checked: null,
          expiry: now + 365 * 24 * 3600,
        };
        records.set(m.id, m);
        ctx.jobs.register(m.id, m.owner, FAMILY);
        ctx.jobs.arm(work(m));
        return ok(view(m));
      },
    },
    {
      method: 'GET',
      pattern: '/IT-creditscore-top-monitor',
      handler: (req) => {
        const list = [...records.values()].filter((m) => m.owner === req.token.owner);
        return list.length === 0 ? fail(404, 432, 'no monitoring related to your account') : ok(list.map(listItem));
      },
    },
    {
      method: 'GET',
      pattern: '/IT-creditscore-top-monitor/:id',
      handler: (req, p) => {
        const m = find(req, p.id ?? '', [433, 434]);
        return isMonitor(m) ? ok(view(m)) : m;
      },
    },
    {
      method: 'DELETE',
      pattern: '/IT-creditscore-top-monitor/:id',
      handler: (req, p) => {
        const m = find(req, p.id ?? '', [435, 436]);
        if (!isMonitor(m)) return m;
        if (m.state === 'DELETED') return fail(422, 437, 'you have already deleted this monitoring');
        if (m.state !== 'ACTIVATED') return fail(422, 438, "you can only delete 'ACTIVATED' monitoring");
        m.state = 'DELETED';
        m.updated = bump(m.updated, ctx.nowSeconds());
        return ok(view(m));
      },
    },
  ];
}
