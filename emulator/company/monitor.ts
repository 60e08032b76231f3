/**
 * Company monitoring (`/monitor`): watch a dataset of a company; in the sandbox, `GET
 * /monitor/{id}?callback` simulates a check and fires the callback with the record, whose
 * `updatedFields` hold the monitored fields' current values.
 */
import { isObj } from '../../contract/values.ts';
import { fail, hexId, ok, type EmuRequest, type EmuResponse } from '../core.ts';
import { deliverCallback, readCallback, type StoredCallback } from '../callbacks.ts';
import { datasetOf, fieldPaths, MONITOR_DATASETS, valueAt } from './datasets.ts';
import { isoDay } from '../random.ts';
import type { Scheduler } from '../scheduler.ts';

interface MonitorRecord {
  code: string;
  dataset: string;
  monitoredFields: string[];
  callback: StoredCallback | null;
  owner: string;
  createdOn: string;
  companyId: string;
  vatCode: string;
  taxCode: string;
  companyName: string;
  updatedFields: Record<string, unknown> | null;
  latestDataset: unknown;
  previousDataset: unknown;
  checkedOn: string | null;
  nextOn: string;
  expiresOn: string;
  autorenew: boolean;
  id: string;
}

const HEX24 = /^[0-9a-f]{24}$/i;

/** A copy of `dataset` with the values at the dot paths of `changes` replaced (objects made on the way). */
function withChanges(dataset: unknown, changes: Record<string, unknown>): unknown {
  if (Object.keys(changes).length === 0) return dataset;
  const copy = JSON.parse(JSON.stringify(dataset ?? {})) as Record<string, unknown>;
  for (const [path, value] of Object.entries(changes)) {
    const parts = path.split('.');
    let at: Record<string, unknown> = copy;
    for (const p of parts.slice(0, -1)) {
      const next = at[p];
      at = isObj(next) ? next : (at[p] = {});
    }
    at[parts[parts.length - 1]] = value;
  }
  return copy;
}

export class Monitors {
  private readonly records = new Map<string, MonitorRecord>();
  /** Register changes given through the control API per monitor (dot path → value), applied to every check from then on. */
  private readonly overrides = new Map<string, Record<string, unknown>>();

  /** `clock`: the emulator's (its scheduler): the dates of monitors follow it. */
  constructor(private readonly clock: Pick<Scheduler, 'now'>) {}

  /** The day `days` from today on the emulator's clock. */
  private plusDays(days: number): string {
    return isoDay(new Date(this.clock.now() + days * 86_400_000));
  }

  clear(): void {
    this.records.clear();
    this.overrides.clear();
  }

  create(req: EmuRequest): EmuResponse {
    const body = isObj(req.body) ? req.body : {};
    const code = typeof body.code === 'string' || typeof body.code === 'number' ? String(body.code).trim() : '';
    if (!code) return fail(428, 1209, 'code required');
    const dataset = typeof body.dataset === 'string' ? body.dataset.trim() : '';
    if (!dataset) return fail(428, 1206, 'dataset required');
    if (!MONITOR_DATASETS.includes(dataset)) return fail(404, 1207, 'dataset not found');
    const cb = readCallback(body, { form: 'standard', username: req.token.owner, retry: 'refuse' });
    if ('error' in cb) return cb.error;
    const found = datasetOf(dataset, code);
    if (found.kind !== 'found') return fail(404, found.kind === 'invalid' ? 1212 : 1211, found.kind === 'invalid' ? 'no company found' : `no company matches this id: ${code}`);
    const monitoredFields: string[] = [];
    if (body.monitoredFields !== undefined) {
      if (!Array.isArray(body.monitoredFields) || body.monitoredFields.length === 0) return fail(406, 1208, 'empty monitoredFields');
      const paths = fieldPaths(found.record);
      for (const f of body.monitoredFields) {
        if (typeof f !== 'string' || f === 'id' || !paths.all.has(f)) {
          const allowed = JSON.stringify(paths.leaves.filter((p) => p !== 'id'));
          return fail(406, 1210, `${String(f)} is not an allowed field for ${dataset}; choose between ${allowed}`);
        }
        monitoredFields.push(f);
      }
    }
    const record: MonitorRecord = {
      code,
      dataset,
      monitoredFields,
      callback: cb.callback,
      owner: req.token.owner,
      createdOn: this.plusDays(0),
      companyId: found.company.id,
      vatCode: found.company.vatCode,
      taxCode: found.company.taxCode,
      companyName: found.company.companyName,
      updatedFields: null,
      latestDataset: null,
      previousDataset: null,
      checkedOn: null,
      nextOn: this.plusDays(30),
      expiresOn: this.plusDays(365),
      autorenew: body.autorenew === undefined ? true : body.autorenew === true || body.autorenew === 'true' || body.autorenew === 1,
      id: hexId(),
    };
    if (typeof body.cciaa === 'string') Object.assign(record, { cciaa: body.cciaa });
    this.records.set(record.id, record);
    return ok(record);
  }

  list(req: EmuRequest): EmuResponse {
    const mine = [...this.records.values()].filter((r) => r.owner === req.token.owner);
    if (mine.length === 0) return fail(404, 1200, 'no monitoring requests related to your account');
    return ok(mine.map((r) => ({ companyName: r.companyName, checkedOn: r.checkedOn, nextOn: r.nextOn, expiresOn: r.expiresOn, id: r.id })));
  }

  /**
   * Control API (`POST /_emulator/company/monitorCheck {id, changes?}`): a check of the monitor
   * now, as the vendor's periodic one. `changes` (dot path → value) are changes of the company's
   * register data since the last check; they stay in the monitor's dataset from then on. Fires the
   * callback. Answers the record, or null for an unknown id.
   */
  check(id: string, changes: Record<string, unknown> = {}): MonitorRecord | null {
    const record = this.records.get(id.toLowerCase());
    if (!record) return null;
    this.overrides.set(record.id, { ...(this.overrides.get(record.id) ?? {}), ...changes });
    this.simulateCheck(record);
    return record;
  }

  get(req: EmuRequest, id: string): EmuResponse {
    if (!HEX24.test(id)) return fail(406, 1201, 'id not valid');
    const record = this.records.get(id.toLowerCase());
    if (!record || record.owner !== req.token.owner) return fail(404, 1202, `no monitoring request matches this id: ${id}`);
    if (req.query.has('callback')) this.simulateCheck(record);
    return ok(record);
  }

  delete(req: EmuRequest, id: string | undefined): EmuResponse {
    if (!id) return fail(428, 1203, 'id required');
    if (!HEX24.test(id)) return fail(406, 1204, 'id not valid');
    const record = this.records.get(id.toLowerCase());
    if (!record || record.owner !== req.token.owner) return fail(404, 1205, `no monitoring request matches this id: ${id}`);
    this.records.delete(record.id);
    this.overrides.delete(record.id);
    return { status: 200, json: { data: [], success: true, message: '1 deleted monitor', error: null } };
  }

  /** Sandbox simulation: re-reads the dataset, reports the monitored fields as updated, fires the callback. */
  private simulateCheck(record: MonitorRecord): void {
    const current = datasetOf(record.dataset, record.code);
    const latest = withChanges(current.kind === 'found' ? current.record : record.latestDataset, this.overrides.get(record.id) ?? {});
    record.previousDataset = record.latestDataset;
    record.latestDataset = latest;
    const fields = record.monitoredFields.length > 0 ? record.monitoredFields : fieldPaths(latest).leaves.filter((p) => p !== 'id');
    const updated: Record<string, unknown> = {};
    for (const f of fields) updated[f] = valueAt(latest, f) ?? null;
    record.updatedFields = updated;
    record.checkedOn = this.plusDays(0);
    record.nextOn = this.plusDays(30);
    if (record.callback) {
      const payload: Record<string, unknown> = { data: record };
      if (record.callback.custom !== null) payload.custom = record.callback.custom;
      void deliverCallback(record.callback, JSON.parse(JSON.stringify(payload)) as unknown);
    }
  }
}
