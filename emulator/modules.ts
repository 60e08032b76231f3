/**
 * The emulator's registry: one vendor module per area of the REST suite (`contract/areas.ts`), one
 * line each. The server loads them from here (`defaultModules`); nothing else imports a module
 * (`test/architecture/unit/imports.test.ts`).
 */
import type { Area } from '../contract/areas.ts';
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

/** One vendor module: its area and how to build it on the emulator's scheduler. */
export interface EmulatorModuleEntry {
  area: Area;
  create(scheduler: Scheduler, opts: DefaultModulesOptions): AreaModule;
}

/** Every vendor module, in the order the server loads them. */
export const EMULATOR_MODULES: readonly EmulatorModuleEntry[] = [
  { area: 'company', create: (scheduler, opts) => createCompanyModule({ scheduler, prepareMs: opts.companyPrepareMs, waitMs: opts.companyGetWaitMs }) },
  { area: 'risk', create: (scheduler, opts) => createRiskModule({ scheduler, completeAfterMs: opts.riskCompleteAfterMs }) },
  { area: 'pec', create: (scheduler) => createPecModule({ scheduler }) },
  { area: 'pecmassiva', create: (scheduler) => createPecMassivaModule({ scheduler }) },
  { area: 'cap', create: () => createCapModule() },
  { area: 'oauth', create: () => createOauthModule() },
  { area: 'invoice', create: (scheduler) => createInvoiceModule({ scheduler }) },
];

/** Every area, with their default options (and `opts`), on one scheduler (a new one unless given). */
export function defaultModules(scheduler: Scheduler = new Scheduler(), opts: DefaultModulesOptions = {}): AreaModule[] {
  return EMULATOR_MODULES.map((m) => {
    const module = m.create(scheduler, opts);
    if (module.area !== m.area) throw new Error(`the emulator module listed as ${m.area} serves ${module.area}`);
    return module;
  });
}
