/**
 * The emulator's internal model of an Italian company. `profile.ts` builds it (deterministically
 * from the VAT number), `shapes.ts` renders it into every vendor response shape, so that all
 * endpoints agree on the same company.
 */
import type { Person } from './people.ts';
import type { StreetAddress } from './places.ts';
import type { Activity, RoleCode } from './tables.ts';

/** Status in the company register, as IT-start spells it. */
export type ActivityStatus = 'ATTIVA' | 'CESSATA' | 'INATTIVA' | 'SOSPESA' | 'REGISTRATA' | 'IN_ISCRIZIONE';

export const ACTIVITY_STATUSES: readonly ActivityStatus[] = ['ATTIVA', 'CESSATA', 'REGISTRATA', 'INATTIVA', 'SOSPESA', 'IN_ISCRIZIONE'];

/** Another company, as a shareholder, manager, subsidiary or parent names it. */
export interface CompanyRef {
  kind: 'company';
  vat: string;
  taxCode: string;
  name: string;
  address: StreetAddress;
  openapiNumber: string;
}

export type Party = Person | CompanyRef;

export interface Holding {
  holder: Party;
  /** Percent of the capital. */
  percent: number;
  /** `YYYY-MM-DD` */
  since: string;
}

export interface Role {
  code: RoleCode;
  /** `YYYY-MM-DD` */
  start: string;
}

export interface Manager {
  who: Party;
  roles: Role[];
  legalRep: boolean;
}

/** Figures of one financial year; null where no balance sheet was filed (yet). */
export interface YearFigures {
  year: number;
  employees: number | null;
  balanceSheetDate: string | null;
  turnover: number | null;
  netWorth: number | null;
  shareCapital: number | null;
  totalStaffCost?: number;
  totalAssets?: number;
  avgGrossSalary?: number;
}

export interface Office {
  type: 'SSL' | 'UL';
  cciaa: string;
  rea: string;
  address: StreetAddress;
  openapiNumber: string;
}

export interface CompanyProfile {
  vat: string;
  /** The company's fiscal code: the VAT number, or the owner's code for a sole proprietorship. */
  taxCode: string;
  id: string;
  name: string;
  /** Detailed legal form code (`SR`, `SP`, …). */
  legalForm: string;
  status: ActivityStatus;
  address: StreetAddress;
  cciaa: string;
  rea: string;
  activity: Activity;
  secondaryActivity: Activity | null;
  pec: string;
  pecHistory: Array<{ pec: string; timestamp: number }>;
  sdiCode: string;
  sdiCodeTimestamp: number;
  email: string;
  phone: string;
  fax: string | null;
  website: string | null;
  socials: Record<string, string>;
  incorporationDate: string;
  registrationDate: string;
  startDate: string;
  endDate: string | null;
  creationTimestamp: number;
  lastUpdateTimestamp: number;
  /** Years, newest first; the newest may have no balance sheet yet. */
  years: YearFigures[];
  employeeTrend: number;
  turnoverTrend: number;
  managers: Manager[];
  shareholders: Holding[];
  /** Companies this one holds. */
  holdings: Array<{ company: CompanyRef; percent: number; since: string }>;
  /** The top of the ownership chain (by majority holder), when the company has company shareholders. */
  groupTop: CompanyRef | null;
  /** The direct majority company shareholder. */
  parent: CompanyRef | null;
  offices: Office[];
  openapiNumber: string;
  vatGroup: { participation: boolean; leader: boolean };
  publicAdministration: boolean;
  splitPayment: boolean;
  innovativeStartup: boolean;
  innovativeSme: boolean;
  trade: { importer: boolean; exporter: boolean; importShare: number; exportShare: number; importCountries: string; exportCountries: string };
  tenders: Array<{ year: string; applied: number; won: number; value: number }>;
  artisan: { registrationDate: string; registrationNumber: string } | null;
  soa: boolean;
  /** Sections given verbatim (the vendor's example company); they win over generated ones. */
  fixedSections?: Readonly<Record<string, unknown>>;
}
