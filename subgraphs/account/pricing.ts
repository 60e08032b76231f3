/** The account area's part of the cost estimate: each field one call to the authorization area. */
import { endpointPrice, type PricingTable } from '../runtime/pricing.ts';
import { OAUTH } from './upstream.ts';

const one = (ep: (typeof OAUTH)[keyof typeof OAUTH]) => ({ euro: () => endpointPrice(ep) });

export const accountPricing: PricingTable = {
  fields: {
    'Account.wallet': one(OAUTH.wallet),
    'Account.transactions': one(OAUTH.transactions),
    'Account.tokens': one(OAUTH.tokens),
    'Account.token': one(OAUTH.token),
    'Account.scopes': one(OAUTH.scopes),
    'Account.scope': one(OAUTH.scope),
    'Account.subscriptions': one(OAUTH.subscriptions),
    'Account.subscription': one(OAUTH.subscription),
    'Account.stats': one(OAUTH.stats),
    'Account.statsByDomain': one(OAUTH.statsApis),
    'Account.domainStats': one(OAUTH.statsApi),
    'Account.ips': one(OAUTH.statsIps),
    'Account.errors': one(OAUTH.errors),
    'Account.callbacks': one(OAUTH.callbacks),
    'Account.callback': one(OAUTH.callback),
    'Mutation.createToken': one(OAUTH.createToken),
    'Mutation.updateToken': one(OAUTH.updateToken),
    'Mutation.deleteToken': one(OAUTH.deleteToken),
    // reads the wallet history (a page; more only when the calls to settle go back further)
    'Mutation.settleCosts': one(OAUTH.transactions),
    // reads the token (for its refresh token), then rotates it
    'Mutation.rotateToken': { euro: () => endpointPrice(OAUTH.token) + endpointPrice(OAUTH.rotateToken) },
  },
  entities: {},
};
