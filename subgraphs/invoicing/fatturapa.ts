/**
 * Italian invoices before they are sent: a structured `InvoiceInput` checked field by field and
 * turned into a FatturaPA 1.2 document (built with fast-xml-parser's `XMLBuilder`, never by string
 * concatenation), and FatturaPA XML given as is read (`contract/fatturapa.ts`) and checked for the
 * same consistency. Every mistake is `BAD_USER_INPUT` naming the field (`input.lines[1].vatRate`,
 * or the XML element for raw XML), thrown before any paid call.
 */
import { XMLBuilder } from 'fast-xml-parser';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import {
  cents,
  companyOf,
  documentTotalOf,
  DOCUMENT_TYPES,
  expectedSummaries,
  FATTURAPA_NS,
  isBuyerIssued,
  ITALIAN_VAT_RATES,
  lineTotalOf,
  readFattura,
  summaryFor,
  TAX_REGIMES,
  VAT_DUE,
  VAT_NATURES,
  type FatturaLine,
  type FatturaParty,
  type FatturaReference,
  type FatturaSummary,
  type FatturaVatSummary,
} from '../../contract/fatturapa.ts';
import { periodOf } from '../../contract/prices.ts';
import { badUserInput } from '../runtime/errors.ts';
import { documentTypeViolation } from './doctypes.ts';
import { email, fiscalCode, isCalendarDay, requiredText, vatNumber } from '../runtime/validate.ts';

/** How far a summary's ImponibileImporto may be from the sum of its lines, contributions and rounding (€): the SDI's ±1 € (check 00422). */
const IMPONIBILE_TOLERANCE = 1;

/** The GraphQL input of an invoice (as the resolvers receive it). */
export interface InvoicePartyIn {
  name: string;
  country?: string | null;
  vatNumber?: string | null;
  fiscalCode?: string | null;
  street: string;
  zip: string;
  city: string;
  province?: string | null;
  phone?: string | null;
  email?: string | null;
}

export interface InvoiceLineIn {
  description: string;
  quantity?: number | null;
  unitPrice: number;
  vatRate: number;
  nature?: string | null;
}

export interface InvoiceIn {
  format?: 'PRIVATE' | 'PUBLIC_ADMINISTRATION' | null;
  documentType?: string | null;
  number: string;
  date: string;
  currency?: string | null;
  sender: InvoicePartyIn;
  recipient: InvoicePartyIn;
  recipientCode?: string | null;
  recipientPec?: string | null;
  lines: readonly InvoiceLineIn[];
  expectedTotal?: number | null;
  /** The seller's `RegimeFiscale` (RF01 … RF20). @default RF01 (RF18 for a foreign seller of a self-invoice) */
  taxRegime?: string | null;
  /** `EsigibilitaIVA` of the taxed summaries: I, D or S. @default I */
  vatChargeability?: string | null;
  /** The invoices a credit or debit note refers to (`DatiFattureCollegate`). */
  relatedInvoices?: ReadonlyArray<{ number: string; date?: string | null }> | null;
}

/** Largest number of lines accepted in one invoice. */
export const MAX_LINES = 1000;

const RECIPIENT_CODE_LENGTH = { FPR12: 7, FPA12: 6 } as const;

/** FatturaPA strings are Basic Latin and Latin-1 only (the XSD's `String…LatinType`): `€`, emoji and other scripts are refused. */
const NOT_LATIN1 = /[\u0100-\u{10ffff}]/u;

/** `requiredText` of a string the XML carries, refused when it holds a character FatturaPA cannot. */
function latinText(value: string | null | undefined, field: string, max: number): string {
  const v = requiredText(value, field, max);
  latin1(v, field);
  return v;
}

function latin1(v: string, field: string): void {
  const bad = NOT_LATIN1.exec(v);
  if (bad) throw badUserInput(`${field} contains "${bad[0]}", which FatturaPA cannot carry (Basic Latin and Latin-1 characters only; write EUR for €)`, field);
}

/** Largest number of decimals of Quantita and PrezzoUnitario (the XSD allows 2 to 8). */
const MAX_DECIMALS = 8;

/** A quantity or unit price as the XML writes it: its own decimals, at least 2, at most 8. */
function decimals(n: number): string {
  const fixed = n.toFixed(MAX_DECIMALS).replace(/0+$/, '');
  const [int, frac = ''] = fixed.split('.');
  return `${int}.${frac.padEnd(2, '0')}`;
}

function maxDecimals(value: number, field: string): number {
  if (Number(value.toFixed(MAX_DECIMALS)) !== value) throw badUserInput(`${field} has more than ${MAX_DECIMALS} decimals`, field);
  return value;
}

/** Postal code of a foreign address: FatturaPA's CAP is 5 digits, so one of another shape is written 00000 (the Agenzia's rule for foreign addresses). */
const FOREIGN_CAP = '00000';

function country(value: string | null | undefined, field: string): string {
  const v = (value ?? 'IT').trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(v)) throw badUserInput(`${field} must be a two-letter country code`, field);
  return v;
}

function amount(value: number, field: string, opts: { positive?: boolean } = {}): number {
  if (!Number.isFinite(value)) throw badUserInput(`${field} must be a number`, field);
  if (opts.positive ? value <= 0 : value < 0) throw badUserInput(`${field} must be ${opts.positive ? 'more than 0' : '0 or more'}`, field);
  if (Math.abs(value) >= 1e11) throw badUserInput(`${field} is too large`, field);
  return value;
}

/** The company's own side of the document (Italian, with its VAT number), or the other party. */
/** A party's contacts (FatturaPA `Contatti`, the seller's only): telephone 5 to 12 characters, e-mail 7 to 256. */
function contacts(p: InvoicePartyIn, field: string, seller: boolean): { phone: string | null; email: string | null } {
  const given = (v: string | null | undefined): v is string => v !== null && v !== undefined && v.trim() !== '';
  if (!seller) {
    for (const k of ['phone', 'email'] as const) if (given(p[k])) throw badUserInput(`${field}.${k}: FatturaPA has contacts for the seller (the sender) only`, `${field}.${k}`);
    return { phone: null, email: null };
  }
  let phone: string | null = null;
  if (given(p.phone)) {
    phone = p.phone.trim();
    if (!/^[0-9+][0-9 ./-]{4,11}$/.test(phone)) throw badUserInput(`${field}.phone must be a telephone number of 5 to 12 characters`, `${field}.phone`);
  }
  const mail = given(p.email) ? email(p.email, `${field}.email`) : null;
  if (mail !== null && mail.length < 7) throw badUserInput(`${field}.email must have at least 7 characters`, `${field}.email`);
  return { phone, email: mail };
}

function party(p: InvoicePartyIn, field: string, role: 'company' | 'other', seller = false): FatturaParty {
  const c = country(p.country, `${field}.country`);
  let vat: string | null = null;
  let cf: string | null = null;
  if (c === 'IT') {
    if (p.vatNumber !== null && p.vatNumber !== undefined && p.vatNumber.trim() !== '') vat = vatNumber(p.vatNumber, `${field}.vatNumber`);
    if (p.fiscalCode !== null && p.fiscalCode !== undefined && p.fiscalCode.trim() !== '') cf = fiscalCode(p.fiscalCode, `${field}.fiscalCode`);
    if (role === 'company' && vat === null) throw badUserInput(`${field}.vatNumber is required: the issuing company is identified by its VAT number`, `${field}.vatNumber`);
    if (vat === null && cf === null) throw badUserInput(`${field} needs a vatNumber or a fiscalCode`, `${field}.vatNumber`);
  } else {
    if (role === 'company') {
      throw badUserInput(`${field}.country must be IT: the issuing company is Italian (cross-border invoices from France or Germany are issued separately)`, `${field}.country`);
    }
    const v = (p.vatNumber ?? '').replace(/\s/g, '').toUpperCase();
    if (!/^[A-Z0-9]{2,28}$/.test(v)) throw badUserInput(`${field}.vatNumber is required for a foreign party (2 to 28 letters and digits)`, `${field}.vatNumber`);
    vat = v.startsWith(c) ? v.slice(2) : v;
  }
  let zip = latinText(p.zip, `${field}.zip`, 10);
  if (c === 'IT' && !/^\d{5}$/.test(zip)) throw badUserInput(`${field}.zip must be an Italian postal code of 5 digits`, `${field}.zip`);
  if (c !== 'IT' && !/^\d{5}$/.test(zip)) zip = FOREIGN_CAP;
  let province: string | null = null;
  if (p.province !== null && p.province !== undefined && p.province.trim() !== '') {
    province = p.province.trim().toUpperCase();
    if (!/^[A-Z]{2}$/.test(province)) throw badUserInput(`${field}.province must be a province code of 2 letters`, `${field}.province`);
  } else if (c === 'IT') throw badUserInput(`${field}.province is required for an Italian address`, `${field}.province`);
  return {
    country: c,
    vatNumber: vat,
    fiscalCode: cf,
    name: latinText(p.name, `${field}.name`, 80),
    street: latinText(p.street, `${field}.street`, 60),
    zip,
    city: latinText(p.city, `${field}.city`, 60),
    province,
    addressCountry: c,
    ...contacts(p, field, seller),
  };
}

/** VAT summaries of lines: taxable and tax per (rate, nature). */
export const summariesOf = (lines: readonly FatturaLine[]): FatturaVatSummary[] => expectedSummaries({ lines });

/** A violation of the document type's rules as BAD_USER_INPUT naming the field (`input.…` or `xml:…`). */
function checkDocumentTypeRules(s: FatturaSummary, field: (v: { xml: string; input: string }) => string): void {
  const v = documentTypeViolation(s);
  if (v) throw badUserInput(v.message, field(v), { rule: v.rule });
}

/** Today in Italy (Europe/Rome), the calendar the SDI dates invoices by, not UTC's. */
function today(): string {
  return periodOf('day', Date.now());
}

/** A structured invoice checked (BAD_USER_INPUT naming the field) and summarised. */
export function invoiceFromInput(input: InvoiceIn, field = 'input'): FatturaSummary {
  const format = input.format === 'PUBLIC_ADMINISTRATION' ? 'FPA12' : 'FPR12';
  const documentType = (input.documentType ?? 'TD01').trim().toUpperCase();
  if (!(DOCUMENT_TYPES as readonly string[]).includes(documentType))
    throw badUserInput(`${field}.documentType must be a FatturaPA document type (TD01 … TD28)`, `${field}.documentType`);
  const number = latinText(input.number, `${field}.number`, 20);
  if (!/\d/.test(number)) throw badUserInput(`${field}.number must contain at least one digit`, `${field}.number`);
  // Numero is Basic Latin only (the XSD's String20Type), stricter than the other strings.
  if (/[\u0080-\uffff]/.test(number)) throw badUserInput(`${field}.number must be letters, digits and ASCII signs only`, `${field}.number`);
  const date = (input.date ?? '').trim();
  if (!isCalendarDay(date)) throw badUserInput(`${field}.date must be a day YYYY-MM-DD`, `${field}.date`);
  if (date > today()) throw badUserInput(`${field}.date must not be in the future`, `${field}.date`);
  const currency = (input.currency ?? 'EUR').trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw badUserInput(`${field}.currency must be an ISO 4217 code`, `${field}.currency`);
  // A self-invoice of the buyer (TD16–TD20) is the company's as buyer: its supplier may be foreign.
  const buyerIssued = isBuyerIssued(documentType);
  const sender = party(input.sender, `${field}.sender`, buyerIssued ? 'other' : 'company', true);
  const recipient = party(input.recipient, `${field}.recipient`, buyerIssued ? 'company' : 'other');
  const regime = (input.taxRegime ?? (sender.country !== 'IT' ? 'RF18' : 'RF01')).trim().toUpperCase();
  if (!(TAX_REGIMES as readonly string[]).includes(regime))
    throw badUserInput(`${field}.taxRegime must be a FatturaPA RegimeFiscale: ${TAX_REGIMES.join(', ')}`, `${field}.taxRegime`);
  sender.regime = regime;
  const vatDue = (input.vatChargeability ?? 'I').trim().toUpperCase();
  if (!(VAT_DUE as readonly string[]).includes(vatDue))
    throw badUserInput(`${field}.vatChargeability must be a FatturaPA EsigibilitaIVA: I (immediate), D (deferred) or S (split payment)`, `${field}.vatChargeability`);
  const relatedInvoices = (input.relatedInvoices ?? []).map((r, i): FatturaReference => {
    const at = `${field}.relatedInvoices[${i}]`;
    const number = latinText(r.number, `${at}.number`, 20);
    const d = r.date === null || r.date === undefined || r.date.trim() === '' ? null : r.date.trim();
    if (d !== null && !isCalendarDay(d)) throw badUserInput(`${at}.date must be a day YYYY-MM-DD`, `${at}.date`);
    return { number, date: d };
  });

  let pec: string | null = null;
  if (input.recipientPec !== null && input.recipientPec !== undefined && input.recipientPec.trim() !== '') pec = email(input.recipientPec, `${field}.recipientPec`);
  let code = (input.recipientCode ?? '').trim().toUpperCase();
  const want = RECIPIENT_CODE_LENGTH[format];
  if (code === '') {
    if (format === 'FPA12') throw badUserInput(`${field}.recipientCode is required for the public administration (its 6-character office code)`, `${field}.recipientCode`);
    code = recipient.country === 'IT' ? '0000000' : 'XXXXXXX';
  }
  if (!/^[A-Z0-9]+$/.test(code) || code.length !== want) {
    throw badUserInput(
      `${field}.recipientCode must be ${want} letters and digits for ${format === 'FPA12' ? 'the public administration' : 'a private recipient'}`,
      `${field}.recipientCode`,
    );
  }
  if (pec !== null && code !== '0000000') throw badUserInput(`${field}.recipientPec goes with recipientCode 0000000 (or none)`, `${field}.recipientPec`);

  if (input.lines.length === 0) throw badUserInput(`${field}.lines must hold at least one line`, `${field}.lines`);
  if (input.lines.length > MAX_LINES) throw badUserInput(`${field}.lines holds more than ${MAX_LINES} lines`, `${field}.lines`);
  const lines = input.lines.map((l, i): FatturaLine => {
    const at = `${field}.lines[${i}]`;
    const quantity = maxDecimals(amount(l.quantity ?? 1, `${at}.quantity`, { positive: true }), `${at}.quantity`);
    const unitPrice = maxDecimals(amount(l.unitPrice, `${at}.unitPrice`), `${at}.unitPrice`);
    const rate = l.vatRate;
    if (!(ITALIAN_VAT_RATES as readonly number[]).includes(rate)) throw badUserInput(`${at}.vatRate must be one of ${ITALIAN_VAT_RATES.join(', ')} (percent)`, `${at}.vatRate`);
    const nature = l.nature === null || l.nature === undefined || l.nature.trim() === '' ? null : l.nature.trim().toUpperCase();
    if (rate === 0 && nature === null) throw badUserInput(`${at}.nature is required for a 0 % line (N1 … N7)`, `${at}.nature`);
    if (nature !== null && rate !== 0) throw badUserInput(`${at}.nature applies to 0 % lines only`, `${at}.nature`);
    if (nature !== null && !(VAT_NATURES as readonly string[]).includes(nature)) throw badUserInput(`${at}.nature must be one of ${VAT_NATURES.join(', ')}`, `${at}.nature`);
    return { number: i + 1, description: latinText(l.description, `${at}.description`, 1000), quantity, unitPrice, totalPrice: cents(quantity * unitPrice), vatRate: rate, nature };
  });
  const vatSummaries = summariesOf(lines).map((r) => ({ ...r, vatDue: r.nature === null ? vatDue : null }));
  if (vatDue === 'S' && vatSummaries.every((r) => r.nature !== null))
    throw badUserInput(`${field}.vatChargeability S (split payment) needs a taxed line`, `${field}.vatChargeability`);
  const total = documentTotalOf({ vatSummaries });
  if (input.expectedTotal !== null && input.expectedTotal !== undefined && Math.abs(input.expectedTotal - total) > 0.005) {
    throw badUserInput(`${field}.expectedTotal ${input.expectedTotal} does not match the lines: taxable plus VAT is ${total.toFixed(2)}`, `${field}.expectedTotal`, {
      computedTotal: total,
    });
  }
  const summary: FatturaSummary = {
    format,
    recipientCode: code,
    recipientPec: pec,
    sender,
    recipient,
    documentType,
    currency,
    date,
    number,
    lines,
    vatSummaries,
    total,
    relatedInvoices,
  };
  checkDocumentTypeRules(summary, (v) => `${field}.${v.input}`);
  return summary;
}

const fmt = (n: number): string => n.toFixed(2);

function partyXml(p: FatturaParty, role: 'sender' | 'recipient'): Record<string, unknown> {
  const anagrafici: Record<string, unknown> = {};
  if (p.vatNumber !== null) anagrafici.IdFiscaleIVA = { IdPaese: p.country ?? 'IT', IdCodice: p.vatNumber };
  if (p.fiscalCode !== null) anagrafici.CodiceFiscale = p.fiscalCode;
  anagrafici.Anagrafica = { Denominazione: p.name };
  if (role === 'sender') anagrafici.RegimeFiscale = p.regime ?? 'RF01';
  const sede: Record<string, unknown> = { Indirizzo: p.street, CAP: p.zip, Comune: p.city };
  if (p.province !== null) sede.Provincia = p.province;
  sede.Nazione = p.addressCountry ?? p.country ?? 'IT';
  const contatti: Record<string, unknown> = {};
  if (role === 'sender' && p.phone) contatti.Telefono = p.phone;
  if (role === 'sender' && p.email) contatti.Email = p.email;
  return Object.keys(contatti).length > 0 ? { DatiAnagrafici: anagrafici, Sede: sede, Contatti: contatti } : { DatiAnagrafici: anagrafici, Sede: sede };
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, suppressEmptyNode: true });

/** The FatturaPA 1.2 document of a checked invoice. */
export function buildFattura(s: FatturaSummary, progressive: string): string {
  const transmission: Record<string, unknown> = {
    // The company transmits: the seller, or the buyer of its own self-invoice.
    IdTrasmittente: { IdPaese: companyOf(s).country ?? 'IT', IdCodice: companyOf(s).vatNumber },
    ProgressivoInvio: progressive,
    FormatoTrasmissione: s.format,
    CodiceDestinatario: s.recipientCode,
  };
  if (s.recipientPec !== null) transmission.PECDestinatario = s.recipientPec;
  return builder.build({
    '?xml': { '@version': '1.0', '@encoding': 'UTF-8' },
    'p:FatturaElettronica': {
      '@versione': s.format,
      '@xmlns:p': FATTURAPA_NS,
      '@xmlns:ds': 'http://www.w3.org/2000/09/xmldsig#',
      '@xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
      FatturaElettronicaHeader: {
        DatiTrasmissione: transmission,
        CedentePrestatore: partyXml(s.sender, 'sender'),
        CessionarioCommittente: partyXml(s.recipient, 'recipient'),
      },
      FatturaElettronicaBody: {
        DatiGenerali: {
          DatiGeneraliDocumento: { TipoDocumento: s.documentType, Divisa: s.currency, Data: s.date, Numero: s.number, ImportoTotaleDocumento: fmt(s.total ?? documentTotalOf(s)) },
          ...((s.relatedInvoices ?? []).length > 0
            ? { DatiFattureCollegate: (s.relatedInvoices ?? []).map((r) => ({ IdDocumento: r.number, ...(r.date !== null ? { Data: r.date } : {}) })) }
            : {}),
        },
        DatiBeniServizi: {
          DettaglioLinee: s.lines.map((l) => ({
            NumeroLinea: l.number,
            Descrizione: l.description,
            Quantita: decimals(l.quantity),
            PrezzoUnitario: decimals(l.unitPrice),
            PrezzoTotale: fmt(l.totalPrice),
            AliquotaIVA: fmt(l.vatRate),
            ...(l.nature !== null ? { Natura: l.nature } : {}),
          })),
          DatiRiepilogo: s.vatSummaries.map((r) => ({
            AliquotaIVA: fmt(r.vatRate),
            ...(r.nature !== null ? { Natura: r.nature } : {}),
            ImponibileImporto: fmt(r.taxable),
            Imposta: fmt(r.tax),
            ...(r.nature === null ? { EsigibilitaIVA: r.vatDue ?? 'I' } : {}),
          })),
        },
      },
    },
  });
}

/**
 * FatturaPA XML given as is, read and checked like a structured invoice: well formed, required
 * elements present, document type, date, VAT numbers and fiscal codes, recipient code for the
 * format, VAT rates and natures, line totals, VAT summaries and the document total. The field of
 * an error is `xml` with the element's path (`xml:DettaglioLinee[2]/AliquotaIVA`).
 */
export function checkFatturaXml(xml: string, field = 'xml'): FatturaSummary {
  if (xml.length > 5 * 1024 * 1024) throw badUserInput(`${field} is larger than 5 MB`, field);
  const read = readFattura(xml);
  if (!read.ok) {
    if (read.error === 'structure') throw badUserInput(`${field} is not a well-formed FatturaPA 1.2 document`, field);
    throw badUserInput(`${field}: ${read.field} is missing or not valid`, `${field}:${read.field}`);
  }
  const s = read.summary;
  const bad = (path: string, why: string): never => {
    throw badUserInput(`${field}: ${path} ${why}`, `${field}:${path}`);
  };
  if (!(DOCUMENT_TYPES as readonly string[]).includes(s.documentType)) bad('TipoDocumento', 'is not a FatturaPA document type');
  for (const [path, v] of [
    ['Numero', s.number],
    ['CedentePrestatore/DatiAnagrafici/Anagrafica', s.sender.name],
    ['CedentePrestatore/Sede/Indirizzo', s.sender.street],
    ['CedentePrestatore/Sede/Comune', s.sender.city],
    ['CessionarioCommittente/DatiAnagrafici/Anagrafica', s.recipient.name],
    ['CessionarioCommittente/Sede/Indirizzo', s.recipient.street],
    ['CessionarioCommittente/Sede/Comune', s.recipient.city],
    ...s.lines.map((l, i) => [`DettaglioLinee[${i}]/Descrizione`, l.description] as const),
  ] as const) {
    if (v !== null && NOT_LATIN1.test(v)) bad(path, `contains "${NOT_LATIN1.exec(v)![0]}", which FatturaPA cannot carry (Basic Latin and Latin-1 only)`);
  }
  for (const [role, p] of [
    ['CedentePrestatore', s.sender],
    ['CessionarioCommittente', s.recipient],
  ] as const) {
    if (p.zip !== null && !/^\d{5}$/.test(p.zip)) bad(`${role}/Sede/CAP`, 'must be 5 digits (00000 for a foreign address)');
  }
  if (!isCalendarDay(s.date)) bad('Data', 'is not a day YYYY-MM-DD');
  if (s.date > today()) bad('Data', 'is in the future');
  if (!/\d/.test(s.number)) bad('Numero', 'must contain at least one digit');
  // The company's own side: the seller, or the buyer of a self-invoice (TD16–TD20).
  const own = isBuyerIssued(s.documentType) ? 'CessionarioCommittente' : 'CedentePrestatore';
  const company = companyOf(s);
  if (company.country !== 'IT') bad(`${own}/DatiAnagrafici/IdFiscaleIVA/IdPaese`, 'must be IT: the issuing company is Italian');
  if (!isValidItalianVat(company.vatNumber ?? '')) bad(`${own}/DatiAnagrafici/IdFiscaleIVA/IdCodice`, 'is not a valid Italian VAT number');
  if (s.sender.country === 'IT' && s.sender.vatNumber !== null && !isValidItalianVat(s.sender.vatNumber))
    bad('CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdCodice', 'is not a valid Italian VAT number');
  if (s.sender.fiscalCode !== null && !isValidFiscalCode(s.sender.fiscalCode)) bad('CedentePrestatore/DatiAnagrafici/CodiceFiscale', 'is not a valid fiscal code');
  if (s.recipient.country === 'IT' && s.recipient.vatNumber !== null && !isValidItalianVat(s.recipient.vatNumber))
    bad('CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA/IdCodice', 'is not a valid Italian VAT number');
  if (s.recipient.fiscalCode !== null && !isValidFiscalCode(s.recipient.fiscalCode)) bad('CessionarioCommittente/DatiAnagrafici/CodiceFiscale', 'is not a valid fiscal code');
  const code = s.recipientCode ?? '';
  if (!/^[A-Z0-9]+$/.test(code) || code.length !== RECIPIENT_CODE_LENGTH[s.format])
    bad('DatiTrasmissione/CodiceDestinatario', `must be ${RECIPIENT_CODE_LENGTH[s.format]} letters and digits for ${s.format}`);
  if (s.recipientPec !== null && code !== '0000000') bad('DatiTrasmissione/PECDestinatario', 'goes with CodiceDestinatario 0000000');
  s.lines.forEach((l, i) => {
    const at = `DettaglioLinee[${i}]`;
    if (!(ITALIAN_VAT_RATES as readonly number[]).includes(l.vatRate)) bad(`${at}/AliquotaIVA`, `must be one of ${ITALIAN_VAT_RATES.join(', ')}`);
    if (l.vatRate === 0 && (l.nature === null || !(VAT_NATURES as readonly string[]).includes(l.nature))) bad(`${at}/Natura`, 'is required (N1 … N7) on a 0 % line');
    if (l.vatRate !== 0 && l.nature !== null) bad(`${at}/Natura`, 'applies to 0 % lines only');
    (l.adjustments ?? []).forEach((a, j) => {
      if (a.percent === null && a.amount === null) bad(`${at}/ScontoMaggiorazione[${j}]`, 'needs Percentuale or Importo');
    });
    const want = lineTotalOf(l);
    if (Math.abs(want - l.totalPrice) > 0.01) bad(`${at}/PrezzoTotale`, `is not PrezzoUnitario (after ScontoMaggiorazione) × Quantita (${want.toFixed(2)})`);
  });
  (s.cassa ?? []).forEach((c, i) => {
    const at = `DatiCassaPrevidenziale[${i}]`;
    if (!(ITALIAN_VAT_RATES as readonly number[]).includes(c.vatRate)) bad(`${at}/AliquotaIVA`, `must be one of ${ITALIAN_VAT_RATES.join(', ')}`);
    if (c.vatRate === 0 && (c.nature === null || !(VAT_NATURES as readonly string[]).includes(c.nature))) bad(`${at}/Natura`, 'is required (N1 … N7) at 0 %');
  });
  (s.adjustments ?? []).forEach((a, j) => {
    if (a.percent === null && a.amount === null) bad(`DatiGeneraliDocumento/ScontoMaggiorazione[${j}]`, 'needs Percentuale or Importo');
  });
  const expected = expectedSummaries(s);
  s.vatSummaries.forEach((r, i) => {
    const at = `DatiRiepilogo[${i}]`;
    const match = summaryFor(expected, r);
    if (!match) bad(`${at}/AliquotaIVA`, 'has no line or pension contribution at this rate');
    const taxable = cents(match!.taxable + (r.rounding ?? 0));
    // The SDI's rule (00422) allows ±1 € between ImponibileImporto and what it sums.
    if (Math.abs(taxable - r.taxable) > IMPONIBILE_TOLERANCE)
      bad(`${at}/ImponibileImporto`, `is not the sum of its lines and pension contributions${r.rounding ? ' plus Arrotondamento' : ''} (${taxable.toFixed(2)})`);
    if (Math.abs(cents((r.taxable * r.vatRate) / 100) - r.tax) > 0.01)
      bad(`${at}/Imposta`, `is not ImponibileImporto × AliquotaIVA (${cents((r.taxable * r.vatRate) / 100).toFixed(2)})`);
    if (r.vatDue !== null && r.vatDue !== undefined && !(VAT_DUE as readonly string[]).includes(r.vatDue)) bad(`${at}/EsigibilitaIVA`, `must be one of ${VAT_DUE.join(', ')}`);
  });
  if (expected.length !== s.vatSummaries.length) bad('DatiRiepilogo', 'must have one summary per VAT rate of the lines');
  const total = documentTotalOf(s);
  if (s.total !== null && Math.abs(s.total - total) > 0.01)
    bad('ImportoTotaleDocumento', `is not taxable plus VAT, after the document's ScontoMaggiorazione and Arrotondamento (${total.toFixed(2)})`);
  if (s.sender.regime !== null && s.sender.regime !== undefined && !(TAX_REGIMES as readonly string[]).includes(s.sender.regime))
    bad('CedentePrestatore/DatiAnagrafici/RegimeFiscale', `must be one of ${TAX_REGIMES.join(', ')}`);
  const rule = documentTypeViolation(s);
  if (rule) throw badUserInput(`${field}: ${rule.message}`, `${field}:${rule.xml}`, { rule: rule.rule });
  return s;
}

/** The VAT id of a French (FR + 2 key characters + 9-digit SIREN) or German (DE + 9 digits) company. */
export function branchVatId(country: 'FR' | 'DE', value: string, field: string): string {
  const v = value.replace(/[\s.-]/g, '').toUpperCase();
  const full = v.startsWith(country) ? v : `${country}${v}`;
  const ok = country === 'FR' ? /^FR[0-9A-Z]{2}\d{9}$/.test(full) : /^DE\d{9}$/.test(full);
  if (!ok) throw badUserInput(`${field} must be a ${country === 'FR' ? 'French VAT id (FR + 2 characters + 9 digits)' : 'German VAT id (DE + 9 digits)'}`, field);
  return full;
}

export interface CrossBorderIn {
  senderCountry: string;
  senderFiscalId: string;
  senderName: string;
  recipient: { country: string; vatNumber: string; name: string; street: string; zip: string; city: string };
  number: string;
  date: string;
  currency?: string | null;
  lines: ReadonlyArray<{ description: string; quantity?: number | null; unitPrice: number; vatRate?: number | null }>;
  expectedTotal?: number | null;
}

/**
 * A cross-border invoice checked by the contract's rule 1 (sender FR or DE, recipient in another
 * country) and its own consistency, as the `POST /WW-invoices` body. The sender's configuration is
 * checked by the caller.
 */
export function crossBorderBody(input: CrossBorderIn, field = 'input'): { body: Record<string, unknown>; senderCountry: 'FR' | 'DE'; fiscalId: string; total: number } {
  const from = input.senderCountry.trim().toUpperCase();
  if (from === 'IT') throw badUserInput(`${field}.senderCountry IT: Italian invoices are issued with issueInvoice (FatturaPA)`, `${field}.senderCountry`);
  if (from !== 'FR' && from !== 'DE') throw badUserInput(`${field}.senderCountry must be FR or DE`, `${field}.senderCountry`);
  const to = country(input.recipient.country, `${field}.recipient.country`);
  if (to === from)
    throw badUserInput(
      `${field}.recipient.country is the sender's own country: a domestic invoice belongs to the domestic flow, not to cross-border sending`,
      `${field}.recipient.country`,
    );
  const fiscalId = branchVatId(from, input.senderFiscalId, `${field}.senderFiscalId`);
  const vat = input.recipient.vatNumber.replace(/\s/g, '').toUpperCase();
  if (!/^[A-Z0-9]{2,28}$/.test(vat)) throw badUserInput(`${field}.recipient.vatNumber must be 2 to 28 letters and digits`, `${field}.recipient.vatNumber`);
  const number = requiredText(input.number, `${field}.number`, 20);
  const date = (input.date ?? '').trim();
  if (!isCalendarDay(date)) throw badUserInput(`${field}.date must be a day YYYY-MM-DD`, `${field}.date`);
  if (date > today()) throw badUserInput(`${field}.date must not be in the future`, `${field}.date`);
  const currency = (input.currency ?? 'EUR').trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw badUserInput(`${field}.currency must be an ISO 4217 code`, `${field}.currency`);
  if (input.lines.length === 0) throw badUserInput(`${field}.lines must hold at least one line`, `${field}.lines`);
  if (input.lines.length > MAX_LINES) throw badUserInput(`${field}.lines holds more than ${MAX_LINES} lines`, `${field}.lines`);
  let total = 0;
  const lines = input.lines.map((l, i) => {
    const at = `${field}.lines[${i}]`;
    const quantity = amount(l.quantity ?? 1, `${at}.quantity`, { positive: true });
    const unit = amount(l.unitPrice, `${at}.unitPrice`);
    const rate = l.vatRate ?? 0;
    if (!Number.isFinite(rate) || rate < 0 || rate > 30) throw badUserInput(`${at}.vatRate must be between 0 and 30 percent`, `${at}.vatRate`);
    const net = cents(quantity * unit);
    total = cents(total + net + cents((net * rate) / 100));
    return { description: requiredText(l.description, `${at}.description`, 1000), quantity, unit_price: unit, vat_rate: rate };
  });
  if (input.expectedTotal !== null && input.expectedTotal !== undefined && Math.abs(input.expectedTotal - total) > 0.005) {
    throw badUserInput(`${field}.expectedTotal ${input.expectedTotal} does not match the lines: ${total.toFixed(2)}`, `${field}.expectedTotal`, { computedTotal: total });
  }
  const r = input.recipient;
  return {
    body: {
      sender: { country: from, fiscal_id: fiscalId, name: requiredText(input.senderName, `${field}.senderName`, 80) },
      recipient: {
        country: to,
        vat_id: vat,
        name: requiredText(r.name, `${field}.recipient.name`, 80),
        street: requiredText(r.street, `${field}.recipient.street`, 60),
        zip: requiredText(r.zip, `${field}.recipient.zip`, 10),
        city: requiredText(r.city, `${field}.recipient.city`, 60),
      },
      document_number: number,
      issue_date: date,
      currency,
      lines,
    },
    senderCountry: from,
    fiscalId,
    total,
  };
}
