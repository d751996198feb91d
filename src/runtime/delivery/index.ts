export { createDelivery, type Delivery, isAckOnly } from './delivery.js';
export { createRedeliveries } from './redeliver.js';
