/**
 * Which data a `Company` selection asks for: `__typename`, which the gateway's response cache adds
 * to every selection set, asks for none beside other fields (a section's debts alone must not buy
 * the whole financial statements); alone it still asks whether its field has a value.
 */
import { Kind, parse, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { companyFacetsFromInfo, companyPartsFromInfo, companyPathsFromInfo } from '../../../subgraphs/company/selection.ts';

/** The resolve info of `company` in `query`, as the executor hands it to the resolver. */
function infoOf(query: string): { fieldNodes: FieldNode[]; fragments: Record<string, FragmentDefinitionNode>; variableValues: Record<string, unknown> } {
  const definitions = parse(query).definitions;
  const op = definitions[0] as OperationDefinitionNode;
  const field = op.selectionSet.selections[0];
  if (field?.kind !== Kind.FIELD) throw new Error('expected a field');
  const fragments = Object.fromEntries(definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  return { fieldNodes: [field], fragments, variableValues: {} };
}

describe('company selection', () => {
  it('asks for the same data with and without the __typename the response cache adds', () => {
    const plain = infoOf(`{ company(vatCode: "12485671007") { companyName balanceSheet { debts { total } } managers { name } } }`);
    const typed = infoOf(`{ company(vatCode: "12485671007") { __typename companyName balanceSheet { __typename debts { __typename total } } managers { __typename name } } }`);
    expect(companyFacetsFromInfo(typed)).toEqual(companyFacetsFromInfo(plain));
    expect(companyFacetsFromInfo(typed).has('financialStatements')).toBe(false);
  });

  it('__typename alone under a field still asks for that field', () => {
    expect([...companyPathsFromInfo(infoOf(`{ company(vatCode: "12485671007") { managers { __typename } } }`))]).toEqual(['managers']);
  });

  it('splits the parts of a deferred selection: the one at once, then each deferred fragment (inline, named, nested) apart', () => {
    const parts = companyPartsFromInfo(
      infoOf(`{ company(vatCode: "12485671007") {
        companyName
        ... @defer(label: "people") { managers { name } ... @defer { subsidiaries { taxCode } } }
        ...Money @defer
        ... on Company { address { town } }
      } }
      fragment Money on Company { balanceSheet { debts { total } } }`),
    );
    expect(parts.map((p) => [...p].sort())).toEqual([['address.town', 'companyName'], ['managers.name'], ['balanceSheet.debts.total'], ['subsidiaries.taxCode']]);
    // Without @defer: one part, the same paths as companyPathsFromInfo.
    const plain = infoOf(`{ company(vatCode: "12485671007") { companyName managers { name } } }`);
    expect(companyPartsFromInfo(plain)).toEqual([companyPathsFromInfo(plain)]);
  });
});
