/**
 * The emulator's invoicing area (`invoice.openapi.com`): company configurations with their
 * notification callbacks, FatturaPA invoice submission and the SDI state machine, passive invoices,
 * the invoice list and documents. Records belong to the token's owner; steps run on the emulator's
 * scheduler (so `POST /_emulator/clock` moves them too) and notify the configuration's callbacks.
 *
 * Control hooks (`POST /_emulator/invoice/<name>`):
 * - `advance {id?, sdiStatus?, message?}`: the next step of one invoice (or of every pending one)
 *   now, `sdiStatus` choosing the outcome where there is a choice (DELIVERED, NOT_DELIVERED, ERROR
 *   at the SDI; ACCEPTED, REJECTED, TERMS_EXPIRED for a PA invoice); answers `{advanced: [{id,
 *   sdiStatus}]}` once the notifications were delivered;
 * - `timing {sentAfterMs?, outcomeAfterMs?, paTermsAfterMs?, submitAfterMs?, readyAfterMs?}`: step
 *   delays of invoices and receipts (≤ 0: only `advance` / `receiptAdvance`);
 * - `receiptAdvance {id?, outcome?}`: the next step of one receipt (or every pending one) now;
 *   `outcome` `retry` or `failed` instead of the normal step; a receipt queued by the 23:55–00:00
 *   window does not move before midnight (on the emulator's clock);
 * - `passive {xml, owner?}`: a supplier's invoice arrives for the configured recipient
 *   (`{received: invoice | null}`);
 * - `pending {}`: ids of invoices with a next step;
 * - `reset {}`: forget every configuration, invoice and job.
 */
import type { AreaModule } from '../core.ts';
import { Scheduler } from '../scheduler.ts';
import { InvoiceState } from './accounts.ts';
import { configurationRoutes } from './configurations.ts';
import { InvoiceEngine, SDI_STATUSES, type InvoiceTiming, type SdiStatus } from './invoices.ts';
import { ReceiptEngine, type ReceiptTiming } from './receipts.ts';
import { isObj } from '../../contract/values.ts';

export interface InvoiceModuleOptions {
  /** Step delays of invoices. @default DEFAULT_INVOICE_TIMING (1.5 s, 1.5 s, 15 days) */
  timing?: Partial<InvoiceTiming>;
  /** Step delays of receipts. @default DEFAULT_RECEIPT_TIMING (1 s, 1 s) */
  receiptTiming?: Partial<ReceiptTiming>;
  /** The emulator's scheduler (one for every area). @default a new one */
  scheduler?: Scheduler;
}

export function createInvoiceModule(opts: InvoiceModuleOptions = {}): AreaModule {
  const scheduler = opts.scheduler ?? new Scheduler();
  const state = new InvoiceState();
  const engine = new InvoiceEngine(state, scheduler, opts.timing);
  const receipts = new ReceiptEngine(state, scheduler, opts.receiptTiming);
  const cancelAll = (): void => {
    for (const { inv } of engine.pending()) if (inv.job !== null) scheduler.cancel(inv.job);
    for (const { receipt } of receipts.pending()) if (receipt.job !== null) scheduler.cancel(receipt.job);
  };
  const num = (v: unknown, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`timing: ${name} must be a number`);
    return n;
  };
  return {
    area: 'invoice',
    routes: [...configurationRoutes(state, scheduler), ...engine.routes(), ...receipts.routes()],
    scheduler,
    control: {
      advance: async (body) => {
        const b = isObj(body) ? body : {};
        const wanted = typeof b.sdiStatus === 'string' ? b.sdiStatus.toUpperCase() : undefined;
        if (wanted !== undefined && !(SDI_STATUSES as readonly string[]).includes(wanted)) throw new Error(`advance: sdiStatus must be one of ${SDI_STATUSES.join(', ')}`);
        const message = typeof b.message === 'string' ? b.message : undefined;
        const targets = typeof b.id === 'string' ? [{ id: b.id.toLowerCase(), inv: engine.find(b.id) }] : engine.pending();
        const advanced: Array<{ id: string; sdiStatus: SdiStatus | null }> = [];
        for (const { id, inv } of targets) {
          if (!inv) throw new Error(`advance: no invoice ${id}`);
          advanced.push({ id, sdiStatus: await engine.step(inv, wanted as SdiStatus | undefined, message) });
        }
        await state.settled();
        return { advanced };
      },
      timing: (body) => {
        const b = isObj(body) ? body : {};
        const t: Partial<InvoiceTiming> = {};
        for (const k of ['sentAfterMs', 'outcomeAfterMs', 'paTermsAfterMs'] as const) {
          const v = num(b[k], k);
          if (v !== undefined) t[k] = v;
        }
        const rt: Partial<ReceiptTiming> = {};
        for (const k of ['submitAfterMs', 'readyAfterMs'] as const) {
          const v = num(b[k], k);
          if (v !== undefined) rt[k] = v;
        }
        return { ...engine.setTiming(t), ...receipts.setTiming(rt) };
      },
      receiptAdvance: async (body) => {
        const b = isObj(body) ? body : {};
        const outcome = b.outcome === 'retry' || b.outcome === 'failed' ? b.outcome : undefined;
        if (b.outcome !== undefined && outcome === undefined) throw new Error('receiptAdvance: outcome must be retry or failed');
        const targets = typeof b.id === 'string' ? [{ id: b.id.toLowerCase(), receipt: receipts.find(b.id) }] : receipts.pending();
        const advanced: Array<{ id: string; status: string | null }> = [];
        for (const { id, receipt } of targets) {
          if (!receipt) throw new Error(`receiptAdvance: no receipt ${id}`);
          advanced.push({ id, status: await receipts.step(receipt, outcome) });
        }
        await state.settled();
        return { advanced };
      },
      passive: async (body) => {
        const b = isObj(body) ? body : {};
        if (typeof b.xml !== 'string') throw new Error('passive: xml (FatturaPA text) required');
        const received = await engine.receive(b.xml, typeof b.owner === 'string' ? b.owner : undefined);
        await state.settled();
        return { received };
      },
      pending: () => ({ pending: engine.pending().map((p) => p.id), receipts: receipts.pending().map((p) => p.id), timing: { ...engine.timing, ...receipts.timing } }),
      reset: () => {
        cancelAll();
        state.reset();
        return { reset: true };
      },
    },
    close: cancelAll,
  };
}
