/**
 * Every 200 JSON example of the vendor's risk spec that the layer calls goes through the whole
 * stack (gateway → risk subgraph → upstream client → a stub answering the example) and comes out of
 * the gateway with its values intact: typed fields carry the example's values, `record` is the
 * example's record unchanged. Each row runs as its own tenant (its own bearer token), so the status
 * store of one row never colours another.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { asText, type Obj } from '../../../contract/values.ts';
import { bureauInput, CF, PDF } from '../../support/risk.ts';

const examples = JSON.parse(readFileSync(new URL('../../../subgraphs/risk/fixtures/vendor-examples.json', import.meta.url), 'utf8')) as Record<string, Obj>;
const dataOf = (key: string): Obj => {
  const body = examples[key];
  if (!body) throw new Error(`no example ${key}`);
  return body.data as Obj;
};
const iso = (sec: unknown): string => new Date(Number(sec) * 1000).toISOString();
const sqlIso = (s: unknown): string | null => (typeof s === 'string' ? `${s.replace(' ', 'T')}.000Z` : null);

const VAT = '12485671007';

const COMMON = `
  fragment Common on RiskRequest {
    id family state rawState done createdAt updatedAt owner
    subject { name taxCode vatCode }
    callback { url method field headers { name value } retry }
    record
  }`;

/** The routes the stub answers for the current row: `METHOD /path` → body. */
let routes = new Map<string, Obj>();
let stub: Stub;
let t: TestStack;
let tenant = 0;

async function run<T = Obj>(serve: Record<string, string>, query: string, variables: Obj = {}): Promise<{ data: T; calls: string[] }> {
  routes = new Map(Object.entries(serve).map(([route, key]) => [route, examples[key]]));
  const before = stub.requests.length;
  const res: GraphQLResponse<T> = await t.gql<T>(query, variables, { authorization: `Bearer fixture-tenant-${++tenant}` });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return { data: res.data as T, calls: stub.requests.slice(before).map((r) => `${r.method} ${r.path.split('?')[0]}`) };
}

/** The common fields of a request as the example record gives them. */
function expectCommon(out: Obj, rec: Obj, state: string): void {
  expect(out.id).toBe(rec.id);
  expect(out.rawState).toBe(rec.state ?? rec.status);
  expect(out.state).toBe(state);
  expect(out.owner).toBe(rec.owner ?? null);
  expect(out.record).toEqual(rec);
  const created = rec.creation_timestamp ?? rec.creationTimestamp ?? rec.timestamp;
  expect(out.createdAt).toBe(created === undefined ? null : iso(created));
  const cb = rec.callback as Obj | null;
  if (cb && typeof cb.url === 'string') {
    expect(out.callback).toEqual({
      url: cb.url,
      method: cb.method === 'POST' ? 'POST' : 'JSON',
      field: typeof cb.field === 'string' && cb.field ? cb.field : 'data',
      headers: Object.entries((cb.headers as Obj | null) ?? {}).map(([name, value]) => ({ name, value })),
      retry: typeof cb.retry === 'number' ? cb.retry : 0,
    });
  } else {
    expect(out.callback).toBeNull();
  }
}

function expectListItems(out: Obj[], items: Obj[], state: string): void {
  expect(out).toHaveLength(items.length);
  out.forEach((o, i) => {
    const item = items[i];
    expect(o.id).toBe(item.id);
    expect(o.rawState).toBe(item.state ?? item.status);
    expect(o.state).toBe(state);
    expect(o.createdAt).toBe(iso(item.creation_timestamp ?? item.creationTimestamp ?? item.timestamp));
    expect(o.record).toEqual(item);
  });
}

const ENTITY = `entities { id entityType gender nationalities photos organizationDetails lastUpdate
  names { title firstName lastName fullName primary native }
  birthDates { day month year inferred } deathDates { day month year inferred }
  locations { address street city region country type } codes { type value } recaps { lang recap } }`;

/** Text as the layer reads it (`upstream/coerce.ts` `str`): trimmed, a blank is null (the record keeps it). */
const text = (v: unknown): unknown => (typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : v);

function expectEntities(out: unknown, entities: Obj[]): void {
  expect(out).toEqual(
    entities.map((e) => ({
      id: text(e.id),
      entityType: text(e.entity_type),
      gender: text(e.gender),
      nationalities: e.nationalities,
      photos: e.photos,
      organizationDetails: e.organization_details,
      lastUpdate: e.last_update,
      names: (e.names as Obj[]).map((n) => ({
        title: text(n.title),
        firstName: text(n.first_name),
        lastName: text(n.last_name),
        fullName: text(n.full_name),
        primary: n.primary,
        native: n.native,
      })),
      birthDates: e.birth_dates,
      deathDates: e.death_dates,
      locations: (e.locations as Obj[]).map((l) => ({
        address: text(l.address),
        street: text(l.street),
        city: text(l.city),
        region: text(l.region),
        country: text(l.country),
        type: text(l.type),
      })),
      codes: e.codes,
      recaps: e.recaps,
    })),
  );
}

function expectKycQuery(out: unknown, q: Obj): void {
  expect(out).toEqual({ name: q.name, firstName: q.firstName, lastName: q.lastName, birthDate: q.birthDate, entityType: q.entityType, removeDeceased: q.removeDeceased });
}

beforeAll(async () => {
  stub = await startStub((req, res) => {
    const path = req.path.split('?')[0].replace(/\/+$/, '');
    const body = routes.get(`${req.method} ${path}`);
    if (body) json(res, 200, body);
    else json(res, 404, { success: false, message: `no example for ${req.method} ${path}`, error: 999, data: null });
  });
  // No service token: every row passes its own bearer token through (its own tenant).
  t = await startTestStack({
    OPENAPI_ENV: 'sandbox',
    OPENAPI_RISK_URL: stub.url,
    OPENAPI_TOKEN: '',
    OPENAPI_MAX_RETRIES: '0',
    // the poller would add its own reads to the stub's log; these rows drive every call themselves
    RISK_POLL_MAX_CALLS_PER_MIN: '0',
  });
});

afterAll(async () => {
  await t?.close();
  await stub?.close();
});

const used = new Set<string>();
const serve = (route: string, key: string): Record<string, string> => {
  used.add(key);
  return { [route]: key };
};

describe('vendor examples through the gateway: person bureau (IT-bureau-persona = IT-crif-persona)', () => {
  const BUREAU = `firstName lastName email birthDate gender taxCode documentFileName healthInsuranceCardFileName delegationFileName signedDelegationFileName
    birthPlace { city province country } residence { address streetNumber city postalCode province country }
    document { type number releaseDate expirationDate releasePlace { city province } authority }`;

  function expectBureau(out: Obj, rec: Obj): void {
    expect(out).toMatchObject({
      firstName: rec.first_name,
      lastName: rec.last_name,
      email: rec.email,
      birthDate: rec.birth_date,
      gender: rec.gender === 'm' || rec.gender === 'M' ? 'MALE' : 'FEMALE',
      taxCode: rec.fiscal_code,
      documentFileName: rec.document_file,
      healthInsuranceCardFileName: rec.health_insurance_card_file,
      delegationFileName: rec.delegation_file ?? null,
      signedDelegationFileName: rec.signed_delegation_file ?? null,
      birthPlace: { city: rec.birth_city, province: rec.birth_province, country: rec.birth_country },
      residence: {
        address: rec.residence_address,
        streetNumber: rec.residence_street_number,
        city: rec.residence_city,
        postalCode: rec.residence_postal_code,
        province: rec.residence_province,
        country: rec.residence_country,
      },
      document: {
        type: rec.document_type,
        number: rec.document_number,
        releaseDate: rec.release_date,
        expirationDate: rec.expiration_date,
        releasePlace: { city: rec.release_city, province: rec.release_province },
        authority: rec.public_authority,
      },
      subject: { name: `${String(rec.first_name)} ${String(rec.last_name)}`, taxCode: rec.fiscal_code, vatCode: null },
    });
  }

  it('GET list', async () => {
    const { data, calls } = await run<{ riskRequests: Obj[] }>(
      serve('GET /IT-bureau-persona', 'GET /IT-crif-persona'),
      `query { riskRequests(family: PERSON_BUREAU) { ...Common } } ${COMMON}`,
    );
    expect(calls).toEqual(['GET /IT-bureau-persona']);
    expectListItems(data.riskRequests, dataOf('GET /IT-crif-persona') as unknown as Obj[], 'COMPLETE');
  });

  it('POST', async () => {
    const input = bureauInput();
    const { data, calls } = await run<{ orderPersonBureauReport: Obj }>(
      serve('POST /IT-bureau-persona', 'POST /IT-crif-persona'),
      `mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { ...Common ... on PersonBureauRequest { ${BUREAU} } } } ${COMMON}`,
      { input },
    );
    expect(calls).toEqual(['POST /IT-bureau-persona']);
    const rec = dataOf('POST /IT-crif-persona');
    expectCommon(data.orderPersonBureauReport, rec, 'PROCESSING');
    expectBureau(data.orderPersonBureauReport, rec);
  });

  it('GET one', async () => {
    const rec = dataOf('GET /IT-crif-persona/{id}');
    const { data } = await run<{ riskRequest: Obj }>(
      serve(`GET /IT-bureau-persona/${String(rec.id)}`, 'GET /IT-crif-persona/{id}'),
      `query($id: ID!) { riskRequest(family: PERSON_BUREAU, id: $id) { ...Common ... on PersonBureauRequest { ${BUREAU} } } } ${COMMON}`,
      { id: rec.id },
    );
    expectCommon(data.riskRequest, rec, 'PROCESSING');
    expectBureau(data.riskRequest, rec);
  });

  it('PATCH (signed delegation)', async () => {
    const rec = dataOf('PATCH /IT-crif-persona/{id}');
    const { data, calls } = await run<{ uploadSignedDelegation: Obj }>(
      serve(`PATCH /IT-bureau-persona/${String(rec.id)}`, 'PATCH /IT-crif-persona/{id}'),
      `mutation($id: ID!, $f: String!) { uploadSignedDelegation(id: $id, signedDelegationFile: $f) { ...Common ... on PersonBureauRequest { ${BUREAU} } } } ${COMMON}`,
      { id: rec.id, f: PDF },
    );
    expect(calls).toEqual([`PATCH /IT-bureau-persona/${String(rec.id)}`]);
    expectCommon(data.uploadSignedDelegation, rec, 'IN_PROGRESS');
    expectBureau(data.uploadSignedDelegation, rec);
    expect(data.uploadSignedDelegation.updatedAt).toBe(iso(rec.last_update_timestamp));
  });
});

describe('vendor examples through the gateway: person report families', () => {
  const families: Array<[string, string, string, string]> = [
    ['/IT-patrimoniale-persona', 'PATRIMONIAL', 'orderPatrimonialReport(level: STANDARD, input: $input)', 'PatrimonialRequest'],
    ['/IT-patrimoniale-persona-top', 'PATRIMONIAL_TOP', 'orderPatrimonialReport(level: TOP, input: $input)', 'PatrimonialRequest'],
    ['/IT-report-persona', 'PERSON_REPORT', 'orderPersonReport(level: STANDARD, input: $input)', 'PersonReportRequest'],
    ['/IT-report-persona-top', 'PERSON_REPORT_TOP', 'orderPersonReport(level: TOP, input: $input)', 'PersonReportRequest'],
    ['/IT-eredi-con-accettazione', 'HEIRS_ACCEPTED', 'orderHeirsSearch(acceptance: ACCEPTED, input: $input)', 'HeirsRequest'],
    ['/IT-eredi-senza-accettazione', 'HEIRS_NOT_ACCEPTED', 'orderHeirsSearch(acceptance: NOT_ACCEPTED, input: $input)', 'HeirsRequest'],
  ];
  for (const [path, family, mutation, type] of families) {
    it(`${path}: GET list and POST`, async () => {
      const list = await run<{ riskRequests: Obj[] }>(serve(`GET ${path}`, `GET ${path}`), `query { riskRequests(family: ${family}) { ...Common } } ${COMMON}`);
      expectListItems(list.data.riskRequests, dataOf(`GET ${path}`) as unknown as Obj[], 'COMPLETE');

      const rec = dataOf(`POST ${path}/`);
      const { data, calls } = await run<{ order: Obj }>(
        serve(`POST ${path}`, `POST ${path}/`),
        `mutation($input: PersonSubjectInput!) { order: ${mutation} { ...Common ... on ${type} { name surname taxCode reportFileName report { url } } } } ${COMMON}`,
        { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } },
      );
      expect(calls).toEqual([`POST ${path}`]);
      expectCommon(data.order, rec, 'PROCESSING');
      expect(data.order).toMatchObject({
        name: rec.name,
        surname: rec.surname,
        taxCode: rec.taxCode,
        family,
        report: null,
        subject: { name: `${String(rec.name)} ${String(rec.surname)}`, taxCode: rec.taxCode },
      });
    });
  }
});

describe('vendor examples through the gateway: company reports', () => {
  for (const [path, family, level] of [
    ['/IT-report-azienda', 'COMPANY_REPORT', 'STANDARD'],
    ['/IT-report-azienda-top', 'COMPANY_REPORT_TOP', 'TOP'],
  ] as const) {
    it(`${path}: GET list and POST`, async () => {
      const list = await run<{ riskRequests: Obj[] }>(serve(`GET ${path}`, `GET ${path}`), `query { riskRequests(family: ${family}) { ...Common } } ${COMMON}`);
      expectListItems(list.data.riskRequests, dataOf(`GET ${path}`) as unknown as Obj[], 'COMPLETE');
      const rec = dataOf(`POST ${path}/`);
      const { data } = await run<{ orderCompanyReport: Obj }>(
        serve(`POST ${path}`, `POST ${path}/`),
        `mutation($input: CompanySubjectInput!) { orderCompanyReport(level: ${level}, input: $input) { ...Common ... on CompanyReportRequest { companyName taxCode vatCode } } } ${COMMON}`,
        { input: { companyName: 'Openapi', taxCode: VAT, vatCode: VAT } },
      );
      expectCommon(data.orderCompanyReport, rec, 'PROCESSING');
      // Codes the vendor sends as numbers come out as the same digits.
      expect(data.orderCompanyReport).toMatchObject({
        companyName: String(rec.companyName ?? rec.name),
        taxCode: String(rec.taxCode),
        vatCode: rec.vatCode === undefined ? null : asText(rec.vatCode),
      });
    });
  }
});

describe('vendor examples through the gateway: synchronous endpoints', () => {
  it('IT-verifica_cf', async () => {
    const { data, calls } = await run<{ verifyFiscalCode: Obj }>(
      serve(`GET /IT-verifica_cf/${CF}`, 'GET /IT-verifica_cf/{codice_fiscale}'),
      `query($cf: String!) { verifyFiscalCode(taxCode: $cf) { taxCode valid } }`,
      { cf: CF.toLowerCase() },
    );
    expect(calls).toEqual([`GET /IT-verifica_cf/${CF}`]);
    expect(data.verifyFiscalCode).toEqual({ taxCode: CF, valid: dataOf('GET /IT-verifica_cf/{codice_fiscale}').validita });
  });

  const SCORE = `level id companyId vatCode taxCode companyName requestedAt assessedAt score rawScore scoreDescription rating severity creditLimit lastBalanceYear note
    history { note events scores { month score rawScore description } ratings { month rating balanceYear } creditLimits { month value } }
    positions { year mainIndustry positions { index profile description value position totalPosition lastYearTrend type } }
    profiles { year mainIndustry positionsCount profiles { name score scoreDescription trend note } }`;

  it('IT-creditscore-start and -advanced', async () => {
    for (const level of ['START', 'ADVANCED'] as const) {
      const key = `GET /IT-creditscore-${level.toLowerCase()}/{vatCode_taxCode_or_id}`;
      const d = dataOf(key);
      const { data } = await run<{ creditScore: Obj }>(
        serve(`GET /IT-creditscore-${level.toLowerCase()}/${VAT}`, key),
        `query($v: String!) { creditScore(vatCode: $v, level: ${level}) { ${SCORE} } }`,
        { v: VAT },
      );
      expect(data.creditScore).toEqual({
        level,
        id: d.id,
        companyId: d.company_id,
        vatCode: d.vat,
        taxCode: d.tax,
        companyName: d.organization_name,
        requestedAt: new Date(String(d.requested_at)).toISOString(),
        assessedAt: iso(d.time_stamp),
        score: 'GREEN',
        rawScore: d.risk_score,
        scoreDescription: d.risk_score_description ?? null,
        rating: d.rating ?? null,
        severity: d.risk_severity ?? null,
        creditLimit: d.operational_credit_limit ?? null,
        lastBalanceYear: null,
        note: null,
        history: null,
        positions: null,
        profiles: null,
      });
    }
  });

  it('IT-creditscore-top', async () => {
    const key = 'GET /IT-creditscore-top/{vatCode_taxCode_or_id}';
    const d = dataOf(key);
    const inner = d.data as Obj;
    const check = inner.credit_check as Obj;
    const history = inner.history as Obj;
    const positions = inner.positions as Obj;
    const profiles = inner.profiles as Obj;
    const { data } = await run<{ creditScore: Obj }>(serve(`GET /IT-creditscore-top/${VAT}`, key), `query($v: String!) { creditScore(vatCode: $v, level: TOP) { ${SCORE} } }`, {
      v: VAT,
    });
    expect(data.creditScore).toEqual({
      level: 'TOP',
      id: d.id,
      companyId: d.company_id,
      vatCode: d.vat,
      taxCode: d.tax,
      companyName: inner.organization_name,
      requestedAt: new Date(String(d.requested_at)).toISOString(),
      assessedAt: iso(d.time_stamp),
      score: 'GREEN',
      rawScore: check.risk_score,
      scoreDescription: check.risk_score_description,
      rating: check.rating,
      severity: null,
      creditLimit: check.operational_credit_limit,
      lastBalanceYear: inner.last_balance_year,
      note: inner.note,
      history: {
        note: (history.note as Obj).description,
        events: (history.note as Obj).events,
        scores: (history.risk_score as Obj[]).map((m) => ({ month: m.month, score: 'GREEN', rawScore: m.score, description: m.description })),
        ratings: (history.public_rating as Obj[]).map((m) => ({ month: m.month, rating: m.rating, balanceYear: m.balance_year })),
        creditLimits: history.operational_credit_limit,
      },
      positions: {
        year: positions.year,
        mainIndustry: positions.main_industry,
        positions: (positions.positions as Obj[]).map((p) => ({
          index: p.industry_index,
          profile: p.industry_index_profile,
          description: p.industry_position_description,
          value: p.value,
          position: p.industry_position,
          totalPosition: p.industry_position_total,
          lastYearTrend: p.industry_position_last_year_trend,
          type: p.industry_position_type,
        })),
      },
      profiles: {
        year: profiles.year,
        mainIndustry: profiles.main_industry,
        positionsCount: profiles.positions_count,
        profiles: (profiles.profiles as Obj[]).map((p) => ({ name: p.name, score: p.score, scoreDescription: p.score_description, trend: p.trend, note: p.note })),
      },
    });
  });
});

describe('vendor examples through the gateway: adverse records (IT-negativita, IT-richiesta)', () => {
  const NEG = `taxCodeOrVat kinds requestedAt completedAt outcome { code info } findings { code protests proceedings prejudicialEvents involvedInProceedings }
    cover { title text logoUrl }
    detail { hasPrejudicialEvents prejudicialEvents hasProceedings proceedings hasProtests protests }`;

  function expectNegative(out: Obj, rec: Obj): void {
    const soggetto = rec.soggetto as Obj | null;
    const neg = soggetto ? (soggetto.negativita as Obj) : null;
    expect(out).toMatchObject({
      taxCodeOrVat: rec.cf_piva,
      kinds: rec.tipo,
      requestedAt: sqlIso(rec.date_request),
      completedAt: sqlIso(rec.date_completion),
      outcome: rec.esito ? { code: (rec.esito as Obj).codice, info: (rec.esito as Obj).info } : null,
      findings: neg
        ? { code: soggetto?.code, protests: neg.protesti, proceedings: neg.procedure, prejudicialEvents: neg.pregiudizievoli, involvedInProceedings: neg.coinvoltoInProcedura }
        : null,
      cover: null,
    });
  }

  it('GET IT-richiesta (list)', async () => {
    const { data } = await run<{ riskRequests: Obj[] }>(
      serve('GET /IT-richiesta', 'GET /IT-richiesta'),
      `query { riskRequests(family: NEGATIVE_RECORDS) { ...Common } } ${COMMON}`,
    );
    expectListItems(data.riskRequests, dataOf('GET /IT-richiesta') as unknown as Obj[], 'COMPLETE');
  });

  it('POST IT-negativita', async () => {
    const rec = dataOf('POST /IT-negativita');
    const { data } = await run<{ orderNegativeRecordsCheck: Obj }>(
      serve('POST /IT-negativita', 'POST /IT-negativita'),
      `mutation { orderNegativeRecordsCheck(input: { taxCodeOrVat: "${CF}" }) { ...Common ... on NegativeRecordsRequest { ${NEG} } } } ${COMMON}`,
    );
    expectCommon(data.orderNegativeRecordsCheck, rec, 'PROCESSING');
    expectNegative(data.orderNegativeRecordsCheck, rec);
    expect(data.orderNegativeRecordsCheck.detail).toBeNull();
  });

  for (const name of ['PENDING', 'COMPLETED (with negativity detail)']) {
    it(`GET IT-richiesta/{id} #${name}`, async () => {
      const key = `GET /IT-richiesta/{id} #${name}`;
      const rec = dataOf(key);
      const { data, calls } = await run<{ riskRequest: Obj }>(
        serve(`GET /IT-richiesta/${String(rec.id)}`, key),
        `query($id: ID!) { riskRequest(family: NEGATIVE_RECORDS, id: $id) { ...Common ... on NegativeRecordsRequest { ${NEG} } } } ${COMMON}`,
        { id: rec.id },
      );
      // The detail is in the record when complete, so it costs no call.
      expect(calls).toEqual([`GET /IT-richiesta/${String(rec.id)}`]);
      expectCommon(data.riskRequest, rec, name === 'PENDING' ? 'PROCESSING' : 'COMPLETE');
      expectNegative(data.riskRequest, rec);
      const detail = (rec.soggetto as Obj | null)?.dettaglio_negativita as Obj | undefined;
      expect(data.riskRequest.detail).toEqual(
        detail
          ? {
              hasPrejudicialEvents: detail.presenzaPregiudizievoli,
              prejudicialEvents: detail.pregiudizievoli,
              hasProceedings: detail.presenzaProcedure,
              proceedings: detail.procedure,
              hasProtests: detail.presenzaProtesti,
              protests: detail.protesti,
            }
          : null,
      );
    });
  }

  for (const name of ['Presence of negativity', 'Absence of negativity']) {
    it(`GET IT-richiesta/{id} #COMPLETED + IT-negativita/{id}/dettaglio #${name}`, async () => {
      const rec = dataOf('GET /IT-richiesta/{id} #COMPLETED');
      const detailKey = `GET /IT-negativita/{id}/dettaglio #${name}`;
      const detail = dataOf(detailKey);
      const { data, calls } = await run<{ riskRequest: Obj }>(
        { ...serve(`GET /IT-richiesta/${String(rec.id)}`, 'GET /IT-richiesta/{id} #COMPLETED'), ...serve(`GET /IT-negativita/${String(rec.id)}/dettaglio`, detailKey) },
        `query($id: ID!) { riskRequest(family: NEGATIVE_RECORDS, id: $id) { ...Common ... on NegativeRecordsRequest { ${NEG} } } } ${COMMON}`,
        { id: rec.id },
      );
      expect(calls).toEqual([`GET /IT-richiesta/${String(rec.id)}`, `GET /IT-negativita/${String(rec.id)}/dettaglio`]);
      expectCommon(data.riskRequest, rec, 'COMPLETE');
      expectNegative(data.riskRequest, rec);
      expect(data.riskRequest.detail).toEqual({
        hasPrejudicialEvents: detail.presenzaPregiudizievoli,
        prejudicialEvents: detail.pregiudizievoli,
        hasProceedings: detail.presenzaProcedure,
        proceedings: detail.procedure,
        hasProtests: detail.presenzaProtesti,
        protests: detail.protesti,
      });
    });
  }
});

describe('vendor examples through the gateway: KYC', () => {
  const KYC = `kind evidences query { name firstName lastName birthDate entityType removeDeceased } ${ENTITY}`;
  const kinds: Array<[string, string]> = [
    ['full', 'FULL'],
    ['pep', 'PEP'],
    ['sanction_list', 'SANCTION_LIST'],
    ['adverse_media', 'ADVERSE_MEDIA'],
  ];
  for (const [type, kind] of kinds) {
    for (const name of ['COMPLETED', 'PENDING']) {
      it(`POST WW-kyc-${type} #${name}`, async () => {
        const key = `POST /WW-kyc-${type} #${name}`;
        const rec = dataOf(key);
        const { data } = await run<{ orderKycCheck: Obj }>(
          serve(`POST /WW-kyc-${type}`, key),
          `mutation { orderKycCheck(kind: ${kind}, input: { query: { firstName: "Jane", lastName: "Doe", birthDate: "1976-08-12" } }) { ...Common ... on KycRequest { ${KYC} } } } ${COMMON}`,
        );
        const out = data.orderKycCheck;
        expectCommon(out, rec, name === 'PENDING' ? 'PROCESSING' : 'COMPLETE');
        expect(out.kind).toBe(rec.type);
        expect(out.updatedAt).toBe(iso(rec.lastUpdateTimestamp));
        expect(out.evidences).toEqual(rec.evidences);
        expectKycQuery(out.query, rec.query as Obj);
        expectEntities(out.entities, rec.entities as Obj[]);
      });
    }
  }

  it('GET WW-kyc-evidences (list, split by kind)', async () => {
    const items = dataOf('GET /WW-kyc-evidences') as unknown as Obj[];
    for (const [type, family] of [
      ['full', 'KYC_FULL'],
      ['adverse_media', 'KYC_ADVERSE_MEDIA'],
      ['pep', 'KYC_PEP'],
    ]) {
      const { data } = await run<{ riskRequests: Obj[] }>(
        serve('GET /WW-kyc-evidences', 'GET /WW-kyc-evidences'),
        `query { riskRequests(family: ${family}) { ...Common } } ${COMMON}`,
      );
      expectListItems(
        data.riskRequests,
        items.filter((i) => i.type === type),
        'COMPLETE',
      );
    }
  });

  for (const name of ['PENDING', 'COMPLETED', 'COMPLETED (with evidences)']) {
    it(`GET WW-kyc-evidences/{id} #${name}`, async () => {
      const key = `GET /WW-kyc-evidences/{id} #${name}`;
      const rec = dataOf(key);
      const family = rec.type === 'full' ? 'KYC_FULL' : 'KYC_PEP';
      const { data } = await run<{ riskRequest: Obj }>(
        serve(`GET /WW-kyc-evidences/${String(rec.id)}`, key),
        `query($id: ID!) { riskRequest(family: ${family}, id: $id) { ...Common ... on KycRequest { ${KYC} } } } ${COMMON}`,
        { id: rec.id },
      );
      expectCommon(data.riskRequest, rec, name === 'PENDING' ? 'PROCESSING' : 'COMPLETE');
      expect(data.riskRequest.evidences).toEqual(rec.evidences);
      expectKycQuery(data.riskRequest.query, rec.query as Obj);
      expectEntities(data.riskRequest.entities, rec.entities as Obj[]);
    });
  }

  const MONITOR = `name kind autorenew expiresAt evidences query { name firstName lastName birthDate entityType removeDeceased } ${ENTITY}`;
  function expectMonitor(out: Obj, rec: Obj, state: string): void {
    expectCommon(out, rec, state);
    expect(out).toMatchObject({ name: rec.name, kind: rec.type, autorenew: rec.autorenew, expiresAt: iso(rec.expiryTimestamp), evidences: rec.evidences });
    expectKycQuery(out.query, rec.query as Obj);
    expectEntities(out.entities, rec.entities as Obj[]);
  }

  it('POST, GET list, GET one and DELETE WW-kyc-full-monitor', async () => {
    const created = dataOf('POST /WW-kyc-full-monitor');
    const start = await run<{ startKycMonitor: Obj }>(
      serve('POST /WW-kyc-full-monitor', 'POST /WW-kyc-full-monitor'),
      `mutation { startKycMonitor(input: { name: "monitoring name", query: { firstName: "Jane", lastName: "Doe" } }) { ...Common ... on KycMonitorRequest { ${MONITOR} } } } ${COMMON}`,
    );
    expectMonitor(start.data.startKycMonitor, created, 'ACTIVE');

    const list = await run<{ riskRequests: Obj[] }>(
      serve('GET /WW-kyc-full-monitor', 'GET /WW-kyc-full-monitor'),
      `query { riskRequests(family: KYC_MONITOR) { ...Common } } ${COMMON}`,
    );
    const items = dataOf('GET /WW-kyc-full-monitor') as unknown as Obj[];
    expect(list.data.riskRequests.map((r) => [r.id, r.state, r.rawState])).toEqual(items.map((i) => [i.id, i.state === 'DELETED' ? 'DELETED' : 'ACTIVE', i.state]));

    for (const name of ['ACTIVATED (no changes yet)', 'ACTIVATED (with changes)']) {
      const key = `GET /WW-kyc-full-monitor/{id} #${name}`;
      const rec = dataOf(key);
      const one = await run<{ riskRequest: Obj }>(
        serve(`GET /WW-kyc-full-monitor/${String(rec.id)}`, key),
        `query($id: ID!) { riskRequest(family: KYC_MONITOR, id: $id) { ...Common ... on KycMonitorRequest { ${MONITOR} } } } ${COMMON}`,
        { id: rec.id },
      );
      expectMonitor(one.data.riskRequest, rec, 'ACTIVE');
    }

    const deleted = dataOf('DELETE /WW-kyc-full-monitor/{id}');
    const stop = await run<{ stopKycMonitor: Obj }>(
      serve(`DELETE /WW-kyc-full-monitor/${String(deleted.id)}`, 'DELETE /WW-kyc-full-monitor/{id}'),
      `mutation($id: ID!) { stopKycMonitor(id: $id) { ...Common ... on KycMonitorRequest { ${MONITOR} } } } ${COMMON}`,
      { id: deleted.id },
    );
    expectMonitor(stop.data.stopKycMonitor, deleted, 'DELETED');
    expect(stop.data.stopKycMonitor.done).toBe(true);
  });
});

describe('coverage of the vendor examples', () => {
  it('every example in the fixture file went through the gateway', () => {
    const all = Object.keys(examples).filter((k) => !k.startsWith('_'));
    expect(all.filter((k) => !used.has(k))).toEqual([]);
  });
});
