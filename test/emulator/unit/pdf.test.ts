import { describe, expect, it } from 'vitest';
import { decodeBase64Pdf, isPdf, renderPdf } from '../../../emulator/pdf.ts';

/** Parses the cross-reference table of a PDF written by renderPdf. */
function xrefOf(pdf: Buffer): { start: number; offsets: number[]; size: number } {
  const text = pdf.toString('latin1');
  const startxref = /startxref\n(\d+)\n%%EOF\n?$/.exec(text);
  expect(startxref).not.toBeNull();
  const start = Number(startxref?.[1]);
  expect(text.slice(start, start + 5)).toBe('xref\n');
  const head = /^xref\n0 (\d+)\n/.exec(text.slice(start));
  const count = Number(head?.[1]);
  const entries = text
    .slice(start + (head?.[0].length ?? 0))
    .split('\n')
    .slice(0, count);
  expect(entries[0]).toBe('0000000000 65535 f ');
  const offsets = entries.slice(1).map((e) => {
    expect(e).toMatch(/^\d{10} 00000 n $/);
    return Number(e.slice(0, 10));
  });
  const size = Number(/\/Size (\d+)/.exec(text.slice(start))?.[1]);
  return { start, offsets, size };
}

describe('renderPdf', () => {
  it('writes a PDF 1.4 whose xref offsets point at each object', () => {
    const pdf = renderPdf('Delega (prova)', ['Mario Rossi, codice fiscale RSSMRA80A01H501U', 'Città: Forlì – € 10']);
    const text = pdf.toString('latin1');
    expect(text.startsWith('%PDF-1.4\n')).toBe(true);
    expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
    expect(isPdf(pdf)).toBe(true);
    const { offsets, size } = xrefOf(pdf);
    expect(size).toBe(offsets.length + 1);
    offsets.forEach((offset, i) => expect(text.slice(offset, offset + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`));
    expect(text).toContain('/Type /Catalog');
    expect(text).toContain('/BaseFont /Helvetica');
    expect(text).toContain('(Mario Rossi, codice fiscale RSSMRA80A01H501U) Tj');
    expect(text).toContain('(Delega \\(prova\\)) Tj');
    // Latin-1 letters are octal escapes, the euro sign is WinAnsi 0x80.
    expect(text).toContain('Citt\\340: Forl\\354 - \\200 10');
  });

  it('gives each content stream its exact /Length', () => {
    const text = renderPdf('T', ['a', 'b']).toString('latin1');
    const re = /<< \/Length (\d+) >>\nstream\n/g;
    let m: RegExpExecArray | null;
    let streams = 0;
    while ((m = re.exec(text)) !== null) {
      const begin = m.index + m[0].length;
      expect(text.slice(begin + Number(m[1]), begin + Number(m[1]) + 'endstream'.length)).toBe('endstream');
      streams++;
    }
    expect(streams).toBe(1);
  });

  it('adds pages when the text is long, and wraps long lines', () => {
    const lines = Array.from({ length: 150 }, (_, i) => `riga ${i} ${'x'.repeat(i % 3 === 0 ? 150 : 10)}`);
    const pdf = renderPdf('Lungo', lines);
    const text = pdf.toString('latin1');
    const count = Number(/\/Count (\d+)/.exec(text)?.[1]);
    expect(count).toBeGreaterThan(2);
    expect((text.match(/\/Type \/Page /g) ?? []).length).toBe(count);
    const { offsets } = xrefOf(pdf);
    offsets.forEach((offset, i) => expect(text.slice(offset).startsWith(`${i + 1} 0 obj`)).toBe(true));
  });
});

describe('isPdf / decodeBase64Pdf', () => {
  it('recognises the magic bytes', () => {
    expect(isPdf(Buffer.from('%PDF-1.7\n'))).toBe(true);
    expect(isPdf(Buffer.from('%PD'))).toBe(false);
    expect(isPdf(Buffer.from('<html>'))).toBe(false);
  });

  it('decodes base64 PDFs and refuses the rest', () => {
    const pdf = renderPdf('x', []);
    expect(decodeBase64Pdf(pdf.toString('base64'))?.equals(pdf)).toBe(true);
    expect(decodeBase64Pdf(`data:application/pdf;base64,${pdf.toString('base64')}`)).not.toBeNull();
    expect(decodeBase64Pdf(Buffer.from('hello').toString('base64'))).toBeNull();
    expect(decodeBase64Pdf('not base64 at all!')).toBeNull();
    expect(decodeBase64Pdf('')).toBeNull();
  });
});
