/**
 * The GraphiQL page as rendered: the cost plugin is wired in without losing yoga's own plugin (the
 * GraphiQL Explorer): the bundle takes `extraPlugins` (a yoga upgrade that changes the bundle's shape
 * fails here, rather than dropping the explorer quietly), and the render call goes through the plugin.
 */
import { describe, expect, it } from 'vitest';
import { EXAMPLES } from '../../../gateway/examples.ts';
import { renderGraphiQLPage } from '../../../gateway/graphiql.ts';
import { RENDER_CALL, RENDER_THROUGH_PLUGIN } from '../../../gateway/graphiql-cost.ts';

describe('the GraphiQL page', () => {
  it('carries the cost plugin beside yoga’s own plugins, and nothing of it when switched off', async () => {
    const html = await renderGraphiQLPage({ examples: EXAMPLES });
    expect(html).toContain('plugins:[r].concat(n.extraPlugins||[])');
    expect(html).toContain('"patched":true');
    expect(html).toContain(RENDER_THROUGH_PLUGIN);
    // The plugin's script runs before the bundle that calls it.
    expect(html.indexOf('window.openapiCost = {')).toBeLessThan(html.indexOf(RENDER_THROUGH_PLUGIN));
    // Nothing loaded from elsewhere.
    expect(html).not.toMatch(/<script[^>]+src=/);

    const plain = await renderGraphiQLPage({ examples: EXAMPLES, costPanel: false });
    expect(plain).toContain(RENDER_CALL);
    expect(plain).not.toContain('openapiCost');
  });
});
