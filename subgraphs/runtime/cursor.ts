/**
 * Opaque cursors of offset-paged lists (`after` / `endCursor`): base64url of `<list>:<offset>`, so a
 * cursor of one list is refused by another.
 */
import { badUserInput } from './errors.ts';

/** The cursor that stands for `offset` in the list named `list`. */
export const offsetCursor = (list: string, offset: number): string => Buffer.from(`${list}:${offset}`).toString('base64url');

/** The offset a cursor of `list` stands for, 0 without one; `BAD_USER_INPUT` (`message`) for any other value. */
export function cursorOffset(list: string, after: string | null | undefined, message: string): number {
  if (after === null || after === undefined) return 0;
  const text = Buffer.from(after, 'base64url').toString('utf8');
  const prefix = `${list}:`;
  const digits = text.startsWith(prefix) ? text.slice(prefix.length) : '';
  if (!/^\d{1,7}$/.test(digits)) throw badUserInput(message, 'after');
  return Number(digits);
}
