/**
 * A reply's text reaches a chat shaped by hook content, which a sender writes: it must not be
 * able to notify a whole channel or team. Discord is told to parse no mention at all
 * (`allowed_mentions`); Slack and Mattermost read them from the text.
 */

/** Invisible, and not a word character: `@\u2060channel` is no longer the keyword. */
const WORD_JOINER = '\u2060';

/**
 * Slack's broadcast commands (`<!channel>`, `<!here>`, `<!everyone>`, a user group's
 * `<!subteam^ID>`) written out as text: Slack shows `&lt;` and `&gt;` as `<` and `>`.
 */
export function escapeSlackBroadcasts(text: string): string {
  return text.replace(/<(!(?:channel|here|everyone|subteam\^)[^>]*)>/gi, '&lt;$1&gt;');
}

/** Mattermost's `@channel`, `@all` and `@here` (and `@everyone`, for good measure), made plain words. */
export function escapeMattermostBroadcasts(text: string): string {
  // Not inside a word or an address (`ops@channel.example`), where Mattermost sees no mention either.
  return text.replace(/(?<![\w.+-])@(channel|all|here|everyone)\b/gi, `@${WORD_JOINER}$1`);
}
