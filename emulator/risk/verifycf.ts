/**
 * `GET /IT-verifica_cf/{codice_fiscale}` (and the POST variant the contract lists, body
 * `{"codice_fiscale": …}`): tells whether a fiscal code is valid, `{"validita": true|false}`.
 * A value that cannot be a fiscal code at all (wrong length or characters) is refused with 406
 * error 414; a missing one with 428 error 413.
 */
import type { EmuResponse, Route } from '../core.ts';
import { fail, ok } from '../core.ts';
import { isValidFiscalCode } from '../../contract/checksums.ts';
import { bodyOf, str } from './util.ts';

export function verifyFiscalCode(raw: string | undefined): EmuResponse {
  const cf = (raw ?? '').trim().toUpperCase();
  if (cf === '') return fail(428, 413, 'codice_fiscale required');
  if (!/^[A-Z0-9]{16}$/.test(cf) && !/^\d{11}$/.test(cf)) return fail(406, 414, 'codice_fiscale not valid');
  return ok({ validita: isValidFiscalCode(cf) });
}

export function verifyCfRoutes(): Route[] {
  return [
    { method: 'GET', pattern: '/IT-verifica_cf/:cf', handler: (_req, p) => verifyFiscalCode(p.cf) },
    { method: 'GET', pattern: '/IT-verifica_cf', handler: () => verifyFiscalCode(undefined) },
    {
      method: 'POST',
      pattern: '/IT-verifica_cf',
      handler: (req) => {
        const body = bodyOf(req);
        return verifyFiscalCode(str(body.codice_fiscale) ?? str(body.cf) ?? str(body.fiscal_code));
      },
    },
  ];
}
