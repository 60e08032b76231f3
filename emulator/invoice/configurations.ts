/**
 * Company configurations of the invoicing area, under the contract's paths (`POST
 * /api_configurations`, `PATCH /IT-configuration` with the fiscal id in the body) and the vendor's
 * (`/IT-configurations[/{fiscal_id}]`). Creation needs `fiscal_id`, `name` and `email`; the
 * account's first `INVOICE_CONFIGURATIONS_INCLUDED` configurations are free, each further one is
 * charged `invoice extra-configuration`. An update changes `receipts`, `receipts_authentication` and
 * `api_configurations` only: any other field is refused with the vendor's 400 / error 670.
 * Changing the receipt credentials raises `receipt-credentials`. A configuration can be deleted
 * only while no receipt was sent for it (the vendor's note on `DELETE /IT-configurations/{fiscal_id}`;
 * its refusal is not shown: answered 406, "wrong state", like the receipts' state refusals).
 */
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import { INVOICE_CONFIGURATIONS_INCLUDED, surchargeOf } from '../../contract/prices.ts';
import { readCallback } from '../callbacks.ts';
import { hexId, ok, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import type { Scheduler } from '../scheduler.ts';
import { eventOf, fiscalIdNotFound, invoiceFail, showConfiguration, type ApiConfiguration, type Configuration, type InvoiceState } from './accounts.ts';
import { isObj, type Obj } from '../../contract/values.ts';

/** The wallet's refusal number (as `server.ts` answers 402). */
const CREDIT_ERROR_CODE = 610;

const EDITABLE = new Set(['receipts', 'receipts_authentication', 'api_configurations']);
const NOT_EDITABLE = ['fiscal_id', 'name', 'email'];

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** A fiscal id as the vendor takes it: an Italian VAT number or tax code (no country prefix), or a foreign VAT id. */
function fiscalIdOk(id: string): boolean {
  return isValidItalianVat(id) || isValidFiscalCode(id.toUpperCase()) || /^(FR|DE)[0-9A-Z]{2,13}$/i.test(id);
}

function readApiConfigurations(value: unknown): ApiConfiguration[] | EmuResponse {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return invoiceFail(400, 400, 'api_configurations must be an array');
  const out: ApiConfiguration[] = [];
  for (const item of value) {
    if (!isObj(item) || eventOf(item.event) === null) return invoiceFail(400, 400, `Invalid event: ${isObj(item) ? String(item.event) : 'missing'}`);
    const read = readCallback({ callback: item.callback }, { form: 'standard', retry: 'refuse', required: true });
    if ('error' in read) return { ...read.error, json: { ...(read.error.json as Obj), data: 'null' } };
    out.push({ event: String(item.event), callback: read.callback! });
  }
  return out;
}

function readAuthentication(value: unknown): Configuration['receipts_authentication'] | EmuResponse {
  if (value === undefined || value === null) return null;
  if (!isObj(value)) return invoiceFail(400, 400, 'receipts_authentication must be an object');
  const taxCode = str(value.taxCode);
  const password = str(value.password);
  const pin = str(value.pin);
  if (!taxCode || !password || !pin) return invoiceFail(400, 400, 'receipts_authentication requires taxCode, password and pin');
  return { taxCode: taxCode.toUpperCase(), password, pin };
}

const isAnswer = (v: unknown): v is EmuResponse => isObj(v) && typeof v.status === 'number' && 'json' in v;

export function configurationRoutes(state: InvoiceState, scheduler: Scheduler): Route[] {
  const create = (req: EmuRequest): EmuResponse => {
    const b = isObj(req.body) ? req.body : {};
    for (const f of ['fiscal_id', 'name', 'email']) if (!str(b[f])) return invoiceFail(400, 400, `Missing ${f}`);
    const fiscalId = str(b.fiscal_id)!.replace(/^IT(?=\d{11}$)/i, '');
    if (!fiscalIdOk(fiscalId)) return invoiceFail(400, 400, 'Invalid fiscal_id');
    const account = state.account(req.token.owner);
    if (account.configurations.has(fiscalId)) return invoiceFail(409, 409, `Configuration already exists for fiscal_id ${fiscalId}`);
    const apis = readApiConfigurations(b.api_configurations);
    if (isAnswer(apis)) return apis;
    const auth = readAuthentication(b.receipts_authentication);
    if (isAnswer(auth)) return auth;
    // The first configurations are included; each further one is charged (checked here, before it exists).
    const price = account.configurations.size >= INVOICE_CONFIGURATIONS_INCLUDED ? surchargeOf('invoice', 'extra-configuration') : 0;
    if (price > req.token.credit + 1e-9) {
      return invoiceFail(402, CREDIT_ERROR_CODE, `Billing error message: Insufficient Credit in Wallet: ${price} > ${req.token.credit} code 810`);
    }
    const config: Configuration = {
      id: hexId(),
      fiscal_id: fiscalId,
      name: str(b.name)!,
      email: str(b.email)!,
      receipts: b.receipts === true,
      customer_invoice: b.customer_invoice !== false,
      supplier_invoice: b.supplier_invoice === true,
      receipts_authentication: auth,
      api_configurations: apis,
      active: true,
      create_timestamp: Math.floor(scheduler.now() / 1000),
    };
    account.configurations.set(fiscalId, config);
    return { ...ok(showConfiguration(config)), price };
  };

  const update = async (req: EmuRequest, fiscalIdParam: string | null): Promise<EmuResponse> => {
    const b = isObj(req.body) ? req.body : {};
    const fiscalId = fiscalIdParam ?? str(b.fiscal_id);
    if (!fiscalId) return invoiceFail(400, 400, 'Missing fiscal_id');
    const config = state.account(req.token.owner).configurations.get(fiscalId.replace(/^IT(?=\d{11}$)/i, ''));
    if (!config) return fiscalIdNotFound();
    for (const key of Object.keys(b)) {
      // On the contract's path the fiscal id names the configuration; it is no edit.
      if (fiscalIdParam === null && key === 'fiscal_id') continue;
      if (NOT_EDITABLE.includes(key)) return invoiceFail(400, 670, `Invalid field: ${key}. Fields fiscal_id, name, email are not editable.`, true);
      if (!EDITABLE.has(key)) return invoiceFail(400, 670, `Invalid field: ${key}. Only receipts, receipts_authentication and api_configurations can be updated.`, true);
    }
    let apis = config.api_configurations;
    if (b.api_configurations !== undefined) {
      const read = readApiConfigurations(b.api_configurations);
      if (isAnswer(read)) return read;
      apis = read;
    }
    let auth = config.receipts_authentication;
    if (b.receipts_authentication !== undefined) {
      const read = readAuthentication(b.receipts_authentication);
      if (isAnswer(read)) return read;
      auth = read;
    }
    if (b.receipts !== undefined && typeof b.receipts !== 'boolean') return invoiceFail(400, 400, 'receipts must be a boolean');
    const credentialsChanged = b.receipts_authentication !== undefined;
    config.api_configurations = apis;
    config.receipts_authentication = auth;
    if (typeof b.receipts === 'boolean') config.receipts = b.receipts;
    if (credentialsChanged) await state.notify(config, 'receipt-credentials', showConfiguration(config));
    return ok(showConfiguration(config));
  };

  const list = (req: EmuRequest): EmuResponse => ok([...state.account(req.token.owner).configurations.values()].map(showConfiguration));
  const one = (req: EmuRequest, id: string): EmuResponse => {
    const config = state.account(req.token.owner).configurations.get(id.replace(/^IT(?=\d{11}$)/i, ''));
    return config ? ok(showConfiguration(config)) : fiscalIdNotFound();
  };
  const remove = (req: EmuRequest, id: string): EmuResponse => {
    const configs = state.account(req.token.owner).configurations;
    const key = id.replace(/^IT(?=\d{11}$)/i, '');
    if (!configs.has(key)) return fiscalIdNotFound();
    const receipts = state.account(req.token.owner).receipts;
    if ([...receipts.values()].some((r) => r.record.fiscal_id === key)) {
      return invoiceFail(406, 406, `Configuration ${key} cannot be deleted: receipts have been sent`);
    }
    configs.delete(key);
    return { status: 200, json: { data: 'null', success: true, message: `Deleted configuration for id: ${key}`, error: null } };
  };

  return [
    { method: 'POST', pattern: '/api_configurations', handler: (req) => create(req) },
    { method: 'GET', pattern: '/api_configurations', handler: (req) => list(req) },
    { method: 'PATCH', pattern: '/IT-configuration', handler: (req) => update(req, null) },
    { method: 'POST', pattern: '/IT-configurations', handler: (req) => create(req) },
    { method: 'GET', pattern: '/IT-configurations', handler: (req) => list(req) },
    { method: 'GET', pattern: '/IT-configurations/:fiscal_id', handler: (req, p) => one(req, p.fiscal_id) },
    { method: 'PATCH', pattern: '/IT-configurations/:fiscal_id', handler: (req, p) => update(req, p.fiscal_id) },
    { method: 'DELETE', pattern: '/IT-configurations/:fiscal_id', handler: (req, p) => remove(req, p.fiscal_id) },
  ];
}
