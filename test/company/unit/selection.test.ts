/**
 * Which data a `Company` selection asks for: `__typename`, which the gateway's response cache adds
 * to every selection set, asks for none beside other fields (a section's debts alone must not buy
 * the whole financial statements); alone it still asks whether its field has a value.
 */
import { Kind, parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { companyFacetsFromInfo, companyPathsFromInfo } from '../../../subgraphs/company/selection.ts';

/** The resolve info of `company` in `query`, as the executor hands it to the resolver. */
function infoOf(query: string): { fieldNodes: FieldNode[]; fragments: Record<string, never>; variableValues: Record<string, unknown> } {
  const op = parse(query).definitions[0] as OperationDefinitionNode;
  const field = op.selectionSet.selections[0];
  if (field?.kind !== Kind.FIELD) throw new Error('expected a field');
  return { fieldNodes: [field], fragments: {}, variableValues: {} };
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
});
