/**
 * The company subgraph: Italian companies (IT-start … IT-full, search, legal forms), companies
 * outside Italy (EU, country and worldwide endpoints) and company monitoring. Owns the `Company`
 * entity (keys `vatCode`, `taxCode`, `id`); other subgraphs extend it.
 */
import { readFileSync } from 'node:fs';
import { parse, type DocumentNode } from 'graphql';
import type { Resolvers } from './__generated__/resolvers-types.ts';
import { resolvers } from './resolvers.ts';

export const companySubgraph: { name: 'company'; typeDefs: DocumentNode; resolvers: Resolvers } = {
  name: 'company',
  typeDefs: parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8')),
  resolvers,
};
