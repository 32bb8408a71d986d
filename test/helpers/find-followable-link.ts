/**
 * The first thing in a text that a chat service's linkifier or a Markdown renderer could turn into
 * something followed or fetched: a URL with a scheme (`hxxps://`, the reply guard's inert mark,
 * aside), a `javascript:`/`data:` URL, a Markdown image, an `<img>`, or a bare domain of the test
 * hosts. `null` when there is none.
 */
export function findFollowableLink(text: string): string | null {
  const m =
    /[a-z][a-z0-9+.-]*:\/\/|(?:javascript|data|vbscript|mailto):|!\[[^\]\n]*\]\(|<img|\b[\w-]+\.(?:example|com|net|xn--[\w-]+)\b/i.exec(
      text.replace(/hxxps?:\/\//g, ''),
    );
  return m === null ? null : m[0];
}
