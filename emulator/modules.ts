/**
 * The area modules the emulator loads by default.
 */
import type { AreaModule } from './core.ts';
import { createCompanyModule } from './company/index.ts';
import { createRiskModule } from './risk/index.ts';
import { createPecModule } from './pec/index.ts';
import { createPecMassivaModule } from './pecmassiva/index.ts';
import { createCapModule } from './cap/index.ts';
import { createOauthModule } from './oauth/index.ts';
import { createInvoiceModule } from './invoice/index.ts';
import { Scheduler } from './scheduler.ts';

export interface DefaultModulesOptions {
  /** `createRiskModule({ completeAfterMs })`. @default its default */
  riskCompleteAfterMs?: number;
  /** `createCompanyModule({ prepareMs, waitMs })` (`EMULATOR_COMPANY_PREPARE_MS`, `EMULATOR_COMPANY_GET_WAIT_MS`). @default its defaults */
  companyPrepareMs?: number;
  companyGetWaitMs?: number;
}

/** Every area, with their default options (and `opts`), on one scheduler (a new one unless given). */
export function defaultModules(scheduler: Scheduler = new Scheduler(), opts: DefaultModulesOptions = {}): AreaModule[] {
  return [
    createCompanyModule({ scheduler, prepareMs: opts.companyPrepareMs, waitMs: opts.companyGetWaitMs }),
    createRiskModule({ scheduler, completeAfterMs: opts.riskCompleteAfterMs }),
    createPecModule({ scheduler }),
    createPecMassivaModule({ scheduler }),
    createCapModule(),
    createOauthModule(),
    createInvoiceModule({ scheduler }),
  ];
}
