/**
 * The area modules the emulator loads by default.
 */
import type { AreaModule } from './core.ts';
import { createCompanyModule } from './company/index.ts';
import { createRiskModule } from './risk/index.ts';

/** Company and risk, with their default options. */
export function defaultModules(): AreaModule[] {
  return [createCompanyModule(), createRiskModule()];
}
