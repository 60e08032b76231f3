/**
 * Error numbers of the company area, per endpoint, as the vendor spec's examples give them
 * (REFERENCE §4.5): 400 "… required", 406 "… not valid", and "no match" as 404 or, where the spec
 * shows no 404 for the endpoint, 204 No Content.
 */
import { fail, type EmuResponse } from '../core.ts';

export interface EndpointErrors {
  required: [number, string];
  invalid: [number, string];
  /** `null`: nothing found answers 204 No Content. */
  notFound: [number, string] | null;
}

const lookup = (
  required: number,
  invalid: number,
  notFound: number | null,
  requiredMsg = 'Id, taxCode or vatCode required',
  invalidMsg = 'taxCode/vatCode/id not valid',
): EndpointErrors => ({
  required: [required, requiredMsg],
  invalid: [invalid, invalidMsg],
  notFound: notFound === null ? null : [notFound, 'no company matches this id: '],
});

const slowGet = (required: number, invalid: number): EndpointErrors => ({ required: [required, 'cf or piva required'], invalid: [invalid, 'cf/piva not valid'], notFound: null });
const slowPost = (required: number, invalid: number): EndpointErrors => ({
  required: [required, 'taxCode or vatCode required'],
  invalid: [invalid, 'taxCode/vatCode not valid'],
  notFound: null,
});

export const ERRORS = {
  'IT-start': lookup(300, 301, 302),
  'IT-advanced': lookup(303, 304, 305),
  'IT-shareholders': lookup(306, 307, null),
  'IT-address': lookup(318, 319, null),
  'IT-pec': lookup(321, 322, 323),
  'IT-closed': lookup(324, 325, 327),
  'IT-vatgroup': lookup(328, 329, 332, 'Id or vatCode required', 'vatCode/id not valid'),
  'IT-sdicode': lookup(333, 334, 335),
  'IT-name': lookup(339, 340, 341),
  'IT-ubo': lookup(1100, 1101, 1102),
  'IT-splitpayment': { required: [500, 'taxCode or vatCode required'], invalid: [501, 'taxCode/vatCode not valid'], notFound: [502, 'no company found'] },
  'IT-pa': { required: [600, 'taxCode or vatCode required'], invalid: [601, 'taxCode/vatCode not valid'], notFound: [602, 'no company found'] },
  'GET IT-full': slowGet(221, 222),
  'GET IT-aml': slowGet(214, 215),
  'GET IT-marketing': slowGet(200, 201),
  'GET IT-stakeholders': slowGet(207, 208),
  'POST IT-full': slowPost(240, 241),
  'POST IT-aml': slowPost(238, 239),
  'POST IT-marketing': slowPost(234, 235),
  'POST IT-stakeholders': slowPost(236, 237),
} satisfies Record<string, EndpointErrors>;

export type ErrorKey = keyof typeof ERRORS;

/** Foreign endpoints: [required, invalid, not found] numbers and the 400/406 messages. */
export const FOREIGN_ERRORS: Record<string, { required: [number, string]; invalid: [number, string]; notFound: number }> = {
  'FR-start': { required: [800, 'Id, vatCode, siretCode or sirenCode required'], invalid: [801, 'sirenCode/siretCode/vatCode/id not valid'], notFound: 802 },
  'FR-advanced': { required: [803, 'Id, vatCode, siretCode or sirenCode required'], invalid: [804, 'sirenCode/siretCode/vatCode/id not valid'], notFound: 805 },
  'DE-start': { required: [1000, 'Id, companyNumber or european vatCode required'], invalid: [2001, 'vatCode or companyNumber not valid'], notFound: 1001 },
  'DE-advanced': { required: [1003, 'Id, companyNumber or european vatCode required'], invalid: [2001, 'vatCode or companyNumber not valid'], notFound: 1004 },
  'ES-start': {
    required: [1006, 'Id, taxCode or european vatCode required'],
    invalid: [2002, 'vatCode not valid, 9 chars required and the first or last must be a letter'],
    notFound: 1007,
  },
  'ES-advanced': {
    required: [1009, 'Id, taxCode or european vatCode required'],
    invalid: [2002, 'vatCode not valid, 9 chars required and the first or last must be a letter'],
    notFound: 1010,
  },
  'PT-start': { required: [1012, 'Id, taxCode or european vatCode required'], invalid: [2004, 'vatCode not valid, only 9 numbers required'], notFound: 1013 },
  'PT-advanced': { required: [1015, 'Id, taxCode or european vatCode required'], invalid: [2004, 'vatCode not valid, only 9 numbers required'], notFound: 1016 },
  'GB-start': { required: [1018, 'Id, companyNumber or european vatCode required'], invalid: [2003, 'vatCode or companyNumber not valid'], notFound: 1019 },
  'GB-advanced': { required: [1021, 'Id, companyNumber or european vatCode required'], invalid: [2003, 'vatCode or companyNumber not valid'], notFound: 1022 },
  'BE-start': { required: [1036, 'Id, taxCode, companyNumber or european vatCode required'], invalid: [2007, 'vatCode, taxCode or companyNumber not valid'], notFound: 1037 },
  'BE-advanced': { required: [1039, 'Id, taxCode, companyNumber or european vatCode required'], invalid: [2007, 'vatCode, taxCode or companyNumber not valid'], notFound: 1040 },
  'AT-start': { required: [1048, 'Id, companyNumber or european vatCode required'], invalid: [2008, 'vatCode or companyNumber not valid'], notFound: 1049 },
  'AT-advanced': { required: [1051, 'id, companyNumber or european vatCode required'], invalid: [2008, 'vatCode or companyNumber not valid'], notFound: 1052 },
  'CH-start': { required: [1054, 'Id, taxCode, companyNumber or vatCode required'], invalid: [2009, 'vatCode, taxCode or companyNumber not valid'], notFound: 1055 },
  'CH-advanced': { required: [1057, 'Id, taxCode, companyNumber or vatCode required'], invalid: [2009, 'vatCode, taxCode or companyNumber not valid'], notFound: 1058 },
  'PL-start': {
    required: [1042, 'Id, taxCode, companyNumber, regonNumber or european vatCode required'],
    invalid: [2005, 'vatCode, taxCode, regonNumber or companyNumber not valid. Note: Only the 9-digit main entity REGON is accepted'],
    notFound: 1043,
  },
  'PL-advanced': {
    required: [1045, 'Id, taxCode, companyNumber, regonNumber or european vatCode required'],
    invalid: [2005, 'vatCode, taxCode, regonNumber or companyNumber not valid. Note: Only the 9-digit main entity REGON is accepted'],
    notFound: 1046,
  },
  'WW-start': {
    required: [1025, 'country required'],
    invalid: [2005, 'vatCode, taxCode, regonNumber or companyNumber not valid. Note: Only the 9-digit main entity REGON is accepted'],
    notFound: 1026,
  },
  'WW-advanced': {
    required: [1028, 'country required'],
    invalid: [2005, 'vatCode, taxCode, regonNumber or companyNumber not valid. Note: Only the 9-digit main entity REGON is accepted'],
    notFound: 1030,
  },
  'WW-top': {
    required: [1032, 'country required'],
    invalid: [2005, 'vatCode, taxCode, regonNumber or companyNumber not valid. Note: Only the 9-digit main entity REGON is accepted'],
    notFound: 1034,
  },
};

export const required = (e: { required: [number, string] }): EmuResponse => fail(400, e.required[0], e.required[1]);
export const invalid = (e: { invalid: [number, string] }): EmuResponse => fail(406, e.invalid[0], e.invalid[1]);

/** "No match": 404 with the endpoint's number, or 204 No Content where the spec shows no 404. */
export function notFound(e: EndpointErrors, value: string): EmuResponse {
  if (!e.notFound) return { status: 204, body: '' };
  return fail(404, e.notFound[0], `${e.notFound[1]}${value}`);
}
