/**
 * Company monitoring (upstream `/monitor`): list, read, create (paid), delete.
 */
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput } from '../../runtime/errors.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { CreateCompanyMonitorInput } from '../__generated__/resolvers-types.ts';
import type { CompanyMonitorModel } from '../model.ts';
import { datasetToUpstream, normalizeMonitor } from '../normalize.ts';
import { COMPANY_ENDPOINTS, type VMonitor, type VMonitorCreateBody } from '../upstream.ts';
import { codeArg, companyCodeArg, foreignIdArg, openapiIdArg, urlArg } from '../validate.ts';

const isNotFound = (err: unknown): boolean => err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND';

export async function companyMonitors(ctx: SubgraphContext): Promise<CompanyMonitorModel[]> {
  let data: unknown;
  try {
    data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.monitorList);
  } catch (err) {
    if (isNotFound(err)) return []; // 404 error 1200: no monitoring requests
    throw err;
  }
  return (Array.isArray(data) ? (data as unknown[]) : [])
    .map((m) => (m && typeof m === 'object' ? normalizeMonitor(m as VMonitor) : null))
    .filter((m): m is CompanyMonitorModel => m !== null);
}

export async function companyMonitor(id: string, ctx: SubgraphContext): Promise<CompanyMonitorModel | null> {
  const monitorId = openapiIdArg(id);
  try {
    const data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.monitorGet, { params: { id: monitorId } });
    return data && typeof data === 'object' ? normalizeMonitor(data as VMonitor) : null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export async function createCompanyMonitor(input: CreateCompanyMonitorInput, ctx: SubgraphContext): Promise<CompanyMonitorModel> {
  const dataset = datasetToUpstream(input.dataset);
  let code: string;
  if (dataset.startsWith('FR-')) code = foreignIdArg(input.code, 'input.code');
  else {
    const c = companyCodeArg(input.code, 'input.code');
    code = 'vatCode' in c ? c.vatCode : 'taxCode' in c ? c.taxCode : c.id;
  }
  let monitoredFields: string[] | undefined;
  if (input.monitoredFields != null) {
    monitoredFields = input.monitoredFields.map((f) => f.trim());
    if (monitoredFields.length === 0) throw badUserInput('input.monitoredFields must not be empty; omit it to watch the whole dataset', 'input.monitoredFields');
    if (monitoredFields.length > 100) throw badUserInput('input.monitoredFields holds at most 100 fields', 'input.monitoredFields');
    for (const f of monitoredFields) {
      if (!/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(f)) throw badUserInput(`input.monitoredFields: "${f}" is not a field path in dot notation`, 'input.monitoredFields');
    }
  }
  const callbackUrl = urlArg(input.callbackUrl, 'input.callbackUrl');
  const cciaa = codeArg(input.chamberOfCommerce, 'input.chamberOfCommerce', /^[A-Z]{2}$/, 'a two-letter chamber-of-commerce code such as RM');
  const body: VMonitorCreateBody = {
    code,
    dataset,
    ...(monitoredFields ? { monitoredFields } : {}),
    ...(callbackUrl ? { callback: { url: callbackUrl, method: 'JSON' } } : {}),
    autorenew: input.autorenew ?? true,
    ...(cciaa ? { cciaa } : {}),
  };
  const data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.monitorCreate, { body });
  const monitor = data && typeof data === 'object' ? normalizeMonitor(data as VMonitor) : null;
  if (!monitor) throw new UpstreamError('decode', 'the monitoring request was created without an id in the answer', 'company', 'monitor', 200);
  return monitor;
}

export async function deleteCompanyMonitor(id: string, ctx: SubgraphContext): Promise<string> {
  const monitorId = openapiIdArg(id);
  await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.monitorDelete, { params: { id: monitorId } });
  return monitorId;
}
