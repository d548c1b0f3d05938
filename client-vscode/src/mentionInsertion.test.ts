import { describe, expect, it } from 'vitest';
import { planMentionInsertion } from './mentionInsertion';

describe('planMentionInsertion', () => {
  it('replaces a lone @ the user just typed, so the line holds one @', () => {
    expect(planMentionInsertion('see @', true)).toEqual({ consumedBefore: 1 });
    expect(planMentionInsertion('@', true)).toEqual({ consumedBefore: 1 });
    expect(planMentionInsertion('see\t@', true)).toEqual({ consumedBefore: 1 });
  });

  it('leaves an @ that does not start a token (dsh token rule) alone', () => {
    expect(planMentionInsertion('me@', true)).toEqual({ consumedBefore: 0 });
    expect(planMentionInsertion('@@', true)).toEqual({ consumedBefore: 0 });
  });

  it('inserts at the cursor when no @ was typed', () => {
    expect(planMentionInsertion('', true)).toEqual({ consumedBefore: 0 });
    expect(planMentionInsertion('see ', true)).toEqual({ consumedBefore: 0 });
    expect(planMentionInsertion('see @x', true)).toEqual({ consumedBefore: 0 });
  });

  it('only replaces the selection when text is selected', () => {
    expect(planMentionInsertion('see @', false)).toEqual({ consumedBefore: 0 });
  });
});
