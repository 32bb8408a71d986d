/** Operator surface: the request log's recorder, the admin API over plain values, its HTTP side and the dashboard. */
export { createRequestRecorder } from './create-request-recorder.js';
export { createAdminSurface } from './create-admin-surface.js';
