/** Every resolver of the postal subgraph, typed by the generated `Resolvers`. */
import type { Resolvers } from '../__generated__/resolvers-types.ts';
import { badUserInput } from '../../runtime/errors.ts';
import { optionalText, requiredText } from '../../runtime/validate.ts';
import { complete } from '../complete.ts';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../pricing.ts';
import type { MunicipalityParent } from '../mappers.ts';
import * as svc from '../service.ts';
import { vendorIstat } from '../../../contract/istat.ts';
import { istat6, POSTAL, type CapInfo, type MetroCityInfo, type ProvinceInfo, type SuppressedInfo } from '../upstream.ts';
import type { SubgraphContext } from '../../runtime/context.ts';
import { orNull } from '../../upstream/errors.ts';
import { float as num } from '../../upstream/coerce.ts';

const POSTAL_CODE = /^\d{5}$/;
const CADASTRAL = /^[A-Za-z]\d{3}$/;
const PROVINCE_CODE = /^[A-Za-z]{2}$/;

function postalCode(v: string | null | undefined, field: string): string | null {
  const t = v?.replace(/\s/g, '') ?? '';
  if (t === '') return null;
  if (!POSTAL_CODE.test(t)) throw badUserInput(`${field} must be an Italian postal code of 5 digits`, field);
  return t;
}

function istatCode(v: string | null | undefined, field: string): string | null {
  const t = v?.trim() ?? '';
  if (t === '') return null;
  const code = istat6(t);
  if (!code) throw badUserInput(`${field} must be an Istat code of up to 6 digits`, field);
  return code;
}

function cadastralCode(v: string | null | undefined, field: string): string | null {
  const t = v?.trim() ?? '';
  if (t === '') return null;
  if (!CADASTRAL.test(t)) throw badUserInput(`${field} must be a cadastral code: a letter and three digits (e.g. H501)`, field);
  return t.toUpperCase();
}

function provinceCode(v: string | null | undefined, field: string): string | null {
  const t = v?.trim() ?? '';
  if (t === '') return null;
  if (!PROVINCE_CODE.test(t)) throw badUserInput(`${field} must be a two-letter province code (e.g. RM)`, field);
  return t.toUpperCase();
}

/** The vendor's Istat code without leading zeros, as its paths and filters take it. */

const int = (v: unknown): number | null => {
  const n = num(v);
  return n === null ? null : Math.round(n);
};
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null);

const province = (p: ProvinceInfo) => ({
  code: p.sigla,
  name: p.provincia,
  istatCode: p.istat === undefined ? null : String(p.istat).padStart(3, '0'),
  region: p.regione ?? null,
  population: int(p.residenti),
  municipalityCount: int(p.num_comuni),
  area: num(p.superficie),
});

const istatOrFail = (ctx: SubgraphContext, m: MunicipalityParent): Promise<string | null> => svc.istatOf(ctx, m);

export function createResolvers(): Resolvers {
  return {
    Query: {
      async postalCode(_, args, ctx) {
        const code = postalCode(args.code, 'code');
        if (!code) throw badUserInput('code is required', 'code');
        const data = await orNull(ctx.upstream.call<CapInfo>(ctx, POSTAL.cap, { params: { cap: code } }));
        if (!data || !Array.isArray(data.comuni) || data.comuni.length === 0) return null;
        // A postal code may cross a province line (12071: Cuneo and Savona). The vendor gives one
        // province and region for the code, none per town: each town's comes from its Istat code
        // (its first three digits are its province's), through the cached, shared province list,
        // read only when the towns lie in more than one province.
        const towns = data.comuni.flatMap((c) => {
          const istat = istat6(c.comune_istat ?? c.istat);
          return istat ? [{ c, istat }] : [];
        });
        const spread = new Set(towns.map((t) => t.istat.slice(0, 3))).size > 1;
        const byIstat = new Map(spread ? (await svc.provinces(ctx)).flatMap((p) => (p.istat !== undefined ? [[String(p.istat).padStart(3, '0'), p] as const] : [])) : []);
        const places = towns.map(({ c, istat }) => {
          const hamlet = c.frazione ?? null;
          const own = spread ? byIstat.get(istat.slice(0, 3)) : undefined;
          const province = spread ? (own ? { code: own.sigla, name: own.provincia } : null) : data.provincia ? { code: data.sigla_provincia ?? null, name: data.provincia } : null;
          const region = spread ? (own?.regione ?? null) : (data.regione ?? null);
          return { municipality: hamlet ? { istatCode: istat } : { istatCode: istat, name: c.comune }, hamlet, province, region };
        });
        // The area's province and region: those every place shares, else null.
        const shared = <T>(vals: T[]): T | null => (vals.length > 0 && vals.every((v) => JSON.stringify(v) === JSON.stringify(vals[0])) ? (vals[0] ?? null) : null);
        return { code, places, province: shared(places.map((p) => p.province)), region: shared(places.map((p) => p.region)) };
      },
      async municipality(_, args, ctx) {
        const istat = istatCode(args.istatCode, 'istatCode');
        const cadastral = cadastralCode(args.cadastralCode, 'cadastralCode');
        if ((istat === null) === (cadastral === null)) throw badUserInput('give exactly one of istatCode and cadastralCode');
        if (cadastral) return svc.byCadastral(ctx, cadastral);
        return svc.byIstat(ctx, vendorIstat(istat!));
      },
      async searchMunicipalities(_, args, ctx) {
        const filters: svc.SearchFilters = {
          comune: optionalText(args.name, 'name', 100),
          cap: postalCode(args.postalCode, 'postalCode'),
          istat: ((c) => (c ? vendorIstat(c) : null))(istatCode(args.istatCode, 'istatCode')),
          codice_catasto: cadastralCode(args.cadastralCode, 'cadastralCode'),
          regione: optionalText(args.region, 'region', 60),
          provincia: optionalText(args.province, 'province', 60),
        };
        if (Object.values(filters).every((v) => v === null)) throw badUserInput('give at least one filter: name, postalCode, istatCode, cadastralCode, region or province');
        const limit = args.limit ?? DEFAULT_SEARCH_LIMIT;
        const offset = args.offset ?? 0;
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw badUserInput(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`, 'limit');
        if (!Number.isInteger(offset) || offset < 0) throw badUserInput('offset must be 0 or more', 'offset');
        // The page only: no field of a municipality outside it is ever resolved (nor bought).
        return (await svc.search(ctx, filters)).slice(offset, offset + limit);
      },
      async completeMunicipality(_, args, ctx) {
        const prefix = requiredText(args.prefix, 'prefix', 100);
        const limit = args.limit ?? 10;
        if (!Number.isInteger(limit) || limit < 1 || limit > 50) throw badUserInput('limit must be between 1 and 50', 'limit');
        return complete(ctx, prefix, optionalText(args.province, 'province', 60), limit);
      },
      async regions(_, __, ctx) {
        return (await svc.regions(ctx)).map((r) => ({
          istatCode: r.istat === undefined ? null : String(r.istat).padStart(2, '0'),
          name: r.regione,
          capital: r.capoluogo ?? null,
          population: int(r.num_residenti),
          municipalityCount: int(r.num_comuni),
          provinceCount: int(r.num_province),
          area: num(r.superficie),
          president: str(r.presidente),
          taxCode: str(r.cod_fiscale),
          vatCode: str(r.piva),
          pec: str(r.pec),
          website: str(r.sito),
          headquarters: str(r.sede),
        }));
      },
      async provinces(_, args, ctx) {
        const region = optionalText(args.region, 'region', 60);
        if (!region) return (await svc.provinces(ctx)).map(province);
        const list = (await orNull(ctx.upstream.call<ProvinceInfo[]>(ctx, POSTAL.provincesOf, { query: { regione: region } }))) ?? [];
        return list.map(province);
      },
      async province(_, args, ctx) {
        const code = provinceCode(args.code, 'code');
        if (!code) throw badUserInput('code is required', 'code');
        const p = await orNull(ctx.upstream.call<ProvinceInfo>(ctx, POSTAL.province, { params: { code } }));
        return p ? province(p) : null;
      },
      async metropolitanCities(_, __, ctx) {
        const list = (await orNull(ctx.upstream.call<MetroCityInfo[]>(ctx, POSTAL.metroCities))) ?? [];
        return list.map((c) => ({
          name: c.denominazione,
          capital: c.capoluogo ?? null,
          population: int(c.popolazione),
          municipalityCount: int(c.num_comuni),
          area: num(c.superficie),
          density: num(c.densita),
        }));
      },
      async suppressedMunicipalities(_, args, ctx) {
        const sigla = provinceCode(args.province, 'province');
        const list = (await orNull(ctx.upstream.call<SuppressedInfo[]>(ctx, POSTAL.suppressed, { query: { sigla_provincia: sigla } }))) ?? [];
        // A suppressed municipality may come without an Istat code (none is invented for it).
        return list.flatMap((s) => {
          if (typeof s.comune !== 'string' || s.comune === '') return [];
          return [
            {
              istatCode: istat6(s.istat),
              name: s.comune,
              cadastralCode: str(s.cod_fisco),
              province: s.provincia ? { code: s.sigla_provincia ?? null, name: s.provincia } : null,
              region: s.regione ?? null,
            },
          ];
        });
      },
      async streetTypes(_, args, ctx) {
        const prefix = optionalText(args.prefix, 'prefix', 40);
        const list = (await orNull(ctx.upstream.call<Array<{ dug?: string } | string>>(ctx, POSTAL.streetTypes, { query: { dug: prefix?.toUpperCase() } }))) ?? [];
        return list.flatMap((d) => {
          const v = typeof d === 'string' ? d : d.dug;
          return v ? [v] : [];
        });
      },
    },
    Municipality: {
      async __resolveReference(ref, ctx) {
        const r = ref as MunicipalityParent;
        if (r.lookupCode !== undefined && !r.istatCode) return svc.byLookup(ctx, r.lookupCode);
        return r;
      },
      lookupCode: (m) => svc.lookupOf(m),
      async istatCode(m, _, ctx) {
        return istatOrFail(ctx, m);
      },
      async cadastralCode(m, _, ctx) {
        if (m.cadastralCode) return m.cadastralCode;
        const istat = await istatOrFail(ctx, m);
        const adv = istat ? await svc.advance(ctx, vendorIstat(istat)) : null;
        return str(adv?.cod_fisco)?.toUpperCase() ?? null;
      },
      async name(m, _, ctx) {
        if (m.name !== undefined) return m.name;
        const istat = await istatOrFail(ctx, m);
        return istat ? ((await svc.byIstat(ctx, vendorIstat(istat)))?.name ?? null) : null;
      },
      async suppressed(m, _, ctx) {
        if (m.suppressed !== undefined) return m.suppressed;
        const istat = await istatOrFail(ctx, m);
        return istat ? ((await svc.byIstat(ctx, vendorIstat(istat)))?.suppressed ?? null) : null;
      },
      async province(m, _, ctx) {
        const istat = await istatOrFail(ctx, m);
        const b = istat ? await svc.base(ctx, vendorIstat(istat)) : null;
        if (!b?.provincia) return null;
        return { code: await svc.provinceCode(ctx, b.provincia), name: b.provincia };
      },
      async region(m, _, ctx) {
        const istat = await istatOrFail(ctx, m);
        const b = istat ? await svc.base(ctx, vendorIstat(istat)) : null;
        if (!b?.regione) return null;
        return { code: await svc.regionCode(ctx, b.regione), name: b.regione };
      },
      async postalCodes(m, _, ctx) {
        const istat = await istatOrFail(ctx, m);
        const b = istat ? await svc.base(ctx, vendorIstat(istat)) : null;
        return b?.cap ?? null;
      },
      async details(m, _, ctx) {
        const istat = await istatOrFail(ctx, m);
        const a = istat ? await svc.advance(ctx, vendorIstat(istat)) : null;
        if (!a) return null;
        return {
          population: int(a.num_residenti),
          area: num(a.superficie),
          phonePrefix: str(a.prefisso),
          inhabitantsName: str(a.nome_abitanti),
          email: str(a.email),
          pec: str(a.pec),
          phone: str(a.tel),
          hamlets: Array.isArray(a.frazioni) ? a.frazioni.filter((f): f is string => typeof f === 'string' && f !== '..') : [],
          previousIstatCode: str(a.istat_old),
          patronSaint: a.patrono && (str(a.patrono.nome) || str(a.patrono.data)) ? { name: str(a.patrono.nome), feastDay: str(a.patrono.data) } : null,
          townHallAddress: str(a.municipio?.municipio),
          fax: str(a.fax),
        };
      },
    },
  };
}
