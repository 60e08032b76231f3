/**
 * Datasets by endpoint name (`IT-advanced`, `IT-full`, `FR-start`, …): what the monitor watches and
 * what asynchronous requests deliver.
 */
import { isObj } from '../../contract/values.ts';
import { foreignAdvanced, foreignLookup, foreignStart } from './foreign.ts';
import { lookupCompany } from './lookup.ts';
import type { CompanyProfile } from './model.ts';
import {
  addressRecord,
  advancedRecord,
  closedRecord,
  compositeRecord,
  flatShareholders,
  nameRecord,
  pecRecord,
  sdiRecord,
  startRecord,
  uboRecords,
  vatGroupRecord,
} from './shapes.ts';

/** Minimum percent IT-shareholders lists ("holders above 10%"). */
export const SHAREHOLDERS_MIN_PERCENT = 10;

/** The record each Italian dataset endpoint renders for a company (routes and monitors share it). */
export const IT_DATASETS: Record<string, (p: CompanyProfile) => unknown> = {
  'IT-start': startRecord,
  'IT-advanced': advancedRecord,
  'IT-address': addressRecord,
  'IT-name': nameRecord,
  'IT-pec': pecRecord,
  'IT-sdicode': sdiRecord,
  'IT-closed': (p) => closedRecord(p),
  'IT-vatgroup': vatGroupRecord,
  'IT-shareholders': (p) => flatShareholders(p, SHAREHOLDERS_MIN_PERCENT),
  'IT-ubo': uboRecords,
  'IT-aml': (p) => compositeRecord(p, 'aml'),
  'IT-marketing': (p) => compositeRecord(p, 'marketing'),
  'IT-stakeholders': (p) => compositeRecord(p, 'stakeholders'),
  'IT-full': (p) => compositeRecord(p, 'full'),
};

/** Datasets a monitor may watch (vendor list). */
export const MONITOR_DATASETS = [...Object.keys(IT_DATASETS), 'FR-start', 'FR-advanced'];

export interface DatasetCompany {
  id: string;
  vatCode: string;
  taxCode: string;
  companyName: string;
}

export type DatasetResult = { kind: 'found'; record: unknown; company: DatasetCompany } | { kind: 'invalid' } | { kind: 'notFound' };

/** The current dataset of a company (code = VAT, fiscal code, id; SIREN/SIRET/VAT for FR). */
export function datasetOf(dataset: string, code: string): DatasetResult {
  if (dataset === 'FR-start' || dataset === 'FR-advanced') {
    const r = foreignLookup('FR', code);
    if (r.kind !== 'found') return { kind: r.kind === 'invalid' ? 'invalid' : 'notFound' };
    const c = r.company;
    return {
      kind: 'found',
      record: dataset === 'FR-start' ? foreignStart(c) : foreignAdvanced(c),
      company: { id: c.id, vatCode: c.identifiers.vatCode ?? '', taxCode: c.identifiers.sirenCode ?? c.core, companyName: c.name },
    };
  }
  const render = IT_DATASETS[dataset];
  if (!render) return { kind: 'notFound' };
  const r = lookupCompany(code);
  if (r.kind !== 'found') return { kind: r.kind === 'invalid' ? 'invalid' : 'notFound' };
  const p = r.profile;
  return { kind: 'found', record: render(p), company: { id: p.id, vatCode: p.vat, taxCode: p.taxCode, companyName: p.name } };
}

/** Dot paths of a record's fields (objects are walked, arrays are leaves). */
export function fieldPaths(record: unknown): { leaves: string[]; all: Set<string> } {
  const leaves: string[] = [];
  const all = new Set<string>();
  const walk = (v: unknown, prefix: string): void => {
    if (isObj(v)) {
      if (prefix) all.add(prefix);
      for (const [k, child] of Object.entries(v)) walk(child, prefix ? `${prefix}.${k}` : k);
      return;
    }
    if (prefix) {
      leaves.push(prefix);
      all.add(prefix);
    }
  };
  walk(record, '');
  return { leaves, all };
}

/** The value at a dot path. */
export function valueAt(record: unknown, path: string): unknown {
  let v: unknown = record;
  for (const key of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}
