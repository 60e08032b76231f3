/**
 * KYC evidence per entity and the bureau delegation's readiness, through the gateway against the
 * emulator: evidences as data (one free call per entity, none once the request holds them), the
 * dossier PDF and the photos as signed `/files/risk/…` URLs streamed with the media type the
 * service chooses by, and the delegation form that answers "not ready" until it exists. Completion
 * and time are moved with the emulator's control API (timing 0 = only `advance` completes).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { bureauInput } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ RISK_RELAY_ALLOW_PRIVATE: '1' });
  await t.control('risk/timing', { completeAfterMs: 0 });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.clearCalls();
});

async function gql(query: string, variables?: Obj): Promise<Obj> {
  const res = await t.gql<Obj>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as Obj;
}

const riskCalls = async (): Promise<string[]> => (await t.calls('risk')).map((c) => `${c.method} ${c.path} ${c.status}`);

async function download(url: string): Promise<{ status: number; bytes: Buffer; type: string; json: Obj | null }> {
  const res = await request(url);
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const type = String(res.headers['content-type'] ?? '');
  return { status: res.statusCode, bytes, type, json: type.includes('json') ? (JSON.parse(bytes.toString('utf8')) as Obj) : null };
}

const ORDER = `mutation($kind: KycKind!, $first: String!, $last: String!) { orderKycCheck(kind: $kind, input: { query: { firstName: $first, lastName: $last } }) { id state } }`;
const FILE = 'url contentType fileName expiresAt';
const ENTITIES = (family: string): string => `query($id: ID!) { riskRequest(family: ${family}, id: $id) { state ... on KycRequest {
  entities { id photos locations { city country type } evidences { sources lists datasets publicationDates rationales { subject status location { city country } locations { city country type } } } evidenceReport { ${FILE} } photoFiles { ${FILE} } } } } }`;

/** A completed check of `kind` that found at least one entity (about half of the subjects match one). */
async function completedCheck(kind: string): Promise<string> {
  for (let i = 0; i < 40; i++) {
    const { orderKycCheck: order } = (await gql(ORDER, { kind, first: 'Giulia', last: `Verdi${kind}${i}` })) as { orderKycCheck: Obj };
    const id = String(order.id);
    await t.control('risk/advance', { id });
    const rec = await request(`${t.stack.emulatorUrl}/risk/WW-kyc-evidences/${id}`, { headers: { authorization: 'Bearer emulator-token' } });
    const data = ((await rec.body.json()) as { data: { entities: unknown[] } }).data;
    if (data.entities.length > 0) return id;
  }
  throw new Error(`no ${kind} subject matched an entity`);
}

describe('KYC evidence per entity', () => {
  it('a FULL check: evidences read once per entity, the dossier PDF and the photos through signed URLs', async () => {
    const id = await completedCheck('FULL');
    await t.clearCalls();
    const read = await t.gql<{ riskRequest: { state: string; entities: Obj[] } }>(ENTITIES('KYC_FULL'), { id });
    expect(read.errors, JSON.stringify(read.errors)).toBeUndefined();
    const req = read.data!.riskRequest;
    expect(req.state).toBe('COMPLETE');
    expect(req.entities.length).toBeGreaterThan(0);
    // Reading the request and each entity's evidences: free calls, one each.
    expect(read.extensions?.cost).toMatchObject({ upstreamCalls: 1 + req.entities.length, euro: 0 });
    const calls = await riskCalls();
    expect(calls[0]).toBe(`GET /WW-kyc-evidences/${id} 200`);
    expect(calls.slice(1).sort()).toEqual(req.entities.map((e) => `GET /WW-kyc-evidences/${id}/${String(e.id)} 200`).sort());

    for (const e of req.entities) {
      const evidences = e.evidences as Obj[];
      expect(evidences.length).toBeGreaterThan(0);
      expect(evidences[0]).toMatchObject({ sources: [expect.any(String)], datasets: [expect.stringMatching(/^(pep|sanction_list|adverse_media)$/)] });
      expect((evidences[0].rationales as Obj[])[0]).toMatchObject({ subject: expect.any(String), location: { country: 'ITA' } });
      // Every location of every rationale is typed, not only the first: the entity's own, then where it happened.
      const places = e.locations as Obj[];
      expect(places.length).toBeGreaterThan(0);
      for (const rationale of evidences.flatMap((ev) => ev.rationales as Obj[])) {
        const all = rationale.locations as Obj[];
        expect(all).toEqual([...places, { city: places[0].city, country: 'ITA', type: 'rationale_place' }]);
        expect(rationale.location).toEqual({ city: all[0].city, country: all[0].country });
      }
      const report = e.evidenceReport as Obj;
      expect(report).toMatchObject({ contentType: 'application/pdf', fileName: `${id}_${String(e.id)}.pdf` });
      expect(String(report.url)).toMatch(new RegExp(`^${t.url}/files/risk/`));
      const photos = e.photos as string[];
      expect((e.photoFiles as Obj[]).map((f) => [f.contentType, f.fileName])).toEqual(photos.map((p) => ['image/jpeg', p]));
    }

    // The files: streamed from the service, asked for with the media type it chooses by.
    await t.clearCalls();
    const withPhoto = req.entities.find((e) => (e.photos as string[]).length > 0);
    const pdf = await download(String((req.entities[0].evidenceReport as Obj).url));
    expect([pdf.status, pdf.type, pdf.bytes.subarray(0, 5).toString('latin1')]).toEqual([200, 'application/pdf', '%PDF-']);
    const expected = [`GET /WW-kyc-evidences/${id}/${String(req.entities[0].id)} 200`];
    if (withPhoto) {
      const photo = (withPhoto.photos as string[])[0];
      const jpeg = await download(String((withPhoto.photoFiles as Obj[])[0].url));
      expect([jpeg.status, jpeg.type, jpeg.bytes.subarray(0, 3).toString('hex')]).toEqual([200, 'image/jpeg', 'ffd8ff']);
      // The emulator's call log keeps the path without its query (`?photo=<photo>`): the JPEG proves it arrived.
      expect(photo).toMatch(/\.jpg$/);
      expected.push(`GET /WW-kyc-evidences/${id}/${String(withPhoto.id)} 200`);
    }
    expect(await riskCalls()).toEqual(expected);

    // The request now holds the evidences it was asked for: read again, no per-entity call.
    await t.clearCalls();
    const again = (await gql(`query($id: ID!) { riskRequest(family: KYC_FULL, id: $id) { ... on KycRequest { entities { id evidences { sources } } } } }`, { id })) as {
      riskRequest: { entities: Obj[] };
    };
    expect(again.riskRequest.entities.map((e) => e.evidences)).toEqual(req.entities.map((e) => (e.evidences as Obj[]).map((x) => ({ sources: x.sources }))));
    expect(await riskCalls()).toEqual([`GET /WW-kyc-evidences/${id} 200`]);
  });

  it('a PEP check: evidences as data, no PDF and no photos (the service serves them for FULL checks only)', async () => {
    const id = await completedCheck('PEP');
    await t.clearCalls();
    const { riskRequest: req } = (await gql(ENTITIES('KYC_PEP'), { id })) as { riskRequest: { entities: Obj[] } };
    for (const e of req.entities) {
      expect(e).toMatchObject({ photos: [], evidenceReport: null, photoFiles: [] });
      expect((e.evidences as Obj[])[0]).toMatchObject({ datasets: ['pep'] });
    }
    const calls = await riskCalls();
    expect(calls.slice(1).sort()).toEqual(req.entities.map((e) => `GET /WW-kyc-evidences/${id}/${String(e.id)} 200`).sort());
  });

  it('a check still PENDING has no entities to read: no evidence call', async () => {
    const { orderKycCheck: order } = (await gql(ORDER, { kind: 'FULL', first: 'Anna', last: 'Neri' })) as { orderKycCheck: Obj };
    await t.clearCalls();
    const { riskRequest: req } = (await gql(ENTITIES('KYC_FULL'), { id: order.id })) as { riskRequest: Obj };
    expect(req).toEqual({ state: 'PROCESSING', entities: [] });
    expect(await riskCalls()).toEqual([`GET /WW-kyc-evidences/${String(order.id)} 200`]);
  });
});

describe('bureau delegation form', () => {
  it('is "not ready yet" until the service has prepared it, then the PDF', async () => {
    await t.control('risk/timing', { delegationAfterMs: 60_000 });
    try {
      const { orderPersonBureauReport: order } = (await gql(
        `mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { id delegationFileName delegationForm { url } } }`,
        {
          input: bureauInput(),
        },
      )) as { orderPersonBureauReport: Obj };
      expect(order.delegationFileName).toBeNull();
      const url = String((order.delegationForm as Obj).url);
      await t.clearCalls();
      const early = await download(url);
      expect([early.status, early.json]).toEqual([
        409,
        { error: 'the document is not ready yet', upstream: { status: 406, error: 303, message: 'the delegation has not yet been created' } },
      ]);
      await t.control('clock', { advanceMs: 60_000 });
      const ready = await download(url);
      expect([ready.status, ready.type, ready.bytes.subarray(0, 5).toString('latin1')]).toEqual([200, 'application/pdf', '%PDF-']);
      expect(await riskCalls()).toEqual([`GET /IT-bureau-persona/${String(order.id)}/delega 406`, `GET /IT-bureau-persona/${String(order.id)}/delega 200`]);
      const read = (await gql(`query($id: ID!) { riskRequest(family: PERSON_BUREAU, id: $id) { ... on PersonBureauRequest { delegationFileName } } }`, { id: order.id })) as {
        riskRequest: Obj;
      };
      expect(read.riskRequest.delegationFileName).toBe(`${String(order.id)}_delega.pdf`);
    } finally {
      await t.control('risk/timing', { delegationAfterMs: 0 });
    }
  });

  it('an unknown well-formed request id is not found (the service answers 404, not "Wrong id")', async () => {
    const res = await gql(`{ riskRequest(family: PERSON_BUREAU, id: "0123456789abcdef01234567") { id } }`);
    expect(res).toEqual({ riskRequest: null });
    expect(await riskCalls()).toEqual(['GET /IT-bureau-persona/0123456789abcdef01234567 404']);
  });
});
