/**
 * The rules a FatturaPA document type sets on a document's parties, references and lines, checked
 * before any paid call (the SDI would refuse the document after charging it). One table of rules
 * over a read or built `FatturaSummary`, so structured input and raw XML are checked alike; each
 * violation names its rule (`extensions.rule`), the XML element and the GraphQL input field.
 *
 * - TD04 / TD05 (credit / debit note): refers to the original invoice (`DatiFattureCollegate`),
 *   dated no later than the note;
 * - TD16–TD20 (self-invoices of the buyer: internal reverse charge, foreign services, intra-EU
 *   goods, art. 17 c. 2 goods, regularisation): the company is the buyer, with its Italian VAT
 *   number, the supplier another subject; TD17–TD19's supplier is not Italian (TD18's is in
 *   another EU state), TD16's is; lines carry the VAT the buyer integrates, so no N6.x nature
 *   (reverse charge is the supplier's own invoice's nature);
 * - TD21 (self-invoice for exceeding the plafond) and TD27 (self-consumption, free transfers
 *   without recourse): seller and buyer are the same subject, the company (SDI check 00472);
 * - TD01–TD03, TD06, TD24, TD25 and TD28 (with TD16–TD20 above): seller and buyer are different
 *   subjects (SDI check 00471). Other types (notes TD04/TD05, TD22/TD23, TD26, TD29 …) may have
 *   one subject on both sides, e.g. TD26's internal transfers or a note correcting a TD21/TD27.
 */
import { EU_OTHER_COUNTRIES, isBuyerIssued, type FatturaParty, type FatturaSummary } from '../../contract/fatturapa.ts';

export interface DocumentTypeViolation {
  /** Stable name of the rule, `extensions.rule`. */
  rule: string;
  /** The element of the XML (as `checkFatturaXml` names fields). */
  xml: string;
  /** The field of `InvoiceInput` (under `input.`). */
  input: string;
  message: string;
}

/** Document types whose seller and buyer are one subject. */
const SAME_PARTY_TYPES: readonly string[] = ['TD21', 'TD27'];
const NOTE_TYPES: readonly string[] = ['TD04', 'TD05'];
/** Document types whose seller and buyer must differ, besides TD16–TD20 (SDI check 00471). */
const DIFFERENT_PARTY_TYPES: readonly string[] = ['TD01', 'TD02', 'TD03', 'TD06', 'TD24', 'TD25', 'TD28'];

/** The same subject: the same VAT id (country and code), else the same fiscal code. */
function sameSubject(a: FatturaParty, b: FatturaParty): boolean {
  if (a.vatNumber !== null && b.vatNumber !== null) return (a.country ?? 'IT') === (b.country ?? 'IT') && a.vatNumber.toUpperCase() === b.vatNumber.toUpperCase();
  return a.fiscalCode !== null && b.fiscalCode !== null && a.fiscalCode.toUpperCase() === b.fiscalCode.toUpperCase();
}

const v = (rule: string, xml: string, input: string, message: string): DocumentTypeViolation => ({ rule, xml, input, message });

/** The first rule of its document type `s` breaks, or null. */
export function documentTypeViolation(s: FatturaSummary): DocumentTypeViolation | null {
  const t = s.documentType;
  const buyer = s.recipient;
  const seller = s.sender;
  if (NOTE_TYPES.includes(t)) {
    const refs = s.relatedInvoices ?? [];
    const what = t === 'TD04' ? 'a credit note (TD04)' : 'a debit note (TD05)';
    if (refs.length === 0)
      return v(`${t}_REFERENCE_REQUIRED`, 'DatiFattureCollegate', 'relatedInvoices', `${what} must refer to the original invoice: give its number and date (DatiFattureCollegate)`);
    const i = refs.findIndex((r) => r.date !== null && r.date > s.date);
    if (i >= 0)
      return v(
        `${t}_REFERENCE_AFTER_NOTE`,
        `DatiFattureCollegate[${i}]/Data`,
        `relatedInvoices[${i}].date`,
        `the original invoice of ${what} cannot be dated after the note (${s.date})`,
      );
  }
  if (isBuyerIssued(t)) {
    if (buyer.country !== 'IT' || buyer.vatNumber === null) {
      return v(
        `${t}_BUYER_IS_THE_COMPANY`,
        'CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA',
        'recipient.vatNumber',
        `${t} is a self-invoice: the buyer (recipient) is the issuing company, with its Italian VAT number`,
      );
    }
    if (sameSubject(seller, buyer))
      return v(
        `${t}_SUPPLIER_IS_ANOTHER_PARTY`,
        'CedentePrestatore/DatiAnagrafici/IdFiscaleIVA',
        'sender.vatNumber',
        `${t}: the supplier (sender) is the other party, not the company itself`,
      );
    if ((t === 'TD17' || t === 'TD18' || t === 'TD19') && (seller.country ?? 'IT') === 'IT') {
      return v(
        `${t}_FOREIGN_SUPPLIER`,
        'CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdPaese',
        'sender.country',
        `${t}: the supplier (sender) is established abroad, its country cannot be IT`,
      );
    }
    if (t === 'TD18' && !EU_OTHER_COUNTRIES.includes(seller.country ?? '')) {
      return v(
        'TD18_EU_SUPPLIER',
        'CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdPaese',
        'sender.country',
        'TD18 (intra-EU purchase of goods): the supplier (sender) is in another EU member state',
      );
    }
    if (t === 'TD16' && (seller.country ?? 'IT') !== 'IT') {
      return v(
        'TD16_ITALIAN_SUPPLIER',
        'CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdPaese',
        'sender.country',
        'TD16 (internal reverse charge): the supplier (sender) is Italian; a foreign supplier is TD17, TD18 or TD19',
      );
    }
    if (t !== 'TD20') {
      const i = s.lines.findIndex((l) => l.nature !== null && l.nature.startsWith('N6'));
      if (i >= 0) {
        return v(
          `${t}_NO_REVERSE_CHARGE_NATURE`,
          `DettaglioLinee[${i}]/Natura`,
          `lines[${i}].nature`,
          `${t} integrates the VAT of a reverse-charge purchase: its lines carry the VAT rate, not a reverse-charge nature N6.x (that is the supplier's invoice's)`,
        );
      }
    }
    return null;
  }
  if (SAME_PARTY_TYPES.includes(t)) {
    if (!sameSubject(seller, buyer)) {
      const what = t === 'TD21' ? 'TD21 (self-invoice for exceeding the plafond)' : 'TD27 (self-consumption or free transfer without recourse)';
      return v(
        `${t}_SAME_PARTY`,
        'CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA',
        'recipient.vatNumber',
        `${what}: seller and buyer are both the issuing company (recipient = sender)`,
      );
    }
    return null;
  }
  if (DIFFERENT_PARTY_TYPES.includes(t) && sameSubject(seller, buyer)) {
    return v(
      `${t}_DIFFERENT_PARTIES`,
      'CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA',
      'recipient.vatNumber',
      `${t}: the recipient is the sender itself, which the SDI refuses for this document type (00471); a self-invoice for exceeding the plafond is TD21, self-consumption TD27`,
    );
  }
  return null;
}
