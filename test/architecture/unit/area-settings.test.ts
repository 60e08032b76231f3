/**
 * The settings an area's descriptor lists (`settings`, names or prefixes ending in `*`) against the
 * one schema (`platform/settings.ts`): each listed name or prefix names settings of the schema, and
 * every setting named after an area (its prefix, `RISK_`, or that of a vendor area it calls,
 * `PECMASSIVA_`) is listed by that area. The list is what `docs/adding-an-area.md` asks a new area
 * to fill in; this keeps it true.
 */
import { describe, expect, it } from 'vitest';
import { SETTINGS_SCHEMA, settingPrefix } from '../../../platform/settings.ts';
import { AREA_REGISTRY } from '../../../subgraphs/index.ts';
import type { AreaDescriptor } from '../../../subgraphs/runtime/area.ts';

const SETTING_NAMES = Object.keys(SETTINGS_SCHEMA);

/** Whether a descriptor's entry (`NAME`, or `PREFIX_*`) covers a setting. */
const covers = (entry: string, setting: string): boolean => (entry.endsWith('*') ? setting.startsWith(entry.slice(0, -1)) : setting === entry);

/** The prefixes of settings that belong to an area: its own name's, and those of the vendor areas it calls. */
const prefixesOf = (area: AreaDescriptor): string[] => [...new Set([area.name, ...area.vendorAreas].map((a) => settingPrefix(a)))];

describe('area descriptors: settings', () => {
  it('every setting an area lists is in SETTINGS_SCHEMA (a prefix names at least one)', () => {
    for (const area of AREA_REGISTRY) {
      for (const entry of area.settings) {
        expect(entry, `${area.name}: a name, or a prefix ending in _*`).toMatch(/^[A-Z][A-Z0-9_]*(_\*)?$/);
        expect(
          SETTING_NAMES.filter((s) => covers(entry, s)),
          `${area.name} lists ${entry}`,
        ).not.toEqual([]);
      }
    }
  });

  it('every setting named with an area’s prefix is listed by that area', () => {
    const prefixes = AREA_REGISTRY.flatMap((area) => prefixesOf(area).map((prefix) => ({ area, prefix })));
    // The check sees the areas' settings (a scan that finds nothing would pass for nothing).
    expect(SETTING_NAMES.filter((s) => prefixes.some(({ prefix }) => s.startsWith(prefix))).length).toBeGreaterThan(20);
    const unlisted = SETTING_NAMES.flatMap((setting) =>
      prefixes.filter(({ area, prefix }) => setting.startsWith(prefix) && !area.settings.some((e) => covers(e, setting))).map(({ area }) => `${area.name}: ${setting}`),
    );
    expect(unlisted).toEqual([]);
  });
});
