/**
 * FatturaPA 1.2 (the Italian e-invoice XML the invoicing area sends to the SDI), as the layer and
 * the emulator both read it: a parsed document summarised into what the suite works with (format,
 * routing, parties, document type, number, date, lines, VAT summaries, total) and the totals
 * computed from it as FatturaPA defines them (discounts and surcharges, the pension fund's
 * contribution, roundings: `lineTotalOf`, `expectedSummaries`, `documentTotalOf`). Parsed with
 * fast-xml-parser (never by hand); element names are the schema's (`FatturaElettronica`,
 * `CedentePrestatore`, …), namespace prefixes ignored. Nothing here imports the layer or the emulator.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { EU_VAT_COUNTRIES, vatPrefixOf } from './eu.ts';
import { isObj } from './values.ts';

/** The two transmission formats: to private parties (FPR12) and to the public administration (FPA12). */
export type FatturaFormat = 'FPR12' | 'FPA12';

/** The FatturaPA namespace of version 1.2. */
export const FATTURAPA_NS = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2';

/** The document types (`TipoDocumento`) of FatturaPA 1.2 (TD01 invoice … TD28). */
export const DOCUMENT_TYPES = [
  'TD01',
  'TD02',
  'TD03',
  'TD04',
  'TD05',
  'TD06',
  'TD07',
  'TD08',
  'TD09',
  'TD10',
  'TD11',
  'TD12',
  'TD16',
  'TD17',
  'TD18',
  'TD19',
  'TD20',
  'TD21',
  'TD22',
  'TD23',
  'TD24',
  'TD25',
  'TD26',
  'TD27',
  'TD28',
] as const;

/** VAT exemption natures (`Natura`) of a line or summary at 0 %. */
export const VAT_NATURES = [
  'N1',
  'N2.1',
  'N2.2',
  'N3.1',
  'N3.2',
  'N3.3',
  'N3.4',
  'N3.5',
  'N3.6',
  'N4',
  'N5',
  'N6.1',
  'N6.2',
  'N6.3',
  'N6.4',
  'N6.5',
  'N6.6',
  'N6.7',
  'N6.8',
  'N6.9',
  'N7',
] as const;

/** Tax regimes of the seller (`RegimeFiscale`): RF01 ordinary … RF20 (RF03 was withdrawn). */
export const TAX_REGIMES = [
  'RF01',
  'RF02',
  'RF04',
  'RF05',
  'RF06',
  'RF07',
  'RF08',
  'RF09',
  'RF10',
  'RF11',
  'RF12',
  'RF13',
  'RF14',
  'RF15',
  'RF16',
  'RF17',
  'RF18',
  'RF19',
  'RF20',
] as const;

/** When the VAT of a summary is due (`EsigibilitaIVA`): I immediate, D deferred, S split payment. */
export const VAT_DUE = ['I', 'D', 'S'] as const;

/** Self-invoices the buyer issues (TD16–TD20: reverse-charge integrations and regularisation): the company is `CessionarioCommittente`. */
export const BUYER_ISSUED_TYPES = ['TD16', 'TD17', 'TD18', 'TD19', 'TD20'] as const;

/** A self-invoice the buyer issues (TD16–TD20)? */
export const isBuyerIssued = (documentType: string): boolean => (BUYER_ISSUED_TYPES as readonly string[]).includes(documentType);

/**
 * Where goods come from within the EU other than Italy (TD18's supplier is there): the member states
 * and Northern Ireland (XI), inside the EU's rules for goods, by ISO code and as VAT ids write them
 * (Greece both GR and EL).
 */
export const EU_OTHER_COUNTRIES: readonly string[] = EU_VAT_COUNTRIES.filter((c) => c !== 'IT').flatMap((c) => (vatPrefixOf(c) === c ? [c] : [c, vatPrefixOf(c)]));

/** The party the document is the company's own: the buyer of a self-invoice (TD16–TD20), else the seller. */
export const companyOf = (s: Pick<FatturaSummary, 'documentType' | 'sender' | 'recipient'>): FatturaParty => (isBuyerIssued(s.documentType) ? s.recipient : s.sender);

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
  /** `DatiAnagrafici/RegimeFiscale` (the seller's tax regime, RF01 … RF20), when given. */
  regime?: string | null;
  /** `Contatti/Telefono` (the seller's), when given. */
  phone?: string | null;
  /** `Contatti/Email` (the seller's), when given. */
  email?: string | null;
}

/** A discount (`SC`) or surcharge (`MG`), by percent or by amount (`ScontoMaggiorazione`). */
export interface FatturaAdjustment {
  kind: 'SC' | 'MG';
  percent: number | null;
  amount: number | null;
}

/** A pension fund's contribution (`DatiCassaPrevidenziale`): taxable at its own rate or nature. */
export interface FatturaCassa {
  /** `TipoCassa` (TC01 … TC22). */
  kind: string;
  amount: number;
  vatRate: number;
  nature: string | null;
}

/** An invoice a document refers to (`DatiFattureCollegate`: a credit or debit note's original). */
export interface FatturaReference {
  number: string;
  /** `YYYY-MM-DD`, when given. */
  date: string | null;
}

export interface FatturaLine {
  number: number;
  description: string;
  quantity: number;
  unitPrice: number;
  totalPrice: number;
  vatRate: number;
  nature: string | null;
  /** The line's discounts and surcharges, applied in order to the unit price. */
  adjustments?: FatturaAdjustment[];
}

export interface FatturaVatSummary {
  vatRate: number;
  nature: string | null;
  taxable: number;
  tax: number;
  /** `Arrotondamento` of the summary's taxable amount (0 when none). */
  rounding?: number;
  /** `EsigibilitaIVA`: I (immediate), D (deferred), S (split payment); null when none. */
  vatDue?: string | null;
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
  /** Discounts and surcharges on the whole document (`DatiGeneraliDocumento/ScontoMaggiorazione`). */
  adjustments?: FatturaAdjustment[];
  /** `DatiGeneraliDocumento/Arrotondamento` of the document total (0 when none). */
  rounding?: number;
  /** Pension funds' contributions (`DatiCassaPrevidenziale`). */
  cassa?: FatturaCassa[];
  /** The invoices it refers to (`DatiFattureCollegate`). */
  relatedInvoices?: FatturaReference[];
}

export type FatturaRead = { ok: true; summary: FatturaSummary } | { ok: false; error: 'structure' | 'missing'; field: string };

/** Elements that may repeat, read as arrays even when there is one. */
const ARRAYS = new Set(['DettaglioLinee', 'DatiRiepilogo', 'FatturaElettronicaBody', 'ScontoMaggiorazione', 'DatiCassaPrevidenziale', 'DatiFattureCollegate']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ARRAYS.has(name),
});

class Missing extends Error {
  constructor(readonly field: string) {
    super(`missing ${field}`);
  }
}

function at(node: unknown, path: string): unknown {
  let cur: unknown = node;
  for (const seg of path.split('/')) {
    if (!isObj(cur)) return undefined;
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

/** An optional amount: null when absent; a malformed one is `Missing` of `field`. */
function optNum(node: unknown, path: string, field: string): number | null {
  return text(node, path) === null ? null : num(node, path, field);
}

const list = (node: unknown, path: string): unknown[] => {
  const v = at(node, path);
  return Array.isArray(v) ? v : [];
};

function adjustments(node: unknown, path: string): FatturaAdjustment[] {
  return list(node, path).map((a) => {
    const kind = need(a, 'Tipo', `${path}/Tipo`);
    if (kind !== 'SC' && kind !== 'MG') throw new Missing(`${path}/Tipo`);
    const percent = optNum(a, 'Percentuale', `${path}/Percentuale`);
    const amount = optNum(a, 'Importo', `${path}/Importo`);
    return { kind, percent, amount };
  });
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
    regime: text(anag, 'RegimeFiscale'),
    phone: text(node, 'Contatti/Telefono'),
    email: text(node, 'Contatti/Email'),
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
  if (!isObj(root)) return { ok: false, error: 'structure', field: 'FatturaElettronica' };
  try {
    const header = at(root, 'FatturaElettronicaHeader');
    const bodies = at(root, 'FatturaElettronicaBody');
    const body: unknown = Array.isArray(bodies) ? bodies[0] : undefined;
    if (!isObj(header)) throw new Missing('FatturaElettronicaHeader');
    if (!isObj(body)) throw new Missing('FatturaElettronicaBody');
    const versione = typeof root['@versione'] === 'string' ? root['@versione'] : null;
    const formatText = text(header, 'DatiTrasmissione/FormatoTrasmissione') ?? versione;
    if (formatText !== 'FPR12' && formatText !== 'FPA12') throw new Missing('FormatoTrasmissione');
    const seller = at(header, 'CedentePrestatore');
    const buyer = at(header, 'CessionarioCommittente');
    if (!isObj(seller)) throw new Missing('CedentePrestatore');
    if (!isObj(buyer)) throw new Missing('CessionarioCommittente');
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
      adjustments: adjustments(l, 'ScontoMaggiorazione'),
    }));
    const rawSummaries = at(body, 'DatiBeniServizi/DatiRiepilogo');
    if (!Array.isArray(rawSummaries) || rawSummaries.length === 0) throw new Missing('DatiRiepilogo');
    const vatSummaries = rawSummaries.map((s): FatturaVatSummary => ({
      vatRate: num(s, 'AliquotaIVA', 'AliquotaIVA'),
      nature: text(s, 'Natura'),
      taxable: num(s, 'ImponibileImporto', 'ImponibileImporto'),
      tax: num(s, 'Imposta', 'Imposta'),
      rounding: optNum(s, 'Arrotondamento', 'DatiRiepilogo/Arrotondamento') ?? 0,
      vatDue: text(s, 'EsigibilitaIVA'),
    }));
    const cassa = list(at(body, 'DatiGenerali'), 'DatiGeneraliDocumento/DatiCassaPrevidenziale').map((c): FatturaCassa => ({
      kind: need(c, 'TipoCassa', 'DatiCassaPrevidenziale/TipoCassa'),
      amount: num(c, 'ImportoContributoCassa', 'DatiCassaPrevidenziale/ImportoContributoCassa'),
      vatRate: num(c, 'AliquotaIVA', 'DatiCassaPrevidenziale/AliquotaIVA'),
      nature: text(c, 'Natura'),
    }));
    const relatedInvoices = list(at(body, 'DatiGenerali'), 'DatiFattureCollegate').map((r): FatturaReference => ({
      number: need(r, 'IdDocumento', 'DatiFattureCollegate/IdDocumento'),
      date: text(r, 'Data'),
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
        adjustments: adjustments(gen, 'ScontoMaggiorazione'),
        rounding: optNum(gen, 'Arrotondamento', 'DatiGeneraliDocumento/Arrotondamento') ?? 0,
        cassa,
        relatedInvoices,
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

/**
 * A price after discounts and surcharges, each applied in turn to what the previous left (a
 * percentage of it, or an amount), as FatturaPA defines `ScontoMaggiorazione`: a discount (SC)
 * lowers, a surcharge (MG) raises; one with both a percentage and an amount counts by its amount.
 */
export function adjusted(price: number, adj: readonly FatturaAdjustment[] = []): number {
  let p = price;
  for (const a of adj) {
    const delta = a.amount !== null ? a.amount : a.percent !== null ? (p * a.percent) / 100 : 0;
    p = a.kind === 'SC' ? p - delta : p + delta;
  }
  return p;
}

/** A line's `PrezzoTotale` as the SDI computes it: the unit price after its discounts and surcharges, times the quantity, in cents. */
export const lineTotalOf = (l: Pick<FatturaLine, 'quantity' | 'unitPrice' | 'adjustments'>): number => cents(adjusted(l.unitPrice, l.adjustments) * l.quantity);

/** The key of a VAT summary: its rate and nature. */
const summaryKey = (rate: number, nature: string | null | undefined): string => `${rate}|${nature ?? ''}`;

/**
 * The VAT summaries a document's lines and pension contributions call for, before any rounding:
 * per (rate, nature), the taxable amount is the sum of the lines' `PrezzoTotale` and of the
 * contributions (`ImportoContributoCassa`) at that rate or nature, and the tax its share at the
 * rate. A summary's own `Arrotondamento` is added to its taxable amount by the caller that
 * compares (`summaryTaxable`).
 */
export function expectedSummaries(s: { lines: readonly FatturaLine[]; cassa?: readonly FatturaCassa[] }): FatturaVatSummary[] {
  const groups = new Map<string, FatturaVatSummary>();
  const add = (rate: number, nature: string | null, amount: number): void => {
    const key = summaryKey(rate, nature);
    const g = groups.get(key) ?? { vatRate: rate, nature, taxable: 0, tax: 0 };
    g.taxable = cents(g.taxable + amount);
    groups.set(key, g);
  };
  for (const l of s.lines) add(l.vatRate, l.nature, l.totalPrice);
  for (const c of s.cassa ?? []) add(c.vatRate, c.nature, c.amount);
  for (const g of groups.values()) g.tax = cents((g.taxable * g.vatRate) / 100);
  return [...groups.values()];
}

/** The expected summary of `r`'s rate and nature among `expected`, or undefined. */
export const summaryFor = (expected: readonly FatturaVatSummary[], r: Pick<FatturaVatSummary, 'vatRate' | 'nature'>): FatturaVatSummary | undefined =>
  expected.find((e) => summaryKey(e.vatRate, e.nature) === summaryKey(r.vatRate, r.nature));

/**
 * `ImportoTotaleDocumento` as FatturaPA defines it: taxable plus VAT of every summary, then the
 * document's own discounts and surcharges (`DatiGeneraliDocumento/ScontoMaggiorazione`, in turn),
 * then its `Arrotondamento`. Withholdings are not subtracted (they lower what is paid, not the total).
 */
export function documentTotalOf(s: Pick<FatturaSummary, 'vatSummaries'> & { adjustments?: readonly FatturaAdjustment[]; rounding?: number }): number {
  return cents(adjusted(totalOfSummaries(s.vatSummaries), s.adjustments) + (s.rounding ?? 0));
}
