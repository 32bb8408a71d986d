import type { Issue } from '../../common/errors.js';
import type { HooksConfig, MappingConfig } from '../../config/index.js';

/** A built-in mapping, with an optional check of the payload shape it expects. */
export interface Preset {
  mapping: MappingConfig;
  validate?: (payload: Record<string, unknown>) => Issue[];
}

const first = (payload: Record<string, unknown>): unknown => {
  const messages = payload['messages'];
  return Array.isArray(messages) ? messages[0] : undefined;
};

/**
 * The mail watcher's payload: `{messages: [{id, from, subject, snippet, body}]}` at `/hooks/gmail`,
 * turned into an agent run per message id (`hook:gmail:<id>`), named for the mail provider.
 */
function gmailPreset(settings: HooksConfig['gmail']): Preset {
  const mapping: MappingConfig = {
    id: 'gmail',
    match: { path: 'gmail' },
    action: 'agent',
    name: 'Gmail',
    wakeMode: 'now',
    sessionKey: 'hook:gmail:{{messages[0].id}}',
    messageTemplate:
      'New email from {{messages[0].from}}\nSubject: {{messages[0].subject}}\n{{messages[0].snippet}}\n\n{{messages[0].body}}',
  };
  if (settings?.model !== undefined) mapping.model = settings.model;
  if (settings?.thinking !== undefined) mapping.thinking = settings.thinking;
  if (settings?.allowUnsafeExternalContent !== undefined) mapping.allowUnsafeExternalContent = settings.allowUnsafeExternalContent;
  return {
    mapping,
    validate(payload) {
      const m = first(payload);
      if (m === null || typeof m !== 'object') return [{ path: 'messages[0]', message: 'messages[0] is required (the mail watcher payload)' }];
      const id = (m as Record<string, unknown>)['id'];
      if (typeof id !== 'string' || id === '') return [{ path: 'messages[0].id', message: 'messages[0].id must be a non-empty string' }];
      return [];
    },
  };
}

/** Presets by name, as enabled by `hooks.presets`. */
export function createPresets(hooks: HooksConfig): Preset[] {
  return hooks.presets.map((name) => {
    switch (name) {
      case 'gmail':
        return gmailPreset(hooks.gmail);
    }
  });
}
