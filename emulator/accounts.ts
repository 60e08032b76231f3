/**
 * The emulator's accounts (the authorization area's view of who calls): an account is an e-mail and
 * an API key (HTTP Basic against the authorization area), one wallet that every area charges (every
 * token of the account spends from it), its wallet transactions, its usage (every authorised call of
 * every area), its error log (every error answer any area gave one of its tokens) and its
 * subscriptions. Tokens themselves stay in the server's token store; what the authorization area
 * adds to a token (name, dates, refresh token, limits) is kept here.
 */
import { hexId } from './core.ts';

export interface WalletTransaction {
  id: string;
  amount: number;
  createdAt: string;
  description: string;
}

export interface ErrorLogEntry {
  id: string;
  scope: string;
  domain: string;
  errorAt: string;
  httpResponseCode: number;
  errorCode: number | null;
  message: string;
  ip: string;
}

/** One authorised call, for the statistics. */
export interface UsageRecord {
  at: number;
  scope: string;
  domain: string;
  token: string;
  /** Euro charged to the wallet. */
  amount: number;
  error: boolean;
  subscription: boolean;
  ip: string;
}

export interface Subscription {
  id: string;
  scope: string;
  domain: string;
  active: boolean;
  startsAt: string;
  expiresAt: string;
  totalRequests: number;
  availableRequests: number;
  pricePerRequest: number;
  type: 'monthly' | 'yearly';
  autorenew: boolean;
  price: number;
  createdAt: string;
  updatedAt: string;
}

export interface TokenLimits {
  totalRequests?: number;
  walletRequests?: number;
  subscriptionRequests?: number;
  walletAmount?: number;
  ip?: string[];
}

/** What the authorization area knows of a token beyond its scopes. */
export interface TokenMeta {
  name: string;
  createdAt: number;
  updatedAt: number;
  expireAt: number;
  refreshToken: string;
  limits: TokenLimits;
}

export interface EmuAccount {
  email: string;
  apikey: string;
  credit: number;
  walletCreatedAt: number;
  walletUpdatedAt: number;
  transactions: WalletTransaction[];
  errors: ErrorLogEntry[];
  usage: UsageRecord[];
  subscriptions: Subscription[];
}

const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;
const MAX_LOG = 10_000;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

export class Accounts {
  private readonly byEmail = new Map<string, EmuAccount>();
  readonly tokenMeta = new Map<string, TokenMeta>();

  constructor(readonly now: () => number) {}

  /** The account of `email`, made with `apikey` and `credit` when new. */
  ensure(email: string, init: { apikey?: string; credit?: number } = {}): EmuAccount {
    const key = email.toLowerCase();
    let a = this.byEmail.get(key);
    if (!a) {
      const now = this.now();
      a = {
        email,
        apikey: init.apikey ?? hexId(`apikey:${key}`),
        credit: init.credit ?? 0,
        walletCreatedAt: now,
        walletUpdatedAt: now,
        transactions: [],
        errors: [],
        usage: [],
        subscriptions: [],
      };
      if ((init.credit ?? 0) > 0) a.transactions.push({ id: `txn_${hexId()}`, amount: round6(init.credit ?? 0), createdAt: iso(now), description: 'Wallet recharge' });
      this.byEmail.set(key, a);
    }
    return a;
  }

  get(email: string): EmuAccount | undefined {
    return this.byEmail.get(email.toLowerCase());
  }

  /** Forgets an account (its wallet, usage and error log): the emulator's last token of it was evicted. */
  forget(email: string): void {
    this.byEmail.delete(email.toLowerCase());
  }

  /** The account of an `Authorization: Basic base64(email:apikey)` header; null when it names none. */
  authenticate(authorization: string | undefined): EmuAccount | null {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
    if (!m) return null;
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const a = this.get(decoded.slice(0, colon));
    return a && a.apikey === decoded.slice(colon + 1) ? a : null;
  }

  /** Charges the wallet (a transaction per charge, as the console lists API usage). */
  charge(account: EmuAccount, amount: number, description: string): void {
    if (amount <= 0) return;
    account.credit = round6(account.credit - amount);
    account.walletUpdatedAt = this.now();
    account.transactions.push({ id: `txn_${hexId()}`, amount: -round6(amount), createdAt: iso(this.now()), description });
    if (account.transactions.length > MAX_LOG) account.transactions.splice(0, account.transactions.length - MAX_LOG);
  }

  /** Sets the wallet (control API), recording the difference as a recharge or a correction. */
  setCredit(account: EmuAccount, credit: number): void {
    const diff = round6(credit - account.credit);
    account.credit = round6(credit);
    account.walletUpdatedAt = this.now();
    if (diff !== 0) account.transactions.push({ id: `txn_${hexId()}`, amount: diff, createdAt: iso(this.now()), description: diff > 0 ? 'Wallet recharge' : 'Wallet correction' });
  }

  /** Notes one authorised call of any area (statistics) and, for an error answer, its error log entry. */
  record(
    account: EmuAccount,
    call: { scope: string; domain: string; token: string; status: number; errorCode: number | null; message: string; amount: number; ip: string; subscription?: boolean },
  ): void {
    const at = this.now();
    const error = call.status >= 400;
    account.usage.push({ at, scope: call.scope, domain: call.domain, token: call.token, amount: call.amount, error, subscription: call.subscription === true, ip: call.ip });
    if (account.usage.length > MAX_LOG * 10) account.usage.splice(0, account.usage.length - MAX_LOG * 10);
    if (error) {
      account.errors.push({
        id: hexId(),
        scope: call.scope,
        domain: call.domain,
        errorAt: iso(at),
        httpResponseCode: call.status,
        errorCode: call.errorCode,
        message: call.message,
        ip: call.ip,
      });
      if (account.errors.length > MAX_LOG) account.errors.splice(0, account.errors.length - MAX_LOG);
    }
  }

  /** The active subscription with requests left that covers `scope` (`METHOD:host/endpoint`), if any. */
  subscriptionFor(account: EmuAccount, scope: string): Subscription | undefined {
    const now = this.now();
    return account.subscriptions.find(
      (s) =>
        s.active &&
        s.availableRequests > 0 &&
        Date.parse(s.startsAt) <= now &&
        Date.parse(s.expiresAt) > now &&
        (s.scope === scope ||
          new RegExp(
            `^${s.scope
              .split('*')
              .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
              .join('.*')}$`,
            'i',
          ).test(scope)),
    );
  }

  /** Adds a subscription (control API). */
  subscribe(account: EmuAccount, init: { scope: string; totalRequests: number; pricePerRequest: number; type?: 'monthly' | 'yearly' }): Subscription {
    const now = this.now();
    const host = init.scope.slice(init.scope.indexOf(':') + 1).split('/')[0] ?? '';
    const months = init.type === 'yearly' ? 12 : 1;
    const ends = new Date(now);
    ends.setUTCMonth(ends.getUTCMonth() + months);
    const s: Subscription = {
      id: hexId(),
      scope: init.scope,
      domain: host,
      active: true,
      startsAt: iso(now),
      expiresAt: iso(ends.getTime()),
      totalRequests: init.totalRequests,
      availableRequests: init.totalRequests,
      pricePerRequest: init.pricePerRequest,
      type: init.type ?? 'monthly',
      autorenew: true,
      price: round6(init.totalRequests * init.pricePerRequest),
      createdAt: iso(now),
      updatedAt: iso(now),
    };
    account.subscriptions.push(s);
    return s;
  }

  static iso = iso;
}
