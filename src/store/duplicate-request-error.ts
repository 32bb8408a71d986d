/** A request repeated an idempotency key whose window has not passed: nothing was recorded. */
export class DuplicateRequestError extends Error {
  readonly code = 'duplicate_request';
  constructor(
    readonly hook: string,
    readonly key: string,
  ) {
    super(`idempotency key already used on hook ${hook}`);
    this.name = 'DuplicateRequestError';
  }
}
