/**
 * Girder's `mail_utils.validateEmailAddress`: the grammar of a valid e-mail address in the HTML Standard
 * (4.10.5.1.5), ASCII only, no display name.
 */
const EMAIL_ADDRESS =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

export const isEmailAddress = (address: string): boolean => EMAIL_ADDRESS.test(address);
