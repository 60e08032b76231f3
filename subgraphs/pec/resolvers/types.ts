/** Resolvers of the PEC record types (mailboxes, notifications), over the tracked store's snapshots. */
import type { SubgraphContext } from '../../runtime/context.ts';
import type { SignedFileValue } from '../../runtime/tracking/files.ts';
import type { MailboxResolvers, MailboxUser, PecNotificationResolvers, PecNotificationStatus } from '../__generated__/resolvers-types.ts';
import { bool, int, list } from '../../upstream/coerce.ts';
import { isObj, type Obj } from '../../../contract/values.ts';
import { boxTypeOf, contractState, isFinalState, isoDay, isoTime, mailboxStatus, stampOf, text } from '../model.ts';
import type { PecService, TrackedPec } from '../service.ts';

const rec = (p: TrackedPec): Obj => p.record;
const str =
  (name: string) =>
  (p: TrackedPec): string | null =>
    text(rec(p)[name]);
const names = (v: unknown): string[] =>
  list(v)
    .map(text)
    .filter((s): s is string => s !== null);

const NOTICE_STATES: Readonly<Record<string, PecNotificationStatus>> = {
  codice_in_richiesta: 'CODE_REQUESTED',
  in_attesa_di_documenti: 'AWAITING_DOCUMENTS',
  documenti_caricati: 'DOCUMENTS_UPLOADED',
  comunicazione_evasa: 'DONE',
};

export function typeResolvers(service: PecService) {
  const signed = (ctx: SubgraphContext, ep: Parameters<PecService['files']['issue']>[2], id: string, fileName: string): Promise<SignedFileValue> =>
    service.files.issue(service.publicUrl(), ctx.auth, ep, { id }, fileName);

  const Mailbox: MailboxResolvers = {
    id: (p) => p.id,
    address: (p) => text(rec(p).casella_pec) ?? '',
    domain: (p) => text(rec(p).dominio) ?? text(rec(p).casella_pec)?.split('@')[1] ?? null,
    boxType: (p) => boxTypeOf(rec(p).tipo_casella),
    status: (p) => mailboxStatus(p.rawState),
    state: (p) => contractState(p.rawState),
    rawStatus: (p) => p.rawState,
    done: (p) => isFinalState(p.rawState),
    expiresOn: (p) => isoDay(rec(p).data_scadenza),
    registeredAt: (p) => isoTime(stampOf(rec(p), 'registrazione')),
    updatedAt: (p) => isoTime(stampOf(rec(p), 'ultima_modifica')),
    activatedAt: (p) => isoTime(stampOf(rec(p), 'evasione')),
    expiresAt: (p) => isoTime(stampOf(rec(p), 'scadenza')),
    revokedAt: (p) => isoTime(stampOf(rec(p), 'revoca')),
    activationDay: (p) => isoDay(rec(p).data_attivazione),
    owner: str('owner'),
    customerType: str('tipo_cliente'),
    activationCode: str('cod_attivazione'),
    uid: str('uid'),
    diskSpaceMb: (p) => int(rec(p).spazio_disco),
    archiveSpaceMb: (p) => int(rec(p).spazio_storico),
    preservationSpaceMb: (p) => int(rec(p).spazio_conservazione),
    archive: (p) => bool(rec(p).storico),
    preservation: (p) => bool(rec(p).conservazione),
    sms: (p) => bool(rec(p).sms),
    autoRenew: (p) => bool(rec(p).autorinnovo),
    activationDocuments: (p) => names(rec(p).documenti_attivazione),
    preservationDocuments: (p) => names(rec(p).documenti_conservazione),
    users: (p) =>
      list(rec(p).multiutenza)
        .filter(isObj)
        .map((u): MailboxUser => ({
          id: text(u.id_utenza),
          userId: text(u.userid),
          firstName: text(u.nome),
          lastName: text(u.cognome),
          description: text(u.descrizione),
          passwordEmail: text(u.email_gestione_password),
          activatedAt: isoTime(isObj(u.timestamp) ? u.timestamp.attivazione : null),
        })),
    applicant: (p) => {
      const r = rec(p);
      return {
        firstName: text(r.nome_richiedente),
        lastName: text(r.cognome_richiedente),
        email: text(r.email),
        phone: text(r.telefono),
        taxCode: text(r.codice_fiscale_richiedente),
        birthDate: isoDay(r.data_nascita_richiedente),
        gender: text(r.sesso_richiedente),
        birthCountry: text(r.nazione_nascita_richiedente),
        birthProvince: text(r.provincia_nascita_richiedente),
      };
    },
    holder: (p) => {
      const r = rec(p);
      return {
        companyName: text(r.denominazione_titolare),
        taxCodeOrVat: text(r.cf_piva_titolare),
        address: text(r.indirizzo_titolare),
        city: text(r.comune_titolare),
        postalCode: text(r.cap_titolare),
        province: text(r.provincia_titolare),
        country: text(r.nazione_titolare),
      };
    },
    activationForm: (p, _args, ctx) => {
      const state = contractState(p.rawState);
      if (state === 'chiusa' || state === 'registrazione_annullata') return null;
      return signed(ctx, service.endpoints.activationForm, p.id, `${p.id}_modulo_attivazione.pdf`);
    },
    preservationForm: (p, _args, ctx) => (contractState(p.rawState) === 'evasa' ? signed(ctx, service.endpoints.preservationForm, p.id, `${p.id}_modulo_conservazione.pdf`) : null),
    record: (p) => p.record,
  };

  const PecNotification: PecNotificationResolvers = {
    id: (p) => p.id,
    address: str('casella_pec'),
    status: (p) => NOTICE_STATES[contractState(p.rawState) ?? ''] ?? null,
    rawStatus: (p) => p.rawState,
    done: (p) => isFinalState(p.rawState),
    updatedAt: (p) => isoTime(p.updatedAt),
    taxCodeOrVat: str('cf_piva'),
    companyName: str('ragione_sociale'),
    city: str('comune'),
    province: str('provincia'),
    firstName: str('nome'),
    lastName: str('cognome'),
    taxCode: str('cf'),
    role: str('qualifica'),
    email: str('email'),
    mobile: str('cellulare'),
    administratorPec: (p) => bool(rec(p).pec_amministratore),
    registerCode: str('codice_registro_imprese'),
    documents: (p) => names(rec(p).documenti_registro_imprese),
    owner: str('owner'),
    delegationForm: (p, _args, ctx) =>
      contractState(p.rawState) === 'codice_in_richiesta' ? null : signed(ctx, service.endpoints.delegationForm, p.id, `${p.id}_procura_registro_imprese.pdf`),
    record: (p) => p.record,
  };

  return { Mailbox, PecNotification };
}
