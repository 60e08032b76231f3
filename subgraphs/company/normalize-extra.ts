/**
 * Normalizers of the single-purpose Italian endpoints (IT-name, IT-address, IT-pec, IT-sdicode,
 * IT-vatgroup) into the company model. Each keeps only the fields the planner counts the source for
 * (`SOURCE_COVERAGE`), so a partial record (IT-name's address is the town alone) never stands in
 * for a fuller one.
 */
import { UpstreamError } from '../upstream/errors.ts';
import type { SinglePurposeSource } from './facets.ts';
import type { CompanyModel, PecHistoryEntryModel } from './model.ts';
import { bool, isoDateTime, normalizeItStart, str, streetOf } from './normalize.ts';
import type { VItStart, VVatGroup } from './upstream.ts';

/** `data` element of IT-pec. */
export interface VItPec {
  pec?: string | null;
  history?: Array<{ pec?: string | null; timestamp?: number | string | null } | null> | null;
}

/** `data` element of IT-sdicode. */
export interface VItSdicode {
  sdiCode?: string | null;
  id?: string | null;
}

const records = (data: unknown): Record<string, unknown>[] =>
  (Array.isArray(data) ? (data as unknown[]) : data && typeof data === 'object' ? [data] : []).filter((x): x is Record<string, unknown> => !!x && typeof x === 'object');

/** The record of a one-record answer (the one matching the identifier when several come). */
function recordOf(data: unknown, identifier: string, source: SinglePurposeSource): Record<string, unknown> {
  const list = records(data);
  const wanted = identifier.toUpperCase();
  const match = list.find((r) => ['vatCode', 'taxCode', 'id'].some((k) => typeof r[k] === 'string' && r[k].toUpperCase() === wanted));
  const found = match ?? list[0];
  if (!found) throw new UpstreamError('http', `no company matches ${identifier}`, 'company', source, 404);
  return found;
}

/** IT-name and IT-address share IT-start's record shape; only the claimed fields are kept. */
function nameRecord(v: VItStart, withAddress: boolean): CompanyModel {
  const m = normalizeItStart(v);
  const out: CompanyModel = {
    vatCode: m.vatCode ?? null,
    taxCode: m.taxCode ?? null,
    id: m.id ?? null,
    companyName: m.companyName ?? null,
    lastUpdateDate: m.lastUpdateDate ?? null,
  };
  if (withAddress) out.address = m.address ?? null;
  return out;
}

export function normalizePec(v: VItPec): CompanyModel {
  const history: PecHistoryEntryModel[] = [];
  for (const h of Array.isArray(v.history) ? v.history : []) {
    if (!h || typeof h !== 'object') continue;
    history.push({ pec: str(h.pec), recordedAt: isoDateTime(h.timestamp) });
  }
  history.sort((a, b) => (b.recordedAt ?? '').localeCompare(a.recordedAt ?? ''));
  return { pec: str(v.pec), pecHistory: history };
}

export function normalizeVatGroup(v: VVatGroup): CompanyModel {
  return { vatGroup: { participates: bool(v.vatGroupParticipation), isLeader: bool(v.isVatGroupLeader), registryOk: bool(v.registryOk) } };
}

/** Normalizes the answer of a single-purpose source the planner buys. */
export function normalizeSinglePurpose(source: SinglePurposeSource, data: unknown, identifier: string): CompanyModel {
  const r = recordOf(data, identifier, source);
  switch (source) {
    case 'IT-name':
      return nameRecord(r, false);
    case 'IT-address':
      return nameRecord(r, true);
    case 'IT-pec':
      return normalizePec(r);
    case 'IT-sdicode':
      return { sdiCode: str((r as VItSdicode).sdiCode) };
    case 'IT-vatgroup':
      return normalizeVatGroup(r);
  }
}

// ---------------------------------------------------------------------------------------------
// Sections only a single-purpose endpoint holds (bought per field: resolvers/sources.ts)
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

/** The first record of a one-record answer; null when the list is empty. */
export const oneRecord = (data: unknown): Json | null => records(data)[0] ?? null;

const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);

export interface CodedValueOut {
  code: string;
  description: string | null;
}

/** `{code, description}` (or a bare code) as a coded value; null without a code. */
function codedOf(v: unknown): CodedValueOut | null {
  if (typeof v === 'string' || typeof v === 'number') return str(v) ? { code: String(str(v)), description: null } : null;
  const o = obj(v);
  const code = o ? str(o.code) : null;
  return o && code ? { code, description: str(o.description) } : null;
}

/** Code + description kept in two flat fields (`<prefix>Code`, `<prefix>Description`). */
const flatCoded = (r: Json, prefix: string): CodedValueOut | null => {
  const code = str(r[`${prefix}Code`]);
  return code ? { code, description: str(r[`${prefix}Description`]) } : null;
};

/** A value's text: a string, or the description (or code) of a `{code, description}` object. */
const textOf = (v: unknown): string | null => {
  const o = obj(v);
  return o ? (str(o.description) ?? str(o.code)) : str(v);
};

export interface BeneficialOwnerOut {
  name: string | null;
  surname: string | null;
  taxCode: string | null;
  birthDate: string | null;
  birthTown: string | null;
  birthProvince: CodedValueOut | null;
  address: {
    toponym: string | null;
    street: string | null;
    streetNumber: string | null;
    zipCode: string | null;
    town: string | null;
    province: CodedValueOut | null;
    region: CodedValueOut | null;
  } | null;
  roles: Array<{ code: string | null; description: string | null; type: string | null }>;
}

/** IT-ubo `data`: the list of owners (empty when the upstream found none). */
export function normalizeBeneficialOwners(data: unknown): BeneficialOwnerOut[] {
  return records(data).map((r) => {
    const a = obj(r.address);
    const roles = (Array.isArray(r.roles) ? (r.roles as unknown[]) : obj(r.roles) ? [r.roles] : []).map(obj).filter((x): x is Json => x !== null);
    return {
      name: str(r.name),
      surname: str(r.surname),
      taxCode: str(r.taxCode),
      birthDate: isoDateTime(r.birthDate),
      birthTown: textOf(r.birthTown),
      birthProvince: codedOf(r.birthProvince),
      address: a
        ? {
            toponym: str(a.toponym),
            street: str(a.street),
            streetNumber: str(a.streetNumber),
            zipCode: str(a.zipCode),
            town: textOf(a.town),
            province: codedOf(a.province),
            region: codedOf(a.region),
          }
        : null,
      roles: roles.map((x) => ({ code: str(x.code), description: str(x.description), type: str(x.type) })),
    };
  });
}

export interface PublicAdministrationOut {
  paId: string | null;
  companyName: string | null;
  taxCode: string | null;
  vatCode: string | null;
  establishmentDate: string | null;
  terminationDate: string | null;
  phone: string | null;
  fax: string | null;
  url: string | null;
  managerName: string | null;
  managerSurname: string | null;
  managerTitle: string | null;
  ipaEntityCode: string | null;
  ipaCategory: CodedValueOut | null;
  ipaType: CodedValueOut | null;
  ipaInclusionDate: string | null;
  ipaCategoryId: string | null;
  ipaExclusionDate: string | null;
  isPublicAdministration: boolean | null;
  participationStatus: string | null;
  siope: PublicAdministrationListingOut | null;
  miur: PublicAdministrationListingOut | null;
  treasury: PublicAdministrationListingOut | null;
  nationalHealthServiceCode: string | null;
  istatS13: PublicAdministrationListingOut | null;
  harmonisedAccounting: PublicAdministrationListingOut | null;
  ateco: CodedValueOut | null;
  detailedLegalForm: CodedValueOut | null;
  address: PublicAdministrationAddressOut | null;
  invoicingOffices: Array<{
    administrationCode: string | null;
    officeCode: string | null;
    description: string | null;
    sdiCode: string | null;
    streetName: string | null;
    zipCode: string | null;
    town: string | null;
    province: string | null;
    region: string | null;
    taxCode: string | null;
    invoicingStartDate: string | null;
    taxCodeVerificationDate: string | null;
    lastUpdateDate: string | null;
  }>;
  lastUpdateDate: string | null;
}

export interface PublicAdministrationListingOut {
  entityCode: string | null;
  typeId: string | null;
  type: CodedValueOut | null;
  inclusionDate: string | null;
  exclusionDate: string | null;
}

export interface PublicAdministrationAddressOut {
  streetName: string | null;
  toponym: string | null;
  street: string | null;
  streetNumber: string | null;
  hamlet: string | null;
  zipCode: string | null;
  town: string | null;
  townCode: string | null;
  townIstatCode: string | null;
  townNumber: string | null;
  province: CodedValueOut | null;
  provinceNumber: string | null;
  region: CodedValueOut | null;
  area: CodedValueOut | null;
}

/**
 * One register an IPA record cites, from its flat `<prefix>EntityCode`, `<prefix>TypeId`,
 * `<prefix>TypeCode`/`Description`, `<prefix>InclusionDate`, `<prefix>ExclusionDate` fields; null
 * when every one is empty.
 */
function listingOf(r: Json, prefix: string): PublicAdministrationListingOut | null {
  const out: PublicAdministrationListingOut = {
    entityCode: str(r[`${prefix}EntityCode`]),
    typeId: str(r[`${prefix}TypeId`]),
    type: flatCoded(r, `${prefix}Type`),
    inclusionDate: isoDateTime(r[`${prefix}InclusionDate`]),
    exclusionDate: isoDateTime(r[`${prefix}ExclusionDate`]),
  };
  return Object.values(out).some((v) => v !== null) ? out : null;
}

/** IT-pa's `address.registeredOffice` (town and province as register objects, or as plain text). */
function paAddress(v: unknown): PublicAdministrationAddressOut | null {
  const ro = obj(obj(v)?.registeredOffice);
  if (!ro) return null;
  const town = obj(ro.town);
  const province = obj(ro.province);
  return {
    ...streetOf(ro),
    town: town ? str(town.description) : str(ro.town),
    townCode: town ? str(town.code) : str(ro.townCode),
    townIstatCode: town ? str(town.istat) : null,
    townNumber: town ? str(town.number) : null,
    province: codedOf(ro.province),
    provinceNumber: province ? str(province.number) : null,
    region: codedOf(ro.region),
    area: codedOf(ro.area),
  };
}

/** IT-pa record (the vendor example's field names). `paId` is a number beyond 2^53: kept as text, as the payload writes it (shortest form). */
export function normalizePublicAdministration(r: Json): PublicAdministrationOut {
  const offices = (Array.isArray(r.paInvoicingOffice) ? (r.paInvoicingOffice as unknown[]) : obj(r.paInvoicingOffice) ? [r.paInvoicingOffice] : [])
    .map(obj)
    .filter((x): x is Json => x !== null);
  return {
    paId: str(r.paId),
    companyName: str(r.companyName),
    taxCode: str(r.taxCode),
    vatCode: str(r.vatCode),
    establishmentDate: isoDateTime(r.establishmentDate),
    terminationDate: isoDateTime(r.terminationDate),
    phone: str(r.phone),
    fax: str(r.fax),
    url: str(r.url),
    managerName: str(r.managerName),
    managerSurname: str(r.managerSurname),
    managerTitle: str(r.managerTitle),
    ipaEntityCode: str(r.ipaEntityCode),
    ipaCategory: flatCoded(r, 'ipaCategory'),
    ipaType: flatCoded(r, 'ipaType'),
    ipaInclusionDate: isoDateTime(r.ipaInclusionDate),
    ipaCategoryId: str(r.ipaCategoryId),
    ipaExclusionDate: isoDateTime(r.ipaExclusionDate),
    isPublicAdministration: bool(r.pa),
    participationStatus: str(r.participationStatus),
    siope: listingOf(r, 'siope'),
    miur: listingOf(r, 'miur'),
    treasury: listingOf(r, 'dt'),
    nationalHealthServiceCode: str(r.ssnEntityCode),
    istatS13: listingOf(r, 's13Istat'),
    harmonisedAccounting: listingOf(r, 'dlgs1182011'),
    ateco: codedOf(obj(r.atecoClassification)?.ateco),
    detailedLegalForm: codedOf(r.detailedLegalForm),
    address: paAddress(r.address),
    invoicingOffices: offices.map((o) => ({
      administrationCode: str(o.administrationCode),
      officeCode: str(o.ouCode),
      description: str(o.ouDescription),
      sdiCode: str(o.sdiCode),
      streetName: str(o.streetName),
      zipCode: str(o.zipCode),
      town: str(o.town),
      province: str(o.province),
      region: str(o.region),
      taxCode: str(o.taxCode),
      invoicingStartDate: isoDateTime(o.sfeStartDate),
      taxCodeVerificationDate: isoDateTime(o.taxCodeVerificationDate),
      lastUpdateDate: isoDateTime(o.lastUpdateTimestamp),
    })),
    lastUpdateDate: isoDateTime(r.lastUpdateTimestamp),
  };
}

/** IT-splitpayment record. */
export function normalizeSplitPayment(r: Json): {
  companyName: string | null;
  taxCode: string | null;
  companyType: string | null;
  startDate: string | null;
  lastUpdateDate: string | null;
} {
  return {
    companyName: str(r.companyName),
    taxCode: str(r.taxCode),
    companyType: str(r.companyType),
    startDate: isoDateTime(r.startingDateTimestamp),
    lastUpdateDate: isoDateTime(r.lastUpdateTimestamp),
  };
}

/** IT-vatgroup record asked with a tax code. */
export function normalizeVatGroupCheck(r: Json): {
  participates: boolean | null;
  isLeader: boolean | null;
  registryOk: boolean | null;
  taxCodeConsistent: boolean | null;
  taxCodeEntrant: boolean | null;
  taxCodePresent: boolean | null;
  members: unknown[] | null;
} {
  return {
    participates: bool(r.vatGroupParticipation),
    isLeader: bool(r.isVatGroupLeader),
    registryOk: bool(r.registryOk),
    taxCodeConsistent: bool(r.taxCodeVatCodeConsistent),
    taxCodeEntrant: bool(r.taxCodeEntrant),
    taxCodePresent: bool(r.taxCodePresent),
    members: Array.isArray(r.vatGroupMembers) ? (r.vatGroupMembers as unknown[]).filter((m) => m !== null && m !== undefined) : null,
  };
}
