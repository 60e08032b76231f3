/**
 * The field lists of `contract/company-payloads.ts` against an independent source: the company
 * subgraph's hand-written SDL (`subgraphs/company/schema.graphql`), parsed with graphql's `parse`.
 * Many of the listed fields are in no vendor example, so only this check fails when one is dropped.
 *
 * Mapping (contract list → GraphQL type): field names are the same on both sides.
 * - COMPANY_DATES_FIELDS → CompanyDates
 * - WEB_AND_SOCIAL_LINKS → WebAndSocial, minus `hasSocial` (the flag beside the links)
 * - EMPLOYEE_STATISTICS_FIELDS → EmployeeStatistics
 * - OPERATING_RESULTS_FIELDS → OperatingResults
 * - RATIO_SECTIONS → the fields of FinancialRatios; RATIO_FIELDS[section] → the type of that field
 *   (coverageRatios → CoverageRatios, development → DevelopmentRatios, efficiency → EfficiencyRatios, …)
 * - BALANCE_SHEET_SECTIONS → BalanceSheetSections
 * - INCOME_STATEMENT_SECTIONS → IncomeStatementSections
 */
import { readFileSync } from 'node:fs';
import { Kind, parse, type FieldDefinitionNode, type TypeNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  BALANCE_SHEET_SECTIONS,
  COMPANY_DATES_FIELDS,
  EMPLOYEE_STATISTICS_FIELDS,
  INCOME_STATEMENT_SECTIONS,
  OPERATING_RESULTS_FIELDS,
  RATIO_FIELDS,
  RATIO_SECTIONS,
  WEB_AND_SOCIAL_LINKS,
} from '../../../contract/company-payloads.ts';

const sdl = parse(readFileSync(new URL('../../../subgraphs/company/schema.graphql', import.meta.url), 'utf8'));

/** The fields of an object type of the SDL, in its order. */
function fieldsOf(typeName: string): readonly FieldDefinitionNode[] {
  const def = sdl.definitions.find((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === typeName);
  if (def?.kind !== Kind.OBJECT_TYPE_DEFINITION) throw new Error(`no type ${typeName} in schema.graphql`);
  return def.fields ?? [];
}
const fieldNames = (typeName: string): string[] => fieldsOf(typeName).map((f) => f.name.value);
const namedType = (t: TypeNode): string => (t.kind === Kind.NAMED_TYPE ? t.name.value : namedType(t.type));

describe('contract company payload lists match the company subgraph schema', () => {
  it.each([
    ['COMPANY_DATES_FIELDS', COMPANY_DATES_FIELDS, 'CompanyDates'],
    ['EMPLOYEE_STATISTICS_FIELDS', EMPLOYEE_STATISTICS_FIELDS, 'EmployeeStatistics'],
    ['OPERATING_RESULTS_FIELDS', OPERATING_RESULTS_FIELDS, 'OperatingResults'],
    ['BALANCE_SHEET_SECTIONS', BALANCE_SHEET_SECTIONS, 'BalanceSheetSections'],
    ['INCOME_STATEMENT_SECTIONS', INCOME_STATEMENT_SECTIONS, 'IncomeStatementSections'],
  ] as const)('%s holds the fields of %s', (_name, list, typeName) => {
    expect([...list].sort()).toEqual(fieldNames(typeName).sort());
  });

  it('WEB_AND_SOCIAL_LINKS holds the fields of WebAndSocial but hasSocial', () => {
    expect(fieldNames('WebAndSocial')).toContain('hasSocial');
    expect([...WEB_AND_SOCIAL_LINKS].sort()).toEqual(
      fieldNames('WebAndSocial')
        .filter((f) => f !== 'hasSocial')
        .sort(),
    );
  });

  it('RATIO_SECTIONS are the fields of FinancialRatios, and each section lists the fields of its type', () => {
    const sections = fieldsOf('FinancialRatios');
    expect([...RATIO_SECTIONS].sort()).toEqual(sections.map((f) => f.name.value).sort());
    for (const section of sections) {
      const name = section.name.value as keyof typeof RATIO_FIELDS;
      expect([...RATIO_FIELDS[name]].sort(), `${name} (${namedType(section.type)})`).toEqual(fieldNames(namedType(section.type)).sort());
    }
  });
});
