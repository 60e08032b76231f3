/**
 * The input rules every area shares (`subgraphs/runtime/validate.ts`): each returns the normalised
 * value or throws BAD_USER_INPUT naming the field, quoting the bad value cut short. Then through the
 * gateway: a VAT number means the same thing to the company and the risk areas, and a bad one costs
 * nothing in either.
 */
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeFiscalCode, makeItalianVat } from '../../../contract/checksums.ts';
import {
  companyFiscalCode,
  compactVat,
  echo,
  email,
  fiscalCode,
  httpUrl,
  isoDate,
  isoDateTime,
  italianCodeShape,
  MAX_ECHO_CHARS,
  openapiId,
  optionalText,
  pathId,
  personFiscalCode,
  requiredText,
  vatNumber,
  vatOrFiscalCode,
} from '../../../subgraphs/runtime/validate.ts';
import { companyCodeArg, vatCodeArg } from '../../../subgraphs/company/validate.ts';
import { negativeRecordsBody, vatNumber as riskVatNumber } from '../../../subgraphs/risk/validate.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const VAT = '03456781057';
const TYPED = 'IT 034.567.810.57';
const WRONG_CHECK = VAT.slice(0, 10) + String((Number(VAT[10]) + 1) % 10);
const CF = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1980-01-01', gender: 'M', cadastralCode: 'H501' });

/** The BAD_USER_INPUT error `fn` throws. */
function bad(fn: () => unknown): { message: string; field: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GraphQLError);
    const e = err as GraphQLError;
    expect(e.extensions.code).toBe('BAD_USER_INPUT');
    return { message: e.message, field: e.extensions.field };
  }
  throw new Error('expected BAD_USER_INPUT');
}

describe('echo', () => {
  it('cuts a bad value after MAX_ECHO_CHARS characters, never inside a surrogate pair', () => {
    expect(echo('x'.repeat(MAX_ECHO_CHARS))).toBe('x'.repeat(MAX_ECHO_CHARS));
    expect(echo('x'.repeat(MAX_ECHO_CHARS + 1))).toBe(`${'x'.repeat(MAX_ECHO_CHARS)}…`);
    expect(echo('😀'.repeat(MAX_ECHO_CHARS + 1))).toBe(`${'😀'.repeat(MAX_ECHO_CHARS)}…`);
  });

  it.each<[string, (v: string) => unknown]>([
    ['vatNumber', (v) => vatNumber(v)],
    ['fiscalCode', (v) => fiscalCode(v)],
    ['personFiscalCode', (v) => personFiscalCode(v)],
    ['openapiId', (v) => openapiId(v)],
    ['vatOrFiscalCode', (v) => vatOrFiscalCode(v, 'code')],
    ['pathId', (v) => pathId(`${v}/`)],
    ['isoDate', (v) => isoDate(v, 'd')],
    ['isoDateTime', (v) => isoDateTime(v, 'd')],
  ])('%s keeps a 200 KB value out of its message', (_name, fn) => {
    const { message } = bad(() => fn('9'.repeat(200_000)));
    expect(message.length).toBeLessThan(250);
  });
});

describe('VAT numbers: one rule in every area', () => {
  it('strips spaces, dots and an IT prefix (any case), then checks 11 digits and the check digit', () => {
    for (const typed of [VAT, TYPED, 'it03456781057', ' IT 03456781057 ', '034 567 810 57', '034.567.810.57', 'IT\t034.567.81057']) {
      expect(vatNumber(typed, 'vatCode')).toBe(VAT);
    }
    expect(compactVat(TYPED)).toBe(VAT);
    expect(vatNumber(makeItalianVat('0123456789'))).toHaveLength(11);
  });

  it('is the rule of the company and the risk areas alike', () => {
    expect(vatCodeArg(TYPED)).toBe(VAT);
    expect(riskVatNumber(TYPED, 'vatCode')).toBe(VAT);
    expect(companyCodeArg(TYPED, 'code')).toEqual({ vatCode: VAT });
    expect(negativeRecordsBody({ taxCodeOrVat: TYPED })).toEqual({ cf_piva: VAT });
  });

  it('refuses a wrong check digit, a wrong length, letters and all zeros, naming the field', () => {
    expect(bad(() => vatNumber(WRONG_CHECK, 'input.vatCode'))).toMatchObject({ field: 'input.vatCode', message: expect.stringMatching(/check digit/) });
    expect(bad(() => vatNumber('0345678105', 'vatCode')).message).toMatch(/^vatCode must be an Italian VAT number of 11 digits \(got "0345678105"\)$/);
    expect(bad(() => vatNumber('IT0345678105A')).field).toBe('vatCode');
    expect(bad(() => vatNumber('00000000000')).message).toMatch(/check digit/);
    expect(bad(() => vatNumber('FR03456781057')).message).toMatch(/11 digits/);
    expect(bad(() => vatNumber('  ')).message).toMatch(/required/);
    expect(bad(() => vatNumber(null)).message).toMatch(/required/);
  });
});

describe('fiscal codes', () => {
  it('reads person codes in any case and with spaces, and company codes as VAT-checked digits', () => {
    expect(personFiscalCode(CF.toLowerCase())).toBe(CF);
    expect(personFiscalCode(`${CF.slice(0, 6)} ${CF.slice(6)}`)).toBe(CF);
    expect(companyFiscalCode(VAT)).toBe(VAT);
    expect(fiscalCode(VAT)).toBe(VAT);
    expect(fiscalCode(CF)).toBe(CF);
  });

  it('refuses a wrong check letter, a wrong structure and the wrong form', () => {
    const wrong = CF.slice(0, 15) + (CF[15] === 'A' ? 'B' : 'A');
    expect(bad(() => personFiscalCode(wrong, 'input.taxCode'))).toMatchObject({ field: 'input.taxCode', message: expect.stringMatching(/not a valid fiscal code/) });
    expect(bad(() => personFiscalCode('RSSMRA', 'cf')).message).toMatch(/16 letters and digits/);
    expect(bad(() => personFiscalCode(VAT, 'cf')).message).toMatch(/16 letters and digits/);
    expect(bad(() => companyFiscalCode(CF)).message).toMatch(/11 digits/);
    expect(bad(() => companyFiscalCode(WRONG_CHECK)).message).toMatch(/check digit/);
    expect(bad(() => fiscalCode('12345')).message).toMatch(/11 digits \(company\) or 16 characters \(person\)/);
  });

  it('tells a VAT number from a person code by shape', () => {
    expect(italianCodeShape(TYPED)).toBe('vat');
    expect(italianCodeShape(CF.toLowerCase())).toBe('person');
    expect(italianCodeShape('6477280f496e98e849017aa7')).toBeNull();
    expect(vatOrFiscalCode(TYPED, 'c')).toEqual({ kind: 'vat', code: VAT });
    expect(vatOrFiscalCode(CF, 'c')).toEqual({ kind: 'person', code: CF });
    expect(bad(() => vatOrFiscalCode('ABC', 'c')).field).toBe('c');
  });
});

describe('upstream ids', () => {
  it('Openapi ids are 24 hexadecimal characters, lower-cased', () => {
    expect(openapiId(' 6477280F496E98E849017AA7 ')).toBe('6477280f496e98e849017aa7');
    expect(bad(() => openapiId('../etc/passwd')).message).toMatch(/^id must be an Openapi id of 24 hexadecimal characters/);
    expect(bad(() => openapiId('6477280f496e98e849017aa', 'monitorId', 'a monitor id')).message).toMatch(/^monitorId must be a monitor id/);
  });

  it('path ids hold no slash, no query and are not dot segments', () => {
    expect(pathId(' ACME Ltd. 123-4_5 ')).toBe('ACME Ltd. 123-4_5');
    for (const v of ['a/b', 'a?b', '..', '.', '', 'x'.repeat(65), 'a%2Fb']) expect(bad(() => pathId(v, 'id')).field).toBe('id');
  });
});

describe('URLs, e-mail, text', () => {
  it('URLs: absolute http(s), no credentials', () => {
    expect(httpUrl(' https://hooks.example.com/a b ', 'url')).toBe('https://hooks.example.com/a%20b');
    for (const v of ['ftp://x.example/', '/relative', 'javascript:alert(1)', 'https://u:p@x.example/', 'http://', '']) {
      expect(bad(() => httpUrl(v, 'input.callbackUrl')).field).toBe('input.callbackUrl');
    }
    expect(bad(() => httpUrl(`https://x.example/${'a'.repeat(3000)}`, 'u')).message).toMatch(/longer than/);
  });

  it('e-mail addresses', () => {
    expect(email(' a.b+c@example.co.uk ', 'e')).toBe('a.b+c@example.co.uk');
    for (const v of ['a@', 'a b@example.com', '@example.com', 'a@example', 'a@-example.com']) expect(bad(() => email(v, 'e')).field).toBe('e');
  });

  it('text: trimmed, required or optional, bounded, no control characters', () => {
    expect(requiredText('  x ', 'f')).toBe('x');
    expect(optionalText('   ', 'f')).toBeNull();
    expect(bad(() => requiredText('a\u0000b', 'f')).message).toMatch(/control/);
    expect(bad(() => requiredText('abc', 'f', 2)).message).toMatch(/longer than 2/);
  });
});

describe('dates', () => {
  it('days: YYYY-MM-DD that exist', () => {
    expect(isoDate('2024-02-29', 'd')).toBe('2024-02-29');
    for (const v of ['2023-02-29', '2024-13-01', '28/04/1990', '1990-4-28', '2024-02-29T00:00:00Z']) expect(bad(() => isoDate(v, 'd')).field).toBe('d');
  });

  it('date-times: ISO 8601, UTC without a zone, returned in UTC', () => {
    expect(isoDateTime('2024-05-01', 'd')).toBe('2024-05-01T00:00:00.000Z');
    expect(isoDateTime('2024-05-01T10:00', 'd')).toBe('2024-05-01T10:00:00.000Z');
    expect(isoDateTime('2024-05-01T10:00:00.5+02:00', 'd')).toBe('2024-05-01T08:00:00.500Z');
    expect(isoDateTime('2024-05-01T10:00:00+0200', 'd')).toBe('2024-05-01T08:00:00.000Z');
    for (const v of ['yesterday', 'May 1, 2024', '2024-05-01 10:00', '2023-02-30T00:00:00Z', '2024-05-01T25:00:00Z', '1714557600']) {
      expect(bad(() => isoDateTime(v, 'filter.createdAfter')).field).toBe('filter.createdAfter');
    }
  });
});

describe('through the gateway', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5' });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    await t.cold();
  });

  it('company(vatCode:) and creditScore(vatCode:) read "IT 034.567.810.57" alike', async () => {
    const res = await t.gql<{ company: { vatCode: string }; creditScore: { vatCode: string | null } }>(
      `query($v: String!) { company(vatCode: $v) { vatCode companyName } creditScore(vatCode: $v, level: START) { vatCode } }`,
      { v: TYPED },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.vatCode).toBe(VAT);
    expect(res.data?.creditScore.vatCode).toBe(VAT);
    expect((await t.calls('company')).map((c) => c.path)).toEqual([expect.stringMatching(new RegExp(`^/IT-[a-z]+/${VAT}$`))]);
    expect((await t.calls('risk')).map((c) => c.path)).toEqual([`/IT-creditscore-start/${VAT}`]);
  });

  it('a bad VAT number is BAD_USER_INPUT in both areas, with no upstream call', async () => {
    const typedWrong = `IT ${WRONG_CHECK.slice(0, 3)}.${WRONG_CHECK.slice(3)}`;
    const company = await t.gql(`query($v: String!) { company(vatCode: $v) { vatCode } }`, { v: typedWrong });
    const score = await t.gql(`query($v: String!) { creditScore(vatCode: $v, level: START) { vatCode } }`, { v: typedWrong });
    for (const res of [company, score]) {
      expect(res.errors?.map((e) => [e.extensions?.code, e.extensions?.field])).toEqual([['BAD_USER_INPUT', 'vatCode']]);
      expect(res.errors?.[0]?.message).toMatch(/check digit/);
      expect(res.extensions?.cost?.upstreamCalls ?? 0).toBe(0);
    }
    expect(await t.calls()).toEqual([]);
  });
});
