/**
 * Balance-sheet, income-statement and ratio sections of generated companies. The vendor does not
 * publish the meaning of its line codes, so generated companies follow the structure of the
 * vendor's example company: every code of every section, with the example's values scaled to the
 * company's turnover (and a little noise), and ratios near the example's.
 */
import type { LineSection, OperatingResultsField, RatioSection } from '../../contract/company-payloads.ts';
import { isObj } from '../../contract/values.ts';
import { LINE_CODES } from './line-codes.ts';
import type { CompanyProfile } from './model.ts';
import { OPENAPI_FIXED_SECTIONS } from './openapi-spa.ts';
import { lastFiled } from './profile.ts';
import { Rng } from '../random.ts';

/** Turnover of the example year the template values belong to. */
const TEMPLATE_TURNOVER = 4_432_761;

type LineItem = { code: string; value: number };

const isLineItems = (v: unknown): v is LineItem[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null && typeof (x as LineItem).code === 'string' && typeof (x as LineItem).value === 'number');

const isNumberRecord = (v: unknown): v is Record<string, number> => isObj(v) && Object.values(v).every((x) => typeof x === 'number');

/** Line items of one section (`debts`, `productionValue`, …). */
export function lineItems(p: CompanyProfile, section: LineSection): LineItem[] {
  const fixed = p.fixedSections?.[section];
  if (isLineItems(fixed)) return fixed;
  const template = OPENAPI_FIXED_SECTIONS[section];
  const codes = LINE_CODES[section];
  const turnover = lastFiled(p)?.turnover ?? 0;
  const scale = turnover / TEMPLATE_TURNOVER;
  const byCode = new Map(isLineItems(template) ? template.map((x) => [x.code, x.value]) : []);
  return codes.map((code) => {
    const rng = new Rng(`line:${p.vat}:${code}`);
    const base = byCode.get(code) ?? 0;
    return { code, value: Math.round(base * scale * (0.8 + rng.next() * 0.4)) };
  });
}

/** A ratio section (all numbers). */
export function ratios(p: CompanyProfile, section: RatioSection): Record<string, number> {
  const fixed = p.fixedSections?.[section];
  if (isNumberRecord(fixed)) return fixed;
  const template = OPENAPI_FIXED_SECTIONS[section];
  const out: Record<string, number> = {};
  if (!isNumberRecord(template)) return out;
  for (const [k, v] of Object.entries(template)) {
    const rng = new Rng(`ratio:${p.vat}:${section}:${k}`);
    out[k] = Math.round(v * (0.5 + rng.next()) * 10_000) / 10_000;
  }
  return out;
}

/** EBITDA, EBIT and cash flow, this year and the last two years. */
export function operatingResults(p: CompanyProfile): Record<string, number> {
  const fixed = p.fixedSections?.operatingResults;
  if (isNumberRecord(fixed)) return fixed;
  const turnover = lastFiled(p)?.turnover ?? 0;
  const rng = new Rng(`opres:${p.vat}`);
  const margin = rng.next() * 0.2 - 0.03;
  const ebitda = Math.round(turnover * margin);
  const ebit = Math.round(ebitda * (0.6 + rng.next() * 0.35));
  const cashFlow = Math.round(ebitda * (0.5 + rng.next() * 0.4));
  const l2y = 0.5 + rng.next() * 0.5;
  return {
    ebitda,
    ebitdaL2Y: Math.round(ebitda * l2y),
    ebit,
    ebitL2Y: Math.round(ebit * l2y),
    cashFlow,
    cashFlowL2Y: Math.round(cashFlow * l2y),
  } satisfies Record<OperatingResultsField, number>;
}
