/** Event ids as clients send them back (`Last-Event-ID`); the stores write them (../stores/sql/outbox.ts). */
export { seqOfId } from '../stores/sql/outbox.js';
