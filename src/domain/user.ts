import { z } from 'zod';
import { unknownEvent, type Decider, type DomainEvent } from './decider';
import { AccessLevel, accessListSchema, emptyAccess, withUserAccess } from './access';
import { RestError, ValidationError } from './errors';

export const userStream = (id: string): string => `user-${id}`;
/** A stream claimed (expected no_stream) by the first registration only: that user becomes site admin. */
export const FIRST_USER_STREAM = 'siteadmin-bootstrap';

/** Not published (`/events/schema`): it holds the password hash. */
const UserRegisteredSchema = z.object({
  userId: z.string(),
  login: z.string(),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  admin: z.boolean(),
  /** True for the first user ever registered only (Girder's bootstrap); absent on events written before it existed. */
  emailVerified: z.boolean().optional(),
  public: z.boolean(),
  passwordHash: z.string(),
  created: z.string(),
  access: accessListSchema,
});

const UserPasswordChangedSchema = z.object({ userId: z.string(), passwordHash: z.string() });
const userEventSchemas = {
  UserRegistered: UserRegisteredSchema,
  UserPasswordChanged: UserPasswordChangedSchema,
} as const;

type UserRegisteredData = z.infer<typeof UserRegisteredSchema>;
export type UserEvent =
  | DomainEvent<'UserRegistered', UserRegisteredData>
  /** `PUT /user/password`. */
  | DomainEvent<'UserPasswordChanged', z.infer<typeof UserPasswordChangedSchema>>;

export interface UserState {
  registered: boolean;
}

/** Registration, once its input is valid (`validateRegistration`) and the password hashed. */
export interface UserCommand {
  type: 'RegisterUser';
  data: Pick<
    UserRegisteredData,
    'userId' | 'login' | 'email' | 'firstName' | 'lastName' | 'admin' | 'emailVerified' | 'passwordHash' | 'created'
  >;
}

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: () => ({ registered: false }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'UserRegistered':
        return { registered: true };
      case 'UserPasswordChanged':
        return state;
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) => {
    // One command so far: registration.
    const d = command.data;
    if (state.registered) throw new RestError(`User ${d.userId} already exists.`, 409);
    const data: UserRegisteredData = {
      userId: d.userId,
      login: d.login,
      email: d.email,
      firstName: d.firstName,
      lastName: d.lastName,
      admin: d.admin,
      ...(d.emailVerified !== undefined ? { emailVerified: d.emailVerified } : {}),
      public: true,
      passwordHash: d.passwordHash,
      created: d.created,
      access: withUserAccess(emptyAccess(), d.userId, AccessLevel.ADMIN),
    };
    return [{ type: 'UserRegistered', data }];
  },
  eventSchemas: userEventSchemas,
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
  if (!/^[^\n]{6}/.test(input.password))
    throw new ValidationError('Password must be at least 6 characters.', 'password');
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
