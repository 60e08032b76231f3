/**
 * The emulated company area (`company.openapi.com`): Italian company data generated
 * deterministically from the VAT number, other countries, search, asynchronous requests (302 →
 * IT-check_id, POST + callback) and monitoring.
 *
 * Control hooks (`POST /_emulator/company/<name>`):
 * - `sandboxCompanies` → the sandbox companies (also served by `GET /_emulator/sandbox-companies`)
 * - `slow {ms}` → GET IT-full/aml/marketing/stakeholders answer 302 → IT-check_id, ready after `ms` (0 turns it off)
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
import { companyIdOfVat } from './ids.ts';
import { Monitors } from './monitor.ts';
import { ownershipChain, parentLinks } from './ownership.ts';
import { identityOf } from './profile.ts';
import { companyRoutes } from './routes.ts';
import { PINNED_COMPANIES } from './sandbox.ts';

export { companyIdOfVat, vatOfCompanyId } from './ids.ts';
export { Rng } from './random.ts';
export { isRegistered, registeredVats, ownershipChain, parentLinks, childLinks } from './ownership.ts';
export { profileOf } from './profile.ts';

export interface CompanyModuleOptions {
  /**
   * Delay of slow GETs of IT-full/aml/marketing/stakeholders: when above 0 they answer 302 →
   * IT-check_id, which stays PENDING this long.
   * @default 0
   */
  slowMs?: number;
  /**
   * Delay before a POST IT-full/aml/marketing/stakeholders request completes and its callback
   * fires (when not slow).
   * @default 100
   */
  asyncMs?: number;
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

export function createCompanyModule(opts: CompanyModuleOptions = {}): AreaModule {
  let slowMs = Math.max(0, opts.slowMs ?? 0);
  let asyncMs = Math.max(0, opts.asyncMs ?? 100);
  const scheduler = opts.scheduler ?? new Scheduler();
  const requests = new AsyncRequests(scheduler);
  const monitors = new Monitors(scheduler);
  return {
    area: 'company',
    scheduler,
    routes: companyRoutes({ requests, monitors, slowMs: () => slowMs, asyncMs: () => asyncMs }),
    control: {
      sandboxCompanies: () => sandboxCompanies(),
      slow: (body) => {
        slowMs = Math.max(0, num(body, 'ms') ?? 0);
        return { slowMs };
      },
      // POST /_emulator/company/async {ms}: how long a POSTed composite tier takes to complete and call back.
      async: (body) => {
        asyncMs = Math.max(0, num(body, 'ms') ?? 100);
        return { asyncMs };
      },
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
