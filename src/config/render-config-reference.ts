import { z } from 'zod';
import { ConfigSchema } from './schema.js';

/**
 * The config reference (`docs/configuration-reference.md`) rendered from the schema itself: every
 * key with its type, default and description, read from the schema's JSON Schema (`z.toJSONSchema`,
 * as the file is written: defaults make a key optional). `npm run docs:config` writes it; a test
 * fails when the committed file is not what this renders.
 */

/** The part of a JSON Schema node the reference reads. */
interface Node {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  minItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

/** One key of the file: `key` relative to its section, `path` in full. */
interface ConfigKey {
  path: string;
  key: string;
  type: string;
  default: string;
  description: string;
}

interface Section {
  /** Markdown: `` `hooks.mappings[]` ``, or `` `store` with `driver: "sqlite"` ``; empty for the top level. */
  title: string;
  intro: string;
  keys: ConfigKey[];
}

/** The command that writes the reference, named where it is out of date. */
export const CONFIG_REFERENCE_COMMAND = 'npm run docs:config';

/** What a key's description says after `@default` is its default when the schema has none of its own. */
const DEFAULT_TAG = /\s*@default\s+(.+)$/;
/** Bounds zod writes for any integer, which say nothing about the key. */
const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

const isObject = (node: Node): boolean => node.type === 'object' && node.properties !== undefined;
const isMap = (node: Node): boolean =>
  node.type === 'object' && node.properties === undefined && typeof node.additionalProperties === 'object';
const variantsOf = (node: Node): Node[] | undefined =>
  node.oneOf?.every((v) => isObject(v) && Object.values(v.properties!).some((p) => p.const !== undefined))
    ? node.oneOf
    : undefined;

const code = (value: unknown): string => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;

function describeRange(node: Node): string {
  const low = node.exclusiveMinimum !== undefined ? `> ${node.exclusiveMinimum}` : undefined;
  const min = node.minimum !== undefined && node.minimum > -SAFE_BOUND ? node.minimum : undefined;
  const max = node.maximum !== undefined && node.maximum < SAFE_BOUND ? node.maximum : undefined;
  if (low !== undefined) return max === undefined ? ` ${low}` : ` ${low}, at most ${max}`;
  if (min !== undefined && max !== undefined) return ` ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

/** A node's type in words: `integer 1 to 256`, `URL`, `"full" or "normal"`, `list of string`. */
function describeType(node: Node): string {
  const alternatives = node.anyOf ?? node.oneOf;
  if (alternatives !== undefined) return alternatives.map(describeType).join(' or ');
  if (node.const !== undefined) return code(node.const);
  if (node.enum !== undefined) return node.enum.map(code).join(' or ');
  switch (node.type) {
    case 'string':
      if (node.format === 'uri') return 'URL';
      if (node.pattern !== undefined) return `string matching \`${node.pattern}\``;
      return node.minLength !== undefined && node.minLength > 0 ? 'non-empty string' : 'string';
    case 'integer':
    case 'number':
      return `${node.type}${describeRange(node)}`;
    case 'boolean':
      return 'boolean';
    case 'array':
      return `${node.minItems !== undefined && node.minItems > 0 ? 'non-empty ' : ''}list of ${describeType(node.items ?? {})}`;
    case 'object':
      if (isMap(node)) return `map of names to ${describeType(node.additionalProperties as Node)}`;
      return 'object';
    default:
      return 'any';
  }
}

/** The key a union of object kinds is told apart by (`kind`, `driver`), and its node. */
const tagOf = (variant: Node): [string, Node] =>
  Object.entries(variant.properties!).find(([, p]) => p.const !== undefined)!;

function keyOf(path: string, key: string, node: Node): ConfigKey {
  const text = node.description ?? '';
  const tagged = DEFAULT_TAG.exec(text);
  const hasOwnDefault =
    node.default !== undefined && !(isObject(node) && Object.keys(node.default as object).length === 0);
  const variants = variantsOf(node);
  return {
    path,
    key,
    type: variants === undefined ? describeType(node) : `object, by \`${tagOf(variants[0]!)[0]}\` (below)`,
    default: hasOwnDefault ? code(node.default) : (tagged?.[1] ?? ''),
    description: tagged === null ? text : text.slice(0, tagged.index),
  };
}

/**
 * Walks the keys under `node` into `section`, named `prefix` + key; `base` is the path of the node
 * the section starts at. A top-level object, an array of objects and each kind of a union of
 * objects open sections of their own.
 */
function collect(sections: Section[], section: Section, base: string, prefix: string, node: Node): void {
  const open = (title: string, intro: string | undefined, at: string, inner: Node): void => {
    const own: Section = { title, intro: intro ?? '', keys: [] };
    sections.push(own);
    collect(sections, own, at, '', inner);
  };
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = `${prefix}${name}`;
    const path = base === '' ? key : `${base}.${key}`;
    const variants = variantsOf(child);
    const entry = keyOf(path, key, child);
    if (variants !== undefined) {
      section.keys.push(entry);
      for (const variant of variants) {
        const [tag, value] = tagOf(variant);
        const title = `\`${path}\` with \`${tag}: ${JSON.stringify(value.const)}\``;
        open(title, variant.description, path, withoutKey(variant, tag));
      }
    } else if (child.type === 'array' && child.items !== undefined && isObject(child.items)) {
      section.keys.push(entry);
      open(`\`${path}[]\``, child.items.description, `${path}[]`, child.items);
    } else if (isObject(child) && base === '') {
      section.keys.push(entry);
      open(`\`${path}\``, child.description, path, child);
    } else if (isObject(child)) {
      if (child.description !== undefined) section.keys.push(entry);
      collect(sections, section, base, `${key}.`, child);
    } else {
      section.keys.push(entry);
      const value = isMap(child) ? (child.additionalProperties as Node) : undefined;
      if (value !== undefined && isObject(value)) collect(sections, section, base, `${key}.<name>.`, value);
    }
  }
}

/** A union's kind says which section it is; its tag is not listed again as a key. */
const withoutKey = (node: Node, key: string): Node => ({
  ...node,
  properties: Object.fromEntries(Object.entries(node.properties ?? {}).filter(([k]) => k !== key)),
});

function collectSections(schema: z.ZodType): Section[] {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
  const top: Section = { title: '', intro: '', keys: [] };
  const sections: Section[] = [top];
  collect(sections, top, '', '', root);
  return sections.filter((s) => s.keys.length > 0);
}

/** Every key of the file with its path, type, default and description. */
export function listConfigKeys(schema: z.ZodType = ConfigSchema): ConfigKey[] {
  return collectSections(schema).flatMap((s) => s.keys);
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The Markdown reference of every key of the config file. */
export function renderConfigReference(schema: z.ZodType = ConfigSchema): string {
  const out = [
    '# Configuration reference',
    '',
    `<!-- Rendered from src/config/ by \`${CONFIG_REFERENCE_COMMAND}\`: change the schema's descriptions, not this file. -->`,
    '',
    'Every key of the config file, with its type, its default and what it does, rendered from the schema the',
    'gateway validates the file with. How the file is found, `${ENV}` substitution, the checks beyond the',
    'schema and what a reload applies are in [configuration.md](configuration.md).',
  ];
  for (const section of collectSections(schema)) {
    out.push('', `## ${section.title === '' ? 'Top level' : section.title}`, '');
    if (section.intro !== '') out.push(section.intro, '');
    out.push('| key | type | default | description |', '|---|---|---|---|');
    for (const k of section.keys)
      out.push(`| \`${k.key}\` | ${cell(k.type)} | ${cell(k.default)} | ${cell(k.description)} |`);
  }
  return `${out.join('\n')}\n`;
}
