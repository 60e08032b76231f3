/**
 * FatturaPA rules the layer checks before paying: totals as FatturaPA computes them (discounts and
 * surcharges, pension contributions, roundings), the document types' own rules (TD04/TD05,
 * TD16–TD20, TD21, TD27), and the seller's regime and the VAT's chargeability written as given.
 * Unit tests of `contract/fatturapa.ts` and `subgraphs/invoicing/fatturapa.ts`.
 */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { adjusted, documentTotalOf, lineTotalOf, readFattura } from '../../../contract/fatturapa.ts';
import { buildFattura, checkFatturaXml, invoiceFromInput, type InvoiceIn } from '../../../subgraphs/invoicing/fatturapa.ts';

const COMPANY = '12485671007';
const CUSTOMER = '01234567897';

const party = (name: string, vatNumber: string, over: Partial<InvoiceIn['sender']> = {}): InvoiceIn['sender'] => ({
  name,
  vatNumber,
  street: 'Via Roma 1',
  zip: '00100',
  city: 'Roma',
  province: 'RM',
  ...over,
});
const foreign = (name: string, country: string, vatNumber: string): InvoiceIn['sender'] => ({ name, country, vatNumber, street: 'Rue 1', zip: '75001', city: 'Paris' });

function input(over: Partial<InvoiceIn> = {}): InvoiceIn {
  return {
    number: 'FT-1',
    date: '2025-03-10',
    sender: party('Openapi SpA', COMPANY),
    recipient: party('Cliente Srl', CUSTOMER),
    recipientCode: 'ABC1234',
    lines: [{ description: 'Consulenza', quantity: 2, unitPrice: 100, vatRate: 22 }],
    ...over,
  };
}

/** The error `fn` throws: its code, field and rule. */
function refusal(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GraphQLError);
    return { message: (err as GraphQLError).message, ...(err as GraphQLError).extensions };
  }
  throw new Error('not refused');
}

/** A FatturaPA document around the given body parts (lines, summaries, general data). */
function xmlOf(parts: { lines: string; summaries: string; general?: string; total: string; seller?: string; buyer?: string; type?: string }): string {
  const id = (vat: string, country = 'IT'): string => `<IdFiscaleIVA><IdPaese>${country}</IdPaese><IdCodice>${vat}</IdCodice></IdFiscaleIVA>`;
  const sede = '<Sede><Indirizzo>Via Roma 1</Indirizzo><CAP>00100</CAP><Comune>Roma</Comune><Provincia>RM</Provincia><Nazione>IT</Nazione></Sede>';
  return `<?xml version="1.0" encoding="UTF-8"?>
<p:FatturaElettronica versione="FPR12" xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2">
  <FatturaElettronicaHeader>
    <DatiTrasmissione><IdTrasmittente><IdPaese>IT</IdPaese><IdCodice>${COMPANY}</IdCodice></IdTrasmittente><ProgressivoInvio>1</ProgressivoInvio><FormatoTrasmissione>FPR12</FormatoTrasmissione><CodiceDestinatario>ABC1234</CodiceDestinatario></DatiTrasmissione>
    <CedentePrestatore><DatiAnagrafici>${parts.seller ?? id(COMPANY)}<Anagrafica><Denominazione>Openapi SpA</Denominazione></Anagrafica><RegimeFiscale>RF01</RegimeFiscale></DatiAnagrafici>${sede}</CedentePrestatore>
    <CessionarioCommittente><DatiAnagrafici>${parts.buyer ?? id(CUSTOMER)}<Anagrafica><Denominazione>Cliente Srl</Denominazione></Anagrafica></DatiAnagrafici>${sede}</CessionarioCommittente>
  </FatturaElettronicaHeader>
  <FatturaElettronicaBody>
    <DatiGenerali><DatiGeneraliDocumento><TipoDocumento>${parts.type ?? 'TD01'}</TipoDocumento><Divisa>EUR</Divisa><Data>2025-03-10</Data><Numero>FT-9</Numero>${parts.general ?? ''}<ImportoTotaleDocumento>${parts.total}</ImportoTotaleDocumento></DatiGeneraliDocumento></DatiGenerali>
    <DatiBeniServizi>${parts.lines}${parts.summaries}</DatiBeniServizi>
  </FatturaElettronicaBody>
</p:FatturaElettronica>`;
}

const line = (n: number, unit: string, total: string, rate = '22.00', extra = ''): string =>
  `<DettaglioLinee><NumeroLinea>${n}</NumeroLinea><Descrizione>Voce ${n}</Descrizione><Quantita>2.00</Quantita><PrezzoUnitario>${unit}</PrezzoUnitario>${extra}<PrezzoTotale>${total}</PrezzoTotale><AliquotaIVA>${rate}</AliquotaIVA></DettaglioLinee>`;
const summary = (taxable: string, tax: string, rate = '22.00', extra = ''): string =>
  `<DatiRiepilogo><AliquotaIVA>${rate}</AliquotaIVA>${extra}<ImponibileImporto>${taxable}</ImponibileImporto><Imposta>${tax}</Imposta><EsigibilitaIVA>I</EsigibilitaIVA></DatiRiepilogo>`;

describe('totals as FatturaPA computes them', () => {
  it('discounts and surcharges apply in turn to the unit price: 10 % off 100 then 5 off, times 2 = 170', () => {
    expect(
      adjusted(100, [
        { kind: 'SC', percent: 10, amount: null },
        { kind: 'SC', percent: null, amount: 5 },
      ]),
    ).toBe(85);
    expect(adjusted(100, [{ kind: 'MG', percent: 10, amount: null }])).toBeCloseTo(110, 9);
    expect(
      lineTotalOf({
        quantity: 2,
        unitPrice: 100,
        adjustments: [
          { kind: 'SC', percent: 10, amount: null },
          { kind: 'SC', percent: null, amount: 5 },
        ],
      }),
    ).toBe(170);
    expect(
      documentTotalOf({ vatSummaries: [{ vatRate: 22, nature: null, taxable: 100, tax: 22 }], adjustments: [{ kind: 'SC', percent: null, amount: 2 }], rounding: -0.01 }),
    ).toBe(119.99);
  });

  it('accepts a line discount (ScontoMaggiorazione), refuses a PrezzoTotale that ignores it', () => {
    const disc = '<ScontoMaggiorazione><Tipo>SC</Tipo><Percentuale>10.00</Percentuale></ScontoMaggiorazione>';
    const ok = xmlOf({ lines: line(1, '100.00', '180.00', '22.00', disc), summaries: summary('180.00', '39.60'), total: '219.60' });
    expect(checkFatturaXml(ok).lines[0].adjustments).toEqual([{ kind: 'SC', percent: 10, amount: null }]);
    const bad = xmlOf({ lines: line(1, '100.00', '200.00', '22.00', disc), summaries: summary('200.00', '44.00'), total: '244.00' });
    expect(refusal(() => checkFatturaXml(bad))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'xml:DettaglioLinee[0]/PrezzoTotale' });
  });

  it("counts the pension contribution (DatiCassaPrevidenziale) in its rate's taxable amount and the total", () => {
    const cassa =
      '<DatiCassaPrevidenziale><TipoCassa>TC22</TipoCassa><AlCassa>4.00</AlCassa><ImportoContributoCassa>8.00</ImportoContributoCassa><ImponibileCassa>200.00</ImponibileCassa><AliquotaIVA>22.00</AliquotaIVA></DatiCassaPrevidenziale>';
    const ok = xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary('208.00', '45.76'), general: cassa, total: '253.76' });
    expect(checkFatturaXml(ok).cassa).toEqual([{ kind: 'TC22', amount: 8, vatRate: 22, nature: null }]);
    const lines = xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary('200.00', '44.00'), general: cassa, total: '244.00' });
    expect(refusal(() => checkFatturaXml(lines))).toMatchObject({ field: 'xml:DatiRiepilogo[0]/ImponibileImporto' });
  });

  it("adds a summary's Arrotondamento to its taxable amount, and the document's discount and rounding to the total", () => {
    const rounded = xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary('200.01', '44.00', '22.00', '<Arrotondamento>0.01</Arrotondamento>'), total: '244.01' });
    expect(checkFatturaXml(rounded).vatSummaries[0]).toMatchObject({ taxable: 200.01, rounding: 0.01 });
    const general = '<ScontoMaggiorazione><Tipo>SC</Tipo><Importo>4.00</Importo></ScontoMaggiorazione><Arrotondamento>-0.02</Arrotondamento>';
    const ok = xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary('200.00', '44.00'), general, total: '239.98' });
    expect(checkFatturaXml(ok).total).toBe(239.98);
    const ignored = xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary('200.00', '44.00'), general, total: '244.00' });
    expect(refusal(() => checkFatturaXml(ignored))).toMatchObject({ field: 'xml:ImportoTotaleDocumento' });
  });

  it('reads a malformed discount as the element missing', () => {
    const r = readFattura(
      xmlOf({ lines: line(1, '100.00', '200.00', '22.00', '<ScontoMaggiorazione><Tipo>XX</Tipo></ScontoMaggiorazione>'), summaries: summary('200.00', '44.00'), total: '244.00' }),
    );
    expect(r).toEqual({ ok: false, error: 'missing', field: 'ScontoMaggiorazione/Tipo' });
  });
});

describe('regime and VAT chargeability', () => {
  it('writes RF01 and I by default, the given codes otherwise, and refuses codes outside the lists', () => {
    const dflt = buildFattura(invoiceFromInput(input()), '1');
    expect(dflt).toContain('<RegimeFiscale>RF01</RegimeFiscale>');
    expect(dflt).toContain('<EsigibilitaIVA>I</EsigibilitaIVA>');
    const given = buildFattura(invoiceFromInput(input({ taxRegime: 'rf19', vatChargeability: 'D' })), '1');
    expect(given).toContain('<RegimeFiscale>RF19</RegimeFiscale>');
    expect(given).toContain('<EsigibilitaIVA>D</EsigibilitaIVA>');
    expect(checkFatturaXml(given).vatSummaries[0].vatDue).toBe('D');
    expect(refusal(() => invoiceFromInput(input({ taxRegime: 'RF03' })))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.taxRegime' });
    expect(refusal(() => invoiceFromInput(input({ vatChargeability: 'X' })))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.vatChargeability' });
  });
});

describe('document-type rules', () => {
  it('TD04 and TD05 refer to the original invoice, dated no later than the note', () => {
    for (const t of ['TD04', 'TD05']) {
      expect(refusal(() => invoiceFromInput(input({ documentType: t })))).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'input.relatedInvoices',
        rule: `${t}_REFERENCE_REQUIRED`,
      });
      expect(refusal(() => invoiceFromInput(input({ documentType: t, relatedInvoices: [{ number: 'FT-0', date: '2025-04-01' }] })))).toMatchObject({
        field: 'input.relatedInvoices[0].date',
        rule: `${t}_REFERENCE_AFTER_NOTE`,
      });
    }
    const xml = buildFattura(invoiceFromInput(input({ documentType: 'TD04', relatedInvoices: [{ number: 'FT-0', date: '2025-02-01' }] })), '1');
    expect(xml).toMatch(/<DatiFattureCollegate>\s*<IdDocumento>FT-0<\/IdDocumento>\s*<Data>2025-02-01<\/Data>/);
    expect(checkFatturaXml(xml).relatedInvoices).toEqual([{ number: 'FT-0', date: '2025-02-01' }]);
    expect(refusal(() => checkFatturaXml(xml.replace(/<DatiFattureCollegate>[\s\S]*<\/DatiFattureCollegate>/, '')))).toMatchObject({
      field: 'xml:DatiFattureCollegate',
      rule: 'TD04_REFERENCE_REQUIRED',
    });
  });

  it('TD17–TD19: the company is the buyer, the supplier foreign (TD18: EU), no N6.x nature; the company transmits', () => {
    const self = (t: string, sender: InvoiceIn['sender'], over: Partial<InvoiceIn> = {}): InvoiceIn =>
      input({ documentType: t, sender, recipient: party('Openapi SpA', COMPANY), recipientCode: '0000000', ...over });
    const s = invoiceFromInput(self('TD17', foreign('Acme Inc', 'US', '123456789')));
    const xml = buildFattura(s, '1');
    expect(xml).toMatch(/<IdTrasmittente>\s*<IdPaese>IT<\/IdPaese>\s*<IdCodice>12485671007<\/IdCodice>/);
    expect(xml).toContain('<RegimeFiscale>RF18</RegimeFiscale>');
    expect(checkFatturaXml(xml).documentType).toBe('TD17');
    expect(refusal(() => invoiceFromInput(self('TD18', party('Fornitore Srl', CUSTOMER))))).toMatchObject({ field: 'input.sender.country', rule: 'TD18_FOREIGN_SUPPLIER' });
    expect(refusal(() => invoiceFromInput(self('TD18', foreign('Acme Inc', 'US', '123456789'))))).toMatchObject({ field: 'input.sender.country', rule: 'TD18_EU_SUPPLIER' });
    expect(invoiceFromInput(self('TD18', foreign('Acme SARL', 'FR', 'FR12345678901'))).sender.country).toBe('FR');
    expect(
      refusal(() => invoiceFromInput(self('TD19', foreign('Acme Inc', 'US', '123456789'), { lines: [{ description: 'Merce', unitPrice: 10, vatRate: 0, nature: 'N6.1' }] }))),
    ).toMatchObject({
      field: 'input.lines[0].nature',
      rule: 'TD19_NO_REVERSE_CHARGE_NATURE',
    });
    // The buyer is the company: Italian, with its VAT number.
    expect(
      refusal(() => invoiceFromInput(input({ documentType: 'TD17', sender: foreign('Acme Inc', 'US', '123456789'), recipient: foreign('Other', 'DE', 'DE123456789') }))),
    ).toMatchObject({ field: 'input.recipient.country' });
  });

  it('TD16: the supplier is another Italian party; the same subject on both sides is refused', () => {
    const ok = invoiceFromInput(input({ documentType: 'TD16', sender: party('Fornitore Srl', CUSTOMER), recipient: party('Openapi SpA', COMPANY), recipientCode: '0000000' }));
    expect(ok.recipient.vatNumber).toBe(COMPANY);
    expect(refusal(() => invoiceFromInput(input({ documentType: 'TD16', sender: party('Openapi SpA', COMPANY), recipient: party('Openapi SpA', COMPANY) })))).toMatchObject({
      field: 'input.sender.vatNumber',
      rule: 'TD16_SUPPLIER_IS_ANOTHER_PARTY',
    });
    expect(
      refusal(() => invoiceFromInput(input({ documentType: 'TD16', sender: foreign('Acme SARL', 'FR', 'FR12345678901'), recipient: party('Openapi SpA', COMPANY) }))),
    ).toMatchObject({ rule: 'TD16_ITALIAN_SUPPLIER' });
  });

  it('TD21 and TD27 have the company on both sides; TD01 two different parties', () => {
    for (const t of ['TD21', 'TD27']) {
      expect(refusal(() => invoiceFromInput(input({ documentType: t })))).toMatchObject({ field: 'input.recipient.vatNumber', rule: `${t}_SAME_PARTY` });
      const s = invoiceFromInput(input({ documentType: t, recipient: party('Openapi SpA', COMPANY), recipientCode: '0000000' }));
      expect(checkFatturaXml(buildFattura(s, '1')).documentType).toBe(t);
    }
    expect(refusal(() => invoiceFromInput(input({ recipient: party('Openapi SpA', COMPANY) })))).toMatchObject({
      field: 'input.recipient.vatNumber',
      rule: 'TD01_DIFFERENT_PARTIES',
    });
    const same = xmlOf({
      lines: line(1, '100.00', '200.00'),
      summaries: summary('200.00', '44.00'),
      total: '244.00',
      buyer: `<IdFiscaleIVA><IdPaese>IT</IdPaese><IdCodice>${COMPANY}</IdCodice></IdFiscaleIVA>`,
    });
    expect(refusal(() => checkFatturaXml(same))).toMatchObject({ field: 'xml:CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA', rule: 'TD01_DIFFERENT_PARTIES' });
    expect(checkFatturaXml(same.replace('<TipoDocumento>TD01', '<TipoDocumento>TD27')).documentType).toBe('TD27');
  });

  it('one subject on both sides is refused only for the types SDI check 00471 covers: TD26 (internal transfer) and a TD04 correcting a TD21 pass', () => {
    const me = party('Openapi SpA', COMPANY);
    expect(invoiceFromInput(input({ documentType: 'TD26', recipient: me, recipientCode: '0000000' })).documentType).toBe('TD26');
    expect(invoiceFromInput(input({ documentType: 'TD04', recipient: me, recipientCode: '0000000', relatedInvoices: [{ number: 'AF-1', date: '2025-03-01' }] })).documentType).toBe(
      'TD04',
    );
    for (const t of ['TD02', 'TD06', 'TD24', 'TD25']) {
      expect(refusal(() => invoiceFromInput(input({ documentType: t, recipient: me })))).toMatchObject({ rule: `${t}_DIFFERENT_PARTIES` });
    }
  });

  it('TD18: goods from Northern Ireland (XI) are intra-EU goods', () => {
    const s = invoiceFromInput(
      input({ documentType: 'TD18', sender: foreign('Belfast Ltd', 'XI', 'XI123456789'), recipient: party('Openapi SpA', COMPANY), recipientCode: '0000000' }),
    );
    expect(s.sender.country).toBe('XI');
  });

  it('TD18: a Greek supplier, by ISO code (GR) or as its VAT ids write it (EL), is an EU supplier', () => {
    for (const country of ['GR', 'EL']) {
      const s = invoiceFromInput(
        input({ documentType: 'TD18', sender: foreign('Athens AE', country, '094014201'), recipient: party('Openapi SpA', COMPANY), recipientCode: '0000000' }),
      );
      expect(s.sender.country).toBe(country);
      expect(checkFatturaXml(buildFattura(s, '1')).documentType).toBe('TD18');
    }
  });

  it('ImponibileImporto within ±1 € of its lines is accepted (SDI 00422), further off refused; the regime list names RF20', () => {
    const doc = (taxable: string, tax: string, total: string): string => xmlOf({ lines: line(1, '100.00', '200.00'), summaries: summary(taxable, tax), total });
    expect(checkFatturaXml(doc('200.60', '44.13', '244.73')).vatSummaries[0].taxable).toBe(200.6);
    expect(refusal(() => checkFatturaXml(doc('201.50', '44.33', '245.83')))).toMatchObject({ field: 'xml:DatiRiepilogo[0]/ImponibileImporto' });
    const rf = refusal(() => checkFatturaXml(doc('200.00', '44.00', '244.00').replace('<RegimeFiscale>RF01', '<RegimeFiscale>RF03')));
    expect(rf.message).toContain('RF20');
  });
});
