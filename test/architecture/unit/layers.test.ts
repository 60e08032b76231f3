/**
 * The layers hold themselves: `npm run lint` refuses an import that reaches up or across them
 * (the rules in eslint.config.js). Each case lints one line as if it were written in that folder.
 */
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const eslint = new ESLint({
  cwd: new URL('../../..', import.meta.url).pathname,
  // The layer rules need no types; the type-aware rules would ask for the file on disk.
  overrideConfig: [tseslint.configs.disableTypeChecked],
});

async function restricted(file: string, from: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${from}';\nexport const y = x;\n`, {
    filePath: file,
  });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer rules', () => {
  it.each([
    ['subgraphs/upstream/new.ts', '../runtime/errors.ts'],
    ['subgraphs/upstream/new.ts', '../../gateway/index.ts'],
    ['subgraphs/runtime/new.ts', '../../gateway/cost.ts'],
    ['subgraphs/runtime/tracking/new.ts', '../../../emulator/server.ts'],
    ['subgraphs/company/resolvers/new.ts', '../../../gateway/index.ts'],
    ['platform/new.ts', '../subgraphs/runtime/errors.ts'],
    ['contract/new.ts', '../platform/log.ts'],
    ['gateway/new.ts', '../emulator/server.ts'],
    ['emulator/company/new.ts', '../../subgraphs/upstream/client.ts'],
    ['emulator/new.ts', '../gateway/index.ts'],
  ])('%s may not import %s', async (file, from) => {
    const messages = await restricted(file, from);
    expect(messages).toHaveLength(1);
  });

  it.each([
    ['subgraphs/upstream/new.ts', '../../platform/log.ts'],
    ['subgraphs/runtime/new.ts', '../upstream/client.ts'],
    ['subgraphs/company/new.ts', '../runtime/errors.ts'],
    ['gateway/new.ts', '../platform/metrics.ts'],
    ['emulator/new.ts', '../contract/prices.ts'],
    ['platform/new.ts', '../contract/areas.ts'],
    ['emulator/new.ts', '../platform/json-limits.ts'],
    ['stack.ts', './emulator/server.ts'],
  ])('%s may import %s', async (file, from) => {
    expect(await restricted(file, from)).toEqual([]);
  });
});
