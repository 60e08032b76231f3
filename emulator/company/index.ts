/**
 * The emulated company area (`company.openapi.com`): Italian company data generated
 * deterministically from the VAT number, other countries, search, asynchronous requests (302 →
 * IT-check_id, POST + callback) and monitoring.
 *
 * Control hooks (`POST /_emulator/company/<name>`):
 * - `sandboxCompanies` → the sandbox companies (also served by `GET /_emulator/sandbox-companies`)
 * - `slow {ms?, dataset?, waitMs?}` → how long a slow dataset (IT-full/aml/marketing/stakeholders)
 *   takes to prepare (`ms`, for every one or for `dataset` only; `ms: null` with a dataset drops its
 *   own time), and how long its GET waits for it (`waitMs`, the vendor's 30 s) before answering 302 →
 *   IT-check_id; `{}` restores the defaults. The same time whichever flow buys it: the GET answers
 *   with the dataset once ready within the wait, a POST calls back once ready. Answers the settings.
 * - `async {ms}` → the same as `slow {ms}` (its older name, from when the POST had its own delay)
 * - `complete {id?}` → completes one pending request (or all) now, firing callbacks
 * - `advance {ms}` → moves the emulator's clock forward (as `POST /_emulator/clock {advanceMs}`,
 *   without waiting for the callbacks) and answers `{pending}`, the company requests still pending
 * - `monitorCheck {id, changes?}` → a check of a monitor now (as the vendor's periodic one), with
 *   `changes` (dot path → value) as the register's changes since the last one; fires its callback
 * - `reset` → forgets pending requests and monitors
 *
 * Pending requests are jobs on the emulator's scheduler (`../scheduler.ts`), and the dates of
 * monitors follow its clock.
 */
import { isObj } from '../../contract/values.ts';
import type { AreaModule } from '../core.ts';
import { Scheduler } from '../scheduler.ts';
import { AsyncRequests } from './async.ts';
import { companyIdOfVat } from '../company-ids.ts';
import { Monitors } from './monitor.ts';
import { ownershipChain, parentLinks } from './ownership.ts';
import { identityOf } from './profile.ts';
import { companyRoutes } from './routes.ts';
import { PINNED_COMPANIES } from './sandbox.ts';

export { companyIdOfVat, vatOfCompanyId } from '../company-ids.ts';
export { Rng } from '../random.ts';
export { isRegistered, registeredVats, ownershipChain, parentLinks, childLinks } from './ownership.ts';
export { profileOf } from './profile.ts';

/** The slow datasets: bought by a GET that may answer 302 → IT-check_id, or by POST + callback. */
export const SLOW_DATASETS = ['IT-full', 'IT-aml', 'IT-marketing', 'IT-stakeholders'] as const;
/** The vendor's GET of a slow dataset waits at most this long before answering 302 (ms). */
export const VENDOR_GET_WAIT_MS = 30_000;

export interface CompanyModuleOptions {
  /**
   * How long a slow dataset (IT-full/aml/marketing/stakeholders) takes to prepare, whichever flow
   * buys it: its GET answers once it is ready (302 → IT-check_id past `waitMs`), its POST calls
   * back once it is ready. @default `EMULATOR_COMPANY_PREPARE_MS`, else 0 (ready at once)
   */
  prepareMs?: number;
  /** Preparation times of single datasets (`{'IT-full': 5000}`), over `prepareMs`. @default none */
  prepareMsByDataset?: Partial<Record<(typeof SLOW_DATASETS)[number], number>>;
  /**
   * How long a slow dataset's GET waits for it before answering 302 → IT-check_id.
   * @default `EMULATOR_COMPANY_GET_WAIT_MS`, else 30000 (the vendor's)
   */
  waitMs?: number;
  /** The emulator's scheduler (one for every area; `startEmulator` passes its own). @default a new one */
  scheduler?: Scheduler;
}

export interface SandboxCompany {
  vatCode: string;
  taxCode: string;
  id: string;
  companyName: string;
  legalForm: string;
  activityStatus: string;
  /** Company shareholders (VAT and percent). */
  companyShareholders: Array<{ vatCode: string; percentShare: number }>;
  /** Majority company shareholders up to the top of the group, nearest first. */
  ownershipChain: string[];
  note: string;
}

/** The sandbox companies, with what each is good for. */
export function sandboxCompanies(): SandboxCompany[] {
  return PINNED_COMPANIES.filter((c) => c.note !== null).map((c) => {
    const id = identityOf(c.vat);
    return {
      vatCode: c.vat,
      taxCode: id.taxCode,
      id: companyIdOfVat(c.vat),
      companyName: id.name,
      legalForm: id.legalForm,
      activityStatus: id.status,
      companyShareholders: parentLinks(c.vat).map((l) => ({ vatCode: l.parent, percentShare: l.percent })),
      ownershipChain: ownershipChain(c.vat),
      note: c.note ?? '',
    };
  });
}

const num = (body: unknown, key: string): number | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const v = (body as Record<string, unknown>)[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

const isSlowDataset = (v: unknown): v is (typeof SLOW_DATASETS)[number] => typeof v === 'string' && (SLOW_DATASETS as readonly string[]).includes(v);

export function createCompanyModule(opts: CompanyModuleOptions = {}): AreaModule {
  const defaults = {
    prepareMs: Math.max(0, opts.prepareMs ?? 0),
    waitMs: Math.max(0, opts.waitMs ?? VENDOR_GET_WAIT_MS),
  };
  let prepareMs = defaults.prepareMs;
  let waitMs = defaults.waitMs;
  const byDataset = new Map<string, number>(Object.entries(opts.prepareMsByDataset ?? {}).map(([k, v]) => [k, Math.max(0, v)]));
  const timing = () => ({ prepareMs, waitMs, datasets: Object.fromEntries(byDataset) });
  const slow = (body: unknown): ReturnType<typeof timing> => {
    const o = isObj(body) ? body : {};
    // A 400 of the control API.
    if (o.dataset !== undefined && !isSlowDataset(o.dataset)) throw new Error(`dataset must be one of ${SLOW_DATASETS.join(', ')}`);
    const ms = num(o, 'ms');
    const wait = num(o, 'waitMs');
    if (Object.keys(o).length === 0) {
      prepareMs = defaults.prepareMs;
      waitMs = defaults.waitMs;
      byDataset.clear();
    }
    if (isSlowDataset(o.dataset)) {
      if (ms !== undefined) byDataset.set(o.dataset, Math.max(0, ms));
      else if (o.ms === null) byDataset.delete(o.dataset);
    } else if (ms !== undefined) prepareMs = Math.max(0, ms);
    if (wait !== undefined) waitMs = Math.max(0, wait);
    return timing();
  };
  const scheduler = opts.scheduler ?? new Scheduler();
  const requests = new AsyncRequests(scheduler);
  const monitors = new Monitors(scheduler);
  return {
    area: 'company',
    scheduler,
    routes: companyRoutes({ requests, monitors, prepareMs: (dataset) => byDataset.get(dataset) ?? prepareMs, waitMs: () => waitMs }),
    control: {
      sandboxCompanies: () => sandboxCompanies(),
      slow,
      // POST /_emulator/company/async {ms}: the preparation time again (its older name).
      async: (body) => slow({ ms: num(body, 'ms') ?? 0 }),
      complete: (body) => {
        const id = isObj(body) ? body.id : undefined;
        return { completed: requests.complete(typeof id === 'string' ? id.toLowerCase() : undefined) };
      },
      advance: (body) => {
        requests.advance(num(body, 'ms') ?? 0);
        return { pending: requests.pending() };
      },
      monitorCheck: (body) => {
        const o = isObj(body) ? body : {};
        const changes = isObj(o.changes) ? o.changes : {};
        return { monitor: typeof o.id === 'string' ? monitors.check(o.id, changes) : null };
      },
      reset: () => {
        requests.clear();
        monitors.clear();
        return { ok: true };
      },
    },
    close: () => requests.close(),
  };
}
