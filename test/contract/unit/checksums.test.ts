import { describe, expect, it } from 'vitest';
import {
  fiscalCodeCheckChar,
  isValidFiscalCode,
  isValidItalianVat,
  isValidPersonFiscalCode,
  makeFiscalCode,
  makeItalianVat,
  nameCode,
  surnameCode,
  vatCheckDigit,
} from '../../../contract/checksums.ts';

describe('Italian VAT numbers', () => {
  it('accepts real VAT numbers and computes their check digit', () => {
    for (const vat of ['12485671007', '16935371001', '00743110157', '01234567897']) {
      expect(isValidItalianVat(vat)).toBe(true);
      expect(vatCheckDigit(vat.slice(0, 10))).toBe(Number(vat[10]));
    }
  });

  it('refuses a wrong check digit, wrong lengths, letters and all zeros', () => {
    expect(isValidItalianVat('12485671008')).toBe(false);
    expect(isValidItalianVat('1248567100')).toBe(false);
    expect(isValidItalianVat('124856710071')).toBe(false);
    expect(isValidItalianVat('1248567100A')).toBe(false);
    expect(isValidItalianVat('00000000000')).toBe(false);
    expect(isValidItalianVat('')).toBe(false);
  });

  it('tolerates an IT prefix and surrounding whitespace', () => {
    expect(isValidItalianVat('IT12485671007')).toBe(true);
    expect(isValidItalianVat(' 12485671007 ')).toBe(true);
  });

  it('makeItalianVat always yields a valid number, and any other last digit is invalid', () => {
    for (let i = 0; i < 500; i++) {
      const ten = String((i * 7_919_113 + 12_345) % 10_000_000_000).padStart(10, '0');
      const vat = makeItalianVat(ten);
      expect(isValidItalianVat(vat) || vat === '00000000000').toBe(true);
      const wrong = ten + String((Number(vat[10]) + 1 + (i % 9)) % 10);
      expect(isValidItalianVat(wrong)).toBe(false);
    }
  });

  it('vatCheckDigit refuses input that is not ten digits', () => {
    expect(() => vatCheckDigit('123')).toThrow();
  });
});

describe('Italian fiscal codes', () => {
  it('accepts the codes of the vendor examples and computes their check letter', () => {
    for (const cf of ['SCRLCU73R02H501H', 'DSNSMN80M11L117F', 'DLCSHN77S29Z114J', 'RSSMRA80A01H501U']) {
      expect(isValidFiscalCode(cf)).toBe(true);
      expect(isValidPersonFiscalCode(cf)).toBe(true);
      expect(fiscalCodeCheckChar(cf.slice(0, 15))).toBe(cf[15]);
    }
  });

  it('is case-insensitive and tolerates whitespace', () => {
    expect(isValidFiscalCode(' rssmra80a01h501u ')).toBe(true);
  });

  it('refuses a wrong check letter, a bad month letter, a bad day and bad structure', () => {
    expect(isValidFiscalCode('RSSMRA80A01H501V')).toBe(false);
    // the vendor's IT-ubo example uses month letter U, which does not exist
    expect(isValidFiscalCode('MRORSS60U67H843Z')).toBe(false);
    const day32 = `RSSMRA80A32H501`;
    expect(isValidFiscalCode(day32 + fiscalCodeCheckChar(day32))).toBe(false);
    const day72 = `RSSMRA80A72H501`;
    expect(isValidFiscalCode(day72 + fiscalCodeCheckChar(day72))).toBe(false);
    expect(isValidFiscalCode('RSSMRA80A01H50')).toBe(false);
    expect(isValidFiscalCode('1SSMRA80A01H501U')).toBe(false);
  });

  it('accepts omocodia variants with their own check letter', () => {
    const base = 'RSSMRA80A01H501U';
    const variant15 = `${base.slice(0, 14)}M`; // last digit 1 → M
    const variant = variant15 + fiscalCodeCheckChar(variant15);
    expect(isValidFiscalCode(variant)).toBe(true);
  });

  it('accepts the 11-digit code of a company with the VAT rules', () => {
    expect(isValidFiscalCode('12485671007')).toBe(true);
    expect(isValidFiscalCode('12485671008')).toBe(false);
    expect(isValidPersonFiscalCode('12485671007')).toBe(false);
  });

  it('builds surname and name letters by the official rules', () => {
    expect(surnameCode('ROSSI')).toBe('RSS');
    expect(surnameCode('FO')).toBe('FOX');
    expect(surnameCode("D'ANGELO")).toBe('DNG');
    expect(surnameCode('DE LUCIA')).toBe('DLC');
    expect(nameCode('MARIO')).toBe('MRA');
    expect(nameCode('GIANFRANCO')).toBe('GFR');
    expect(nameCode('LUCA')).toBe('LCU');
  });

  it('makeFiscalCode builds valid codes, women with day + 40', () => {
    expect(makeFiscalCode({ surname: 'ROSSI', name: 'MARIO', birthDate: '1980-01-01', gender: 'M', cadastralCode: 'H501' })).toBe('RSSMRA80A01H501U');
    expect(makeFiscalCode({ surname: 'SCURIATTI', name: 'LUCA', birthDate: '1973-10-02', gender: 'M', cadastralCode: 'H501' })).toBe('SCRLCU73R02H501H');
    const woman = makeFiscalCode({ surname: 'BIANCHI', name: 'LAURA', birthDate: '1954-07-03', gender: 'F', cadastralCode: 'D612' });
    expect(woman.slice(0, 11)).toBe('BNCLRA54L43');
    expect(isValidFiscalCode(woman)).toBe(true);
  });
});
