/** The invoicing subgraph's schema documents itself: every type, field, argument, input field and enum value has a description. */
import { readFileSync } from 'node:fs';
import { Kind, parse, type DefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';

const doc = parse(readFileSync(new URL('../../../subgraphs/invoicing/schema.graphql', import.meta.url), 'utf8'));

function undocumented(d: DefinitionNode): string[] {
  const out: string[] = [];
  if (!('name' in d) || !d.name) return out;
  const name = d.name.value;
  if (!('description' in d) || !d.description?.value.trim()) out.push(name);
  if (d.kind === Kind.OBJECT_TYPE_DEFINITION || d.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION) {
    for (const f of d.fields ?? []) {
      if (!f.description?.value.trim()) out.push(`${name}.${f.name.value}`);
      if ('arguments' in f) for (const a of f.arguments ?? []) if (!a.description?.value.trim()) out.push(`${name}.${f.name.value}(${a.name.value})`);
    }
  }
  if (d.kind === Kind.ENUM_TYPE_DEFINITION) for (const v of d.values ?? []) if (!v.description?.value.trim()) out.push(`${name}.${v.name.value}`);
  return out;
}

describe('invoicing schema', () => {
  it('describes every type, field, argument and enum value', () => {
    expect(doc.definitions.flatMap(undocumented)).toEqual([]);
  });
});
