/**
 * The URL of an RFC 8288 `Link` header's `rel="next"` entry (GitHub's cursor pagination), or `null`:
 * `<https://api.github.com/…?cursor=v1_42&per_page=100>; rel="next", <…>; rel="prev"`.
 */
export function nextLink(header: string | null): string | null {
  if (header === null) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m === null) continue;
    const rels = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;]+))/i.exec(m[2]!);
    const rel = rels?.[1] ?? rels?.[2] ?? '';
    if (rel.split(/\s+/).includes('next')) return m[1]!;
  }
  return null;
}
