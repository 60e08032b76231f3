/**
 * FatturaPA 1.2 (the Italian e-invoice XML the invoicing area sends to the SDI), as the layer and
 * the emulator both read it: a parsed document summarised into what the suite works with (format,
 * routing, parties, document type, number, date, lines, VAT summaries, total). Parsed with
 * fast-xml-parser (never by hand); element names are the schema's (`FatturaElettronica`,
 * `CedentePrestatore`, …), namespace prefixes ignored. Nothing here imports the layer or the emulator.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** The two transmission formats: to private parties (FPR12) and to the public administration (FPA12). */
export type FatturaFormat = 'FPR12' | 'FPA12';

/** The FatturaPA namespace of version 1.2. */
export const FATTURAPA_NS = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2';

/** The document types (`TipoDocumento`) of FatturaPA 1.2 (TD01 invoice … TD28). */
export const DOCUMENT_TYPES = [
  'TD01', 'TD02', 'TD03', 'TD04', 'TD05', 'TD06', 'TD07', 'TD08', 'TD09', 'TD10', 'TD11', 'TD12',
  'TD16', 'TD17', 'TD18', 'TD19', 'TD20', 'TD21', 'TD22', 'TD23', 'TD24', 'TD25', 'TD26', 'TD27', 'TD28',
] as const;

/** VAT exemption natures (`Natura`) of a line or summary at 0 %. */
export const VAT_NATURES = ['N1', 'N2.1', 'N2.2', 'N3.1', 'N3.2', 'N3.3', 'N3.4', 'N3.5', 'N3.6', 'N4', 'N5', 'N6.1', 'N6.2', 'N6.3', 'N6.4', 'N6.5', 'N6.6', 'N6.7', 'N6.8', 'N6.9', 'N7'] as const;

/** The Italian VAT rates a line may carry (percent), 0 only with a nature. */
export const ITALIAN_VAT_RATES = [0, 4, 5, 10, 22] as const;

export interface FatturaParty {
  /** Country of the VAT number (`IdFiscaleIVA/IdPaese`). */
  country: string | null;
  vatNumber: string | null;
  fiscalCode: string | null;
  name: string | null;
  street: string | null;
  zip: string | null;
  city: string | null;
  province: string | null;
  /** Country of the address (`Sede/Nazione`). */
  addressCountry: string | null;
}

export interface FatturaLine {
  number: number;
  description: string;
  quantity: number;
  unitPrice: number;
  totalPrice: number;
  vatRate: number;
  nature: string | null;
}

export interface FatturaVatSummary {
  vatRate: number;
  nature: string | null;
  taxable: number;
  tax: number;
}

export interface FatturaSummary {
  format: FatturaFormat;
  /** `CodiceDestinatario` (7 characters to private parties, 6 to the PA; `0000000` with a PEC or none). */
  recipientCode: string | null;
  recipientPec: string | null;
  sender: FatturaParty;
  recipient: FatturaParty;
  documentType: string;
  currency: string;
  /** `YYYY-MM-DD`. */
  date: string;
  number: string;
  lines: FatturaLine[];
  vatSummaries: FatturaVatSummary[];
  /** `ImportoTotaleDocumento`, when given. */
  total: number | null;
}

export type FatturaRead = { ok: true; summary: FatturaSummary } | { ok: false; error: 'structure' | 'missing'; field: string };

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'DettaglioLinee' || name === 'DatiRiepilogo' || name === 'FatturaElettronicaBody',
});

class Missing extends Error {
  constructor(readonly field: string) {
    super(`missing ${field}`);
  }
}

function at(node: unknown, path: string): unknown {
  let cur: unknown = node;
  for (const seg of path.split('/')) {
    if (!isNode(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

function text(node: unknown, path: string): string | null {
  const v = at(node, path);
  if (typeof v === 'string') return v.trim() === '' ? null : v.trim();
  if (typeof v === 'number') return String(v);
  return null;
}

function need(node: unknown, path: string, field: string): string {
  const v = text(node, path);
  if (v === null) throw new Missing(field);
  return v;
}

function num(node: unknown, path: string, field: string): number {
  const v = need(node, path, field);
  const n = Number(v);
  if (!/^-?\d+(\.\d+)?$/.test(v) || !Number.isFinite(n)) throw new Missing(field);
  return n;
}

function party(node: unknown): FatturaParty {
  const anag = at(node, 'DatiAnagrafici');
  const denominazione = text(anag, 'Anagrafica/Denominazione');
  const person = [text(anag, 'Anagrafica/Nome'), text(anag, 'Anagrafica/Cognome')].filter((s): s is string => s !== null).join(' ');
  return {
    country: text(anag, 'IdFiscaleIVA/IdPaese'),
    vatNumber: text(anag, 'IdFiscaleIVA/IdCodice'),
    fiscalCode: text(anag, 'CodiceFiscale'),
    name: denominazione ?? (person === '' ? null : person),
    street: [text(node, 'Sede/Indirizzo'), text(node, 'Sede/NumeroCivico')].filter((s): s is string => s !== null).join(' ') || null,
    zip: text(node, 'Sede/CAP'),
    city: text(node, 'Sede/Comune'),
    province: text(node, 'Sede/Provincia'),
    addressCountry: text(node, 'Sede/Nazione'),
  };
}

/** Reads a FatturaPA 1.2 document: `structure` when it is no well-formed FatturaPA, `missing` naming the first required element absent. */
export function readFattura(xml: string): FatturaRead {
  if (typeof xml !== 'string' || xml.trim() === '' || XMLValidator.validate(xml) !== true) return { ok: false, error: 'structure', field: 'FatturaElettronica' };
  let doc: unknown;
  try {
    doc = parser.parse(xml);
  } catch {
    return { ok: false, error: 'structure', field: 'FatturaElettronica' };
  }
  const root = at(doc, 'FatturaElettronica');
  if (!isNode(root)) return { ok: false, error: 'structure', field: 'FatturaElettronica' };
  try {
    const header = at(root, 'FatturaElettronicaHeader');
    const bodies = at(root, 'FatturaElettronicaBody');
    const body: unknown = Array.isArray(bodies) ? bodies[0] : undefined;
    if (!isNode(header)) throw new Missing('FatturaElettronicaHeader');
    if (!isNode(body)) throw new Missing('FatturaElettronicaBody');
    const versione = typeof root['@versione'] === 'string' ? root['@versione'] : null;
    const formatText = text(header, 'DatiTrasmissione/FormatoTrasmissione') ?? versione;
    if (formatText !== 'FPR12' && formatText !== 'FPA12') throw new Missing('FormatoTrasmissione');
    const seller = at(header, 'CedentePrestatore');
    const buyer = at(header, 'CessionarioCommittente');
    if (!isNode(seller)) throw new Missing('CedentePrestatore');
    if (!isNode(buyer)) throw new Missing('CessionarioCommittente');
    const sender = party(seller);
    const recipient = party(buyer);
    if (sender.vatNumber === null) throw new Missing('CedentePrestatore/DatiAnagrafici/IdFiscaleIVA');
    if (recipient.vatNumber === null && recipient.fiscalCode === null) throw new Missing('CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA');
    const gen = at(body, 'DatiGenerali/DatiGeneraliDocumento');
    const documentType = need(gen, 'TipoDocumento', 'TipoDocumento');
    const currency = need(gen, 'Divisa', 'Divisa');
    const date = need(gen, 'Data', 'Data');
    const number = need(gen, 'Numero', 'Numero');
    const totalText = text(gen, 'ImportoTotaleDocumento');
    const rawLines = at(body, 'DatiBeniServizi/DettaglioLinee');
    if (!Array.isArray(rawLines) || rawLines.length === 0) throw new Missing('DettaglioLinee');
    const lines = rawLines.map((l, i): FatturaLine => ({
      number: Number(text(l, 'NumeroLinea') ?? i + 1),
      description: need(l, 'Descrizione', 'Descrizione'),
      quantity: text(l, 'Quantita') === null ? 1 : num(l, 'Quantita', 'Quantita'),
      unitPrice: num(l, 'PrezzoUnitario', 'PrezzoUnitario'),
      totalPrice: num(l, 'PrezzoTotale', 'PrezzoTotale'),
      vatRate: num(l, 'AliquotaIVA', 'AliquotaIVA'),
      nature: text(l, 'Natura'),
    }));
    const rawSummaries = at(body, 'DatiBeniServizi/DatiRiepilogo');
    if (!Array.isArray(rawSummaries) || rawSummaries.length === 0) throw new Missing('DatiRiepilogo');
    const vatSummaries = rawSummaries.map((s): FatturaVatSummary => ({
      vatRate: num(s, 'AliquotaIVA', 'AliquotaIVA'),
      nature: text(s, 'Natura'),
      taxable: num(s, 'ImponibileImporto', 'ImponibileImporto'),
      tax: num(s, 'Imposta', 'Imposta'),
    }));
    return {
      ok: true,
      summary: {
        format: formatText,
        recipientCode: text(header, 'DatiTrasmissione/CodiceDestinatario'),
        recipientPec: text(header, 'DatiTrasmissione/PECDestinatario'),
        sender,
        recipient,
        documentType,
        currency,
        date,
        number,
        lines,
        vatSummaries,
        total: totalText === null ? null : Number(totalText),
      },
    };
  } catch (err) {
    if (err instanceof Missing) return { ok: false, error: 'missing', field: err.field };
    throw err;
  }
}

/** Rounds to cents (FatturaPA amounts carry two decimals). */
export const cents = (n: number): number => Math.round((n + Number.EPSILON) * 100) / 100;

/** The document's total from its VAT summaries (taxable plus tax). */
export const totalOfSummaries = (s: readonly FatturaVatSummary[]): number => cents(s.reduce((sum, r) => sum + r.taxable + r.tax, 0));
