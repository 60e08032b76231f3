/**
 * A small, dependency-free PDF 1.4 writer for the emulator's documents (delegation forms, reports).
 *
 * The output is a real PDF: header, catalog, page tree, one or more A4 pages of Helvetica text
 * (WinAnsi encoding, so Italian accented letters print), an info dictionary, a cross-reference table
 * whose offsets point exactly at each `n 0 obj`, the trailer and `%%EOF`. Everything is written as
 * single-byte (latin1) text, so string lengths are byte offsets.
 */

const PAGE_WIDTH = 595;
const PAGE_HEIGHT = 842;
const MARGIN = 50;
const TITLE_SIZE = 16;
const BODY_SIZE = 10;
const LEADING = 14;
/** Helvetica at 10 pt averages about 5 pt per character: 95 characters fit in the text width. */
const WRAP_AT = 95;

/** Escapes a string for a PDF literal `( … )` in WinAnsi encoding; characters it cannot show become `?`. */
function pdfString(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 63;
    if (ch === '\\' || ch === '(' || ch === ')') out += `\\${ch}`;
    else if (code === 0x09) out += ' ';
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else if (code >= 0xa0 && code <= 0xff) out += `\\${code.toString(8).padStart(3, '0')}`;
    else if (code === 0x20ac)
      out += '\\200'; // euro sign in WinAnsi
    else if (code === 0x2019 || code === 0x2018) out += "'";
    else if (code === 0x2013 || code === 0x2014) out += '-';
    else if (code < 0x20) continue;
    else out += '?';
  }
  return out;
}

/** Splits text into lines of at most `width` characters, breaking at spaces where possible. */
function wrap(line: string, width: number): string[] {
  const out: string[] = [];
  let rest = line.replace(/\r/g, '');
  while (rest.length > width) {
    let cut = rest.lastIndexOf(' ', width);
    if (cut <= 0) cut = width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  out.push(rest);
  return out;
}

/**
 * Renders a PDF with `title` in bold-size Helvetica at the top of the first page and `lines`
 * below it (long lines wrap; `\n` inside a line starts a new one; pages are added as needed).
 */
export function renderPdf(title: string, lines: string[]): Buffer {
  const body = lines.flatMap((l) => l.split('\n')).flatMap((l) => wrap(l, WRAP_AT));
  const firstPageRows = Math.floor((PAGE_HEIGHT - 2 * MARGIN - TITLE_SIZE - LEADING) / LEADING);
  const otherPageRows = Math.floor((PAGE_HEIGHT - 2 * MARGIN) / LEADING);
  const pages: string[][] = [body.slice(0, firstPageRows)];
  for (let i = firstPageRows; i < body.length; i += otherPageRows) pages.push(body.slice(i, i + otherPageRows));

  // Object numbers: 1 catalog, 2 page tree, 3 font, 4 info, then (page, content) pairs.
  const pageObj = (i: number): number => 5 + 2 * i;
  const contentObj = (i: number): number => 6 + 2 * i;
  const objects: string[] = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pages.map((_, i) => `${pageObj(i)} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  objects[4] = `<< /Title (${pdfString(title)}) /Producer (openapi-supergraph emulator) >>`;
  pages.forEach((rows, i) => {
    let y = PAGE_HEIGHT - MARGIN;
    const ops: string[] = ['BT'];
    if (i === 0) {
      y -= TITLE_SIZE;
      ops.push(`/F1 ${TITLE_SIZE} Tf`, `1 0 0 1 ${MARGIN} ${y} Tm`, `(${pdfString(title)}) Tj`);
      y -= LEADING;
    }
    ops.push(`/F1 ${BODY_SIZE} Tf`);
    for (const row of rows) {
      y -= LEADING;
      ops.push(`1 0 0 1 ${MARGIN} ${y} Tm`, `(${pdfString(row)}) Tj`);
    }
    ops.push('ET');
    const stream = `${ops.join('\n')}\n`;
    objects[pageObj(i)] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ` + `/Resources << /Font << /F1 3 0 R >> >> /Contents ${contentObj(i)} 0 R >>`;
    objects[contentObj(i)] = `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}endstream`;
  });

  // The binary comment line marks the file as binary for transfer tools (bytes above 127).
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = out.length;
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let n = 1; n < objects.length; n++) out += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** True when the bytes start with the PDF magic `%PDF-`. */
export function isPdf(buf: Uint8Array): boolean {
  return buf.length >= 5 && buf[0] === 0x25 && buf[1] === 0x50 && buf[2] === 0x44 && buf[3] === 0x46 && buf[4] === 0x2d;
}

/**
 * Decodes base64 (optionally a `data:application/pdf;base64,` URI, whitespace allowed) and returns
 * the bytes when they are a PDF; null when the text is not base64 or not a PDF.
 */
export function decodeBase64Pdf(text: string): Buffer | null {
  const b64 = text.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  if (b64.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64)) return null;
  const bytes = Buffer.from(b64, 'base64');
  return isPdf(bytes) ? bytes : null;
}
