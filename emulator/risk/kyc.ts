/**
 * Worldwide KYC: `POST /WW-kyc-full|pep|sanction_list|adverse_media` (query body → `PENDING`,
 * `COMPLETED` with `entities` after `completeAfterMs` / `advance`, callback fired),
 * `GET /WW-kyc-evidences[/{id}[/{entity_id}]]` (the last returns the entity's evidences as JSON,
 * or, on a `full` request, the evidence PDF or a photo as JPEG: the vendor chooses by the request's
 * `Content-Type` header, `application/pdf` or `image/jpeg` with `?photo=`; without one, an `Accept`
 * that prefers one of them counts), and the full monitoring
 * `/WW-kyc-full-monitor` (POST → `PENDING` → `ACTIVATED`; GET list, GET `/{id}`, DELETE `/{id}`
 * → `DELETED`). Error numbers are the vendor's, per endpoint.
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import type { PendingWork, RiskContext } from './jobs.ts';
import type { StoredCallback } from './util.ts';
import { bodyOf, bump, isIsoDate, pick, readRiskCallback, rng, str } from './util.ts';
import { isObj } from '../../contract/values.ts';

export type KycType = 'full' | 'pep' | 'sanction_list' | 'adverse_media';
const TYPES: KycType[] = ['full', 'pep', 'sanction_list', 'adverse_media'];
const ENTITY_TYPES = ['I', 'L', 'W', 'VE', 'AC', 'NA'];

/** [query required (428), query not an object (406), query empty (400)] per endpoint. */
const QUERY_ERRORS: Record<KycType | 'monitor', [number, number, number]> = {
  full: [611, 612, 613],
  pep: [618, 619, 620],
  sanction_list: [621, 622, 623],
  adverse_media: [624, 625, 626],
  monitor: [633, 634, 635],
};

export interface KycQuery {
  name: string | null;
  firstName: string | null;
  lastName: string | null;
  birthDate: string | null;
  entityType: string | null;
  removeDeceased: boolean | null;
}

type KycState = 'PENDING' | 'COMPLETED' | 'ACTIVATED' | 'DELETED';

interface KycRecord {
  id: string;
  owner: string;
  type: KycType;
  monitor: boolean;
  name: string | null;
  autorenew: boolean;
  query: KycQuery;
  callback: StoredCallback | null;
  evidences: Array<{ results: unknown[]; id: string }>;
  entities: Array<Record<string, unknown>>;
  state: KycState;
  created: number;
  updated: number;
  expiry: number;
}

/** Validates `body.query` with the endpoint's error numbers. */
export function parseQuery(body: Record<string, unknown>, errors: [number, number, number]): KycQuery | EmuResponse {
  const q = body.query;
  if (q === undefined || q === null) return fail(428, errors[0], 'query required');
  if (!isObj(q)) return fail(406, errors[1], 'query not valid, must be an object');
  if (Object.keys(q).length === 0) return fail(400, errors[2], 'query is empty');
  const name = str(q.name) ?? null;
  const firstName = str(q.firstName) ?? null;
  const lastName = str(q.lastName) ?? null;
  if (name === null) {
    if (firstName === null && lastName === null) return fail(428, 800, 'name or firstName/lastName combination required');
    if (firstName === null) return fail(428, 801, 'firstName required');
    if (lastName === null) return fail(428, 802, 'lastName required');
  }
  let birthDate: string | null = null;
  const rawDate = str(q.birthDate);
  if (rawDate !== undefined) {
    // The vendor's own example sends `1976-08-12T00:00:00.000Z`: a time part is tolerated and dropped.
    const day = rawDate.slice(0, 10);
    if (!isIsoDate(day) || !/^(|T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)$/.test(rawDate.slice(10))) {
      return fail(406, 803, 'birthDate not valid, must be YYYY-MM-DD');
    }
    birthDate = day;
  }
  const entityType = str(q.entityType) ?? null;
  if (entityType !== null && !ENTITY_TYPES.includes(entityType)) {
    return fail(406, 612, 'entityType not valid, must be one of: I, L, W, VE, AC, NA');
  }
  const removeDeceased = typeof q.removeDeceased === 'boolean' ? q.removeDeceased : null;
  return { name, firstName, lastName, birthDate, entityType, removeDeceased };
}

const title = (s: string): string => s.toLowerCase().replace(/(^|[\s'-])\p{L}/gu, (m) => m.toUpperCase());

const CITIES: Array<[string, string, string]> = [
  ['Roma', 'Lazio', 'Via del Corso'],
  ['Milano', 'Lombardy', 'Corso Buenos Aires'],
  ['Napoli', 'Campania', 'Via Toledo'],
  ['Torino', 'Piedmont', 'Via Garibaldi'],
  ['Palermo', 'Sicily', 'Via Maqueda'],
];

/** The entities a query matches: a pure function of the subject (about half match nobody). */
export function entitiesOf(query: KycQuery, type: KycType): Array<Record<string, unknown>> {
  const full = title(query.name ?? `${query.firstName ?? ''} ${query.lastName ?? ''}`.trim());
  const r = rng(`kyc:${full.toLowerCase()}|${query.birthDate ?? ''}`);
  const count = r() < 0.5 ? 0 : 1 + Math.floor(r() * 2);
  const parts = full.split(' ');
  const first = query.firstName ? title(query.firstName) : parts.slice(0, -1).join(' ') || full;
  const last = query.lastName ? title(query.lastName) : parts.length > 1 ? (parts[parts.length - 1] ?? '') : '';
  const entityType = query.entityType ?? 'I';
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < count; i++) {
    const [city, region, street] = pick(r, CITIES);
    const person = entityType === 'I';
    const year = query.birthDate ? Number(query.birthDate.slice(0, 4)) : 1940 + Math.floor(r() * 60);
    const month = query.birthDate ? Number(query.birthDate.slice(5, 7)) : 1 + Math.floor(r() * 12);
    const day = query.birthDate ? Number(query.birthDate.slice(8, 10)) : 1 + Math.floor(r() * 28);
    const updated = `${2022 + Math.floor(r() * 3)}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}`;
    out.push({
      id: `EA${1000000 + Math.floor(r() * 8999999)}`,
      entity_type: entityType,
      recaps: [{ lang: 'en', recap: `${full}, ${person ? 'born' : 'registered'} in ${city} (${region}).` }],
      names: [{ title: '', first_name: first, last_name: last, full_name: full, primary: true, native: false }],
      gender: person ? pick(r, ['M', 'F']) : 'NA',
      birth_dates: person ? [{ day, month, year, inferred: query.birthDate === null }] : [],
      death_dates: [],
      locations: [{ address: `${street}, ${city}`, country: 'ITA', city, street, region, type: person ? 'residency' : 'legal_address' }],
      nationalities: person ? ['Italian'] : [],
      codes: [],
      // Individuals found by a full check carry one photo, as the vendor's example does.
      photos: person && type === 'full' ? [`DIDA${1000000 + Math.floor(r() * 8999999)}.jpg`] : [],
      organization_details: null,
      last_update: type === 'full' ? { pep: updated, adverse_media: updated, sanction_list: updated } : { [type]: updated },
    });
  }
  return out;
}

const DATASET_TEXT: Record<Exclude<KycType, 'full'>, { source: string; list: string; subject: string; details: string; status: string }> = {
  pep: {
    source: 'Camera dei Deputati',
    list: 'Italian Local Politicians',
    subject: 'Politically exposed person',
    details: 'Holds or has held a public office.',
    status: 'Current',
  },
  sanction_list: {
    source: 'EU Consolidated Financial Sanctions List',
    list: 'EU Sanctions',
    subject: 'Sanctions',
    details: 'Listed under restrictive measures.',
    status: 'Listed',
  },
  adverse_media: {
    source: 'Il Sole 24 Ore',
    list: 'Adverse Media',
    subject: 'Financial crimes',
    details: 'Mentioned in press coverage of an investigation.',
    status: 'Allegations/Investigations',
  },
};

/** The evidence results of an entity (what `GET /WW-kyc-evidences/{id}/{entity}` returns). */
function evidenceOf(entity: Record<string, unknown>, type: KycType): unknown[] {
  const entityId = String(entity.id);
  const r = rng(`evidence:${entityId}:${type}`);
  const dataset: Exclude<KycType, 'full'> = type === 'full' ? pick(r, ['pep', 'sanction_list', 'adverse_media'] as const) : type;
  const t = DATASET_TEXT[dataset];
  // The vendor's `rationales[].locations` is a list: every place of the entity, then where the
  // listed fact happened (a `rationale_place`).
  const known = Array.isArray(entity.locations) ? entity.locations.filter(isObj) : [];
  const place = known[0];
  const locations: unknown[] = [...known, ...(place ? [{ ...place, address: place.city, street: '', type: 'rationale_place' }] : [])];
  const date = `${10 + Math.floor(r() * 18)}.0${1 + Math.floor(r() * 9)}.${2015 + Math.floor(r() * 9)}`;
  return [
    {
      source: [t.source],
      list: [t.list],
      list_description: '',
      datasets: [dataset],
      publication_date: [date],
      organization: [],
      rationales: [
        {
          subject: t.subject,
          details: t.details,
          offence: '',
          inquiry: '',
          facts: '',
          status: t.status,
          date_start: date,
          date_end: '',
          links: [],
          locations,
        },
      ],
    },
  ];
}

function requestView(rec: KycRecord): Record<string, unknown> {
  if (rec.monitor) {
    return {
      name: rec.name,
      query: rec.query,
      callback: rec.callback,
      type: rec.type,
      autorenew: rec.autorenew,
      evidences: rec.evidences,
      creationTimestamp: rec.created,
      lastUpdateTimestamp: rec.updated,
      expiryTimestamp: rec.expiry,
      state: rec.state,
      entities: rec.entities,
      id: rec.id,
    };
  }
  return {
    query: rec.query,
    callback: rec.callback,
    type: rec.type,
    evidences: rec.evidences,
    creationTimestamp: rec.created,
    lastUpdateTimestamp: rec.updated,
    state: rec.state,
    entities: rec.entities,
    id: rec.id,
  };
}

const listItem = (rec: KycRecord): Record<string, unknown> => ({
  type: rec.type,
  creationTimestamp: rec.created,
  lastUpdateTimestamp: rec.updated,
  state: rec.state,
  id: rec.id,
});

const TEN_DAYS = 10 * 24 * 3600;

/** A 1×1 baseline-free JPEG (SOI … EOI), the photo every emulated entity photo downloads as. */
const PHOTO_JPEG = Buffer.from(
  'ffd8ffe000104a46494600010101004800480000ffdb004300030202020202030202020303030304060404040404080606050609080a0a090809090a0c0f0c0a0b0e0b09090d110d0e0f101011100a0c12131210130f101010ffc9000b080001000101011100ffcc000600101005ffda0008010100003f00d2cf20ffd9',
  'hex',
);

type EvidenceFormat = 'json' | 'pdf' | 'jpeg';

/**
 * What `GET /WW-kyc-evidences/{id}/{entity_id}` answers with: the vendor documents the request's
 * `Content-Type` (`application/pdf`, `image/jpeg`); without one, the `Accept` type with the highest
 * weight among JSON, PDF and JPEG (JSON on a tie, so a client accepting everything gets JSON).
 */
export function evidenceFormat(headers: Record<string, string | string[] | undefined>): EvidenceFormat {
  const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(',') : (v ?? '')).toLowerCase();
  const ct = one(headers['content-type']);
  if (ct.includes('image/jpeg')) return 'jpeg';
  if (ct.includes('application/pdf')) return 'pdf';
  if (ct.includes('application/json')) return 'json';
  const weights: Record<EvidenceFormat, number> = { json: 0, pdf: 0, jpeg: 0 };
  for (const part of one(headers.accept).split(',')) {
    const [type = '', ...params] = part.split(';').map((x) => x.trim());
    const qp = params.find((x) => x.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    if (!Number.isFinite(q)) continue;
    const targets: EvidenceFormat[] =
      type === 'application/json' || type === 'application/*'
        ? ['json']
        : type === 'application/pdf'
          ? ['pdf']
          : type === 'image/jpeg' || type === 'image/*'
            ? ['jpeg']
            : type === '*/*'
              ? ['json', 'pdf', 'jpeg']
              : [];
    for (const t of targets) weights[t] = Math.max(weights[t], q);
  }
  if (weights.pdf > weights.json && weights.pdf >= weights.jpeg) return 'pdf';
  if (weights.jpeg > weights.json) return 'jpeg';
  return 'json';
}

export function kycRoutes(ctx: RiskContext): Route[] {
  const records = new Map<string, KycRecord>();
  ctx.onReset(() => records.clear());

  const work = (rec: KycRecord): PendingWork => ({
    id: rec.id,
    complete: () => {
      rec.state = rec.monitor ? 'ACTIVATED' : 'COMPLETED';
      rec.entities = entitiesOf(rec.query, rec.type);
      rec.updated = bump(rec.updated, ctx.nowSeconds());
    },
    view: () => requestView(rec),
    callback: () => rec.callback,
  });

  // A monitoring "change" (control monitorEvent): the evidences of the first entity appear.
  ctx.onMonitorEvent(async (id) => {
    const rec = records.get(id);
    if (!rec || !rec.monitor || rec.state !== 'ACTIVATED') return false;
    if (rec.entities.length === 0) rec.entities = entitiesOf({ ...rec.query, birthDate: rec.query.birthDate ?? '1970-01-01' }, 'full');
    const first = rec.entities[0];
    if (first && !rec.evidences.some((e) => e.id === first.id)) rec.evidences.push({ results: evidenceOf(first, 'full'), id: String(first.id) });
    rec.updated = bump(rec.updated, ctx.nowSeconds());
    await ctx.jobs.notify(work(rec));
    return true;
  });

  const family = (monitor: boolean): string => (monitor ? 'kyc-monitor' : 'kyc');
  /** [406 id not valid, 404 not found] with the endpoint's numbers and texts. */
  const find = (req: EmuRequest, id: string, monitor: boolean, errors: [number, number]): KycRecord | EmuResponse => {
    const seen = ctx.jobs.lookup(id, req.token.owner, family(monitor));
    if (seen === 'malformed') return fail(406, errors[0], 'id not valid');
    const rec = records.get(id.toLowerCase());
    if (seen !== 'ok' || !rec) return fail(404, errors[1], `no ${monitor ? 'monitoring' : 'request'} matches this id: ${id}`);
    return rec;
  };
  const isRecord = (v: KycRecord | EmuResponse): v is KycRecord => 'entities' in v;

  const create = (req: EmuRequest, type: KycType, monitor: boolean): EmuResponse => {
    const body = bodyOf(req);
    let name: string | null = null;
    if (monitor) {
      name = str(body.name) ?? null;
      if (name === null) return fail(428, 632, 'name required');
    }
    const query = parseQuery(body, QUERY_ERRORS[monitor ? 'monitor' : type]);
    if ('status' in query) return query;
    const cb = readRiskCallback(body, 'standard');
    if ('error' in cb) return cb.error;
    const callback = cb.callback;
    const now = ctx.nowSeconds();
    const rec: KycRecord = {
      id: hexId(),
      owner: req.token.owner,
      type,
      monitor,
      name,
      autorenew: typeof body.autorenew === 'boolean' ? body.autorenew : true,
      query,
      callback,
      evidences: [],
      entities: [],
      state: 'PENDING',
      created: now,
      updated: now,
      expiry: now + 365 * 24 * 3600,
    };
    records.set(rec.id, rec);
    ctx.jobs.register(rec.id, rec.owner, family(monitor));
    ctx.jobs.arm(work(rec));
    return ok(requestView(rec));
  };

  const mine = (req: EmuRequest, monitor: boolean): KycRecord[] => [...records.values()].filter((r) => r.owner === req.token.owner && r.monitor === monitor);

  const routes: Route[] = TYPES.map((type) => ({
    method: 'POST' as const,
    pattern: `/WW-kyc-${type}`,
    handler: (req: EmuRequest) => create(req, type, false),
  }));

  routes.push(
    {
      method: 'GET',
      pattern: '/WW-kyc-evidences',
      handler: (req) => {
        const list = mine(req, false);
        return list.length === 0 ? fail(404, 600, 'no requests related to your account') : ok(list.map(listItem));
      },
    },
    {
      method: 'GET',
      pattern: '/WW-kyc-evidences/:id',
      handler: (req, p) => {
        const rec = find(req, p.id ?? '', false, [601, 602]);
        return isRecord(rec) ? ok(requestView(rec)) : rec;
      },
    },
    {
      method: 'GET',
      pattern: '/WW-kyc-evidences/:id/:entity',
      handler: (req, p) => {
        const rec = find(req, p.id ?? '', false, [601, 602]);
        if (!isRecord(rec)) return rec;
        if (rec.state === 'PENDING') return fail(422, 603, 'the request is still in PENDING state');
        if (rec.entities.length === 0) return fail(422, 604, 'the request did not produce any entities to choose from');
        const entityId = p.entity ?? '';
        const entity = rec.entities.find((e) => e.id === entityId);
        if (!entity) return fail(404, 605, `entity ${entityId} not present in entities`);
        const wants = evidenceFormat(req.headers);
        const expired = ctx.nowSeconds() - rec.created > TEN_DAYS;
        if (wants === 'jpeg') {
          if (rec.type !== 'full') return fail(422, 608, "operation not permitted, JPG can only be downloaded on requests of type 'full'");
          if (expired) return fail(422, 627, 'operation not permitted, 10-day limit for requesting jpg exceeded');
          const photo = req.query.get('photo');
          if (!photo) return fail(428, 609, 'photo required');
          const photos = Array.isArray(entity.photos) ? entity.photos : [];
          if (!photos.includes(photo)) return fail(404, 610, `photo ${photo} not present in ${entityId} entitiy`);
          return { status: 200, body: PHOTO_JPEG, contentType: 'image/jpeg', headers: { 'content-disposition': `attachment; filename="${photo}"` } };
        }
        const results = evidenceOf(entity, rec.type);
        if (wants === 'pdf') {
          if (rec.type !== 'full') return fail(422, 607, "operation not permitted, PDF can only be downloaded on requests of type 'full'");
          if (expired) return fail(422, 606, 'operation not permitted, 10-day limit for requesting pdf exceeded');
          const names = Array.isArray(entity.names) && isObj(entity.names[0]) ? String(entity.names[0].full_name) : entityId;
          const pdf = renderPdf(`KYC evidences - ${names}`, [
            `Request ${rec.id} (${rec.type}) of ${rec.owner}`,
            `Entity ${entityId}`,
            '',
            ...results.flatMap((res) => {
              const o = isObj(res) ? res : {};
              const rat = Array.isArray(o.rationales) && isObj(o.rationales[0]) ? o.rationales[0] : {};
              return [
                `Source: ${String(o.source)} - list: ${String(o.list)} - published ${String(o.publication_date)}`,
                `${String(rat.subject)}: ${String(rat.details)} (${String(rat.status)})`,
              ];
            }),
          ]);
          return { status: 200, body: pdf, contentType: 'application/pdf', headers: { 'content-disposition': `attachment; filename="${rec.id}_${entityId}.pdf"` } };
        }
        if (expired) return fail(422, 628, 'operation not permitted, 10-day limit for requesting evidences exceeded');
        if (!rec.evidences.some((e) => e.id === entityId)) {
          rec.evidences.push({ results, id: entityId });
          rec.updated = bump(rec.updated, ctx.nowSeconds());
        }
        return ok(results);
      },
    },
    { method: 'POST', pattern: '/WW-kyc-full-monitor', handler: (req) => create(req, 'full', true) },
    {
      method: 'GET',
      pattern: '/WW-kyc-full-monitor',
      handler: (req) => {
        const list = mine(req, true);
        return list.length === 0 ? fail(404, 629, 'no monitoring related to your account') : ok(list.map(listItem));
      },
    },
    {
      method: 'GET',
      pattern: '/WW-kyc-full-monitor/:id',
      handler: (req, p) => {
        const rec = find(req, p.id ?? '', true, [630, 631]);
        return isRecord(rec) ? ok(requestView(rec)) : rec;
      },
    },
    {
      method: 'DELETE',
      pattern: '/WW-kyc-full-monitor/:id',
      handler: (req, p) => {
        const rec = find(req, p.id ?? '', true, [637, 638]);
        if (!isRecord(rec)) return rec;
        if (rec.state === 'DELETED') return fail(422, 639, 'you have already deleted this monitoring');
        if (rec.state !== 'ACTIVATED') return fail(422, 640, "you can only delete 'ACTIVATED' monitoring");
        rec.state = 'DELETED';
        rec.updated = bump(rec.updated, ctx.nowSeconds());
        return ok(requestView(rec));
      },
    },
    { method: 'DELETE', pattern: '/WW-kyc-full-monitor', handler: () => fail(428, 636, 'id required') },
  );
  return routes;
}
