/**
 * Root resolvers of the PEC subgraph. Every input is validated before any paid call; a registration
 * checks the address's availability first (unless its idempotency key already ordered it); changes
 * that depend on the mailbox's type or state are checked against what the layer knows of it (a free
 * read when it knows nothing) before paying.
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput, toClientError } from '../../runtime/errors.ts';
import { idempotencyKey } from '../../runtime/tracking/args.ts';
import { email, requiredText } from '../../runtime/validate.ts';
import { payloads } from '../../runtime/tracking/subscribe.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { CompanyCertifiedMailResolvers, CompanyResolvers, MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import { BOX_RANK, boxTypeOf, contractState, isFinalState, isStandardFamily, text } from '../model.ts';
import { namedPriceOf, PEC_FINALIZE_PRICE_KEY, priceOf } from '../../../contract/prices.ts';
import type { PecService, TrackedPec } from '../service.ts';
import type { PecFamily } from '../upstream.ts';
import {
  activationDocuments,
  boxType,
  domainName,
  enlargeBody,
  notifyBody,
  pecAddress,
  pecId,
  preservationSpace,
  registerBody,
  signedDocument,
  years as validYears,
} from '../validate.ts';
import { asText, isObj } from '../../../contract/values.ts';

const isNotFound = (err: unknown): boolean => err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404);

export function rootResolvers(service: PecService) {
  const eps = service.endpoints;

  /** A usable standard-family mailbox (the condition of sizes, preservation and upgrades), checked before paying. */
  async function changeable(ctx: SubgraphContext, id: string, what: string): Promise<TrackedPec> {
    const box = await service.current(ctx, 'MAILBOX', id);
    const type = boxTypeOf((box.record as Record<string, unknown>).tipo_casella);
    if (type !== null && !isStandardFamily(type)) throw badUserInput(`${what} is only for standard-family mailboxes (this one is ${type})`, 'id');
    if (contractState(box.rawState) !== 'evasa') throw badUserInput(`${what} needs a usable (ACTIVE) mailbox; this one is ${contractState(box.rawState) ?? 'unknown'}`, 'id');
    return box;
  }

  const readOrNull = async (ctx: SubgraphContext, family: PecFamily, id: string): Promise<TrackedPec | null> => {
    try {
      return await service.read(ctx, family, pecId(id));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  };

  const Query: QueryResolvers = {
    mailboxAvailability: async (_root, { address }, ctx) => {
      const a = pecAddress(address);
      const data = await ctx.upstream.call<unknown>(ctx, eps.availability, { params: { address: a } });
      return { address: a, available: isObj(data) && data.available === true };
    },
    certifiedDomain: async (_root, { domain }, ctx) => {
      const d = domainName(domain);
      return { domain: d, ...(await service.domainCertified(ctx, d)) };
    },
    mailbox: (_root, { id }, ctx) => readOrNull(ctx, 'MAILBOX', id),
    mailboxes: (_root, _args, ctx) => service.list(ctx, 'MAILBOX'),
    // Read through the free list first: an uploaded one is never read by id (that would send it).
    pecNotification: (_root, { id }, ctx) => readOrNull(ctx, 'NOTIFICATION', id),
    pecNotifications: (_root, _args, ctx) => service.list(ctx, 'NOTIFICATION'),
  };

  const Mutation: MutationResolvers = {
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
        const box = await changeable(ctx, mid, 'enlarging');
        if (body.spazio_conservazione !== undefined && (box.record as Record<string, unknown>).conservazione !== true) {
          throw badUserInput('input.preservationSpaceMb needs preservation enabled first (enableMailboxPreservation)', 'input.preservationSpaceMb');
        }
      });
    },
    upgradeMailbox: async (_root, { id, boxType: to }, ctx) => {
      const mid = pecId(id);
      const target = boxType(to);
      if (target !== 'SILVER' && target !== 'GOLD') throw badUserInput('boxType: an upgrade goes to SILVER or GOLD', 'boxType');
      const box = await changeable(ctx, mid, 'an upgrade');
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
        const box = await changeable(ctx, mid, 'preservation');
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

  /** Latest state first, then every change of one record of the caller, until it is final. */
  async function follow(ctx: SubgraphContext, family: PecFamily, rawId: string) {
    let entry: TrackedPec;
    try {
      entry = await service.findForSubscription(ctx, pecId(rawId), family);
    } catch (err) {
      if (isNotFound(err)) throw new GraphQLError(`no ${family === 'MAILBOX' ? 'mailbox' : 'notification'} ${rawId} of this account`, { extensions: { code: 'NOT_FOUND' } });
      throw toClientError(err) ?? err;
    }
    const { tenant } = ctx.auth;
    return service.bus.subscribe(service.requestTopic(tenant, entry.id), {
      initial: async () => [(await service.store.get(tenant, entry.id)) ?? entry],
      identity: (e) => e.id,
      version: (e) => e.seq,
      until: (e) => isFinalState(e.rawState),
    });
  }

  const Subscription: SubscriptionResolvers = {
    mailboxUpdated: { subscribe: async (_root, { id }, ctx: SubgraphContext) => payloads('mailboxUpdated', await follow(ctx, 'MAILBOX', id)) },
    pecNotificationUpdated: { subscribe: async (_root, { id }, ctx: SubgraphContext) => payloads('pecNotificationUpdated', await follow(ctx, 'NOTIFICATION', id)) },
  };

  const Company: CompanyResolvers = {
    __resolveReference: (ref) => ref,
    lookupCode: (company) => company.lookupCode,
    certifiedMail: async (company, _args, ctx) => {
      const address = typeof company.pec === 'string' ? company.pec.trim().toLowerCase() : '';
      const domain = address.includes('@') ? address.slice(address.lastIndexOf('@') + 1) : '';
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) return null;
      const { certified } = await ctx.once(`pec:domain:${domain}`, () => service.domainCertified(ctx, domain));
      return { address, domain, certifiedDomain: certified };
    },
  };

  const CompanyCertifiedMail: CompanyCertifiedMailResolvers = {
    mailbox: async (parent, _args, ctx) => {
      const all = await ctx.once('pec:mailboxes', () => service.list(ctx, 'MAILBOX'));
      return all.find((m) => asText((m.record as Record<string, unknown>).casella_pec).toLowerCase() === parent.address) ?? null;
    },
  };

  return { Query, Mutation, Subscription, Company, CompanyCertifiedMail };
}

export { text };
