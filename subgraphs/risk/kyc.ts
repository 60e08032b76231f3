/**
 * Know-your-customer evidence per entity: what the sources say about one entity a check found
 * (`GET /WW-kyc-evidences/{id}/{entity_id}`, JSON), its evidence dossier (the same path asked for
 * `application/pdf`) and its photos (asked for `image/jpeg` with `?photo=`), the files as the risk
 * area's signed `/files/risk/…` URLs (the kit's `FileGrants`).
 *
 * An entity carries where it came from (`KycEntitySource`), so its fields know which request to ask.
 * The service keeps evidences readable for 10 days after the check and serves the PDF and photos of
 * `full` checks only: outside that, the fields are null (or empty) without a call.
 */
import type { SubgraphContext } from '../runtime/context.ts';
import type { SignedFileValue } from '../runtime/tracking/files.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { KycEntity, KycEntityResolvers, KycEvidence, KycLocation } from './__generated__/resolvers-types.ts';
import { isFinalState, isObj, kycEntityOf, text, type Obj } from './model.ts';
import type { RiskService } from './service.ts';
import type { TrackedRequest } from './store.ts';
import { RISK, type RiskFamilyName } from './upstream.ts';

/** How long after a check the service lets its evidences, PDFs and photos be read. */
export const KYC_EVIDENCE_DAYS = 10;

/** The request an entity was found by. */
export interface KycEntitySource {
  requestId: string;
  family: RiskFamilyName;
  /** A check (WW-kyc-full, -pep, …), whose evidences can be read per entity; false for a monitor. */
  check: boolean;
  /** A `full` check: the only kind with a PDF and photos. */
  full: boolean;
  complete: boolean;
  /** Unix seconds. */
  createdAt: number | null;
  /** The evidence results the record already holds for this entity, if any. */
  known: unknown[] | null;
}

/** A `KycEntity` as the resolvers receive it: the entity's fields and where it came from. */
export type KycEntityModel = Omit<KycEntity, 'evidences' | 'evidenceReport' | 'photoFiles'> & { source: KycEntitySource };

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === null || v === undefined ? [] : [v]);
const strings = (v: unknown): string[] =>
  list(v)
    .map(text)
    .filter((s): s is string => s !== null);

/** The entities of a KYC check or monitor, each knowing its request. */
export function kycEntitiesOfRequest(p: TrackedRequest): KycEntityModel[] {
  const rec = p.record as Obj;
  const check = p.family !== 'KYC_MONITOR';
  const known = new Map<string, unknown[]>();
  for (const e of list(rec.evidences)) if (isObj(e) && text(e.id) !== null) known.set(text(e.id)!, list(e.results));
  return list(rec.entities)
    .filter(isObj)
    .map((e) => {
      const entity = kycEntityOf(e);
      return {
        ...entity,
        source: {
          requestId: p.id,
          family: p.family,
          check,
          full: p.family === 'KYC_FULL',
          complete: isFinalState(p.rawState),
          createdAt: p.createdAt,
          known: typeof entity.id === 'string' ? (known.get(entity.id) ?? null) : null,
        },
      };
    });
}

/** Every location of a rationale (`locations`, a list in the vendor spec; a lone object is taken as a list of one). */
function locations(v: unknown): KycLocation[] {
  return (isObj(v) ? [v] : list(v))
    .filter(isObj)
    .map((l) => ({ address: text(l.address), street: text(l.street), city: text(l.city), region: text(l.region), country: text(l.country), type: text(l.type) }));
}

/** One evidence result as the schema gives it. */
export function kycEvidenceOf(v: unknown): KycEvidence | null {
  if (!isObj(v)) return null;
  return {
    sources: strings(v.source),
    lists: strings(v.list),
    listDescription: text(v.list_description),
    datasets: strings(v.datasets),
    publicationDates: strings(v.publication_date),
    organizations: list(v.organization),
    rationales: list(v.rationales)
      .filter(isObj)
      .map((r) => {
        const places = locations(r.locations);
        return {
          subject: text(r.subject),
          details: text(r.details),
          offence: text(r.offence),
          inquiry: text(r.inquiry),
          facts: text(r.facts),
          status: text(r.status),
          dateStart: text(r.date_start),
          dateEnd: text(r.date_end),
          links: strings(r.links),
          locations: places,
          location: places[0] ?? null,
        };
      }),
  };
}

const evidences = (results: unknown[]): KycEvidence[] => results.map(kycEvidenceOf).filter((e): e is KycEvidence => e !== null);

/** Whether the service still serves the check's evidences (10 days from its creation). */
const withinWindow = (s: KycEntitySource, nowMs: number): boolean => s.createdAt === null || nowMs / 1000 - s.createdAt <= KYC_EVIDENCE_DAYS * 24 * 3600;

/** Upstream answers meaning "nothing to read (any more)": still pending, no such entity, past the window. */
const nothingToRead = (err: unknown): boolean => err instanceof UpstreamError && err.kind === 'http' && (err.status === 404 || err.status === 422);

/** The `KycEntity` fields that read evidences and files. `now`: epoch ms (the 10-day window). */
export function kycEntityResolvers(service: RiskService, now: () => number = Date.now): KycEntityResolvers {
  const files = (s: KycEntitySource, entityId: string | null | undefined): s is KycEntitySource =>
    s.check && s.full && s.complete && typeof entityId === 'string' && entityId !== '' && withinWindow(s, now());

  return {
    evidences: async (e, _args, ctx: SubgraphContext) => {
      const s = e.source;
      if (s.known) return evidences(s.known);
      if (!s.check || !s.complete || !e.id || !withinWindow(s, now())) return null;
      const entity = e.id;
      return ctx.once(`risk:kycEvidences:${s.requestId}:${entity}`, async () => {
        try {
          return evidences(list(await ctx.upstream.call<unknown>(ctx, RISK.kycEvidences, { params: { id: s.requestId, entity } })));
        } catch (err) {
          if (nothingToRead(err)) return null;
          throw err;
        }
      });
    },
    evidenceReport: (e, _args, ctx): Promise<SignedFileValue> | null => {
      if (!files(e.source, e.id)) return null;
      return service.files.issue(service.publicUrl(), ctx.auth, RISK.kycEvidencePdf, { id: e.source.requestId, entity: e.id! }, `${e.source.requestId}_${e.id!}.pdf`);
    },
    photoFiles: (e, _args, ctx): Promise<SignedFileValue[]> | SignedFileValue[] => {
      if (!files(e.source, e.id)) return [];
      return Promise.all(
        e.photos.map((photo) => service.files.issue(service.publicUrl(), ctx.auth, RISK.kycEvidencePhoto, { id: e.source.requestId, entity: e.id!, photo }, photo, 'image/jpeg')),
      );
    },
  };
}
