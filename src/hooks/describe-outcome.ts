import type { HookOutcome } from './create-hook-handler.js';

/** The HTTP answer for an outcome: 200 for a wake, 202 for a run, 204 for a skip; a duplicate gets the first answer again. */
export function describeOutcome(outcome: HookOutcome): { status: number; body: string } {
  switch (outcome.kind) {
    case 'wake':
      return { status: 200, body: `{"ok":true,"mode":"${outcome.event.mode}","eventId":"${outcome.event.id}"}` };
    case 'agent':
      return { status: 202, body: `{"ok":true,"runId":"${outcome.run.id}"}` };
    case 'skip':
      return { status: 204, body: '' };
    case 'duplicate': {
      if (outcome.body === '') return { status: outcome.status, body: '' };
      const first = JSON.parse(outcome.body) as Record<string, unknown>;
      return { status: outcome.status, body: JSON.stringify({ ...first, duplicate: true }) };
    }
  }
}
