/**
 * The risk area's REST endpoints: the one table of paths (a deployment changes a path here, or the
 * bureau path with `RISK_BUREAU_PATH`, applied by the upstream configuration), and per request
 * family which endpoints create, read, list, download and delete its records.
 *
 * The contract names the person bureau request `IT-bureau-persona`; the vendor spec calls the same
 * operation `IT-crif-persona`. The contract's name is the default.
 */
import type { FamilyEndpoints as KitFamilyEndpoints } from '../runtime/tracking/policy.ts';
import { defineEndpoints, type Endpoint } from '../upstream/endpoint.ts';

/**
 * Where the person bureau request lives, in the contract's spelling. A deployment whose upstream
 * serves it elsewhere sets `RISK_BUREAU_PATH` (e.g. `/IT-crif-persona`): the upstream configuration
 * (`upstream/config.ts`, `pathAliases`) renames the path sent, and prices, rate limits and cache keys
 * keep this name.
 */
export const BUREAU_PATH = '/IT-bureau-persona';

/**
 * Where the company bureau request lives (the vendor spec's `IT-crif-azienda`; the contract does not
 * show it): the same delegation workflow as the person's, about a company and its legal representative.
 */
export const COMPANY_BUREAU_PATH = '/IT-crif-azienda';

/** Credit scores are cached per tenant for this long (seconds): a score changes at most monthly. */
const SCORE_TTL = 6 * 3600;
/** Paid creations get a longer timeout (they are never retried). */
const CREATE_TIMEOUT = 30_000;

const get = (path: string, ttl = 0): Endpoint => ({ area: 'risk', method: 'GET', path, ttl });
const post = (path: string): Endpoint => ({ area: 'risk', method: 'POST', path, timeoutMs: CREATE_TIMEOUT });
const download = (path: string): Endpoint => ({ area: 'risk', method: 'GET', path, timeoutMs: 60_000 });

/** Every risk endpoint the layer calls. */
export const RISK = defineEndpoints({
  creditScoreStart: get('/IT-creditscore-start/{id}', SCORE_TTL),
  creditScoreAdvanced: get('/IT-creditscore-advanced/{id}', SCORE_TTL),
  creditScoreTop: get('/IT-creditscore-top/{id}', SCORE_TTL),
  verifyFiscalCode: get('/IT-verifica_cf/{code}', 24 * 3600),
  /**
   * The same check with the code in a JSON body, `{"codice_fiscale": …}` (the contract lists POST;
   * the vendor spec shows only the GET, so the body's field is the GET's parameter name). Not
   * cached and never retried, like every POST.
   */
  verifyFiscalCodePost: { area: 'risk', method: 'POST', path: '/IT-verifica_cf', timeoutMs: 10_000 },

  bureauList: get(BUREAU_PATH),
  bureauCreate: post(BUREAU_PATH),
  bureauGet: get(`${BUREAU_PATH}/{id}`),
  bureauUpload: { area: 'risk', method: 'PATCH', path: `${BUREAU_PATH}/{id}`, timeoutMs: CREATE_TIMEOUT },
  bureauDelegation: download(`${BUREAU_PATH}/{id}/delega`),

  companyBureauList: get(COMPANY_BUREAU_PATH),
  companyBureauCreate: post(COMPANY_BUREAU_PATH),
  companyBureauGet: get(`${COMPANY_BUREAU_PATH}/{id}`),
  companyBureauUpload: { area: 'risk', method: 'PATCH', path: `${COMPANY_BUREAU_PATH}/{id}`, timeoutMs: CREATE_TIMEOUT },
  companyBureauDelegation: download(`${COMPANY_BUREAU_PATH}/{id}/delega`),

  negativityCreate: post('/IT-negativita'),
  negativityList: get('/IT-richiesta'),
  negativityGet: get('/IT-richiesta/{id}'),
  negativityDetail: get('/IT-negativita/{id}/dettaglio'),
  negativityDownload: download('/IT-richiesta/{id}/download'),

  kycList: get('/WW-kyc-evidences'),
  kycGet: get('/WW-kyc-evidences/{id}'),
  // One entity of a KYC request: the service picks JSON, PDF or JPEG by the request's Content-Type.
  kycEvidences: { area: 'risk', method: 'GET', path: '/WW-kyc-evidences/{id}/{entity}', headers: { 'content-type': 'application/json' } },
  kycEvidencePdf: { ...download('/WW-kyc-evidences/{id}/{entity}'), headers: { 'content-type': 'application/pdf', accept: 'application/pdf' } },
  kycEvidencePhoto: { ...download('/WW-kyc-evidences/{id}/{entity}?photo={photo}'), headers: { 'content-type': 'image/jpeg', accept: 'image/jpeg' } },

  kycMonitorCreate: post('/WW-kyc-full-monitor'),
  kycMonitorList: get('/WW-kyc-full-monitor'),
  kycMonitorGet: get('/WW-kyc-full-monitor/{id}'),
  kycMonitorDelete: { area: 'risk', method: 'DELETE', path: '/WW-kyc-full-monitor/{id}', timeoutMs: CREATE_TIMEOUT },

  scoreMonitorCreate: post('/IT-creditscore-top-monitor'),
  scoreMonitorList: get('/IT-creditscore-top-monitor'),
  scoreMonitorGet: get('/IT-creditscore-top-monitor/{id}'),
  scoreMonitorDelete: { area: 'risk', method: 'DELETE', path: '/IT-creditscore-top-monitor/{id}', timeoutMs: CREATE_TIMEOUT },
});

/** The request families, named as the GraphQL enum `RiskFamily` names them. */
export type RiskFamilyName =
  | 'PERSON_BUREAU'
  | 'COMPANY_BUREAU'
  | 'PATRIMONIAL'
  | 'PATRIMONIAL_TOP'
  | 'PATRIMONIAL_TOP_SUPERVISED'
  | 'PERSON_REPORT'
  | 'PERSON_REPORT_TOP'
  | 'HEIRS_ACCEPTED'
  | 'HEIRS_NOT_ACCEPTED'
  | 'COMPANY_REPORT'
  | 'COMPANY_REPORT_TOP'
  | 'NEGATIVE_RECORDS'
  | 'KYC_FULL'
  | 'KYC_PEP'
  | 'KYC_SANCTION_LIST'
  | 'KYC_ADVERSE_MEDIA'
  | 'CREDIT_SCORE_MONITOR'
  | 'KYC_MONITOR';

/** Which GraphQL type a family's records are. */
export type RiskRecordKind =
  | 'PersonBureauRequest'
  | 'CompanyBureauRequest'
  | 'PatrimonialRequest'
  | 'PersonReportRequest'
  | 'HeirsRequest'
  | 'CompanyReportRequest'
  | 'NegativeRecordsRequest'
  | 'KycRequest'
  | 'CreditScoreMonitorRequest'
  | 'KycMonitorRequest';

/** One risk family's endpoints (the kit's shape, typed to risk). */
export type FamilyEndpoints = KitFamilyEndpoints<RiskFamilyName, RiskRecordKind>;

/** The patrimonial / report / heirs / company report families share four operations on one path. */
function reportFamily(family: RiskFamilyName, kind: RiskRecordKind, path: string): FamilyEndpoints {
  return { family, kind, create: post(path), get: get(`${path}/{id}`), list: get(path), download: download(`${path}/{id}/download`) };
}

function kycFamily(family: RiskFamilyName, type: string): FamilyEndpoints {
  return { family, kind: 'KycRequest', create: post(`/WW-kyc-${type}`), get: RISK.kycGet, list: RISK.kycList, listType: type };
}

/** Every request family: how to create, read, list, download and stop its records. */
export const FAMILIES: Record<RiskFamilyName, FamilyEndpoints> = {
  PERSON_BUREAU: { family: 'PERSON_BUREAU', kind: 'PersonBureauRequest', create: RISK.bureauCreate, get: RISK.bureauGet, list: RISK.bureauList },
  COMPANY_BUREAU: {
    family: 'COMPANY_BUREAU',
    kind: 'CompanyBureauRequest',
    create: RISK.companyBureauCreate,
    get: RISK.companyBureauGet,
    list: RISK.companyBureauList,
  },
  PATRIMONIAL: reportFamily('PATRIMONIAL', 'PatrimonialRequest', '/IT-patrimoniale-persona'),
  PATRIMONIAL_TOP: reportFamily('PATRIMONIAL_TOP', 'PatrimonialRequest', '/IT-patrimoniale-persona-top'),
  PATRIMONIAL_TOP_SUPERVISED: reportFamily('PATRIMONIAL_TOP_SUPERVISED', 'PatrimonialRequest', '/IT-patrimoniale-persona-top-supervisionato'),
  PERSON_REPORT: reportFamily('PERSON_REPORT', 'PersonReportRequest', '/IT-report-persona'),
  PERSON_REPORT_TOP: reportFamily('PERSON_REPORT_TOP', 'PersonReportRequest', '/IT-report-persona-top'),
  HEIRS_ACCEPTED: reportFamily('HEIRS_ACCEPTED', 'HeirsRequest', '/IT-eredi-con-accettazione'),
  HEIRS_NOT_ACCEPTED: reportFamily('HEIRS_NOT_ACCEPTED', 'HeirsRequest', '/IT-eredi-senza-accettazione'),
  COMPANY_REPORT: reportFamily('COMPANY_REPORT', 'CompanyReportRequest', '/IT-report-azienda'),
  COMPANY_REPORT_TOP: reportFamily('COMPANY_REPORT_TOP', 'CompanyReportRequest', '/IT-report-azienda-top'),
  NEGATIVE_RECORDS: {
    family: 'NEGATIVE_RECORDS',
    kind: 'NegativeRecordsRequest',
    create: RISK.negativityCreate,
    get: RISK.negativityGet,
    list: RISK.negativityList,
    download: RISK.negativityDownload,
  },
  KYC_FULL: kycFamily('KYC_FULL', 'full'),
  KYC_PEP: kycFamily('KYC_PEP', 'pep'),
  KYC_SANCTION_LIST: kycFamily('KYC_SANCTION_LIST', 'sanction_list'),
  KYC_ADVERSE_MEDIA: kycFamily('KYC_ADVERSE_MEDIA', 'adverse_media'),
  CREDIT_SCORE_MONITOR: {
    family: 'CREDIT_SCORE_MONITOR',
    kind: 'CreditScoreMonitorRequest',
    create: RISK.scoreMonitorCreate,
    get: RISK.scoreMonitorGet,
    list: RISK.scoreMonitorList,
    remove: RISK.scoreMonitorDelete,
  },
  KYC_MONITOR: {
    family: 'KYC_MONITOR',
    kind: 'KycMonitorRequest',
    create: RISK.kycMonitorCreate,
    get: RISK.kycMonitorGet,
    list: RISK.kycMonitorList,
    remove: RISK.kycMonitorDelete,
  },
};

export const FAMILY_NAMES = Object.keys(FAMILIES) as RiskFamilyName[];

/** The credit-score endpoint of each level. */
export const SCORE_ENDPOINTS = {
  START: RISK.creditScoreStart,
  ADVANCED: RISK.creditScoreAdvanced,
  TOP: RISK.creditScoreTop,
} as const;

/** The bureau families (a signed delegation moves them on) and the endpoints that take and give it. */
export const BUREAU_FAMILIES = {
  PERSON_BUREAU: { upload: RISK.bureauUpload, delegation: RISK.bureauDelegation },
  COMPANY_BUREAU: { upload: RISK.companyBureauUpload, delegation: RISK.companyBureauDelegation },
} as const satisfies Partial<Record<RiskFamilyName, { upload: Endpoint; delegation: Endpoint }>>;

export type BureauFamilyName = keyof typeof BUREAU_FAMILIES;

/** The family each order mutation's choice argument (level, acceptance, kind) selects. */
export const ORDER_FAMILIES = {
  PATRIMONIAL: { STANDARD: 'PATRIMONIAL', TOP: 'PATRIMONIAL_TOP', TOP_SUPERVISED: 'PATRIMONIAL_TOP_SUPERVISED' },
  PERSON_REPORT: { STANDARD: 'PERSON_REPORT', TOP: 'PERSON_REPORT_TOP' },
  COMPANY_REPORT: { STANDARD: 'COMPANY_REPORT', TOP: 'COMPANY_REPORT_TOP' },
  HEIRS: { ACCEPTED: 'HEIRS_ACCEPTED', NOT_ACCEPTED: 'HEIRS_NOT_ACCEPTED' },
  KYC: { FULL: 'KYC_FULL', PEP: 'KYC_PEP', SANCTION_LIST: 'KYC_SANCTION_LIST', ADVERSE_MEDIA: 'KYC_ADVERSE_MEDIA' },
} as const satisfies Record<string, Record<string, RiskFamilyName>>;
