/** Shared risk test data: a valid person, a real PDF, and a complete person bureau order. */
import { renderPdf } from '../../emulator/pdf.ts';
import type { PersonBureauInput } from '../../subgraphs/risk/__generated__/resolvers-types.ts';
import { makeFiscalCode } from '../../contract/checksums.ts';

export const CF = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });
export const CF2 = makeFiscalCode({ surname: 'Bianchi', name: 'Anna', birthDate: '1985-11-02', gender: 'F', cadastralCode: 'H501' });

/** A real, small PDF, base64-encoded as the mutations take files. */
export const PDF = renderPdf('Test document', ['Identity document of Mario Rossi']).toString('base64');

const future = (years: number): string => `${new Date().getUTCFullYear() + years}-01-31`;

/** A valid person bureau order for Mario Rossi; `over` replaces top-level fields. */
export function bureauInput(over: Partial<PersonBureauInput> = {}): PersonBureauInput {
  return {
    firstName: 'Mario',
    lastName: 'Rossi',
    email: 'm.rossi@example.com',
    birthDate: '1990-04-28',
    gender: 'MALE',
    taxCode: CF,
    birthPlace: { city: 'Terni', province: 'TR', country: 'Italia' },
    residence: { address: 'Via Rossini', streetNumber: '2', city: 'Terni', postalCode: '05100', province: 'TR', country: 'Italia' },
    document: {
      type: 'IDENTITY_CARD',
      number: 'CA12345AB',
      releaseDate: '2020-01-31',
      expirationDate: future(5),
      releasePlace: { city: 'Terni', province: 'TR' },
      authority: 'Comune',
      file: PDF,
    },
    healthInsuranceCardFile: PDF,
    ...over,
  };
}
