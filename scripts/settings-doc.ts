/**
 * Writes `docs/configuration.md`, the reference of every setting, from the schema in
 * `platform/settings.ts` (`npm run settings-doc`, after a change to the schema). A test fails when
 * the checked-in page drifts from the schema (`test/platform/unit/settings.test.ts`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectation, SETTINGS_SCHEMA, SUBJECTS, type SettingProcess, type SettingSpec, type SettingSubject } from '../platform/settings.ts';

export const CONFIGURATION_DOC = join(import.meta.dirname, '..', 'docs', 'configuration.md');

const PROCESSES: Record<SettingProcess, string> = {
  all: 'every process',
  gateway: 'gateway',
  subgraph: 'subgraphs',
  emulator: 'emulator',
};

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(spec: SettingSpec): string {
  if (spec.type === 'duration') return `duration (${spec.unit ?? 'ms'})`;
  if (spec.type === 'enum') return `enum: ${spec.values.map((v) => `\`${v}\``).join(', ')}`;
  return spec.type;
}

function defaultOf(spec: SettingSpec): string {
  if ('defaultText' in spec && spec.defaultText) return spec.defaultText;
  if (spec.default === null) return '(unset)';
  if (typeof spec.default === 'boolean') return spec.default ? '`on`' : '`off`';
  return `\`${String(spec.default)}\``;
}

/** The page, from the schema. */
export function renderConfiguration(): string {
  const entries = Object.entries(SETTINGS_SCHEMA as Readonly<Record<string, SettingSpec>>);
  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated from platform/settings.ts by `npm run settings-doc`: do not edit by hand. -->',
    '',
    `Every setting the layer, the gateway and the emulator read: ${entries.length} environment variables.`,
    'Each process parses them once, at its start, into one typed object (`platform/settings.ts`); nothing',
    'else reads the environment. A bad value stops the start with one line naming the setting and what is',
    'expected, e.g. `Invalid setting MAX_BODY_BYTES="abc": expected a whole number of bytes ≥ 1`, and exit',
    'code 1. The value of a secret is never printed (in errors or logs).',
    '',
    'An empty value is the same as unset. Booleans take `on`/`off` (also `1`/`0`, `true`/`false`,',
    '`yes`/`no`); durations are whole numbers in the unit their name ends with (`_MS`, `_S`).',
    '',
    '**Read by**: `npm start` runs every process in one; `npm run gateway`, `npm run subgraph` and',
    '`npm run emulator` each read the settings marked for them (and those of every process).',
    '',
    "Libraries read a few variables of their own, not listed here: the OpenTelemetry SDK's (`OTEL_BSP_*`,",
    '`OTEL_LOG_LEVEL`, …; see its documentation) once traces are on, and `NODE_OPTIONS` and the like of Node.js.',
    '',
  ];
  for (const [subject, title] of Object.entries(SUBJECTS) as [SettingSubject, string][]) {
    const rows = entries.filter(([, spec]) => spec.subject === subject);
    if (rows.length === 0) continue;
    out.push(`## ${title}`, '', '| Setting | Type | Default | Read by | What it does |', '| --- | --- | --- | --- | --- |');
    for (const [name, spec] of rows) {
      const expected = spec.type === 'string' || spec.type === 'bool' || spec.type === 'enum' ? '' : ` Expected: ${expectation(spec)}.`;
      out.push(`| \`${name}\` | ${cell(typeOf(spec))} | ${cell(defaultOf(spec))} | ${spec.process.map((p) => PROCESSES[p]).join(', ')} | ${cell(spec.description + expected)} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONFIGURATION_DOC, renderConfiguration());
  console.log(`wrote ${CONFIGURATION_DOC}`);
}
