import { userDecider, userDeciderFor, validateRegistration, type UserEvent } from '../../src/domain/user';
import { foldEvents } from '../../src/domain/decider';
import { ValidationError } from '../../src/domain/errors';

const valid = {
  login: 'someone',
  email: 'someone@example.com',
  firstName: 'Some',
  lastName: 'One',
  password: 'secret',
};

function refusal(input: Partial<typeof valid>): { message: string; field?: string } {
  try {
    validateRegistration({ ...valid, ...input });
  } catch (error) {
    if (error instanceof ValidationError) return { message: error.message, field: error.field };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('user registration rules', () => {
  it('normalises login and email (lower case, stripped) and names (stripped), keeping the password as given', () => {
    expect(
      validateRegistration({
        login: ' MiXed-1.x ',
        email: ' A.B@Example.COM ',
        firstName: ' Ann ',
        lastName: ' Lee ',
        password: ' pass word ',
      }),
    ).toEqual({
      login: 'mixed-1.x',
      email: 'a.b@example.com',
      firstName: 'Ann',
      lastName: 'Lee',
      password: ' pass word ',
    });
  });

  it('checks password, first name, last name, login, email, in that order', () => {
    const everythingWrong = { password: '12345', firstName: ' ', lastName: '', login: 'a@', email: 'x' };
    expect(refusal(everythingWrong)).toEqual({ message: 'Password must be at least 6 characters.', field: 'password' });
    expect(refusal({ ...everythingWrong, password: '123456' })).toEqual({
      message: 'First name must not be empty.',
      field: 'firstName',
    });
    expect(refusal({ ...everythingWrong, password: '123456', firstName: 'A' })).toEqual({
      message: 'Last name must not be empty.',
      field: 'lastName',
    });
    expect(refusal({ login: 'a@', email: 'x' })).toEqual({ message: 'Login may not contain "@".', field: 'login' });
    expect(refusal({ email: 'x' })).toEqual({ message: 'Invalid email address.', field: 'email' });
  });

  it('follows Python regex semantics for the password and the login', () => {
    expect(refusal({ password: 'abcde\nfghij' }).field).toBe('password');
    expect(validateRegistration({ ...valid, password: 'abcdef\nx' }).password).toBe('abcdef\nx');
    for (const login of ['abc', '9abc', 'ab c', 'ab_cd', 'éabc']) expect(refusal({ login }).field).toBe('login');
    for (const login of ['abcd', 'a-b.c', 'a٣٣٣']) expect(validateRegistration({ ...valid, login }).login).toBe(login);
  });

  it('accepts the email characters Girder accepts', () => {
    for (const email of ["o'brien+x@example.com", 'a!#$%&*/=?^`{|}~-@host', 'josé@exämple.org', 'x@localhost']) {
      expect(validateRegistration({ ...valid, email }).email).toBe(email);
    }
    for (const email of ['a@b.', 'a b@c.d', '@example.com', 'a@@b.c']) expect(refusal({ email }).field).toBe('email');
  });
});

const REGISTERED = {
  login: 'someone',
  email: 'someone@example.com',
  firstName: 'S',
  lastName: 'O',
  admin: false,
  public: true,
  passwordHash: 'scrypt$…',
  created: '2024-01-01T00:00:00+00:00',
  access: { users: [], groups: [] },
};

describe('user decider', () => {
  it('given a UserRegistered event, the user exists', () => {
    const registered: UserEvent = {
      type: 'UserRegistered',
      data: {
        userId: 'u',
        login: 'someone',
        email: 'someone@example.com',
        firstName: 'S',
        lastName: 'O',
        admin: false,
        emailVerified: false,
        public: true,
        passwordHash: 'scrypt$…',
        created: '2024-01-01T00:00:00+00:00',
        access: { users: [], groups: [] },
      },
    };
    const none = { registered: false, deleted: false, login: '', email: '', otp: 'none', otpKey: '' };
    expect(foldEvents(userDecider, [])).toEqual(none);
    expect(foldEvents(userDecider, [registered])).toEqual({
      ...none,
      registered: true,
      login: 'someone',
      email: 'someone@example.com',
    });
  });

  it('takes two-factor login through started, enabled and removed, refusing steps out of order', () => {
    const d = userDeciderFor('u');
    const registered = foldEvents(userDecider, [{ type: 'UserRegistered', data: { ...REGISTERED, userId: 'u' } }]);
    expect(() => d.decide({ type: 'EnableOtp' }, registered)).toThrow(
      'The user has not initialized one-time passwords.',
    );
    expect(() => d.decide({ type: 'RemoveOtp' }, registered)).toThrow('The user has not enabled one-time passwords.');
    const started = d.decide({ type: 'StartOtp', data: { key: 'K' } }, registered);
    const afterStart = started.reduce(d.evolve, registered);
    const enabled = d.decide({ type: 'EnableOtp' }, afterStart);
    expect(enabled).toEqual([{ type: 'UserOtpEnabled', data: { userId: 'u', otp: { key: 'K' } } }]);
    const afterEnable = enabled.reduce(d.evolve, afterStart);
    expect(() => d.decide({ type: 'StartOtp', data: { key: 'L' } }, afterEnable)).toThrow(
      'The user has already enabled one-time passwords.',
    );
    const removed = d.decide({ type: 'RemoveOtp' }, afterEnable).reduce(d.evolve, afterEnable);
    expect([removed.otp, removed.otpKey]).toEqual(['none', '']);
    const deleted = d.decide({ type: 'DeleteUser' }, removed).reduce(d.evolve, removed);
    expect(() => d.decide({ type: 'VerifyEmail' }, deleted)).toThrow('Invalid user id (u).');
  });
});
