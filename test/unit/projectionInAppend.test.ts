import { ProjectionInAppend } from '../../src/ports/projectionInAppend';

describe('ProjectionInAppend', () => {
  const fence = { lease: 'projector:read-models', epoch: 3 };

  it("hands a lone request's group the projector's fence, and a larger group none (the projector applies it)", () => {
    const link = new ProjectionInAppend();
    expect(link.fenceFor(1)).toBeUndefined();
    link.fence = fence;
    expect(link.fenceFor(1)).toEqual(fence);
    expect(link.fenceFor(2)).toBeUndefined();
    link.fence = undefined;
    expect(link.fenceFor(1)).toBeUndefined();
  });

  it('only ever moves projectedThrough forward', () => {
    const link = new ProjectionInAppend();
    expect(link.projectedThrough).toBe(0n);
    link.reached(7n);
    link.reached(5n);
    expect(link.projectedThrough).toBe(7n);
  });
});
