/**
 * The emulator's PEC area (`pec.openapi.it`): certified domains, mailboxes (`mailboxes.ts`) and the
 * company-register notification (`comunica.ts`), in the vendor's envelopes, error numbers and state
 * words; the PDF endpoints answer their errors as text/plain, as the vendor does.
 *
 * Control hooks (`POST /_emulator/pec/<name>`):
 * - `advance {id?}`: the verification of a mailbox waiting (`in_evasione`) completes now → `evasa`
 *   (or `documenti_errati` after `reject`); a notification moves one provider step; answers once
 *   the callbacks were delivered: `{mailboxes: [ids], notifications: [ids]}`;
 * - `timing {verifyAfterMs?, noticeStepAfterMs?}`: the delays (≤ 0: only `advance`);
 * - `reject {id}`: the next verification of a mailbox rejects its documents;
 * - `expire {id}` (not renewed → `revocata`), `close {id}` (`chiusa`), `cancel {id}` (`registrazione_annullata`);
 * - `pending {}`; `reset {}`.
 */
import { priceOf } from '../../contract/prices.ts';
import { fail, type AreaModule } from '../core.ts';
import { Scheduler } from '../scheduler.ts';
import { Notices } from './comunica.ts';
import { certifiedDomains, isCertifiedDomain } from '../pec-domains.ts';
import { Mailboxes } from './mailboxes.ts';
import { isObj } from '../../contract/values.ts';

export interface PecModuleOptions {
  /** Milliseconds from the activation documents' upload to the verification's outcome (≤ 0: only `advance`). @default 2000 */
  verifyAfterMs?: number;
  /** Milliseconds each provider step of a register notification takes (≤ 0: only `advance`). @default 2000 */
  noticeStepAfterMs?: number;
  /** @default a new one */
  scheduler?: Scheduler;
}

export function createPecModule(opts: PecModuleOptions = {}): AreaModule {
  const scheduler = opts.scheduler ?? new Scheduler();
  const boxes = new Mailboxes({ scheduler, verifyAfterMs: opts.verifyAfterMs ?? 2000 });
  const notices = new Notices(scheduler, opts.noticeStepAfterMs ?? 2000);
  const idOf = (body: unknown): string | undefined => (isObj(body) && typeof body.id === 'string' && body.id !== '' ? body.id.toLowerCase() : undefined);
  const need = (body: unknown, hook: string): string => {
    const id = idOf(body);
    if (id === undefined) throw new Error(`${hook}: id required`);
    return id;
  };
  return {
    area: 'pec',
    scheduler,
    routes: [
      {
        method: 'GET',
        pattern: '/domini_pec/:dominio',
        handler: (_req, p) => {
          const d = (p.dominio ?? '').trim().toLowerCase();
          if (d === '') return fail(428, 400, 'domain required');
          const domain = d.replace(/^.*@/, '');
          if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) return fail(406, 401, 'domain not valid');
          certifiedDomains();
          // Not certified: 204, no body (as the company lookups answer "nothing found").
          if (!isCertifiedDomain(domain)) return { status: 204, body: '' };
          return { status: 200, json: { data: [], success: true, message: `${domain} found!`, error: null } };
        },
      },
      { method: 'GET', pattern: '/domini_pec', handler: () => fail(428, 400, 'domain required') },
      ...boxes.routes({ renew: priceOf('pec', 'GET', '/pec/{id}/rinnovo') }),
      ...notices.routes(),
    ],
    control: {
      advance: async (body) => {
        const id = idOf(body);
        const mailboxes = await boxes.advance(id);
        const notifications = await notices.advance(id);
        return { mailboxes, notifications };
      },
      timing: (body) => {
        const b = isObj(body) ? body : {};
        const v = b.verifyAfterMs === undefined ? undefined : Number(b.verifyAfterMs);
        const s = b.noticeStepAfterMs === undefined ? undefined : Number(b.noticeStepAfterMs);
        if (v === undefined && s === undefined) throw new Error('timing: verifyAfterMs or noticeStepAfterMs (number) required');
        if ((v !== undefined && !Number.isFinite(v)) || (s !== undefined && !Number.isFinite(s))) throw new Error('timing: the delays must be numbers');
        if (v !== undefined) boxes.setVerifyAfterMs(v);
        if (s !== undefined) notices.setStepAfterMs(s);
        return { verifyAfterMs: boxes.verifyAfterMs, noticeStepAfterMs: notices.stepAfterMs };
      },
      reject: (body) => ({ rejected: boxes.rejectNext(need(body, 'reject')) }),
      expire: async (body) => ({ moved: await boxes.move(need(body, 'expire'), 'revocata') }),
      close: async (body) => ({ moved: await boxes.move(need(body, 'close'), 'chiusa') }),
      cancel: async (body) => ({ moved: await boxes.move(need(body, 'cancel'), 'registrazione_annullata') }),
      pending: () => ({ mailboxes: boxes.pending(), notifications: notices.pending() }),
      reset: () => {
        boxes.reset();
        notices.reset();
        return { reset: true };
      },
    },
    close: () => {
      boxes.close();
      notices.close();
    },
  };
}
