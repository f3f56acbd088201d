/**
 * The price events' types, as the stores keep them (../stores/event-types.ts); re-exported here for
 * the modules above that speak of events rather than stores.
 */
export type { EventLog, PriceEvent, PriceEventType } from '../stores/event-types.js';
