import type { HookOutcome } from './hook-outcome.js';

/**
 * The HTTP answer for an outcome: 200 for a wake or an `event` action (with its `eventId`), 202 for
 * a run, 204 for a skip; a duplicate gets the first answer again.
 */
export function describeOutcome(outcome: HookOutcome): { status: number; body: string } {
  switch (outcome.kind) {
    case 'wake':
      return { status: 200, body: `{"ok":true,"mode":"${outcome.event.mode}","eventId":"${outcome.event.id}"}` };
    case 'agent':
      return {
        status: 202,
        body: `{"ok":true,"runId":"${outcome.run.id}"${outcome.coalesced === true ? ',"coalesced":true' : ''}}`,
      };
    case 'event':
      return { status: 200, body: `{"ok":true,"eventId":"${outcome.action.id}"}` };
    case 'skip':
      return outcome.ignored === true ? { status: 200, body: '{"ok":true,"ignored":true}' } : { status: 204, body: '' };
    case 'many': {
      const items = outcome.items.map((i) =>
        i.duplicateOf === undefined
          ? (JSON.parse(describeOutcome(i.outcome).body) as Record<string, unknown>)
          : { ...(JSON.parse(i.duplicateOf) as Record<string, unknown>), duplicate: true },
      );
      for (const item of items) delete item['ok'];
      const anyRun = outcome.items.some((i) => i.outcome.kind === 'agent');
      return { status: anyRun ? 202 : 200, body: JSON.stringify({ ok: true, items }) };
    }
    case 'duplicate': {
      if (outcome.body === '') return { status: outcome.status, body: '' };
      const first = JSON.parse(outcome.body) as Record<string, unknown>;
      return { status: outcome.status, body: JSON.stringify({ ...first, duplicate: true }) };
    }
  }
}
