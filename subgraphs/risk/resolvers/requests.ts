/**
 * Resolvers of the request types (one per family group, all backed by the status store's snapshot):
 * the common `RiskRequest` fields, each family's own fields, and the documents as signed URLs.
 */
import type { SubgraphContext } from '../../runtime/context.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { Endpoint } from '../../upstream/endpoint.ts';
import type {
  CompanyBureauRequestResolvers,
  CompanyReportRequestResolvers,
  CreditScoreMonitorRequestResolvers,
  IdentityDocumentType,
  PersonGender,
  HeirsRequestResolvers,
  KycMonitorRequestResolvers,
  KycRequestResolvers,
  NegativeRecordsDetail,
  NegativeRecordsRequestResolvers,
  PatrimonialRequestResolvers,
  ReportCover,
  PersonBureauRequestResolvers,
  PersonReportRequestResolvers,
  RiskRequestResolvers,
} from '../__generated__/resolvers-types.ts';
import type { SignedFileValue } from '../../runtime/tracking/files.ts';
import { bool, callbackOf, int, isFinalState, isObj, jsonList, kycQueryOf, normaliseState, objectOrNull, subjectOf, text, toDateTime, type Obj } from '../model.ts';
import { kycEntitiesOfRequest, kycEntityResolvers } from '../kyc.ts';
import type { RiskService } from '../service.ts';
import type { TrackedRequest } from '../store.ts';
import { FAMILIES, RISK } from '../upstream.ts';
import { municipalityRef } from '../../runtime/municipality.ts';

const rec = (p: TrackedRequest): Obj => p.record;
const str =
  (name: string) =>
  (p: TrackedRequest): string | null =>
    text(rec(p)[name]);

/** The fields every request type shares (the `RiskRequest` interface). */
const common = {
  id: (p: TrackedRequest) => p.id,
  family: (p: TrackedRequest) => p.family,
  state: (p: TrackedRequest) => normaliseState(p.rawState),
  rawState: (p: TrackedRequest) => p.rawState,
  done: (p: TrackedRequest) => isFinalState(p.rawState),
  createdAt: (p: TrackedRequest) => toDateTime(p.createdAt),
  updatedAt: (p: TrackedRequest) => toDateTime(p.updatedAt),
  subject: (p: TrackedRequest) => subjectOf(FAMILIES[p.family].kind, rec(p)),
  owner: str('owner'),
  callback: (p: TrackedRequest) => callbackOf(rec(p).callback),
  record: (p: TrackedRequest) => p.record,
};

function cover(r: Obj, style: 'camel' | 'snake'): ReportCover | null {
  const title = text(style === 'camel' ? r.titlePdf : r.title_pdf);
  const txt = text(style === 'camel' ? r.textPdf : r.text_pdf);
  const logoUrl = text(style === 'camel' ? r.logoPdf : r.logo_pdf);
  return title === null && txt === null && logoUrl === null ? null : { title, text: txt, logoUrl };
}

const gender = (v: unknown): PersonGender | null => {
  const g = text(v)?.trim().toUpperCase();
  return g === 'M' ? 'MALE' : g === 'F' ? 'FEMALE' : null;
};

const DOCUMENT_TYPES: readonly IdentityDocumentType[] = ['IDENTITY_CARD', 'DRIVING_LICENSE', 'PASSPORT'];
const documentType = (v: unknown): IdentityDocumentType | null => {
  const d = text(v)?.trim().toUpperCase();
  return DOCUMENT_TYPES.find((t) => t === d) ?? null;
};

/** Birth place of a bureau request's person (birth_*). */
const birthPlaceOf = (r: Obj) => ({ city: text(r.birth_city), province: text(r.birth_province), country: text(r.birth_country) });

/** An address of a bureau request: the person's residence (`residence_…`) or the company's office (`company_…`). */
const addressOf = (r: Obj, prefix: 'residence' | 'company') => ({
  address: text(r[`${prefix}_address`]),
  streetNumber: text(r[`${prefix}_street_number`]),
  city: text(r[`${prefix}_city`]),
  postalCode: text(r[`${prefix}_postal_code`]),
  province: text(r[`${prefix}_province`]),
  country: text(r[`${prefix}_country`]),
});

/** The identity document of a bureau request's person. */
const documentOf = (r: Obj) => ({
  type: documentType(r.document_type),
  number: text(r.document_number),
  releaseDate: text(r.release_date),
  expirationDate: text(r.expiration_date),
  releasePlace: { city: text(r.release_city), province: text(r.release_province), country: null },
  authority: text(r.public_authority),
});

/** The record's result data: null when absent or still empty. */
const resultOf = (p: TrackedRequest): unknown => {
  const d = rec(p).data;
  return isObj(d) && Object.keys(d).length === 0 ? null : (d ?? null);
};

export function requestResolvers(service: RiskService) {
  const signed = (ctx: SubgraphContext, endpoint: Endpoint, id: string, fileName: string): Promise<SignedFileValue> =>
    service.files.issue(service.publicUrl(), ctx.auth, endpoint, { id }, fileName);

  /** The finished report of a report family, as a signed URL; null before completion. */
  const report = (p: TrackedRequest, _args: unknown, ctx: SubgraphContext): Promise<SignedFileValue> | null => {
    const ep = FAMILIES[p.family].download;
    if (!ep || !isFinalState(p.rawState)) return null;
    return signed(ctx, ep, p.id, text(rec(p).namePdf) ?? `${p.id}.pdf`);
  };

  const personReport = {
    ...common,
    name: str('name'),
    surname: str('surname'),
    taxCode: str('taxCode'),
    note: str('note'),
    cover: (p: TrackedRequest) => cover(rec(p), 'camel'),
    reportFileName: str('namePdf'),
    report,
    result: resultOf,
  };

  /** The adverse records found: from the record when it carries them, else read once complete. */
  const negativeDetail = async (p: TrackedRequest, ctx: SubgraphContext): Promise<Obj | null> => {
    const soggetto = objectOrNull(rec(p).soggetto);
    const inRecord = soggetto ? objectOrNull(soggetto.dettaglio_negativita) : null;
    if (inRecord) return inRecord;
    if (!isFinalState(p.rawState)) return null;
    return ctx.once(`risk:negativeDetail:${p.id}`, async () => {
      try {
        return objectOrNull(await ctx.upstream.call<unknown>(ctx, RISK.negativityDetail, { params: { id: p.id } }));
      } catch (err) {
        if (err instanceof UpstreamError && (err.status === 422 || err.status === 404)) return null;
        throw err;
      }
    });
  };

  const RiskRequest: RiskRequestResolvers = {
    __resolveType: (p) => FAMILIES[p.family].kind,
  };

  const PersonBureauRequest: PersonBureauRequestResolvers = {
    ...common,
    firstName: str('first_name'),
    lastName: str('last_name'),
    email: str('email'),
    birthDate: str('birth_date'),
    gender: (p) => gender(rec(p).gender),
    taxCode: str('fiscal_code'),
    birthPlace: (p) => birthPlaceOf(rec(p)),
    residence: (p) => addressOf(rec(p), 'residence'),
    document: (p) => documentOf(rec(p)),
    documentFileName: str('document_file'),
    healthInsuranceCardFileName: str('health_insurance_card_file'),
    delegationFileName: str('delegation_file'),
    signedDelegationFileName: str('signed_delegation_file'),
    delegationForm: (p, _args, ctx) => signed(ctx, RISK.bureauDelegation, p.id, text(rec(p).delegation_file) ?? `${p.id}_delega.pdf`),
    result: resultOf,
  };

  const CompanyBureauRequest: CompanyBureauRequestResolvers = {
    ...common,
    companyName: str('company_name'),
    legalForm: str('company_legal_form'),
    taxCode: str('company_tax_code'),
    vatCode: str('company_vat_number'),
    certifiedEmail: str('company_certified_email'),
    sdiCode: str('company_sdi'),
    registeredOffice: (p) => addressOf(rec(p), 'company'),
    legalRepresentative: (p) => {
      const r = rec(p);
      return {
        firstName: text(r.first_name),
        lastName: text(r.last_name),
        birthDate: text(r.birth_date),
        gender: gender(r.gender),
        taxCode: text(r.fiscal_code),
        birthPlace: birthPlaceOf(r),
        residence: addressOf(r, 'residence'),
        document: documentOf(r),
        documentFileName: text(r.document_file),
        healthInsuranceCardFileName: text(r.health_insurance_card_file),
      };
    },
    companyRegistrationReportFileName: str('company_registration_report_file'),
    delegationFileName: str('delegation_file'),
    signedDelegationFileName: str('signed_delegation_file'),
    delegationForm: (p, _args, ctx) => signed(ctx, RISK.companyBureauDelegation, p.id, text(rec(p).delegation_file) ?? `${p.id}_delega.pdf`),
    result: resultOf,
  };

  const PatrimonialRequest: PatrimonialRequestResolvers = personReport;
  const PersonReportRequest: PersonReportRequestResolvers = personReport;
  const HeirsRequest: HeirsRequestResolvers = personReport;

  const CompanyReportRequest: CompanyReportRequestResolvers = {
    ...common,
    companyName: (p) => text(rec(p).companyName) ?? text(rec(p).name),
    taxCode: str('taxCode'),
    vatCode: str('vatCode'),
    cover: (p) => cover(rec(p), 'camel'),
    reportFileName: str('namePdf'),
    report,
    result: resultOf,
  };

  const NegativeRecordsRequest: NegativeRecordsRequestResolvers = {
    ...common,
    taxCodeOrVat: str('cf_piva'),
    kinds: (p) =>
      jsonList(rec(p).tipo)
        .map(text)
        .filter((s): s is string => s !== null),
    outcome: (p) => {
      const e = objectOrNull(rec(p).esito);
      return e ? { code: int(e.codice), info: text(e.info) } : null;
    },
    requestedAt: (p) => toDateTime(rec(p).date_request),
    completedAt: (p) => toDateTime(rec(p).date_completion),
    findings: (p) => {
      const s = objectOrNull(rec(p).soggetto);
      const n = s ? objectOrNull(s.negativita) : null;
      if (!s || !n) return null;
      return {
        code: text(s.code),
        protests: bool(n.protesti),
        proceedings: bool(n.procedure),
        prejudicialEvents: bool(n.pregiudizievoli),
        involvedInProceedings: bool(n.coinvoltoInProcedura),
      };
    },
    detail: async (p, _args, ctx): Promise<NegativeRecordsDetail | null> => {
      const d = await negativeDetail(p, ctx);
      if (!d) return null;
      const list = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : null);
      return {
        hasPrejudicialEvents: bool(d.presenzaPregiudizievoli),
        prejudicialEvents: list(d.pregiudizievoli),
        hasProceedings: bool(d.presenzaProcedure),
        proceedings: list(d.procedure),
        hasProtests: bool(d.presenzaProtesti),
        protests: list(d.protesti),
      };
    },
    cover: (p) => cover(rec(p), 'snake'),
    report: async (p, _args, ctx) => {
      if (!isFinalState(p.rawState)) return null;
      // The service hands out the PDF only once the detail was read.
      await negativeDetail(p, ctx);
      return signed(ctx, RISK.negativityDownload, p.id, `${p.id}.pdf`);
    },
  };

  const KycRequest: KycRequestResolvers = {
    ...common,
    kind: str('type'),
    query: (p) => kycQueryOf(rec(p).query),
    entities: (p) => kycEntitiesOfRequest(p),
    evidences: (p) => jsonList(rec(p).evidences),
  };

  const KycMonitorRequest: KycMonitorRequestResolvers = {
    ...common,
    name: str('name'),
    kind: str('type'),
    autorenew: (p) => bool(rec(p).autorenew),
    expiresAt: (p) => toDateTime(rec(p).expiryTimestamp),
    query: (p) => kycQueryOf(rec(p).query),
    entities: (p) => kycEntitiesOfRequest(p),
    evidences: (p) => jsonList(rec(p).evidences),
  };

  const CreditScoreMonitorRequest: CreditScoreMonitorRequestResolvers = {
    ...common,
    name: str('name'),
    vatCode: (p) => text(rec(p).vatCode) ?? text(rec(p).code),
    autorenew: (p) => bool(rec(p).autorenew),
    expiresAt: (p) => toDateTime(rec(p).expiryTimestamp),
    updatedFields: (p) =>
      jsonList(rec(p).updatedFields)
        .map(text)
        .filter((s): s is string => s !== null),
    latestDataset: (p) => rec(p).latestDataset ?? null,
    previousDataset: (p) => rec(p).previousDataset ?? null,
  };

  return {
    // Places name their municipality for the postal subgraph (city and province code).
    PersonPlace: { municipality: (p: { city?: string | null; province?: string | null }) => municipalityRef({ town: p.city, province: p.province }) },
    PersonResidence: { municipality: (p: { city?: string | null; province?: string | null }) => municipalityRef({ town: p.city, province: p.province }) },
    KycEntity: kycEntityResolvers(service),
    RiskRequest,
    PersonBureauRequest,
    CompanyBureauRequest,
    PatrimonialRequest,
    PersonReportRequest,
    HeirsRequest,
    CompanyReportRequest,
    NegativeRecordsRequest,
    KycRequest,
    KycMonitorRequest,
    CreditScoreMonitorRequest,
  };
}
