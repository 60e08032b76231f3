/** Shared PEC test data: a valid applicant, a real PDF, and registration bodies. */
import { makeFiscalCode } from '../../contract/checksums.ts';
import { renderPdf } from '../../emulator/pdf.ts';

export const PEC_CF = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1982-04-11', gender: 'M', cadastralCode: 'H501' });

/** A real, small PDF, base64-encoded. */
export const PDF_B64 = renderPdf('Signed form', ['Signed activation form of Mario Rossi']).toString('base64');

/** A vendor `POST /pec` body for `address` of `type`. */
export function mailboxBody(address: string, type: string): Record<string, unknown> {
  return {
    casella_pec: address,
    tipo_casella: type,
    tipo_cliente: 'PV',
    nome_richiedente: 'mario',
    cognome_richiedente: 'rossi',
    email: 'mail@domain.com',
    telefono: '0548798569',
    codice_fiscale_richiedente: PEC_CF,
    data_nascita_richiedente: '11/04/1982',
    sesso_richiedente: 'M',
    nazione_nascita_richiedente: 'it',
    provincia_nascita_richiedente: 'RM',
    indirizzo_titolare: 'via verdi 20',
    comune_titolare: 'roma',
    cap_titolare: '00042',
    nazione_titolare: 'it',
    provincia_titolare: 'rm',
  };
}
