/**
 * The PEC subgraph's `Mutation` fields. Every input is validated before any paid call; a
 * registration checks the address's availability first (unless its idempotency key already ordered
 * it); changes that depend on the mailbox's type or state are checked against what the layer knows
 * of it (a free read when it knows nothing) before paying.
 */
import { badUserInput } from '../../../runtime/errors.ts';
import { idempotencyKey } from '../../../runtime/tracking/args.ts';
import { email, requiredText } from '../../../runtime/validate.ts';
import type { MutationResolvers } from '../../__generated__/resolvers-types.ts';
import { BOX_RANK, boxTypeOf, contractState, isStandardFamily } from '../../model.ts';
import { namedPriceOf, PEC_FINALIZE_PRICE_KEY, priceOf } from '../../../../contract/prices.ts';
import type { PecService } from '../../service.ts';
import { activationDocuments, boxType, enlargeBody, notifyBody, pecId, preservationSpace, registerBody, signedDocument, years as validYears } from '../../validate.ts';
import { changeable } from './shared.ts';

export function mutationResolvers(service: PecService): MutationResolvers {
  const eps = service.endpoints;
  return {
    registerMailbox: async (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const { body, address, type } = registerBody(input, service.settings, service.providerDomains);
      // A key that already ordered: the kit answers from it (the address is taken by that very order).
      const held = idem === null ? null : await service.store.idempotencyRecord(ctx.auth.tenant, idem);
      if (!held && type !== 'PECBULK') await service.requireAvailable(ctx, address);
      return service.create(ctx, 'MAILBOX', body, null, idem);
    },
    uploadMailboxActivation: async (_root, { id, documents }, ctx) => {
      const mid = pecId(id);
      // Checked before anything is read: the files themselves.
      activationDocuments(documents, null, service.maxPdfBytes);
      const box = await service.current(ctx, 'MAILBOX', mid);
      const docs = activationDocuments(documents, boxTypeOf((box.record as Record<string, unknown>).tipo_casella), service.maxPdfBytes);
      const state = contractState(box.rawState);
      if (state !== 'registrata' && state !== 'documenti_errati')
        throw badUserInput(`the activation documents are taken in REGISTERED or DOCUMENTS_REJECTED only; this mailbox is ${state ?? 'unknown'}`, 'id');
      return service.operate(ctx, 'MAILBOX', eps.activate, mid, { body: { documenti: docs } });
    },
    renewMailbox: async (_root, { id, years, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const mid = pecId(id);
      const n = validYears(years);
      const unit = priceOf(eps.renew.area, eps.renew.method, eps.renew.path);
      return service.operateKeyed(ctx, idem, 'MAILBOX', eps.renew, mid, { query: { anni: n }, price: unit * n }, async () => {
        const box = await service.current(ctx, 'MAILBOX', mid);
        const state = contractState(box.rawState);
        if (state !== 'evasa' && state !== 'revocata') throw badUserInput(`only ACTIVE or REVOKED mailboxes can be renewed; this one is ${state ?? 'unknown'}`, 'id');
      });
    },
    enlargeMailbox: async (_root, { id, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const mid = pecId(id);
      const body = enlargeBody(input);
      return service.operateKeyed(ctx, idem, 'MAILBOX', eps.modify, mid, { body }, async () => {
        const box = await changeable(service, ctx, mid, 'enlarging');
        if (body.spazio_conservazione !== undefined && (box.record as Record<string, unknown>).conservazione !== true) {
          throw badUserInput('input.preservationSpaceMb needs preservation enabled first (enableMailboxPreservation)', 'input.preservationSpaceMb');
        }
      });
    },
    upgradeMailbox: async (_root, { id, boxType: to }, ctx) => {
      const mid = pecId(id);
      const target = boxType(to);
      if (target !== 'SILVER' && target !== 'GOLD') throw badUserInput('boxType: an upgrade goes to SILVER or GOLD', 'boxType');
      const box = await changeable(service, ctx, mid, 'an upgrade');
      const from = boxTypeOf((box.record as Record<string, unknown>).tipo_casella);
      if (from !== null && (BOX_RANK[target] ?? 0) <= (BOX_RANK[from] ?? 0)) {
        throw badUserInput(`boxType: ${from} → ${target} is not an upgrade (downgrades are refused)`, 'boxType', { from, to: target });
      }
      return service.operate(ctx, 'MAILBOX', eps.upgrade, mid, { body: { tipo_casella: target } });
    },
    enableMailboxPreservation: async (_root, { id, documents, spaceMb, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const mid = pecId(id);
      const size = preservationSpace(spaceMb);
      if (documents.length === 0) throw badUserInput('documents: the signed preservation form is required', 'documents');
      const docs = activationDocuments(documents, null, service.maxPdfBytes);
      return service.operateKeyed(ctx, idem, 'MAILBOX', eps.preserve, mid, { body: { spazio_conservazione: size, documenti: docs } }, async () => {
        const box = await changeable(service, ctx, mid, 'preservation');
        if ((box.record as Record<string, unknown>).conservazione === true) throw badUserInput('preservation is already enabled on this mailbox', 'id');
      });
    },
    addMailboxUser: async (_root, { id, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const mid = pecId(id);
      const body = {
        nome: requiredText(input.firstName, 'input.firstName', 100),
        cognome: requiredText(input.lastName, 'input.lastName', 100),
        descrizione: requiredText(input.description, 'input.description', 200),
        email_gestione_password: email(input.passwordEmail, 'input.passwordEmail'),
      };
      return service.operateKeyed(ctx, idem, 'MAILBOX', eps.addUser, mid, { body }, async () => {
        const box = await service.current(ctx, 'MAILBOX', mid);
        const type = boxTypeOf((box.record as Record<string, unknown>).tipo_casella);
        if (type !== null && !isStandardFamily(type)) throw badUserInput(`extra users are only for standard-family mailboxes (this one is ${type})`, 'id');
        const users = (box.record as Record<string, unknown>).multiutenza;
        if (Array.isArray(users) && users.length >= 25) throw badUserInput('this mailbox already has 25 users, the most it can have', 'id');
      });
    },
    revokeMailbox: async (_root, { id }, ctx) => {
      const mid = pecId(id);
      const box = await service.current(ctx, 'MAILBOX', mid);
      const state = contractState(box.rawState);
      if (state !== 'evasa') throw badUserInput(`only ACTIVE mailboxes can be revoked; this one is ${state ?? 'unknown'}`, 'id');
      return service.remove(ctx, 'MAILBOX', mid);
    },
    notifyCompanyRegister: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      return service.create(ctx, 'NOTIFICATION', notifyBody(input), null, idem);
    },
    uploadCompanyRegisterDelegation: async (_root, { id, document }, ctx) => {
      const nid = pecId(id);
      const file = signedDocument(document, 'document', service.maxPdfBytes);
      const notice = await service.current(ctx, 'NOTIFICATION', nid);
      if (contractState(notice.rawState) !== 'in_attesa_di_documenti') {
        throw badUserInput(`the delegation is taken while AWAITING_DOCUMENTS only; this notification is ${contractState(notice.rawState) ?? 'unknown'}`, 'id');
      }
      return service.operate(ctx, 'NOTIFICATION', eps.uploadDelegation, nid, { body: { documenti: file } });
    },
    finalizeCompanyRegisterNotification: async (_root, { id, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const nid = pecId(id);
      // Done already: answered as it is, nothing sent again.
      const known = await service.current(ctx, 'NOTIFICATION', nid);
      if (contractState(known.rawState) === 'comunicazione_evasa') return known;
      // Its own price key: the same GET reads for free.
      const price = namedPriceOf(PEC_FINALIZE_PRICE_KEY);
      // The price makes the GET a change: never cached, joined or retried.
      return service.operateKeyed(ctx, idem, 'NOTIFICATION', eps.finalizeNotice, nid, { price }, async () => {
        const notice = await service.current(ctx, 'NOTIFICATION', nid);
        const state = contractState(notice.rawState);
        if (state !== 'documenti_caricati') {
          throw badUserInput(`a notification is sent and finalised once its delegation is uploaded (DOCUMENTS_UPLOADED); this one is ${state ?? 'unknown'}`, 'id', { state });
        }
      });
    },
  };
}
