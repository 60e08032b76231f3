/**
 * The emulator's risk area (`risk.openapi.com`): credit scores, fiscal-code check, bureau requests
 * with delegation, patrimonial/report families, negative events, KYC and monitors, speaking the
 * vendor's values and envelopes. Records belong to the token's owner; asynchronous work completes
 * `completeAfterMs` after its last state before completion (a job on the emulator's scheduler, so
 * `POST /_emulator/clock` moves it too) and fires the record's callback; record times follow the
 * emulator's clock.
 *
 * Control hooks (`POST /_emulator/risk/<name>`):
 * - `advance {id?}`: complete one pending request (or every one) now, delivering callbacks;
 *   answers `{advanced: [ids]}` once the callbacks were delivered;
 * - `timing {completeAfterMs?, delegationAfterMs?}`: change the completion delay (≤ 0: never by
 *   itself, only `advance` / `?callback`) and the time a bureau request's delegation form takes to
 *   exist (≤ 0: at once);
 * - `monitorEvent {id}`: simulate a change on an ACTIVATED monitor (callback fired);
 * - `pending {}`: the ids still waiting to complete;
 * - `reset {}`: forget every record and job.
 */
import type { AreaModule } from '../core.ts';
import { Scheduler } from '../scheduler.ts';
import { bureauRoutes } from './bureau.ts';
import { creditScoreRoutes } from './creditscore.ts';
import { creditScoreMonitorRoutes } from './csmonitor.ts';
import type { RiskContext } from './jobs.ts';
import { RiskJobs } from './jobs.ts';
import { kycRoutes } from './kyc.ts';
import { negativitaRoutes } from './negativita.ts';
import { reportRoutes } from './reports.ts';
import { verifyCfRoutes } from './verifycf.ts';
import { isObj } from '../../contract/values.ts';

export interface RiskModuleOptions {
  /**
   * Milliseconds between a request's last state before completion (creation; for the bureau, the
   * delegation upload) and its completion. 0 or negative: only `advance` or `?callback` complete.
   * @default 1500
   */
  completeAfterMs?: number;
  /**
   * Milliseconds between the creation of a bureau request and its delegation form existing: until
   * then `GET …/{id}/delega` answers 406 (error 303 "the delegation has not yet been created") and
   * the record has no `delegation_file`. 0 or negative: the form exists as soon as the request does.
   * @default 0
   */
  delegationAfterMs?: number;
  /** The emulator's scheduler (one for every area; `startEmulator` passes its own). @default a new one */
  scheduler?: Scheduler;
}

export const DEFAULT_COMPLETE_AFTER_MS = 1500;

export function createRiskModule(opts: RiskModuleOptions = {}): AreaModule {
  const scheduler = opts.scheduler ?? new Scheduler();
  const jobs = new RiskJobs(opts.completeAfterMs ?? DEFAULT_COMPLETE_AFTER_MS, scheduler);
  const resets: Array<() => void> = [];
  const monitorEvents: Array<(id: string) => Promise<boolean>> = [];
  let delegationAfterMs = opts.delegationAfterMs ?? 0;
  const ctx: RiskContext = {
    jobs,
    now: () => scheduler.now(),
    nowSeconds: () => Math.floor(scheduler.now() / 1000),
    onReset: (fn) => void resets.push(fn),
    onMonitorEvent: (fn) => void monitorEvents.push(fn),
    delegationAfterMs: () => delegationAfterMs,
    later: (delayMs, job, label) => void scheduler.after(delayMs, job, label),
  };
  const routes = [
    ...creditScoreRoutes(ctx.now),
    ...verifyCfRoutes(),
    ...bureauRoutes(ctx),
    ...reportRoutes(ctx),
    ...negativitaRoutes(ctx),
    ...kycRoutes(ctx),
    ...creditScoreMonitorRoutes(ctx),
  ];
  const idOf = (body: unknown): string | undefined => (isObj(body) && typeof body.id === 'string' && body.id !== '' ? body.id.toLowerCase() : undefined);

  return {
    area: 'risk',
    routes,
    scheduler,
    control: {
      advance: async (body) => ({ advanced: await jobs.advance(idOf(body)) }),
      timing: (body) => {
        const b = isObj(body) ? body : {};
        const ms = b.completeAfterMs === undefined ? undefined : Number(b.completeAfterMs);
        const delegation = b.delegationAfterMs === undefined ? undefined : Number(b.delegationAfterMs);
        if (ms === undefined && delegation === undefined) throw new Error('timing: completeAfterMs or delegationAfterMs (number) required');
        if ((ms !== undefined && !Number.isFinite(ms)) || (delegation !== undefined && !Number.isFinite(delegation))) throw new Error('timing: the delays must be numbers');
        if (ms !== undefined) jobs.setCompleteAfterMs(ms);
        if (delegation !== undefined) delegationAfterMs = delegation;
        return { completeAfterMs: jobs.completeAfterMs, delegationAfterMs };
      },
      monitorEvent: async (body) => {
        const id = idOf(body);
        if (id === undefined) throw new Error('monitorEvent: id required');
        for (const handle of monitorEvents) if (await handle(id)) return { changed: id };
        return { changed: null };
      },
      pending: () => ({ pending: jobs.pendingIds(), completeAfterMs: jobs.completeAfterMs }),
      reset: () => {
        jobs.reset();
        for (const fn of resets) fn();
        return { reset: true };
      },
    },
    close: () => jobs.close(),
  };
}
