/** Shared PEC test data and waits: a valid applicant, a real PDF, registration bodies and inputs, a bulk sending's events. */
import { makeFiscalCode } from '../../contract/checksums.ts';
import { renderPdf } from '../../emulator/pdf.ts';
import type { BulkService, Sending } from '../../subgraphs/pec/bulk.ts';
import { withSafety } from './safety.ts';

export const PEC_CF = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1982-04-11', gender: 'M', cadastralCode: 'H501' });

/** A real, small PDF, base64-encoded. */
/** The applicant and holder of a mailbox registration (`registerMailbox`), Mario Rossi of Rome. */
export const PEC_APPLICANT = {
  firstName: 'Mario',
  lastName: 'Rossi',
  email: 'mario@example.com',
  phone: '+39 0548 798569',
  taxCode: PEC_CF,
  birthDate: '1982-04-11',
  gender: 'M',
  birthCountry: 'IT',
  birthProvince: 'RM',
};
export const PEC_HOLDER = { address: 'via Verdi 20', city: 'Roma', postalCode: '00042', province: 'RM', country: 'IT' };

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

/** A `NotifyCompanyRegisterInput` for the mailbox `address`: Mario Rossi, legal representative of Azienda Test (Roma). */
export function registerNotificationInput(address: string): Record<string, string> {
  return {
    address,
    taxCodeOrVat: '12485671007',
    companyName: 'Azienda Test',
    city: 'Roma',
    province: 'RM',
    firstName: 'Mario',
    lastName: 'Rossi',
    taxCode: PEC_CF,
    role: 'LEGALE_RAPPRESENTANTE',
    email: 'mario@example.com',
    mobile: '3331234567',
  };
}

/** Waits for an event of the bulk sending `id` matching `pred` on the service's bus (latest first). */
export async function sendingUntil(bulk: BulkService, tenant: string, id: string, pred: (s: Sending) => boolean): Promise<Sending> {
  const it = bulk.bus.subscribe(bulk.topic(tenant, id), { initial: async () => [(await bulk.get(tenant, id))!], identity: (e) => e.id, version: (e) => e.seq });
  try {
    for (;;) {
      const r = await withSafety(it.next(), 'sending event', 20_000);
      if (r.done) throw new Error('stream ended');
      if (pred(r.value)) return r.value;
    }
  } finally {
    await it.return?.();
  }
}
