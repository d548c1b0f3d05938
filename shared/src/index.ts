export * from './types';
export * from './errors';
export * from './config';
export * from './uri';
export * from './mention';
export * from './tagSafeJson';
export * from './commands';
export * from './displaySafe';
