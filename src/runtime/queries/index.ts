export { type ActivityFeed, createActivityFeed } from './activity.js';
export { type AdminQueries, createAdminQueries, requestViewOf } from './queries.js';
