// The deployment file's section of docs/configuration.md, made from its zod schema (through zod's
// JSON Schema export), so the page and the validation cannot disagree.
import { z } from 'zod';
import { deploymentSchema } from './schema.js';

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  description?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

function typeOf(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' / ');
  if (schema.type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'values'}${bounds(schema.minItems, schema.maxItems, ' entries')}`;
  if (schema.type === 'integer') return `integer${bounds(schema.minimum, schema.maximum)}`;
  return schema.type ?? 'value';
}

const bounds = (min?: number, max?: number, unit = '') => (min === undefined && max === undefined ? '' : ` (${min ?? 0}–${max ?? '∞'}${unit})`);
const cell = (text: string) => text.replace(/\|/g, '\\|');

function rows(prefix: string, schema: JsonSchema): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const required = schema.required?.includes(name) ? 'yes' : 'no';
    const fallback = field.default === undefined ? '—' : `\`${JSON.stringify(field.default)}\``;
    if (field.type === 'array' && field.items?.properties) {
      out.push(
        `| \`${path}\` | ${cell(`list${bounds(field.minItems, field.maxItems, ' entries')}`)} | ${required} | ${fallback} | ${cell(field.description ?? '')} |`,
      );
      out.push(...rows(`${path}[].`, field.items));
    } else if (field.type === 'object' && field.properties) {
      out.push(`| \`${path}\` | object | ${required} | ${fallback} | ${cell(field.description ?? '')} |`);
      out.push(...rows(`${path}.`, field));
    } else {
      out.push(`| \`${path}\` | ${cell(typeOf(field))} | ${required} | ${fallback} | ${cell(field.description ?? '')} |`);
    }
  }
  return out;
}

/** USDC on Base and on Ethereum (a unit test checks that the schema accepts it). */
export const EXAMPLE_DEPLOYMENT = {
  networks: [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the deployment file's own ${VARIABLE} syntax
    { id: 'eip155:8453', name: 'Base', rpcUrls: ['${BASE_RPC_URL}'], confirmations: 2, tokens: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'] },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the deployment file's own ${VARIABLE} syntax
    { id: 'eip155:1', name: 'Ethereum', rpcUrls: ['${ETH_RPC_URL}'], confirmations: 'finalized', tokens: ['0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'] },
  ],
};

export function deploymentFileReference(): string[] {
  const schema = z.toJSONSchema(deploymentSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return [
    '## Deployment file (`AUTHCAP_CONFIG`)',
    '',
    'Networks and tokens, one JSON file for the worker and API processes (and the CLI). Each process checks it at start:',
    "a wrong entry stops the start naming its path (`networks[1].tokens[0]: …`), each node's `eth_chainId` must match its",
    "`id`, and each token's name, version, symbol, decimals and EIP-3009 form are read from the chain. Secrets stay in the",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the deployment file's own ${VARIABLE} syntax
    'environment: `merchantKeys` name variables, and an RPC URL may be written `${VARIABLE}`.',
    '',
    '| Field | Type | Required | Default | Meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows('', schema),
    '',
    'For example, Base and Ethereum with one key:',
    '',
    '```json',
    JSON.stringify(EXAMPLE_DEPLOYMENT, null, 2),
    '```',
    '',
  ];
}
