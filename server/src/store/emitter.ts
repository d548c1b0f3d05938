import type { Subscription } from './service';

/** A minimal event source; a throwing listener never disturbs the store or other listeners. */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  /** Subscribes a listener. */
  on(listener: (value: T) => void): Subscription {
    const wrapped = (value: T) => listener(value);
    this.listeners.add(wrapped);
    return { dispose: () => this.listeners.delete(wrapped) };
  }

  /** Calls every listener with `value`. */
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  /** Drops every listener. */
  clear(): void {
    this.listeners.clear();
  }
}
