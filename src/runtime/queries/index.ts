export { type ActivityFeed, createActivityFeed } from './activity.js';
export { type AdminQueries, createAdminQueries } from './queries.js';
export { requestViewOf } from './request-queries.js';
