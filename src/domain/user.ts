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
  /** `pending` while the registration policy `approve` waits for an administrator; absent means `enabled`. */
  status: z.enum(['pending', 'enabled']).optional(),
  public: z.boolean(),
  passwordHash: z.string(),
  created: z.string(),
  access: accessListSchema,
});

const UserPasswordChangedSchema = z.object({ userId: z.string(), passwordHash: z.string() });
const UserStatusSchema = z.enum(['pending', 'enabled', 'disabled']);
export type UserStatus = z.infer<typeof UserStatusSchema>;
/** `PUT /user/:id`: the profile as it is after the change (Girder saves the whole document). */
const UserProfileUpdatedSchema = z.object({
  userId: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  admin: z.boolean(),
  status: UserStatusSchema,
});
const userOnly = z.object({ userId: z.string() });
/** Not published: `otp` holds the TOTP secret (and `otp` is a redacted key wherever event data leaves). */
const UserOtpStartedSchema = z.object({ userId: z.string(), otp: z.object({ key: z.string() }) });
/** The key again, so the read model (which is written from events alone) can hold it with `enabled`. */
const UserOtpEnabledSchema = UserOtpStartedSchema;

const userEventSchemas = {
  UserRegistered: UserRegisteredSchema,
  UserPasswordChanged: UserPasswordChangedSchema,
  UserProfileUpdated: UserProfileUpdatedSchema,
  UserEmailVerified: userOnly,
  UserOtpStarted: UserOtpStartedSchema,
  UserOtpEnabled: UserOtpEnabledSchema,
  UserOtpRemoved: userOnly,
  UserDeleted: userOnly,
} as const;

type UserRegisteredData = z.infer<typeof UserRegisteredSchema>;
export type UserEvent =
  | DomainEvent<'UserRegistered', UserRegisteredData>
  /** `PUT /user/password`, `PUT /user/:id/password`. */
  | DomainEvent<'UserPasswordChanged', z.infer<typeof UserPasswordChangedSchema>>
  | DomainEvent<'UserProfileUpdated', z.infer<typeof UserProfileUpdatedSchema>>
  /** `PUT /user/:id/verification` with the token the verification e-mail carried. */
  | DomainEvent<'UserEmailVerified', z.infer<typeof userOnly>>
  /** `POST /user/:id/otp`: a new TOTP key, not yet required at login. */
  | DomainEvent<'UserOtpStarted', z.infer<typeof UserOtpStartedSchema>>
  /** `PUT /user/:id/otp` with a valid code: logins need one from now on. */
  | DomainEvent<'UserOtpEnabled', z.infer<typeof UserOtpEnabledSchema>>
  | DomainEvent<'UserOtpRemoved', z.infer<typeof userOnly>>
  | DomainEvent<'UserDeleted', z.infer<typeof userOnly>>;

interface UserState {
  registered: boolean;
  deleted: boolean;
  /** The login and e-mail the user holds (their reservation streams name the user as owner). */
  login: string;
  email: string;
  otp: 'none' | 'started' | 'enabled';
  /** The TOTP key once started. */
  otpKey: string;
}

export type UserCommand =
  /** Registration, once its input is valid (`validateRegistration`) and the password hashed. */
  | {
      type: 'RegisterUser';
      data: Pick<
        UserRegisteredData,
        | 'userId'
        | 'login'
        | 'email'
        | 'firstName'
        | 'lastName'
        | 'admin'
        | 'emailVerified'
        | 'status'
        | 'passwordHash'
        | 'created'
      >;
    }
  | { type: 'UpdateProfile'; data: Omit<z.infer<typeof UserProfileUpdatedSchema>, 'userId'> }
  | { type: 'ChangePassword'; data: { passwordHash: string } }
  | { type: 'VerifyEmail' }
  | { type: 'StartOtp'; data: { key: string } }
  | { type: 'EnableOtp' }
  | { type: 'RemoveOtp' }
  | { type: 'DeleteUser' };

const ALREADY_ENABLED = 'The user has already enabled one-time passwords.';

function decideUser(command: UserCommand, state: UserState, userId: string): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser': {
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
        ...(d.status !== undefined ? { status: d.status } : {}),
        public: true,
        passwordHash: d.passwordHash,
        created: d.created,
        access: withUserAccess(emptyAccess(), d.userId, AccessLevel.ADMIN),
      };
      return [{ type: 'UserRegistered', data }];
    }
    case 'UpdateProfile':
      return [{ type: 'UserProfileUpdated', data: { userId, ...command.data } }];
    case 'ChangePassword':
      return [{ type: 'UserPasswordChanged', data: { userId, passwordHash: command.data.passwordHash } }];
    case 'VerifyEmail':
      return [{ type: 'UserEmailVerified', data: { userId } }];
    case 'StartOtp':
      // A started key not yet confirmed is simply replaced (Girder's initializeOtp).
      if (state.otp === 'enabled') throw new RestError(ALREADY_ENABLED);
      return [{ type: 'UserOtpStarted', data: { userId, otp: { key: command.data.key } } }];
    case 'EnableOtp':
      if (state.otp === 'none') throw new RestError('The user has not initialized one-time passwords.');
      if (state.otp === 'enabled') throw new RestError(ALREADY_ENABLED);
      return [{ type: 'UserOtpEnabled', data: { userId, otp: { key: state.otpKey } } }];
    case 'RemoveOtp':
      if (state.otp !== 'enabled') throw new RestError('The user has not enabled one-time passwords.');
      return [{ type: 'UserOtpRemoved', data: { userId } }];
    case 'DeleteUser':
      return [{ type: 'UserDeleted', data: { userId } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** The decider of one user's stream; commands other than registration need a registered user that still exists. */
export const userDeciderFor = (userId: string): Decider<UserState, UserCommand, UserEvent> => ({
  ...userDecider,
  decide: (command, state) => {
    if (command.type !== 'RegisterUser' && (!state.registered || state.deleted))
      throw new RestError(`Invalid user id (${userId}).`);
    return decideUser(command, state, userId);
  },
});

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: () => ({ registered: false, deleted: false, login: '', email: '', otp: 'none', otpKey: '' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'UserRegistered':
        return { ...state, registered: true, login: event.data.login, email: event.data.email };
      case 'UserPasswordChanged':
      case 'UserEmailVerified':
        return state;
      case 'UserProfileUpdated':
        return { ...state, email: event.data.email };
      case 'UserOtpStarted':
        return { ...state, otp: 'started', otpKey: event.data.otp.key };
      case 'UserOtpEnabled':
        return { ...state, otp: 'enabled' };
      case 'UserOtpRemoved':
        return { ...state, otp: 'none', otpKey: '' };
      case 'UserDeleted':
        return { ...state, deleted: true };
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) =>
    decideUser(command, state, command.type === 'RegisterUser' ? command.data.userId : '(unknown)'),
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

/** Girder's validation of a saved profile (`User.validate`), in its order and with its messages; normalised values. */
export function validateProfile(input: { firstName: string; lastName: string; email: string }): {
  firstName: string;
  lastName: string;
  email: string;
} {
  const firstName = input.firstName.trim();
  const lastName = input.lastName.trim();
  if (!firstName) throw new ValidationError('First name must not be empty.', 'firstName');
  if (!lastName) throw new ValidationError('Last name must not be empty.', 'lastName');
  const email = input.email.toLowerCase().trim();
  if (!EMAIL_PATTERN.test(email)) throw new ValidationError('Invalid email address.', 'email');
  return { firstName, lastName, email };
}
