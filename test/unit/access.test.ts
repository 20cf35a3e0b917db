import { copyAccess, type AccessList } from '../../src/domain/access';

describe('copyAccess', () => {
  it('gives an equal ACL that shares no entry, flag list or array with the original', () => {
    const original: AccessList = {
      users: [
        { id: 'u1', level: 2, flags: ['f1'] },
        { id: 'u2', level: 0, flags: [] },
      ],
      groups: [{ id: 'g1', level: 1, flags: ['f2'] }],
    };
    const copy = copyAccess(original);
    expect(copy).toEqual(original);

    copy.users[0].flags.push('added');
    copy.users[1].level = 2;
    copy.users.push({ id: 'u3', level: 1, flags: [] });
    copy.groups[0].flags.length = 0;
    expect(original).toEqual({
      users: [
        { id: 'u1', level: 2, flags: ['f1'] },
        { id: 'u2', level: 0, flags: [] },
      ],
      groups: [{ id: 'g1', level: 1, flags: ['f2'] }],
    });
  });
});
