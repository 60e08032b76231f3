/**
 * Who may use the account API (the `account` fields and the token mutations): an operator, who sends
 * the key configured in `OPENAPI_ACCOUNT_API_KEY` as the `x-openapi-account-key` header (compared in
 * constant time; the gateway forwards that header to the account subgraph only).
 *
 * - `OPENAPI_ACCOUNT_API=off`: the fields answer `FORBIDDEN`, whatever the key.
 * - `OPENAPI_ACCOUNT_API_KEY` set (16 characters at least): the header must carry it, else
 *   `UNAUTHENTICATED`; nothing is called upstream.
 * - No key: `FORBIDDEN` naming the variable, except with the emulator's built-in account
 *   (`OPENAPI_ENV=emulator` and neither `OPENAPI_EMAIL` nor `OPENAPI_APIKEY` set, as `npm start`
 *   runs it): nothing real is at stake there, so the fields answer without a key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { forbidden } from '../runtime/errors.ts';
import { SETTINGS_SCHEMA, settingsOf, type SettingsSource } from '../../platform/settings.ts';

/**
 * The request header carrying the operator's key: a credential of the caller besides
 * `Authorization`. The area's descriptor lists it in `forwardedHeaders`, so the gateway forwards it
 * to this subgraph only and counts it in the caller's session.
 */
export const ACCOUNT_KEY_HEADER = 'x-openapi-account-key';

/** The shortest key accepted. */
export const MIN_ACCOUNT_KEY_LENGTH: number = SETTINGS_SCHEMA.OPENAPI_ACCOUNT_API_KEY.minLength;

export type AccountAccess = { mode: 'off' } | { mode: 'open' } | { mode: 'key'; key: string } | { mode: 'unconfigured' };

/** The account API's access rule, from the environment (throws on a key too short to be one). */
export function accountAccess(source: SettingsSource): AccountAccess {
  const env = settingsOf(source);
  if (!env.OPENAPI_ACCOUNT_API) return { mode: 'off' };
  // At least MIN_ACCOUNT_KEY_LENGTH characters (`platform/settings.ts` refuses a shorter key).
  const key = env.OPENAPI_ACCOUNT_API_KEY;
  if (key) return { mode: 'key', key };
  const emulator = env.OPENAPI_ENV === 'emulator';
  const builtIn = !env.OPENAPI_EMAIL && !env.OPENAPI_APIKEY;
  return emulator && builtIn ? { mode: 'open' } : { mode: 'unconfigured' };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Whether `given` is the key (constant time in the key's content: both are hashed first). */
export function keyMatches(key: string, given: string | null | undefined): boolean {
  if (typeof given !== 'string' || given === '') return false;
  return timingSafeEqual(digest(key), digest(given.trim()));
}

/** Throws unless the request may use the account API (before any upstream call). */
export function checkAccess(access: AccountAccess, header: string | null | undefined): void {
  switch (access.mode) {
    case 'open':
      return;
    case 'off':
      throw forbidden('the account API is off (OPENAPI_ACCOUNT_API=off)');
    case 'unconfigured':
      throw forbidden(`the account API needs an operator key: set OPENAPI_ACCOUNT_API_KEY and send it as the ${ACCOUNT_KEY_HEADER} header`);
    case 'key':
      if (!keyMatches(access.key, header)) {
        throw new GraphQLError(`the account API needs the operator key in the ${ACCOUNT_KEY_HEADER} header`, { extensions: { code: 'UNAUTHENTICATED' } });
      }
  }
}
