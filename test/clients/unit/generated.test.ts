import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import config, { clientOutputs } from '../../../codegen.ts';

describe('client/generated/', () => {
  it('is what codegen makes of supergraph.graphql (run `npm run codegen` after `npm run compose`; `npm run compose` runs both)', async () => {
    // `generate` is typed loosely; without saving it answers the files it would write.
    const files = (await generate({ ...config, generates: clientOutputs }, false)) as Array<{ filename: string; content: string }>;
    expect(files.map((f) => f.filename).sort()).toEqual(Object.keys(clientOutputs).sort());
    for (const file of files) expect(readFileSync(file.filename, 'utf8'), file.filename).toBe(file.content);
  });
});
