import { RequestError, type Issue } from '../common/errors.js';
import { WAKE_MODES, type WakeMode } from '../config/index.js';
import { readOptionalEnum, readRequiredString, type Payload } from './read-fields.js';

/** The wake payload, validated. */
interface WakePayload {
  text: string;
  mode: WakeMode;
}

/** Turns a `/wake` body into a `WakePayload` or throws `invalid_payload` naming each field. */
export function parseWakePayload(p: Payload): WakePayload {
  const issues: Issue[] = [];
  const text = readRequiredString(p, 'text', issues);
  const mode = readOptionalEnum(p, 'mode', WAKE_MODES, issues) ?? 'now';
  if (issues.length > 0) throw new RequestError('invalid_payload', { message: describe(issues), issues });
  return { text, mode };
}

/** One human sentence out of the issues, e.g. `Invalid payload: text is required.` */
export function describe(issues: readonly Issue[]): string {
  return `Invalid payload: ${issues.map((i) => i.message).join('; ')}.`;
}
