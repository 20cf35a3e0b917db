import type { Decider, DomainEvent } from './decider';
import type { AccessList } from './access';
import { ValidationError } from './errors';

export const userStream = (id: string): string => `user-${id}`;
/** A stream claimed (expected no_stream) by the first registration only: that user becomes site admin. */
export const FIRST_USER_STREAM = 'siteadmin-bootstrap';

export interface UserRegisteredData {
  userId: string;
  login: string;
  email: string;
  firstName: string;
  lastName: string;
  admin: boolean;
  /** True for the first user ever registered only (Girder's bootstrap); absent on events written before it existed. */
  emailVerified?: boolean;
  public: boolean;
  passwordHash: string;
  created: string;
  access: AccessList;
}

export type UserEvent =
  | DomainEvent<'UserRegistered', UserRegisteredData>
  /** `PUT /user/password`. */
  | DomainEvent<'UserPasswordChanged', { userId: string; passwordHash: string }>;

export interface UserState {
  registered: boolean;
}

export const userDecider: Pick<Decider<UserState, never, UserEvent>, 'initialState' | 'evolve'> = {
  initialState: () => ({ registered: false }),
  evolve: (state, event) => (event.type === 'UserRegistered' ? { registered: true } : state),
};

export interface RegistrationInput {
  login: string;
  email: string;
  firstName: string;
  lastName: string;
  password: string;
}

/** Python's `\d` and `\w` on str patterns are Unicode-aware: decimal digits, and letters, numbers and `_`. */
const LOGIN_PATTERN = /^[a-z][\p{Nd}a-z\-.]{3,}$/u;
const EMAIL_PATTERN = /^[\p{L}\p{N}_.!#$%&'*+/=?^`{|}~-]+@[\p{L}\p{N}_-]+(\.[\p{L}\p{N}_-]+)*$/u;

/** Girder's user validation, in its order and with its messages. Returns the normalised values. */
export function validateRegistration(input: RegistrationInput): RegistrationInput {
  // Python's `re.match('.{6}.*', password)`: six characters other than a newline at the start.
  if (!/^[^\n]{6}/.test(input.password)) throw new ValidationError('Password must be at least 6 characters.', 'password');
  const firstName = input.firstName.trim();
  const lastName = input.lastName.trim();
  if (!firstName) throw new ValidationError('First name must not be empty.', 'firstName');
  if (!lastName) throw new ValidationError('Last name must not be empty.', 'lastName');
  const login = input.login.toLowerCase().trim();
  if (login.includes('@')) throw new ValidationError('Login may not contain "@".', 'login');
  if (!LOGIN_PATTERN.test(login)) {
    throw new ValidationError(
      'Login must be at least 4 characters, start with a letter, and may only contain letters, numbers, dashes, and dots.',
      'login',
    );
  }
  const email = input.email.toLowerCase().trim();
  if (!EMAIL_PATTERN.test(email)) throw new ValidationError('Invalid email address.', 'email');
  return { login, email, firstName, lastName, password: input.password };
}
