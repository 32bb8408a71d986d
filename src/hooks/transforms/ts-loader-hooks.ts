/**
 * Module loader hooks (`module.register`) that let transforms be written in TypeScript: `.ts` and
 * `.mts` files are compiled to JavaScript with amaro (the type stripper Node itself uses) as they
 * load; a `./x.js` import from a TypeScript file finds `./x.ts` when there is no `x.js`.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import amaro from 'amaro';

interface ResolveContext {
  parentURL?: string | undefined;
}
interface ResolveResult {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean;
}
interface LoadResult {
  format: string;
  source?: string | Buffer;
  shortCircuit?: boolean;
}

const TS = /\.m?ts$/;

export async function resolve(
  specifier: string,
  context: ResolveContext,
  nextResolve: (specifier: string, context: ResolveContext) => Promise<ResolveResult>,
): Promise<ResolveResult> {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const parent = context.parentURL;
    if (parent !== undefined && TS.test(new URL(parent).pathname) && /^\.\.?\/.*\.m?js$/.test(specifier)) {
      return nextResolve(specifier.replace(/\.(m?)js$/, '.$1ts'), context);
    }
    throw error;
  }
}

/**
 * The compiled module's source map, inline, naming the TypeScript file: the transform process
 * enables source maps, so a stack points at the line and column as written.
 */
function inlineSourceMap(map: string | undefined, url: string): string {
  if (map === undefined) return '';
  const parsed = JSON.parse(map) as { sources?: string[]; sourcesContent?: unknown };
  parsed.sources = [url];
  delete parsed.sourcesContent;
  return `//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(parsed)).toString('base64')}`;
}

export async function load(
  url: string,
  context: unknown,
  nextLoad: (url: string, context: unknown) => Promise<LoadResult>,
): Promise<LoadResult> {
  if (url.startsWith('file:') && TS.test(new URL(url).pathname)) {
    const source = await readFile(fileURLToPath(url), 'utf8');
    const { code, map } = amaro.transformSync(source, { mode: 'transform', sourceMap: true }) as {
      code: string;
      map?: string;
    };
    return { format: 'module', source: `${code}\n${inlineSourceMap(map, url)}`, shortCircuit: true };
  }
  return nextLoad(url, context);
}
