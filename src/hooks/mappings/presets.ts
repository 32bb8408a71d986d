import type { Issue } from '../../common/errors.js';
import type { HooksConfig, MappingConfig } from '../../config/index.js';

/** A built-in mapping, with an optional check of the payload shape it expects. */
export interface Preset {
  mapping: MappingConfig;
  validate?: (payload: Record<string, unknown>) => Issue[];
}

/**
 * The mail watcher's payload: `{messages: [{id, from, subject, snippet, body}]}` at `/hooks/gmail`,
 * turned into one agent run per message (`forEach`), in the session of its id (`hook:gmail:<id>`),
 * named for the mail provider. A message id seen in an earlier notification is not run again.
 */
function gmailPreset(settings: HooksConfig['gmail']): Preset {
  const mapping: MappingConfig = {
    id: 'gmail',
    match: { path: 'gmail' },
    action: 'agent',
    name: 'Gmail',
    wakeMode: 'now',
    forEach: { path: 'messages', maxItems: 100, idPath: 'id' },
    sessionKey: 'hook:gmail:{{item.id}}',
    messageTemplate: 'New email from {{item.from}}\nSubject: {{item.subject}}\n{{item.snippet}}\n\n{{item.body}}',
  };
  if (settings?.model !== undefined) mapping.model = settings.model;
  if (settings?.thinking !== undefined) mapping.thinking = settings.thinking;
  if (settings?.allowUnsafeExternalContent !== undefined)
    mapping.allowUnsafeExternalContent = settings.allowUnsafeExternalContent;
  return {
    mapping,
    validate(payload) {
      const messages = payload['messages'];
      if (!Array.isArray(messages) || messages.length === 0)
        return [{ path: 'messages', message: 'messages must be a non-empty array (the mail watcher payload)' }];
      const issues = [];
      for (const [i, m] of messages.entries()) {
        const id = m !== null && typeof m === 'object' ? (m as Record<string, unknown>)['id'] : undefined;
        if (typeof id !== 'string' || id === '')
          issues.push({ path: `messages[${i}].id`, message: `messages[${i}].id must be a non-empty string` });
      }
      return issues;
    },
  };
}

/** Presets by name, as enabled by `hooks.presets`. */
export function createPresets(hooks: HooksConfig): Preset[] {
  return hooks.presets.map((name) => {
    switch (name) {
      case 'gmail':
        return gmailPreset(hooks.gmail);
      default:
        throw new Error(`unknown preset ${String(name satisfies never)}`);
    }
  });
}
