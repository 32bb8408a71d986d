import { readFileSync } from 'node:fs';
import { textExceedsJsonDepth } from '../common/json-depth.js';

/**
 * A payload from `--data` or `--file`: JSON text and its value; text nested deeper than the
 * gateway accepts (its 400 `json_too_deep`), left unparsed as the gateway leaves it; or why the
 * arguments give no usable payload.
 */
export type PayloadRead =
  | { kind: 'json'; text: string; value: unknown }
  | { kind: 'too_deep'; text: string }
  | { kind: 'unusable'; message: string };

/** Reads the payload of `send` and `mappings test`. */
export function readPayload(options: { data?: string | undefined; file?: string | undefined }): PayloadRead {
  if (options.data !== undefined && options.file !== undefined)
    return { kind: 'unusable', message: 'give --data or --file, not both' };
  let text: string;
  if (options.data !== undefined) text = options.data;
  else if (options.file !== undefined) {
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      return { kind: 'unusable', message: `cannot read ${options.file}: ${(error as Error).message}` };
    }
  } else return { kind: 'unusable', message: 'needs a payload: --data JSON or --file PAYLOAD.json' };
  // Checked before parsing, in the gateway's order: such a value overflows the stack where it is
  // rendered into a template or handed to a transform.
  if (textExceedsJsonDepth(Buffer.from(text, 'utf8'))) return { kind: 'too_deep', text };
  try {
    return { kind: 'json', text, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { kind: 'unusable', message: `the payload is not valid JSON: ${(error as Error).message}` };
  }
}
