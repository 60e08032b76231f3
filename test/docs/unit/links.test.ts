/**
 * Every relative link of README.md and docs/*.md points to a file that exists, and a link to a
 * heading (`page.md#anchor`, `#anchor`) to a heading of that page.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, docFiles, relativeLinks, ROOT } from '../../support/docs.ts';

const files = docFiles();

describe('links in the docs', () => {
  it('README.md links the docs pages', () => {
    const readme = files.find((f) => f.path === 'README.md')!;
    expect(relativeLinks(readme).filter((l) => l.target.startsWith('docs/')).length).toBeGreaterThanOrEqual(10);
  });

  it.each(files.map((f) => [f.path, f] as const))('%s: every relative link points to a file (and heading) that exists', (_path, file) => {
    const broken: string[] = [];
    for (const { target } of relativeLinks(file)) {
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const abs = pathPart === '' ? join(ROOT, file.path) : normalize(join(ROOT, dirname(file.path), decodeURIComponent(pathPart)));
      if (!existsSync(abs)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && abs.endsWith('.md') && !anchors(readFileSync(abs, 'utf8')).has(anchor)) broken.push(`${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
