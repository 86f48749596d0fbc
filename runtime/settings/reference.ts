// docs/configuration.md, made from the catalog: a table per process (variable, default, meaning).
// scripts/configReference.ts writes it (npm run docs:config); a unit test keeps it from drifting.
import { deploymentFileReference } from '../deployment/reference.js';
import { catalog, PROCESS_NAMES, PROCESS_TITLES, type Variable } from './catalog.js';

function defaultOf(spec: Variable): string {
  if (spec.defaultText !== undefined) return spec.defaultText || '—';
  if (spec.secret) return '—';
  const parsed = spec.schema.safeParse(undefined);
  if (!parsed.success) return '—';
  const value = parsed.data;
  if (value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (Array.isArray(value)) return value.length ? `\`${value.join(',')}\`` : 'none';
  return `\`${String(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function configurationReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from runtime/settings/catalog.ts and runtime/deployment/schema.ts by `npm run docs:config`: edit those, not this file. -->',
    '',
    'Every environment variable authcap reads, per process. Each process validates all of its variables when it',
    'starts and refuses to start with the name of every wrong one. An empty value counts as unset where a',
    'variable has a default. Networks and tokens live in the deployment file named by `AUTHCAP_CONFIG`',
    '([below](#deployment-file-authcap_config)).',
    '',
    'Secrets are marked 🔒: their values are never printed. Variables read by a library are marked with it',
    '(authcap passes them on and checks them lightly, if at all).',
    '',
  ];
  for (const processName of PROCESS_NAMES) {
    const entries = Object.entries(catalog as Record<string, Variable>).filter(([, spec]) => spec.processes.includes(processName));
    if (!entries.length) continue;
    lines.push(`## ${PROCESS_TITLES[processName]}`, '', '| Variable | Default | Meaning |', '| --- | --- | --- |');
    for (const [name, spec] of entries) {
      const marks = `${spec.secret ? ' 🔒' : ''}`;
      const meaning = `${spec.description}${spec.readBy ? ` *Read by ${spec.readBy}.*` : ''}`;
      lines.push(`| \`${name}\`${marks} | ${cell(defaultOf(spec))} | ${cell(meaning)} |`);
    }
    lines.push('');
  }
  lines.push(...deploymentFileReference());
  return `${lines.join('\n').trimEnd()}\n`;
}
