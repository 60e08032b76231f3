/**
 * Scalars shared by the subgraphs. Bad input is refused with `BAD_USER_INPUT`, never read as null:
 * a filter that silently disappears (e.g. `since: "garbage"`) would return, or replay, everything.
 */
import { GraphQLError, GraphQLScalarType, Kind, print } from 'graphql';

/**
 * ISO 8601 / RFC 3339 date-time with a time zone: `2024-05-01T12:00:00Z`, `2024-05-01T14:00+02:00`,
 * optional seconds and fraction. No time zone (local time of which place?) and date-only are refused.
 */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|([+-])(\d{2}):?(\d{2}))$/i;

/** Milliseconds since the epoch of an ISO 8601 date-time with a time zone, or null. */
export function parseIsoDateTime(value: string): number | null {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // A day past the end of its month (2023-02-30) rolls over: refuse it instead.
  if (new Date(local).getUTCDate() !== day) return null;
  let offset = 0;
  if (m[8].toUpperCase() !== 'Z') {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const t = local - offset;
  return Number.isFinite(t) && Math.abs(t) <= 8.64e15 ? t : null;
}

const clip = (s: string): string => (s.length > 60 ? `${s.slice(0, 57)}…` : s);
/** A refused input as its error shows it: a string quoted and cut, a list or an object by its kind. */
function show(value: unknown): string {
  if (typeof value === 'string') return clip(JSON.stringify(value));
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value; // bigint, symbol, function: never parsed from a GraphQL input
}

/** `got` is the offending input, already rendered. */
function badDateTime(got: string): GraphQLError {
  return new GraphQLError(`DateTime must be an ISO 8601 date-time with a time zone, e.g. "2024-05-01T12:00:00Z" (got ${got})`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

function parseDateTimeInput(value: unknown): string {
  const t = typeof value === 'string' ? parseIsoDateTime(value) : null;
  if (t === null) throw badDateTime(show(value));
  return new Date(t).toISOString();
}

/**
 * `DateTime`: in, an ISO 8601 date-time with a time zone (anything else is `BAD_USER_INPUT`),
 * normalised to UTC (`2024-05-01T10:00:00.000Z`); out, a `Date` or such a string, in UTC.
 */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'An ISO 8601 date-time with a time zone, e.g. `2024-05-01T12:00:00Z`; returned in UTC.',
  serialize: (value) => {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    const t = typeof value === 'string' ? parseIsoDateTime(value) : null;
    if (t === null) throw new TypeError(`DateTime cannot represent ${show(value)}`);
    return new Date(t).toISOString();
  },
  parseValue: parseDateTimeInput,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw badDateTime(clip(print(ast)));
    return parseDateTimeInput(ast.value);
  },
});
