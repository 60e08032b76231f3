/**
 * Istat's municipalities as `data/comuni.json` holds them (CC BY 3.0 IT, see `data/NOTICE.md`):
 * one reading of the file for every emulator area that needs Italian places (the postal area, the
 * company generator).
 */
import { readFileSync } from 'node:fs';

/** One municipality of the file. */
export interface ComuneRow {
  nome: string;
  codice: string;
  regione: { codice: string; nome: string };
  provincia: { codice: string; nome: string };
  sigla: string;
  codiceCatastale: string;
  cap: string[];
  popolazione: number;
}

let rows: ComuneRow[] | null = null;

/** The file's rows, read once per process. */
export function comuniRows(): ComuneRow[] {
  rows ??= JSON.parse(readFileSync(new URL('../data/comuni.json', import.meta.url), 'utf8')) as ComuneRow[];
  return rows;
}
