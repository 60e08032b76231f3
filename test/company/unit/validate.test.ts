/**
 * Bad input is named in the error, but never echoed back at length: a value longer than
 * `MAX_ECHO_CHARS` is cut, so a 200 KB argument does not come back as a 200 KB message.
 */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DateTimeScalar } from '../../../subgraphs/runtime/scalars.ts';
import { codeArg, companyCodeArg, countryArg, echo, MAX_ECHO_CHARS, openapiIdArg, taxCodeArg, vatCodeArg } from '../../../subgraphs/company/validate.ts';

const HUGE = '9'.repeat(200_000);

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GraphQLError);
    return (err as GraphQLError).message;
  }
  throw new Error('no error thrown');
}

describe('echoed input', () => {
  it('is cut after MAX_ECHO_CHARS characters', () => {
    expect(echo('12485671008')).toBe('12485671008');
    expect(echo('x'.repeat(MAX_ECHO_CHARS))).toBe('x'.repeat(MAX_ECHO_CHARS));
    expect(echo('x'.repeat(MAX_ECHO_CHARS + 1))).toBe(`${'x'.repeat(MAX_ECHO_CHARS)}…`);
    // characters, not UTF-16 units: a pair is never cut in half
    expect(echo('😀'.repeat(MAX_ECHO_CHARS))).toBe('😀'.repeat(MAX_ECHO_CHARS));
    expect(echo('😀'.repeat(MAX_ECHO_CHARS + 5))).toBe(`${'😀'.repeat(MAX_ECHO_CHARS)}…`);
  });

  it.each<[string, () => unknown]>([
    ['vatCodeArg (length)', () => vatCodeArg(HUGE)],
    ['vatCodeArg (letters)', () => vatCodeArg(`${HUGE}A`)],
    ['taxCodeArg', () => taxCodeArg(HUGE)],
    ['openapiIdArg', () => openapiIdArg(HUGE)],
    ['companyCodeArg', () => companyCodeArg(HUGE, 'code')],
    ['countryArg', () => countryArg(HUGE)],
    ['codeArg', () => codeArg(HUGE, 'code', /^[A-Z]{2}$/, 'two letters')],
    ['DateTime input', () => DateTimeScalar.parseValue(HUGE)],
  ])('%s keeps a 200 KB value out of its message', (_name, fn) => {
    const message = messageOf(fn);
    expect(message.length).toBeLessThan(250);
    expect(message).toContain(`${'9'.repeat(MAX_ECHO_CHARS - 1)}…`);
  });

  it('still quotes short bad values whole', () => {
    expect(messageOf(() => vatCodeArg('12485671008'))).toContain('"12485671008"');
    expect(messageOf(() => countryArg('ITA'))).toContain('"ITA"');
  });
});
