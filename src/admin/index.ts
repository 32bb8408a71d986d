/** Operator surface: the request log's recorder, the admin API over plain values, its HTTP side and the dashboard. */
export { createRequestRecorder, type RequestRecorderDeps } from './create-request-recorder.js';
export { createAdminApi, type AdminApiDeps, type AdminAnswer, type AdminCall } from './create-admin-api.js';
export { createAdminHandler, type AdminHandlerDeps } from './create-admin-handler.js';
export { readAdminAssets, type AdminAsset } from './read-admin-assets.js';
export { createAdminSurface, type AdminSurfaceDeps } from './create-admin-surface.js';
