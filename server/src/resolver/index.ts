/** The session-reference resolver: candidate discovery, projection, byte budget and prompt, over a `SessionStore`. */
export * from './sessionStore';
export * from './storeOrder';
export * from './resolver';
export * from './candidates';
export * from './candidateSearch';
export * from './references';
export * from './projection';
export * from './budget';
export * from './prompt';
export * from './credentials';
export * from './redaction';
export * from './cancellation';
