/**
 * The areas of the Openapi REST suite and their hosts: what the layer and the emulator both know.
 * Nothing here imports the layer or the emulator.
 */

/** The upstream areas of the Openapi suite, named as in `OPENAPI_<AREA>_URL`. */
export type Area = 'company' | 'risk' | 'oauth' | 'pec' | 'pecmassiva' | 'invoice' | 'cap';

/**
 * Production host of each area (REFERENCE §0). The sandbox prefixes `test.`, and the vendor's token
 * scopes name the host (e.g. `GET:test.company.openapi.com/IT-start`).
 */
export const AREA_HOSTS: Record<Area, string> = {
  company: 'company.openapi.com',
  risk: 'risk.openapi.com',
  oauth: 'oauth.openapi.com',
  pec: 'pec.openapi.it',
  pecmassiva: 'ws.pecmassiva.com',
  invoice: 'invoice.openapi.com',
  cap: 'cap.openapi.it',
};

export const AREAS = Object.keys(AREA_HOSTS) as Area[];

export const sandboxHost = (area: Area): string => `test.${AREA_HOSTS[area]}`;
