/** The grammar of `{{ expr }}` templates, shared by the config check and the renderer. */

/** One `{{ … }}` tag; group 1 is the expression. */
export const TEMPLATE_TAG = /\{\{\s*([^{}]*?)\s*\}\}/g;
const STEP = /^(?:\.?([A-Za-z_$][\w$-]*)|\[(\d+)\])/;

/** Splits `a.b[0].c` into steps; `null` when the expression is not a plain path. */
export function parsePath(expr: string): Array<string | number> | null {
  const steps: Array<string | number> = [];
  let rest = expr.trim();
  if (rest === '' || rest.startsWith('.')) return null;
  while (rest !== '') {
    const m = STEP.exec(rest);
    if (m === null) return null;
    steps.push(m[1] ?? Number(m[2]));
    rest = rest.slice(m[0].length);
  }
  return steps;
}

/** Expressions in a template that are not plain paths. */
export function findInvalidExpressions(template: string): string[] {
  const bad: string[] = [];
  for (const m of template.matchAll(TEMPLATE_TAG)) if (parsePath(m[1]!) === null) bad.push(m[1]!);
  return bad;
}
