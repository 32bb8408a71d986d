import { MAX_JSON_DEPTH, valueExceedsJsonDepth } from '../../common/json-depth.js';

/**
 * Why a transform's result cannot be used, or `null` when it can: nested deeper than the JSON
 * bound, or larger as JSON than `maxBytes` (`hooks.maxBodyBytes`: a transform may reshape a
 * request, not inflate it). Checked in the worker before the result crosses threads, and again on
 * the gateway side, which does not trust what arrives.
 */
export function checkTransformResult(result: unknown, maxBytes: number): string | null {
  if (result === null || typeof result !== 'object') {
    return typeof result === 'string' && Buffer.byteLength(result) > maxBytes
      ? `transform result is larger than ${maxBytes} bytes`
      : null;
  }
  if (valueExceedsJsonDepth(result, MAX_JSON_DEPTH))
    return `transform result nests deeper than ${MAX_JSON_DEPTH} levels`;
  let text: string | undefined;
  try {
    text = JSON.stringify(result);
  } catch (error) {
    return `transform result is not plain data: ${(error as Error).message}`;
  }
  const bytes = text === undefined ? 0 : Buffer.byteLength(text);
  return bytes > maxBytes
    ? `transform result is ${bytes} bytes as JSON, more than the ${maxBytes} allowed (hooks.maxBodyBytes)`
    : null;
}
