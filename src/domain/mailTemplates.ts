/**
 * Girder's mail templates (girder/mail_templates/*.mako, 3.2.15), same words and markup. Every interpolated value is
 * HTML-escaped: Girder's templates insert them raw, so a user's name could carry markup into an administrator's mail.
 */

/** What every template shows: the brand in the header and the link back to the site in the footer. */
export interface MailFrame {
  brandName: string;
  /** `core.email_host`: the site's root URL, which the links of the mails start with. */
  host: string;
}

const escapeHtml = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

function framed(frame: MailFrame, body: string): string {
  const brandName = escapeHtml(frame.brandName);
  const host = escapeHtml(frame.host);
  return `<div style="background-color: #3f3b3b; color: white; padding: 10px;\
            margin-bottom: 15px; font-family: Arial, sans-serif; font-size: 16px;\
            font-weight: bold;">${brandName}</div>

${body}

<div style="margin-top: 15px; border-top: 1px solid #e0e0e0; color: #999;\
            padding-top: 6px;">
  This auto-generated email sent from ${brandName} @ <a target="_blank" href="${host}">${host}</a>.
</div>
`;
}

const link = (url: string) => `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`;

/** temporaryAccess.mako: the link of a temporary access token (password reset). */
export const temporaryAccessMail = (frame: MailFrame, url: string): string =>
  framed(
    frame,
    `<p>
A temporary access token was requested on your behalf.  You can access the
${escapeHtml(frame.brandName)} system at
<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>.
Once you access the system, you will have the option to update your password.
</p>

<p>
If you did not initiate this temporary access request, you can ignore this
email.  Temporary access is only available with the link provided and expires
24 hours after it was requested.
</p>`,
  );

/** emailVerification.mako. */
export const emailVerificationMail = (frame: MailFrame, url: string): string =>
  framed(
    frame,
    `<p>Please verify your email address by clicking this link:</p>

${link(url)}

<p>If you did not initiate this request, you can ignore this email.
The link provided expires 24 hours after it was requested.</p>`,
  );

/** accountApproval.mako: to the site administrators, about a registration waiting for them. */
export const accountApprovalMail = (
  frame: MailFrame,
  user: { login: string; email: string; firstName: string; lastName: string },
  url: string,
): string =>
  framed(
    frame,
    `<p>Someone has registered a new account that needs admin approval.</p>

<p>Login: ${escapeHtml(user.login)}</p>
<p>Email: ${escapeHtml(user.email)}</p>
<p>Name: ${escapeHtml(user.firstName)} ${escapeHtml(user.lastName)}</p>

${link(url)}`,
  );

/** accountApproved.mako: to the user an administrator enabled. */
export const accountApprovedMail = (frame: MailFrame, url: string): string =>
  framed(
    frame,
    `<p>Your account has been approved. You may now login.</p>

${link(url)}`,
  );

/** groupInvite.mako: to a user invited into a group. */
export const groupInviteMail = (
  frame: MailFrame,
  invited: { firstName: string },
  inviter: { firstName: string; lastName: string; login: string },
  group: { _id: string; name: string },
): string =>
  framed(
    frame,
    `<p>Hello ${escapeHtml(invited.firstName)},</p>

<p>
<b>${escapeHtml(inviter.firstName)} ${escapeHtml(inviter.lastName)} (${escapeHtml(inviter.login)})</b> has invited
you to join the <b>${escapeHtml(group.name)}</b> group! To join the group,
<a href="${escapeHtml(frame.host)}#group/${group._id}">click here</a> and then click
"Join group".
</p>`,
  );
