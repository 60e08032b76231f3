import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { makeItalianVat } from '../../../contract/checksums.ts';
import {
  anyFiscalCode,
  base64Pdf,
  email,
  isoDate,
  kycQuery,
  negativeRecordsBody,
  personBureauBody,
  personFiscalCode,
  personSubjectBody,
  relayTarget,
  requestId,
  vatNumber,
} from '../../../subgraphs/risk/validate.ts';
import { awaitsUpstream, callbackOf, normaliseState, riskScoreOf, timestampsOf, toCreditScore, toDateTime } from '../../../subgraphs/risk/model.ts';
import { deliveryNonce, recordOfPayload } from '../../../subgraphs/risk/callbacks.ts';
import { MemoryRequestStore } from '../../../subgraphs/risk/store.ts';
import { RiskPoller } from '../../../subgraphs/risk/poller.ts';
import type { PersonBureauInput } from '../../../subgraphs/risk/__generated__/resolvers-types.ts';
import { bureauInput, CF, PDF } from '../../support/risk.ts';

const VAT = '12485671007';

/** The code and field of the BAD_USER_INPUT error `fn` throws. */
function badInput(fn: () => unknown): { code: unknown; field: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof GraphQLError) return { code: err.extensions.code, field: err.extensions.field, message: err.message };
    throw err;
  }
  throw new Error('expected BAD_USER_INPUT');
}

const future = (years: number): string => `${new Date().getUTCFullYear() + years}-01-31`;

describe('identifier validation', () => {
  it('accepts valid fiscal codes and VAT numbers, normalised', () => {
    expect(personFiscalCode(CF.toLowerCase(), 'cf')).toBe(CF);
    expect(vatNumber(`IT ${VAT}`, 'vat')).toBe(VAT);
    expect(anyFiscalCode(VAT, 'x')).toBe(VAT);
    expect(anyFiscalCode(CF, 'x')).toBe(CF);
  });

  it('refuses a fiscal code with a wrong check character', () => {
    const wrong = CF.slice(0, 15) + (CF[15] === 'A' ? 'B' : 'A');
    expect(badInput(() => personFiscalCode(wrong, 'input.taxCode'))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.taxCode' });
    expect(badInput(() => personFiscalCode('RSSMRA', 'cf')).code).toBe('BAD_USER_INPUT');
    expect(badInput(() => personFiscalCode('   ', 'cf')).message).toMatch(/required/);
  });

  it('refuses a VAT number with a wrong check digit', () => {
    const wrong = VAT.slice(0, 10) + String((Number(VAT[10]) + 1) % 10);
    expect(badInput(() => vatNumber(wrong, 'vatCode')).field).toBe('vatCode');
    expect(vatNumber(makeItalianVat('0123456789'), 'v')).toHaveLength(11);
  });

  it('checks request ids', () => {
    expect(requestId('6477280F496E98E849017AA7')).toBe('6477280f496e98e849017aa7');
    expect(badInput(() => requestId('../etc/passwd')).field).toBe('id');
  });
});

describe('values', () => {
  it('checks e-mails and dates', () => {
    expect(email('a.b@example.co.uk', 'e')).toBe('a.b@example.co.uk');
    for (const bad of ['a@', 'a b@example.com', '@example.com', 'a@example']) expect(badInput(() => email(bad, 'e')).code).toBe('BAD_USER_INPUT');
    expect(isoDate('2024-02-29', 'd')).toBe('2024-02-29');
    for (const bad of ['2023-02-29', '2024-13-01', '28/04/1990', '1990-4-28']) expect(badInput(() => isoDate(bad, 'd')).code).toBe('BAD_USER_INPUT');
  });

  it('accepts base64 PDFs (plain, data URL, with line breaks)', () => {
    expect(base64Pdf(PDF, 'f')).toBe(PDF);
    expect(base64Pdf(`data:application/pdf;base64,${PDF}`, 'f')).toBe(PDF);
    expect(base64Pdf(PDF.replace(/(.{16})/g, '$1\n'), 'f')).toBe(PDF);
  });

  it('refuses non-PDF files, bad base64 and oversized files', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]).toString('base64');
    expect(badInput(() => base64Pdf(png, 'input.document.file'))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.document.file' });
    expect(badInput(() => base64Pdf('not base64 at all!', 'f')).message).toMatch(/base64/);
    expect(badInput(() => base64Pdf(`data:image/png;base64,${PDF}`, 'f')).message).toMatch(/PDF/);
    expect(badInput(() => base64Pdf('', 'f')).message).toMatch(/required/);
    const big = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2048)]).toString('base64');
    expect(badInput(() => base64Pdf(big, 'f', 1024)).message).toMatch(/larger/);
  });
});

describe('callbacks given by the caller', () => {
  it('builds a relay target', () => {
    expect(relayTarget({ url: 'https://me.example/hook', method: 'POST', field: 'payload', headers: [{ name: 'X-Session', value: 'abc' }], retry: 2 }, 'cb')).toEqual({
      url: 'https://me.example/hook',
      method: 'POST',
      field: 'payload',
      headers: { 'X-Session': 'abc' },
      retry: 2,
    });
    expect(relayTarget(null, 'cb')).toBeNull();
  });

  it('refuses bad URLs, header injection and reserved headers', () => {
    expect(badInput(() => relayTarget({ url: 'ftp://x/y' }, 'cb')).field).toBe('cb.url');
    expect(badInput(() => relayTarget({ url: '/relative' }, 'cb')).field).toBe('cb.url');
    expect(badInput(() => relayTarget({ url: 'https://u:p@x.example/' }, 'cb')).field).toBe('cb.url');
    expect(badInput(() => relayTarget({ url: 'https://x.example/', headers: [{ name: 'X-A', value: 'a\r\nB: c' }] }, 'cb')).field).toBe('cb.headers[0].value');
    expect(badInput(() => relayTarget({ url: 'https://x.example/', headers: [{ name: 'Host', value: 'evil' }] }, 'cb')).field).toBe('cb.headers[0].name');
    expect(badInput(() => relayTarget({ url: 'https://x.example/', retry: 9 }, 'cb')).field).toBe('cb.retry');
  });
});

describe('request bodies', () => {
  it('builds the person bureau body in the vendor spelling', () => {
    const body = personBureauBody(bureauInput());
    expect(body).toMatchObject({
      first_name: 'Mario',
      fiscal_code: CF,
      gender: 'M',
      birth_province: 'TR',
      residence_postal_code: '05100',
      document_type: 'IDENTITY_CARD',
      document_file: PDF,
      health_insurance_card_file: PDF,
    });
    expect(body).not.toHaveProperty('callback');
  });

  it('names the field of each bureau input error', () => {
    const cases: Array<[Partial<PersonBureauInput>, string]> = [
      [{ taxCode: 'RSSMRA90D28L117X' }, 'input.taxCode'],
      [{ email: 'nope' }, 'input.email'],
      [{ birthDate: '1990-02-30' }, 'input.birthDate'],
      [{ birthDate: future(1) }, 'input.birthDate'],
      [{ firstName: '  ' }, 'input.firstName'],
      [{ healthInsuranceCardFile: Buffer.from('hello').toString('base64') }, 'input.healthInsuranceCardFile'],
      [{ residence: { address: 'Via X', streetNumber: '1', city: 'Roma', postalCode: '123', province: 'RM', country: 'Italia' } }, 'input.residence.postalCode'],
    ];
    for (const [over, field] of cases) expect(badInput(() => personBureauBody(bureauInput(over))).field).toBe(field);
    const doc = bureauInput().document;
    expect(badInput(() => personBureauBody(bureauInput({ document: { ...doc, expirationDate: '2019-01-01' } }))).field).toBe('input.document.expirationDate');
    expect(badInput(() => personBureauBody(bureauInput({ document: { ...doc, file: 'JVBERi0' } }))).field).toBe('input.document.file');
  });

  it('builds person report and adverse records bodies', () => {
    expect(personSubjectBody({ name: 'Mario', surname: 'Rossi', taxCode: CF, pdf: { title: 'T', logoUrl: 'https://x.example/l.png' } })).toEqual({
      name: 'Mario',
      surname: 'Rossi',
      taxCode: CF,
      titlePdf: 'T',
      logoPdf: 'https://x.example/l.png',
    });
    expect(negativeRecordsBody({ taxCodeOrVat: `IT${VAT}`, pdf: { text: 'footer' } })).toEqual({ cf_piva: VAT, text_pdf: 'footer' });
    expect(badInput(() => negativeRecordsBody({ taxCodeOrVat: '12345678901' })).field).toBe('input.taxCodeOrVat');
  });

  it('needs a name or first and last name for KYC', () => {
    expect(kycQuery({ firstName: 'Jane', lastName: 'Doe', birthDate: '1976-08-12T00:00:00.000Z', entityType: 'I' }, 'q')).toEqual({
      firstName: 'Jane',
      lastName: 'Doe',
      birthDate: '1976-08-12T00:00:00.000Z',
      entityType: 'I',
    });
    expect(badInput(() => kycQuery({ firstName: 'Jane' }, 'input.query')).field).toBe('input.query');
  });
});

describe('model', () => {
  it('maps risk colours in both spellings', () => {
    const pairs: Array<[string, string]> = [
      ['VERDE', 'GREEN'],
      ['GREEN', 'GREEN'],
      ['VERDE CHIARO', 'LIGHT_GREEN'],
      ['light green', 'LIGHT_GREEN'],
      ['VERDE SCURO', 'DARK_GREEN'],
      ['GIALLO', 'YELLOW'],
      ['ROSSO', 'RED'],
      ['ROSSO VIVO', 'BRIGHT_RED'],
      ['BRIGHT_RED', 'BRIGHT_RED'],
      ['ROSSO SCURO', 'DARK_RED'],
      ['DARK RED', 'DARK_RED'],
      ['GRIGIO', 'GREY'],
      ['GRAY', 'GREY'],
    ];
    for (const [raw, en] of pairs) expect(riskScoreOf(raw)).toBe(en);
    expect(riskScoreOf('BLU')).toBeNull();
  });

  it('normalises a top credit score', () => {
    const s = toCreditScore('TOP', {
      company_id: 'c1',
      data: {
        credit_check: { operational_credit_limit: 82000, rating: 'B1', risk_score: 'ROSSO SCURO', risk_score_description: 'alto' },
        history: {
          note: { description: 'stabile', events: [] },
          risk_score: [{ month: '2024-01', score: 'VERDE', description: 'd' }],
          public_rating: [],
          operational_credit_limit: [{ month: '2024-01', value: 82000 }],
        },
        last_balance_year: '2022',
        positions: { year: '2022', main_industry: 'Informatica', positions: [{ value: 1.5, industry_index: 'A5004', industry_position_last_year_trend: -0.1 }] },
        profiles: { positions_count: 10, profiles: [{ name: 'Equilibrio', score: 4 }] },
      },
      vat: VAT,
      time_stamp: 1718274842,
    });
    expect(s).toMatchObject({
      level: 'TOP',
      score: 'DARK_RED',
      rawScore: 'ROSSO SCURO',
      rating: 'B1',
      creditLimit: 82000,
      lastBalanceYear: '2022',
      vatCode: VAT,
      assessedAt: '2024-06-13T10:34:02.000Z',
    });
    expect(s.history?.scores[0]).toEqual({ month: '2024-01', score: 'GREEN', rawScore: 'VERDE', description: 'd' });
    expect(s.positions?.positions[0]).toMatchObject({ index: 'A5004', value: 1.5, lastYearTrend: -0.1 });
    expect(s.profiles).toMatchObject({ positionsCount: 10, profiles: [{ name: 'Equilibrio', score: 4 }] });
  });

  it('reads states, timestamps and callbacks in every spelling', () => {
    expect(['processing', 'PENDING', 'in_progress', 'complete', 'COMPLETED', 'ACTIVATED', 'DELETED', 'weird'].map(normaliseState)).toEqual([
      'PROCESSING',
      'PROCESSING',
      'IN_PROGRESS',
      'COMPLETE',
      'COMPLETE',
      'ACTIVE',
      'DELETED',
      'UNKNOWN',
    ]);
    expect(timestampsOf({ creation_timestamp: 10, last_update_timestamp: 20 })).toEqual({ createdAt: 10, updatedAt: 20 });
    expect(timestampsOf({ creationTimestamp: 10, lastUpdateTimestamp: 30 })).toEqual({ createdAt: 10, updatedAt: 30 });
    expect(timestampsOf({ timestamp: 1747411531, date_completion: '2025-05-16 18:10:10' })).toEqual({ createdAt: 1747411531, updatedAt: 1747419010 });
    expect(toDateTime('2025-05-16 18:10:10')).toBe('2025-05-16T18:10:10.000Z');
    expect(callbackOf({ url: 'https://x/', method: 'POST', field: 'data', headers: { session_id: 's' } })).toEqual({
      url: 'https://x/',
      method: 'POST',
      field: 'data',
      headers: [{ name: 'session_id', value: 's' }],
      retry: 0,
    });
    expect(callbackOf({ method: 'JSON' })).toBeNull();
  });

  it('polls only states that wait for the upstream', () => {
    expect(awaitsUpstream('PersonBureauRequest', 'processing')).toBe(false);
    expect(awaitsUpstream('PersonBureauRequest', 'in_progress')).toBe(true);
    expect(awaitsUpstream('PatrimonialRequest', 'processing')).toBe(true);
    expect(awaitsUpstream('NegativeRecordsRequest', 'PENDING')).toBe(true);
    expect(awaitsUpstream('KycMonitorRequest', 'ACTIVATED')).toBe(false);
    expect(awaitsUpstream('PatrimonialRequest', 'complete')).toBe(false);
  });
});

describe('callback payloads', () => {
  const record = { id: 'aaaaaaaaaaaaaaaaaaaaaaaa', state: 'complete', lastUpdateTimestamp: 5 };

  it('finds the record in JSON envelopes, bare records and forms', () => {
    const env = Buffer.from(JSON.stringify({ data: record, success: true, message: '', error: null }));
    expect(recordOfPayload('application/json', env)).toEqual(record);
    expect(recordOfPayload('application/json', Buffer.from(JSON.stringify({ data: { data: record } })))).toEqual(record);
    expect(recordOfPayload('application/json', Buffer.from(JSON.stringify(record)))).toEqual(record);
    const form = Buffer.from(new URLSearchParams({ data: JSON.stringify({ data: record }) }).toString());
    expect(recordOfPayload('application/x-www-form-urlencoded', form)).toEqual(record);
    const other = Buffer.from(new URLSearchParams({ payload: JSON.stringify({ data: record }) }).toString());
    expect(recordOfPayload('application/x-www-form-urlencoded; charset=utf-8', other)).toEqual(record);
  });

  it('finds nothing in junk', () => {
    expect(recordOfPayload('application/json', Buffer.from('not json'))).toBeNull();
    expect(recordOfPayload('application/json', Buffer.from('{"data":{"id":1}}'))).toBeNull();
  });

  it('names a delivery by id, state and time', () => {
    expect(deliveryNonce(record)).toBe('aaaaaaaaaaaaaaaaaaaaaaaa|complete|5');
  });
});

describe('status store', () => {
  const id = 'bbbbbbbbbbbbbbbbbbbbbbbb';

  it('keeps tenants apart and moves only forward', async () => {
    const store = new MemoryRequestStore();
    const a = await store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creation_timestamp: 10, last_update_timestamp: 10 });
    expect(a).toMatchObject({ changed: true, entry: { seq: 1, rawState: 'processing' } });
    expect(await store.get('B', id)).toBeUndefined();
    const same = await store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creationTimestamp: 10, lastUpdateTimestamp: 10, namePdf: `${id}.pdf` });
    expect(same.changed).toBe(false);
    expect(same.entry.record.namePdf).toBe(`${id}.pdf`);
    const done = await store.observe('A', 'PATRIMONIAL', { id, state: 'complete', lastUpdateTimestamp: 20 });
    expect(done).toMatchObject({ changed: true, entry: { seq: 2, rawState: 'complete', updatedAt: 20 } });
    const stale = await store.observe('A', 'PATRIMONIAL', { id, state: 'processing', lastUpdateTimestamp: 10 });
    expect(stale).toMatchObject({ changed: false, entry: { rawState: 'complete', seq: 2 } });
    expect(await store.unfinished()).toEqual([]);
  });

  it('reserves callback keys and binds them once', async () => {
    const store = new MemoryRequestStore();
    const expiresAt = Math.floor(Date.now() / 1000) + 60;
    await store.reserve({ key: 'k', tenant: 'A', family: 'PERSON_BUREAU', id: null, relay: null, expiresAt, token: 't' });
    await store.bindKey('k', id);
    await store.bindKey('k', 'cccccccccccccccccccccccc');
    expect(await store.reservation('k')).toMatchObject({ tenant: 'A', id });
    await store.reserve({ key: 'old', tenant: 'A', family: 'PERSON_BUREAU', id: null, relay: null, expiresAt: 1, token: 't' });
    expect(await store.reservation('old')).toBeUndefined();
  });

  it('relays a delivery once', async () => {
    const store = new MemoryRequestStore();
    await store.observe('A', 'PATRIMONIAL', { id, state: 'complete' });
    expect(await store.markRelayed('A', id, 'n')).toBe(true);
    expect(await store.markRelayed('A', id, 'n')).toBe(false);
  });
});

describe('poller budget', () => {
  it('reads late requests within the per-minute budget, least recently checked first', async () => {
    let now = 1_000_000;
    const store = new MemoryRequestStore({ now: () => now });
    for (let i = 0; i < 5; i++) await store.observe('A', 'PATRIMONIAL', { id: `${i}`.repeat(24), state: 'processing', creation_timestamp: 1 });
    await store.observe('A', 'PERSON_BUREAU', { id: 'f'.repeat(24), state: 'processing', creation_timestamp: 1 });
    const read: string[] = [];
    const poller = new RiskPoller(
      {
        unfinished: () => store.unfinished(),
        refresh: async (e) => {
          read.push(e.id);
          await store.markChecked(e.tenant, e.id, now);
        },
        markChecked: (e, at) => store.markChecked(e.tenant, e.id, at),
      },
      { lateAfterMs: 1000, maxCallsPerMinute: 3, now: () => now },
    );
    await poller.tick();
    expect(read).toEqual([]);
    now += 1000;
    await poller.tick();
    expect(read).toHaveLength(3);
    expect(read).not.toContain('f'.repeat(24));
    now += 1000;
    await poller.tick();
    expect(read).toHaveLength(3);
    now += 60_000;
    await poller.tick();
    expect(read).toHaveLength(6);
    expect(new Set(read).size).toBe(5);
    expect(poller.polled).toBe(6);
  });
});
